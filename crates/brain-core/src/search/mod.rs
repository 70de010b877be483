//! Lexical search, ranked here once for every backend (SPEC §5).
//!
//! The store finds candidates; this module decides their order. The split keeps the ranking
//! rules in one place whatever speaks SQL underneath (SQLite's FTS5 today, PostgreSQL's
//! `tsvector` next), and makes scores mean the same thing on a store of 2 items and of 100k.
//!
//! 1. [`Query::parse`] turns free text into terms: words lowercased, stopwords dropped before
//!    stemming (a question starting "When did…" no longer pulls in every turn containing
//!    "when"), calendar dates ("May 4th", "29 Dec 2023") taken out of the words and kept as
//!    dates, terms deduplicated by stem and bounded ([`MAX_QUERY_TERMS`]). When only
//!    stopwords remain, every word is searched for instead and the query says so. Search
//!    syntax in user input is inert: terms are plain words.
//! 2. The store answers a [`CandidateRequest`] (the terms' words and how many candidates)
//!    with [`Candidates`]: items containing at least one term, best first by the store's
//!    own relevance (items containing every term first), and [`TermStatistics`] over the
//!    whole store (how many items, how many contain each term). That is the whole contract a
//!    backend implements.
//! 3. [`rank`] scores each candidate from its own text, analysed here the same way as the
//!    query: **coverage first** — the share of the query's IDF the item matches, so an
//!    item with both rare words of a question beats one repeating a single word — then
//!    BM25F (field-weighted term frequencies, saturation `k1`, length normalisation `b`
//!    against the candidates' mean field length), plus a bonus when the item was written on
//!    a date the query names. IDF is `ln(1 + (N − df + 0.5)/(df + 0.5))`: never negative,
//!    never floored to zero (FTS5's own `bm25()` gives a word in more than half of a small
//!    store no weight at all, so a 2-item store ranked on nothing).
//! 4. [`Ranked::matched`] says which terms matched in which fields: the `why` every
//!    surface shows.
//!
//! The weights ([`Ranking::default`]) were chosen on the retrieval benchmark
//! (`bench/retrieval/`, figures in `docs/BENCHMARKS.md`).

mod analyze;
mod rank;

pub use analyze::{DateSpec, MAX_QUERY_BYTES, MAX_QUERY_TERMS, Stemmer, is_stopword, words};
pub use rank::{Fields, Ranked, Ranking, TermMatch, rank};

use crate::Item;

/// One searched term: the word as typed (lowercased) and its stem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    pub word: String,
    pub stem: String,
}

/// A parsed query (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub terms: Vec<Term>,
    pub dates: Vec<DateSpec>,
    /// Every word was a stopword, so every word is searched for.
    pub stopwords_only: bool,
}

impl Query {
    /// Parses free text (see the module docs). Never fails: a query with no words is empty.
    pub fn parse(text: &str) -> Query {
        Query::parse_with(text, &Stemmer::default())
    }

    /// `parse` with a stemmer the caller keeps.
    pub fn parse_with(text: &str, stemmer: &Stemmer) -> Query {
        let mut end = text.len().min(MAX_QUERY_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let all: Vec<String> = words(&text[..end]).map(std::borrow::Cow::into_owned).collect();
        let (dates, in_date) = analyze::find_dates(&all);
        let free: Vec<&String> = all.iter().zip(&in_date).filter(|(_, used)| !**used).map(|(word, _)| word).collect();
        let mut query = Query { dates, ..Query::default() };
        query.push_terms(free.iter().copied().filter(|word| !is_stopword(word)), stemmer);
        if query.terms.is_empty() && query.dates.is_empty() && !free.is_empty() {
            query.stopwords_only = true;
            query.push_terms(free.iter().copied(), stemmer);
        }
        if query.terms.is_empty() && !query.dates.is_empty() {
            // Only a date: its words find the candidates; the date ranks them.
            query.push_terms(all.iter().zip(&in_date).filter(|(_, used)| **used).map(|(word, _)| word), stemmer);
        }
        query
    }

    fn push_terms<'w>(&mut self, words: impl Iterator<Item = &'w String>, stemmer: &Stemmer) {
        for word in words {
            if self.terms.len() == MAX_QUERY_TERMS {
                return;
            }
            let stem = stemmer.stem(word).into_owned();
            if !self.terms.iter().any(|term| term.stem == stem) {
                self.terms.push(Term { word: word.clone(), stem });
            }
        }
    }

    /// No term to search for (empty text, or only punctuation).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The words a store searches for, in term order.
    pub fn words(&self) -> Vec<String> {
        self.terms.iter().map(|term| term.word.clone()).collect()
    }
}

/// What the ranking asks a store for (the backend contract, module docs step 2).
#[derive(Clone, Copy, Debug)]
pub struct CandidateRequest<'a> {
    /// Lowercased words without search syntax; the store applies its own stemming to match.
    pub words: &'a [String],
    /// At most this many candidates (after the store's filters).
    pub limit: usize,
}

/// How common each term is in the whole store.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermStatistics {
    /// Items in the store (an upper bound is fine: it only scales IDF).
    pub documents: u64,
    /// Per term of the request, in order: how many items contain it. A store may stop
    /// counting at a cap of its choice (at least `documents / 5`): such a term is common
    /// and its IDF small either way.
    pub document_frequency: Vec<u64>,
}

/// A store's answer to a [`CandidateRequest`].
#[derive(Clone, Debug, Default)]
pub struct Candidates {
    pub items: Vec<Item>,
    pub statistics: TermStatistics,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        Query::parse(text).terms.into_iter().map(|term| term.word).collect()
    }

    #[test]
    fn stopwords_are_dropped_before_stemming() {
        assert_eq!(terms("When did Kate start skiing?"), ["kate", "start", "skiing"]);
        assert_eq!(terms("What has he said about his cat"), ["said", "cat"]);
    }

    #[test]
    fn only_stopwords_search_every_word_and_say_so() {
        let query = Query::parse("what is it");
        assert!(query.stopwords_only);
        assert_eq!(terms("what is it"), ["what", "is", "it"]);
    }

    #[test]
    fn punctuation_or_nothing_is_an_empty_query() {
        assert!(Query::parse("  ?! -- ").is_empty());
        assert!(Query::parse("").is_empty());
    }

    #[test]
    fn search_syntax_is_plain_words_and_forms_share_a_term() {
        assert_eq!(terms("\"retry\" OR logic* NEAR(retries)"), ["retry", "logic", "near"]);
    }

    #[test]
    fn dates_leave_the_terms_and_a_lone_date_still_searches() {
        let query = Query::parse("What did Kate cook on 29 Dec 2023?");
        assert_eq!(query.terms.iter().map(|t| t.word.as_str()).collect::<Vec<_>>(), ["kate", "cook"]);
        assert_eq!(query.dates.len(), 1);
        let lone = Query::parse("May 4th");
        assert_eq!(lone.dates.len(), 1);
        assert!(!lone.is_empty());
    }

    #[test]
    fn long_queries_are_bounded() {
        let text: String = (0..5000).map(|n| format!("word{n} ")).collect();
        assert!(text.len() > 10_000);
        let query = Query::parse(&text);
        assert_eq!(query.terms.len(), MAX_QUERY_TERMS);
        let multibyte = "é".repeat(MAX_QUERY_BYTES);
        assert_eq!(Query::parse(&multibyte).terms.len(), 1);
    }
}
