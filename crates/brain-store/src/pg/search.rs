//! PostgreSQL's side of search (the contract in `brain_core::search`): candidates from the
//! `search` tsvector (all words, then any word, each by `ts_rank`) and the terms' statistics.
//! Embedding vectors live in `vectors.rs`.

use brain_core::search::{CandidateRequest, Candidates, TermStatistics};

use super::PgStore;
use crate::{ItemFilter, StoreResult};

/// Counting the items that contain a word stops here (at least); see the SQLite side.
const MIN_FREQUENCY_CAP: u64 = 1000;

impl PgStore {
    pub(crate) fn candidates(&self, request: &CandidateRequest<'_>, filter: &ItemFilter) -> StoreResult<Candidates> {
        // Core sends alphanumeric words; anything else is dropped so tsquery syntax stays inert.
        let words: Vec<String> = request
            .words
            .iter()
            .map(|word| word.chars().filter(|c| c.is_alphanumeric()).collect::<String>())
            .filter(|word| !word.is_empty())
            .collect();
        if words.is_empty() || request.limit == 0 {
            return Ok(Candidates::default());
        }
        let mut items = self.ranked(&words.join(" & "), filter, request.limit)?;
        if words.len() > 1 && items.len() < request.limit {
            let seen: std::collections::HashSet<String> = items.iter().map(|hit| hit.item.id.clone()).collect();
            let more = self.ranked(&words.join(" | "), filter, request.limit + items.len())?;
            items.extend(more.into_iter().filter(|hit| !seen.contains(&hit.item.id)));
            items.truncate(request.limit);
        }
        let count_rows = self.rows("SELECT count(*) FROM items", &Vec::new())?;
        let documents: i64 = count_rows.first().map_or(Ok(0), |row| row.try_get(0)).map_err(|err| self.error(err))?;
        let documents = documents.max(0) as u64;
        let cap = (documents / 5).max(MIN_FREQUENCY_CAP);
        let mut document_frequency = Vec::with_capacity(request.words.len());
        for word in request.words {
            let word: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
            let params: super::Params = vec![Box::new(word), Box::new(cap as i64)];
            let rows = self.rows(
                "SELECT count(*) FROM (SELECT 1 FROM items, to_tsquery('brain_english', $1) AS query \
                 WHERE search @@ query LIMIT $2) AS matches",
                &params,
            )?;
            let count: i64 = rows.first().map_or(Ok(0), |row| row.try_get(0)).map_err(|err| self.error(err))?;
            document_frequency.push(count.max(0) as u64);
        }
        Ok(Candidates {
            items: items.into_iter().map(|hit| hit.item).collect(),
            statistics: TermStatistics { documents, document_frequency },
        })
    }
}
