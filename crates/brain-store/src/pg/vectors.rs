//! PostgreSQL's embedding vectors (migration 4; the contract of SQLite's `vectors.rs`): the
//! backlog of items without a vector of the current model, writing vectors, and exact
//! nearest-neighbour search. Similarities are computed by the server (a dot product over the
//! `real[]` of each candidate), so a replica never pulls every vector over the network;
//! only the best `limit` items travel.

use brain_core::search::embedding_text;

use super::PgStore;
use super::rows::{self, COLUMNS, Params};
use crate::{ItemFilter, StoreResult, VectorJob};

/// The embedding jobs of a batch of items (a subquery `i` of `id, title, content, source,
/// created_at`): each with the item written just before it in its source (a `LATERAL` index
/// scan backward per row; `position` is only a cheap pre-filter: `embedding_text`'s
/// `is_context_source` decides whether that item is used).
macro_rules! jobs_of {
    ($batch:literal) => {
        concat!(
            "SELECT i.id, i.title, i.content, i.source, prev.content, \
                    extract(epoch FROM i.created_at - prev.created_at)::bigint \
             FROM (",
            $batch,
            ") i \
             LEFT JOIN LATERAL \
               (SELECT p.content, p.created_at FROM items p WHERE position(':' IN i.source) > 1 AND p.source = i.source \
                  AND (p.created_at, p.id) < (i.created_at, i.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1) prev ON true \
             ORDER BY i.created_at, i.id"
        )
    };
}

fn job_of(row: &postgres::Row) -> Result<VectorJob, postgres::Error> {
    let (title, content, source): (String, String, String) = (row.try_get(1)?, row.try_get(2)?, row.try_get(3)?);
    let before: Option<String> = row.try_get(4)?;
    let seconds: Option<i64> = row.try_get(5)?;
    let previous = before.as_deref().zip(seconds);
    Ok(VectorJob { id: row.try_get(0)?, text: embedding_text(&title, &content, &source, previous) })
}

impl PgStore {
    pub(crate) fn vector_backlog(&self, model: &str, limit: usize) -> StoreResult<Vec<VectorJob>> {
        let params: Params = vec![Box::new(model.to_string()), Box::new(i64::try_from(limit).unwrap_or(i64::MAX))];
        let found = self.rows(
            jobs_of!(
                "SELECT id, title, content, source, created_at FROM items b \
                 WHERE NOT EXISTS (SELECT 1 FROM item_vectors v WHERE v.id = b.id AND v.model = $1) \
                 ORDER BY created_at, id LIMIT $2"
            ),
            &params,
        )?;
        found.iter().map(job_of).collect::<Result<_, _>>().map_err(|err| self.error(err))
    }

    pub(crate) fn vector_job(&self, id: &str) -> StoreResult<Option<VectorJob>> {
        let params: Params = vec![Box::new(id.to_string())];
        let found =
            self.rows(jobs_of!("SELECT id, title, content, source, created_at FROM items WHERE id = $1"), &params)?;
        found.first().map(job_of).transpose().map_err(|err| self.error(err))
    }

    pub(crate) fn count_vector_backlog(&self, model: &str) -> StoreResult<u64> {
        let params: Params = vec![Box::new(model.to_string())];
        let found = self.rows(
            "SELECT count(*) FROM items i \
             WHERE NOT EXISTS (SELECT 1 FROM item_vectors v WHERE v.id = i.id AND v.model = $1)",
            &params,
        )?;
        let count: i64 = found.first().map_or(Ok(0), |row| row.try_get(0)).map_err(|err| self.error(err))?;
        Ok(count.max(0) as u64)
    }

    /// Stores vectors (replacing an item's vector of any model) in one transaction; items
    /// deleted meanwhile are skipped. Bookkeeping: the write generation does not move.
    pub(crate) fn put_vectors(&self, model: &str, vectors: &[(String, Vec<f32>)]) -> StoreResult<()> {
        let mut slot = self.lock();
        let (connection, _) = self.ensure(&mut slot)?;
        let outcome = (|| -> Result<(), postgres::Error> {
            let mut tx = connection.client.transaction()?;
            let statement = tx.prepare(
                "INSERT INTO item_vectors (id, model, vector) SELECT id, $1, $2 FROM items WHERE id = $3 \
                 ON CONFLICT (id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
            )?;
            for (id, vector) in vectors {
                tx.execute(&statement, &[&model, vector, id])?;
            }
            tx.commit()
        })();
        outcome.map_err(|err| self.error(err))
    }

    /// The `limit` items of `filter` whose vectors of `model` are nearest to `query` (dot
    /// product of normalised vectors = cosine), best first. Vectors of another length than
    /// the query's are skipped. The products are taken in double precision: a model's
    /// components near zero multiply below the smallest `real`, which PostgreSQL refuses
    /// ("value out of range: underflow") instead of rounding to zero.
    pub(crate) fn nearest(
        &self,
        model: &str,
        query: &[f32],
        filter: &ItemFilter,
        limit: usize,
    ) -> StoreResult<Vec<(brain_core::Item, f32)>> {
        if limit == 0 || query.is_empty() {
            return Ok(Vec::new());
        }
        let mut params: Params = vec![
            Box::new(model.to_string()),
            Box::new(query.to_vec()),
            Box::new(i32::try_from(query.len()).unwrap_or(i32::MAX)),
        ];
        let unfiltered = ItemFilter { limit: None, offset: 0, ..filter.clone() };
        let where_sql = rows::filter_sql(&unfiltered, &mut params).replacen(" WHERE ", " AND ", 1);
        params.push(Box::new(i64::try_from(limit).unwrap_or(i64::MAX)));
        let columns: String =
            COLUMNS.split(", ").map(|column| format!("items.{column}")).collect::<Vec<_>>().join(", ");
        let sql = format!(
            "SELECT {columns}, scored.similarity FROM (\
                 SELECT v.id, (SELECT sum(a::float8 * b::float8) FROM unnest(v.vector, $2::real[]) AS pair(a, b))::real AS similarity \
                 FROM item_vectors v JOIN items ON items.id = v.id \
                 WHERE v.model = $1 AND cardinality(v.vector) = $3{where_sql}\
             ) scored JOIN items ON items.id = scored.id \
             ORDER BY scored.similarity DESC, items.id LIMIT ${}",
            params.len()
        );
        let found = self.rows(&sql, &params)?;
        found
            .iter()
            .map(|row| {
                let item = rows::row_to_item(row)?;
                let similarity: f32 = row.try_get(rows::COLUMN_COUNT).map_err(|err| self.error(err))?;
                Ok((item, similarity))
            })
            .collect()
    }
}
