//! PostgreSQL's side of search (the contract in `brain_core::search`): the terms' statistics,
//! then candidates from the `search` tsvector in the stages core plans from them (all words,
//! the rare words, any word), each by `ts_rank` over at most its budget of newest matches.
//! Embedding vectors live in `vectors.rs`.

use brain_core::search::{CandidateRequest, Candidates, TermStatistics, plan_stages};

use super::PgStore;
use crate::{ItemFilter, StoreResult};

/// Counting the items that contain a word stops here (at least); see the SQLite side.
const MIN_FREQUENCY_CAP: u64 = 1000;

impl PgStore {
    pub(crate) fn candidates(&self, request: &CandidateRequest<'_>, filter: &ItemFilter) -> StoreResult<Candidates> {
        // Core sends alphanumeric words; anything else is dropped so tsquery syntax stays inert
        // (a word left empty matches nothing; indexes stay those of the request).
        let words: Vec<String> =
            request.words.iter().map(|word| word.chars().filter(|c| c.is_alphanumeric()).collect::<String>()).collect();
        if words.iter().all(String::is_empty) || request.limit == 0 {
            return Ok(Candidates::default());
        }
        let count_rows = self.rows("SELECT count(*) FROM items", &Vec::new())?;
        let documents: i64 = count_rows.first().map_or(Ok(0), |row| row.try_get(0)).map_err(|err| self.error(err))?;
        let documents = documents.max(0) as u64;
        let cap = (documents / 5).max(MIN_FREQUENCY_CAP);
        let mut document_frequency = Vec::with_capacity(words.len());
        for word in &words {
            if word.is_empty() {
                document_frequency.push(0);
                continue;
            }
            let params: super::Params = vec![Box::new(word.clone()), Box::new(cap as i64)];
            let rows = self.rows(
                "SELECT count(*) FROM (SELECT 1 FROM items, to_tsquery('brain_english', $1) AS query \
                 WHERE search @@ query LIMIT $2) AS matches",
                &params,
            )?;
            let count: i64 = rows.first().map_or(Ok(0), |row| row.try_get(0)).map_err(|err| self.error(err))?;
            document_frequency.push(count.max(0) as u64);
        }
        let statistics = TermStatistics { documents, document_frequency };
        let mut items: Vec<crate::SearchHit> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for stage in plan_stages(&statistics, request.limit) {
            if items.len() >= request.limit {
                break;
            }
            let groups: Vec<String> = stage
                .groups
                .iter()
                .map(|group| {
                    let terms: Vec<&str> =
                        group.iter().map(|&term| words[term].as_str()).filter(|word| !word.is_empty()).collect();
                    format!("({})", terms.join(" | "))
                })
                .collect();
            if groups.iter().any(|group| group == "()") {
                continue;
            }
            let tsquery = groups.join(" & ");
            for hit in self.ranked(&tsquery, filter, request.limit, stage.scored)? {
                if items.len() < request.limit && seen.insert(hit.item.id.clone()) {
                    items.push(hit);
                }
            }
        }
        Ok(Candidates { items: items.into_iter().map(|hit| hit.item).collect(), statistics })
    }
}
