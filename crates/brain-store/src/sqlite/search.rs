//! SQLite's side of search (the contract in `brain_core::search`): candidates from FTS5 and
//! the statistics of the query's terms. The ranking itself happens in core, above the SQL.
//!
//! Candidates are items containing every word first (an FTS5 intersection, cheap), then
//! items containing any word, each group ordered by FTS5's `bm25()` — a good enough order to
//! choose *which* items core ranks, not the final one. Words are quoted, so FTS5 syntax in
//! user input is inert (the words reaching here have no quotes: core splits on anything not
//! alphanumeric).

use brain_core::search::{CandidateRequest, Candidates, TermStatistics};
use rusqlite::Connection;

use super::SqliteStore;
use crate::{ItemFilter, StoreResult};

/// Counting the items that contain a word stops here (at least): such a word is common and
/// its IDF small either way, and counting a word in half of 100k items costs ~1.2 ms.
const MIN_FREQUENCY_CAP: u64 = 1000;

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
        let mut items = self.ranked(&connection, &quoted.join(" AND "), &filter, request.limit)?;
        if quoted.len() > 1 && items.len() < request.limit {
            let seen: std::collections::HashSet<String> = items.iter().map(|hit| hit.item.id.clone()).collect();
            let more = self.ranked(&connection, &quoted.join(" OR "), &filter, request.limit + items.len())?;
            items.extend(more.into_iter().filter(|hit| !seen.contains(&hit.item.id)));
            items.truncate(request.limit);
        }
        let statistics = self.term_statistics(&connection, &quoted)?;
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
        let cap = (documents / 5).max(MIN_FREQUENCY_CAP);
        let mut statement = connection
            .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM items_fts WHERE items_fts MATCH ?1 LIMIT ?2)")
            .map_err(|e| self.sqlite_error(e))?;
        let mut document_frequency = Vec::with_capacity(quoted.len());
        for term in quoted {
            let count: i64 = statement
                .query_row(rusqlite::params![term, cap as i64], |row| row.get(0))
                .map_err(|e| self.sqlite_error(e))?;
            document_frequency.push(count.max(0) as u64);
        }
        Ok(TermStatistics { documents, document_frequency })
    }
}
