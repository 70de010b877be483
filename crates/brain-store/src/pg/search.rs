//! PostgreSQL's side of search (the contract in `brain_core::search`): the terms' statistics,
//! then candidates from the `search` tsvector in the stages core plans from them (all words,
//! the rare words, any word), each by `ts_rank` over at most its budget of newest matches.
//! Embedding vectors live in `vectors.rs`.
//!
//! What it costs at 100k items is what the heap is read for. The statistics read almost none
//! of it: the item count and a common word's count come from the planner's statistics (the
//! ones `ANALYZE` keeps: the table's size, and the share of rows holding each frequent
//! lexeme), and only a word the statistics do not show as common is counted, exactly, up
//! to 1,000 items. A stage reads its newest matches and no more (the primary key walked
//! backwards for a common word, the full-text index for a rare one), is planned for its
//! words (a statement of its own, never a generic plan), and fetches whole items only for
//! the candidates it returns.

use brain_core::search::{CandidateRequest, Candidates, TermStatistics, plan_stages};
use postgres::SimpleQueryMessage;

use super::rows::{self, COLUMNS, Params};
use super::{PgStore, quote_literal};
use crate::{ItemFilter, SearchHit, StoreResult};

/// `ts_rank` weights of the classes D, C, B, A: content, schema key and files, tags, title
/// (SQLite's bm25 column weights 1, 3 and 2, 5, 10, scaled to 1.0 for the title).
const RANK_WEIGHTS: &str = "'{0.1, 0.25, 0.5, 1.0}'::float4[]";

/// A word's matching items are counted exactly up to this many (as on the SQLite side);
/// past it, the count is the planner's estimate. Such a word is in at least 1% of a 100k
/// store: its IDF is small, and an estimate's error moves it little.
const EXACT_FREQUENCY: u64 = 1000;

/// A word the statistics put in at least this many items is not counted at all: ANALYZE
/// saw it in some 5% of its sample of rows, so it is far past [`EXACT_FREQUENCY`] (counting
/// even its first 1,000 matches reads a few thousand rows).
const TRUSTED_ESTIMATE: u64 = 5000;

/// A store the planner estimates below this many items is counted exactly (a few ms at
/// most); above it, the estimate is the count (an upper bound is not needed: the count only
/// scales IDF, and the estimate follows the table's size between two ANALYZEs).
const EXACT_DOCUMENTS: u64 = 10_000;

impl PgStore {
    pub(crate) fn candidates(&self, request: &CandidateRequest<'_>, filter: &ItemFilter) -> StoreResult<Candidates> {
        // Core sends alphanumeric words; anything else is dropped so tsquery syntax stays inert
        // (a word left empty matches nothing; indexes stay those of the request).
        let words: Vec<String> =
            request.words.iter().map(|word| word.chars().filter(|c| c.is_alphanumeric()).collect::<String>()).collect();
        if words.iter().all(String::is_empty) || request.limit == 0 {
            return Ok(Candidates::default());
        }
        let statistics = self.term_statistics(&words)?;
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
            // A term no item contains empties a group of it alone: nothing to read.
            let empty = |group: &Vec<usize>| group.iter().all(|&term| statistics.document_frequency[term] == 0);
            if stage.groups.iter().any(empty) {
                continue;
            }
            let tsquery = groups.join(" & ");
            // Items already found come back too: ask for enough to fill up behind them.
            for hit in self.ranked(&tsquery, filter, request.limit, stage.scored)? {
                if items.len() < request.limit && seen.insert(hit.item.id.clone()) {
                    items.push(hit);
                }
            }
        }
        Ok(Candidates { items: items.into_iter().map(|hit| hit.item).collect(), statistics })
    }

    /// The terms' statistics (see the module docs): one round trip for the planner's
    /// estimates, one more for the words counted exactly.
    fn term_statistics(&self, words: &[String]) -> StoreResult<TermStatistics> {
        let matching = |word: &str| {
            format!("SELECT 1 FROM items WHERE search @@ to_tsquery('brain_english', {})", quote_literal(word))
        };
        let mut explain = String::from("EXPLAIN SELECT 1 FROM items");
        for word in words.iter().filter(|word| !word.is_empty()) {
            explain.push_str(&format!("; EXPLAIN {}", matching(word)));
        }
        let mut estimates = planned_rows(&self.simple(&explain)?).into_iter();
        let estimated_documents = estimates.next().unwrap_or(0);
        let documents = if estimated_documents < EXACT_DOCUMENTS {
            let counted = planned_rows(&self.simple("SELECT count(*) FROM items")?);
            counted.first().copied().unwrap_or(0)
        } else {
            estimated_documents
        };
        let mut document_frequency = vec![0; words.len()];
        let mut counted = Vec::new();
        let mut count = String::new();
        for (term, word) in words.iter().enumerate().filter(|(_, word)| !word.is_empty()) {
            let estimate = estimates.next().unwrap_or(0);
            if estimate >= TRUSTED_ESTIMATE {
                document_frequency[term] = estimate;
            } else {
                counted.push((term, estimate));
                count.push_str(&format!(
                    "SELECT count(*) FROM ({} LIMIT {EXACT_FREQUENCY}) AS matches;",
                    matching(word)
                ));
            }
        }
        if !count.is_empty() {
            for ((term, estimate), exact) in counted.into_iter().zip(planned_rows(&self.simple(&count)?)) {
                document_frequency[term] = if exact >= EXACT_FREQUENCY { estimate.max(exact) } else { exact };
            }
        }
        let documents = document_frequency.iter().copied().fold(documents, u64::max);
        Ok(TermStatistics { documents, document_frequency })
    }

    /// The best `needed` filtered matches of a tsquery text by `ts_rank`, among the newest
    /// `scored` filtered matches (ids are ULIDs, so the highest ids are the newest): the
    /// same bounded scoring as SQLite's side (`brain_core::search::CandidateStage`). Whole
    /// rows are read only for the `needed` returned.
    fn ranked(&self, tsquery: &str, filter: &ItemFilter, needed: usize, scored: usize) -> StoreResult<Vec<SearchHit>> {
        let mut params: Params = vec![Box::new(tsquery.to_string())];
        let unfiltered = ItemFilter { limit: None, offset: 0, ..filter.clone() };
        let where_sql = rows::filter_sql(&unfiltered, &mut params).replacen(" WHERE ", " AND ", 1);
        params.push(Box::new(i64::try_from(scored.max(needed)).unwrap_or(i64::MAX)));
        let window = params.len();
        params.push(Box::new(i64::try_from(needed).unwrap_or(i64::MAX)));
        let sql = format!(
            "SELECT {COLUMNS}, best.rank FROM \
             (SELECT id, ts_rank({RANK_WEIGHTS}, search, query) AS rank FROM \
              (SELECT id, search, query FROM items, to_tsquery('brain_english', $1) AS query \
               WHERE search @@ query{where_sql} ORDER BY id DESC LIMIT ${window}) AS newest \
              ORDER BY rank DESC, id LIMIT ${}) AS best \
             JOIN items USING (id) ORDER BY best.rank DESC, id",
            params.len()
        );
        let rows = self.rows_planned_for(&sql, &params)?;
        rows.iter()
            .map(|row| {
                let item = rows::row_to_item(row)?;
                let rank: f32 = row.try_get(rows::COLUMN_COUNT).map_err(|err| self.error(err))?;
                Ok(SearchHit { item, score: f64::from(rank) })
            })
            .collect()
    }
}

/// The first number of each result of simple queries: the `rows=` of an `EXPLAIN`'s top
/// line (the planner's estimate), or a `count(*)`.
fn planned_rows(messages: &[SimpleQueryMessage]) -> Vec<u64> {
    let mut numbers = Vec::new();
    let mut first_of_result = true;
    for message in messages {
        match message {
            SimpleQueryMessage::Row(row) if first_of_result => {
                first_of_result = false;
                numbers.push(leading_number(row.get(0).unwrap_or("")));
            }
            SimpleQueryMessage::CommandComplete(_) => first_of_result = true,
            _ => {}
        }
    }
    numbers
}

/// The `rows=` of a plan line, or the number a line is (0 when neither).
fn leading_number(text: &str) -> u64 {
    let number = match text.find("rows=") {
        Some(at) => text[at + 5..].split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""),
        None => text,
    };
    number.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_read_from_the_top_line_of_a_plan_and_counts_as_they_are() {
        assert_eq!(leading_number("Bitmap Heap Scan on items  (cost=17.08..540.86 rows=140 width=4)"), 140);
        assert_eq!(leading_number("Seq Scan on items  (cost=0.00..18371.00 rows=57157 width=4)"), 57157);
        assert_eq!(leading_number("1000"), 1000);
        assert_eq!(leading_number("Result  (cost=0.00..0.01 width=4)"), 0);
    }
}
