//! Embedding vectors of items (migration 7): the backlog of items without a vector of the
//! current model, writing vectors, and exact nearest-neighbour search (a scan of the model's
//! vectors within a filter; no vector index: SQLite has none built in, and the stores this
//! serves hold thousands to a hundred thousand items).
//!
//! Vectors are derived data: writing them leaves `version` and the write generation alone.

use std::sync::Arc;

use brain_core::search::embedding_text;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::vector_index::{self, MIN_RESCORED, OVERSAMPLE, VectorIndex};
use super::{COLUMNS, SqliteStore, filter_sql, row_to_item};
use crate::{ItemFilter, StoreResult, VectorJob};

fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|value| value.to_le_bytes()).collect()
}

/// The dot product of a stored vector (little-endian f32) with `query`, of the same length.
fn similarity(bytes: &[u8], query: &[f32]) -> f32 {
    bytes.chunks_exact(4).zip(query).map(|(c, q)| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * q).sum()
}

/// The embedding jobs of a batch of items (a subquery `i` of `seq, id, title, content, source,
/// created_at`): each with the item written just before it in its source, read by the
/// `items_by_source_created` index (`instr` is only a cheap pre-filter: `embedding_text`'s
/// `is_context_source` decides whether that item is used).
macro_rules! jobs_of {
    ($batch:literal) => {
        concat!(
            "SELECT i.id, i.title, i.content, i.source, prev.content, \
                    CAST(strftime('%s', i.created_at) AS INTEGER) - CAST(strftime('%s', prev.created_at) AS INTEGER) \
             FROM (",
            $batch,
            ") i \
             LEFT JOIN items prev ON prev.seq = \
               (SELECT p.seq FROM items p WHERE instr(i.source, ':') > 1 AND p.source = i.source \
                  AND (p.created_at, p.id) < (i.created_at, i.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1) \
             ORDER BY i.seq"
        )
    };
}

fn job_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<VectorJob> {
    let (title, content, source): (String, String, String) = (row.get(1)?, row.get(2)?, row.get(3)?);
    let before: Option<String> = row.get(4)?;
    let seconds: Option<i64> = row.get(5)?;
    let previous = before.as_deref().zip(seconds);
    Ok(VectorJob { id: row.get(0)?, text: embedding_text(&title, &content, &source, previous) })
}

impl SqliteStore {
    /// Up to `limit` items with no vector of `model`, oldest first (so an interrupted
    /// `brain embed` resumes where it stopped), each with the text to embed
    /// (`brain_core::search::embedding_text`: with the item written before it in its source).
    pub fn vector_backlog(&self, model: &str, limit: usize) -> StoreResult<Vec<VectorJob>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(jobs_of!(
                "SELECT seq, id, title, content, source, created_at FROM items b \
                 WHERE NOT EXISTS (SELECT 1 FROM item_vectors v WHERE v.seq = b.seq AND v.model = ?1) \
                 ORDER BY seq LIMIT ?2"
            ))
            .map_err(|e| self.sqlite_error(e))?;
        let rows = statement
            .query_map(rusqlite::params![model, i64::try_from(limit).unwrap_or(i64::MAX)], job_of)
            .map_err(|e| self.sqlite_error(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite_error(e))
    }

    /// The embedding job of one item, as `vector_backlog` would give it whatever vectors it
    /// has (a warm server embeds a written item at once); `None` when there is no such item.
    pub fn vector_job(&self, id: &str) -> StoreResult<Option<VectorJob>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(jobs_of!("SELECT seq, id, title, content, source, created_at FROM items WHERE id = ?1"))
            .map_err(|e| self.sqlite_error(e))?;
        statement.query_row([id], job_of).optional().map_err(|e| self.sqlite_error(e))
    }

    /// How many items have no vector of `model`.
    pub fn count_vector_backlog(&self, model: &str) -> StoreResult<u64> {
        let connection = self.lock();
        connection
            .query_row(
                "SELECT count(*) FROM items i \
                 WHERE NOT EXISTS (SELECT 1 FROM item_vectors v WHERE v.seq = i.seq AND v.model = ?1)",
                [model],
                |row| row.get::<_, i64>(0),
            )
            .map(|count| count.max(0) as u64)
            .map_err(|e| self.sqlite_error(e))
    }

    /// Stores vectors of `model` (replacing an item's vector of any model) in one
    /// transaction. Items deleted meanwhile are skipped.
    pub fn put_vectors(&self, model: &str, vectors: &[(String, Vec<f32>)]) -> StoreResult<()> {
        let mut connection = self.lock();
        let outcome = (|| {
            let tx = connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            {
                let mut statement = tx.prepare_cached(
                    "INSERT OR REPLACE INTO item_vectors (seq, model, vector) SELECT seq, ?1, ?2 FROM items WHERE id = ?3",
                )?;
                for (id, vector) in vectors {
                    statement.execute(rusqlite::params![model, encode(vector), id])?;
                }
            }
            tx.commit()
        })();
        outcome.map_err(|e| self.sqlite_error(e))
    }

    /// The `limit` items of `filter` whose vectors of `model` are nearest to `query` (dot
    /// product of normalised vectors = cosine), best first, with their similarity. Vectors
    /// of another length than the query's are skipped.
    ///
    /// The model's vectors are scanned in memory (`vector_index`: quantised, shared by the
    /// process's handles of this database, rebuilt when an item or a vector changed) and the
    /// best of them re-scored exactly. A filter that leaves too few of those (a search outside
    /// a project sees only the global items) is asked which items it lets through, and the
    /// index ranks those alone; an index that cannot rank (its file unreadable) falls back to
    /// the exact scan in SQL.
    pub fn nearest(
        &self,
        model: &str,
        query: &[f32],
        filter: &ItemFilter,
        limit: usize,
    ) -> StoreResult<Vec<(brain_core::Item, f32)>> {
        if limit == 0 || query.is_empty() {
            return Ok(Vec::new());
        }
        let connection = self.lock();
        let index = self.vector_index(&connection, model, query.len())?;
        let wanted = limit.saturating_mul(OVERSAMPLE).max(MIN_RESCORED);
        let candidates = index.candidates(query, wanted);
        let mut scored = self.rescore(&connection, model, query, filter, &candidates)?;
        if scored.len() < limit && candidates.len() < index.len() {
            // The filter kept fewer than asked of the best of all: rank only what it lets
            // through (one indexed read of their seqs), instead of widening round by round.
            let allowed = self.seqs_within(&connection, filter)?;
            let Some(candidates) = index.candidates_among(query, wanted, &allowed) else {
                return self.nearest_by_scan(&connection, model, query, filter, limit);
            };
            scored = self.rescore(&connection, model, query, filter, &candidates)?;
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(limit);
        // Only the best are read whole.
        self.items_at(&connection, scored)
    }

    /// The seqs of the items `filter` lets through, ascending.
    fn seqs_within(&self, connection: &Connection, filter: &ItemFilter) -> StoreResult<Vec<i64>> {
        let (where_sql, values) = filter_sql(filter, "i.");
        let sql = format!("SELECT i.seq FROM items i{where_sql}");
        let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
        let mut seqs = statement
            .query_map(params_from_iter(values), |row| row.get::<_, i64>(0))
            .map_err(|e| self.sqlite_error(e))?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(|e| self.sqlite_error(e))?;
        seqs.sort_unstable();
        Ok(seqs)
    }

    /// The `candidates` (seqs) that pass `filter`, each with its exact similarity to `query`
    /// from its stored vector, unordered.
    fn rescore(
        &self,
        connection: &Connection,
        model: &str,
        query: &[f32],
        filter: &ItemFilter,
        candidates: &[i64],
    ) -> StoreResult<Vec<(f32, i64)>> {
        let (where_sql, filter_values) = filter_sql(filter, "i.");
        let where_sql = where_sql.replacen(" WHERE ", " AND ", 1);
        let mut scored: Vec<(f32, i64)> = Vec::with_capacity(candidates.len());
        for chunk in candidates.chunks(256) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = format!(
                "SELECT v.vector, i.seq FROM items i JOIN item_vectors v ON v.seq = i.seq \
                 WHERE v.model = ? AND i.seq IN ({marks}){where_sql}"
            );
            let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
            let mut values = vec![Value::Text(model.to_string())];
            values.extend(chunk.iter().map(|seq| Value::Integer(*seq)));
            values.extend(filter_values.iter().cloned());
            let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.sqlite_error(e))?;
            while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
                let bytes = row.get_ref(0).map_err(|e| self.sqlite_error(e))?.as_blob().unwrap_or(&[]);
                if bytes.len() != query.len() * 4 {
                    continue;
                }
                let seq: i64 = row.get(1).map_err(|e| self.sqlite_error(e))?;
                scored.push((similarity(bytes, query), seq));
            }
        }
        Ok(scored)
    }

    /// The items at `seqs` (each with its similarity), in that order; an item deleted since
    /// is left out.
    fn items_at(&self, connection: &Connection, seqs: Vec<(f32, i64)>) -> StoreResult<Vec<(brain_core::Item, f32)>> {
        let mut by_seq = connection
            .prepare_cached(&format!("SELECT {COLUMNS} FROM items WHERE seq = ?1"))
            .map_err(|e| self.sqlite_error(e))?;
        let mut items = Vec::with_capacity(seqs.len());
        for (similarity, seq) in seqs {
            let item = by_seq
                .query_row([seq], |row| Ok(row_to_item(row, 0, &self.path)))
                .optional()
                .map_err(|e| self.sqlite_error(e))?;
            if let Some(item) = item {
                items.push((item?, similarity));
            }
        }
        Ok(items)
    }

    /// The in-memory index of `model`'s vectors, current as of this read.
    fn vector_index(&self, connection: &Connection, model: &str, dimensions: usize) -> StoreResult<Arc<VectorIndex>> {
        // Moves with every vector written or dropped (migration 9's triggers).
        let epoch: i64 = connection
            .prepare_cached("SELECT value FROM meta WHERE key = 'vector_epoch'")
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
            .map_err(|e| self.sqlite_error(e))?;
        let tag = epoch as u64;
        if let Some(index) = vector_index::cached(&self.path, model, tag).filter(|index| index.dimensions == dimensions)
        {
            return Ok(index);
        }
        // Not in this process: the index file when it was written from these vectors, else
        // the table (and the file written for the next process).
        let largest_seq: i64 = connection
            .prepare_cached("SELECT coalesce(max(seq), 0) FROM item_vectors WHERE model = ?1")
            .and_then(|mut statement| statement.query_row([model], |row| row.get(0)))
            .map_err(|e| self.sqlite_error(e))?;
        let identity = vector_index::Identity { epoch: tag, largest_seq };
        let file = vector_index::file_of(&self.path);
        if let Some(index) = vector_index::load(&file, model, identity, dimensions) {
            return Ok(vector_index::share(&self.path, index));
        }
        let mut index = VectorIndex::new(model, tag, dimensions);
        let mut statement = connection
            .prepare_cached("SELECT seq, vector FROM item_vectors WHERE model = ?1 ORDER BY seq")
            .map_err(|e| self.sqlite_error(e))?;
        let mut rows = statement.query([model]).map_err(|e| self.sqlite_error(e))?;
        let mut vector = Vec::with_capacity(dimensions);
        while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
            let seq: i64 = row.get(0).map_err(|e| self.sqlite_error(e))?;
            let bytes = row.get_ref(1).map_err(|e| self.sqlite_error(e))?.as_blob().unwrap_or(&[]);
            vector.clear();
            vector.extend(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            index.push(seq, &vector);
        }
        let index = vector_index::keep(&self.path, index);
        if self.writes_index_file {
            // Best effort: a home that cannot be written still searches, from the table.
            let _ = vector_index::save(&index, identity, &file);
        }
        Ok(index)
    }

    /// [`SqliteStore::nearest`] by a scan of every vector of `model` within `filter`.
    fn nearest_by_scan(
        &self,
        connection: &Connection,
        model: &str,
        query: &[f32],
        filter: &ItemFilter,
        limit: usize,
    ) -> StoreResult<Vec<(brain_core::Item, f32)>> {
        let (where_sql, mut values) = filter_sql(filter, "i.");
        let where_sql = where_sql.replacen(" WHERE ", " AND ", 1);
        values.insert(0, Value::Text(model.to_string()));
        let sql = format!(
            "SELECT v.seq, v.vector FROM item_vectors v JOIN items i ON i.seq = v.seq WHERE v.model = ?{where_sql}"
        );
        let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
        let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.sqlite_error(e))?;
        // The best `limit` by similarity, kept in a small sorted vector.
        let mut best: Vec<(f32, i64)> = Vec::with_capacity(limit + 1);
        while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
            let seq: i64 = row.get(0).map_err(|e| self.sqlite_error(e))?;
            let bytes = row.get_ref(1).map_err(|e| self.sqlite_error(e))?.as_blob().unwrap_or(&[]);
            if bytes.len() != query.len() * 4 {
                continue;
            }
            let similarity = similarity(bytes, query);
            if best.len() == limit && best.last().is_some_and(|(worst, _)| *worst >= similarity) {
                continue;
            }
            let at = best.partition_point(|(score, _)| *score >= similarity);
            best.insert(at, (similarity, seq));
            best.truncate(limit);
        }
        drop(rows);
        drop(statement);
        self.items_at(connection, best)
    }
}
