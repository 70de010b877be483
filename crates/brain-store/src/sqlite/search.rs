//! SQLite's side of search (the contract in `brain_core::search`): candidates from FTS5 and
//! the statistics of the query's terms. The ranking itself happens in core, above the SQL.
//!
//! The terms' statistics come first (counts of matching items; estimated past 1,000); core plans the
//! stages from them (`brain_core::search::plan_stages`: every word, then the rare words,
//! then any word), and each stage's matches are ordered by FTS5's `bm25()` — a good enough
//! order to choose *which* items core ranks, not the final one. A stage scores at most its
//! budget of matches, the newest (highest rowid: FTS5 walks them in that order and stops),
//! so a query of common words costs what a query of rare ones costs. Words are quoted, so
//! FTS5 syntax in user input is inert (the words reaching here have no quotes: core splits
//! on anything not alphanumeric).

use brain_core::search::{CandidateRequest, Candidates, TermStatistics, plan_stages};
use rusqlite::Connection;

use super::SqliteStore;
use crate::{ItemFilter, StoreResult};

/// A word's matching items are counted exactly up to this many; past it, the count is
/// extrapolated from how many rowids the newest this-many matches span (counting a word in
/// half of 100k items costs ~1–2 ms, the span of its newest 1,000 ~0.3 ms). Such a word is
/// in at least 1% of a 100k store: its IDF is small, and a 30% error moves it by < 0.3.
const EXACT_FREQUENCY: i64 = 1000;

impl SqliteStore {
    /// Candidates for a query's words within `filter` (its limit and offset are ignored:
    /// `request.limit` bounds the candidates), with the words' statistics over the store.
    pub fn candidates(&self, request: &CandidateRequest<'_>, filter: &ItemFilter) -> StoreResult<Candidates> {
        if request.words.is_empty() || request.limit == 0 {
            return Ok(Candidates::default());
        }
        let quoted: Vec<String> = request.words.iter().map(|word| format!("\"{}\"", word.replace('"', ""))).collect();
        let filter = ItemFilter { limit: None, offset: 0, ..filter.clone() };
        let connection = self.lock();
        let statistics = self.term_statistics(&connection, &quoted)?;
        let mut items: Vec<crate::SearchHit> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for stage in plan_stages(&statistics, request.limit) {
            if items.len() >= request.limit {
                break;
            }
            let expression = stage
                .groups
                .iter()
                .map(|group| {
                    format!("({})", group.iter().map(|&term| quoted[term].as_str()).collect::<Vec<_>>().join(" OR "))
                })
                .collect::<Vec<_>>()
                .join(" AND ");
            // Items already found come back too: ask for enough to fill up behind them.
            let more = self.ranked(&connection, &expression, &filter, request.limit, stage.scored)?;
            for hit in more {
                if items.len() < request.limit && seen.insert(hit.item.id.clone()) {
                    items.push(hit);
                }
            }
        }
        Ok(Candidates { items: items.into_iter().map(|hit| hit.item).collect(), statistics })
    }

    fn term_statistics(&self, connection: &Connection, quoted: &[String]) -> StoreResult<TermStatistics> {
        // The largest rowid: an upper bound on the item count (deleted items included), one
        // index probe where count(*) walks every row.
        let documents: i64 = connection
            .prepare_cached("SELECT coalesce(max(seq), 0) FROM items")
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
            .map_err(|e| self.sqlite_error(e))?;
        let documents = documents.max(0) as u64;
        let mut statement = connection
            .prepare_cached(
                "SELECT count(*), coalesce(min(rowid), 0), coalesce(max(rowid), 0) FROM \
                 (SELECT rowid FROM items_fts WHERE items_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2)",
            )
            .map_err(|e| self.sqlite_error(e))?;
        let mut document_frequency = Vec::with_capacity(quoted.len());
        for term in quoted {
            let (count, lowest, highest): (i64, i64, i64) = statement
                .query_row(rusqlite::params![term, EXACT_FREQUENCY], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .map_err(|e| self.sqlite_error(e))?;
            let count = count.max(0) as u64;
            let estimate = if count < EXACT_FREQUENCY as u64 || lowest <= 1 {
                count
            } else {
                // `count` matches among the rowids lowest..=newest seq: the same density below.
                let span = (documents as i64).max(highest) - lowest + 1;
                (count as f64 * documents as f64 / span.max(1) as f64).round() as u64
            };
            document_frequency.push(estimate.clamp(count, documents.max(count)));
        }
        Ok(TermStatistics { documents, document_frequency })
    }
}
