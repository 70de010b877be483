//! Embedding vectors of items (migration 7): the backlog of items without a vector of the
//! current model, writing vectors, and exact nearest-neighbour search (a scan of the model's
//! vectors within a filter; no vector index: SQLite has none built in, and the stores this
//! serves hold thousands to a hundred thousand items).
//!
//! Vectors are derived data: writing them leaves `version` and the write generation alone.

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use super::{COLUMNS, SqliteStore, filter_sql, row_to_item};
use crate::{ItemFilter, StoreResult};

/// An item waiting for its vector: its id and the text to embed (title, then content).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorJob {
    pub id: String,
    pub text: String,
}

fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|value| value.to_le_bytes()).collect()
}

fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])).collect()
}

impl SqliteStore {
    /// Up to `limit` items with no vector of `model`, oldest first (so an interrupted
    /// `brain embed` resumes where it stopped).
    pub fn vector_backlog(&self, model: &str, limit: usize) -> StoreResult<Vec<VectorJob>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(
                "SELECT i.id, i.title, i.content FROM items i \
                 WHERE NOT EXISTS (SELECT 1 FROM item_vectors v WHERE v.seq = i.seq AND v.model = ?1) \
                 ORDER BY i.seq LIMIT ?2",
            )
            .map_err(|e| self.sqlite_error(e))?;
        let rows = statement
            .query_map(rusqlite::params![model, i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
                let title: String = row.get(1)?;
                let content: String = row.get(2)?;
                Ok(VectorJob { id: row.get(0)?, text: format!("{title}\n{content}") })
            })
            .map_err(|e| self.sqlite_error(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite_error(e))
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
        let (where_sql, mut values) = filter_sql(&ItemFilter { limit: None, offset: 0, ..filter.clone() }, "i.");
        let where_sql = where_sql.replacen(" WHERE ", " AND ", 1);
        values.insert(0, Value::Text(model.to_string()));
        let connection = self.lock();
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
            let similarity: f32 = decode(bytes).iter().zip(query).map(|(a, b)| a * b).sum();
            if best.len() == limit && best.last().is_some_and(|(worst, _)| *worst >= similarity) {
                continue;
            }
            let at = best.partition_point(|(score, _)| *score >= similarity);
            best.insert(at, (similarity, seq));
            best.truncate(limit);
        }
        drop(rows);
        drop(statement);
        let mut items = Vec::with_capacity(best.len());
        let mut by_seq = connection
            .prepare_cached(&format!("SELECT {COLUMNS} FROM items WHERE seq = ?1"))
            .map_err(|e| self.sqlite_error(e))?;
        for (similarity, seq) in best {
            let item = by_seq
                .query_row([seq], |row| Ok(row_to_item(row, 0, &self.path)))
                .map_err(|e| self.sqlite_error(e))??;
            items.push((item, similarity));
        }
        Ok(items)
    }
}
