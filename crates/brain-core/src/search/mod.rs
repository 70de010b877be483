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
//!    a date the query names, and one when it is a turn said by someone the query names
//!    (content `Kate: …`, the query naming Kate) that also matches its subject. IDF is
//!    `ln(1 + (N − df + 0.5)/(df + 0.5))`: never negative, never floored to zero (FTS5's
//!    own `bm25()` gives a word in more than half of a small store no weight at all, so a
//!    2-item store ranked on nothing).
//!    A query's weak terms — generic task words ("fix", "bug", "add": [`is_task_word`]) and
//!    words most of the store shares — weigh 0.3 of their IDF unless they are all the
//!    query has, and a term found only in an item's schema key (`root/bugs`) a quarter of
//!    its weight; an item matching nothing else is [`Ranked::generic_only`], which session
//!    start leaves out. A task word counts in full in an item named for it (title, tags,
//!    files) that also matches the subject: a flaky *test* of the billing worker.
//! 4. [`Ranked::matched`] says which terms matched in which fields: the `why` every
//!    surface shows.
//! 5. [`lend`]: the items written next to a match (same session, capture or arc, adjacent in
//!    time; the store finds them from [`Anchor`]s) share part of its score, bounded below it
//!    (module `neighbours`).
//!
//! The weights ([`Ranking::default`]) were chosen on the retrieval benchmark
//! (`bench/retrieval/`, figures in `docs/BENCHMARKS.md`).

mod analyze;
mod neighbours;
mod rank;

pub use analyze::{DateSpec, MAX_QUERY_BYTES, MAX_QUERY_TERMS, Stemmer, is_stopword, is_task_word, words};
pub use neighbours::{
    Anchor, Lent, NEIGHBOUR_ANCHORS, NEIGHBOUR_GAP_SECONDS, NEIGHBOUR_REACH, NEIGHBOUR_SHARES, embedding_text,
    is_context_source, lend,
};
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
    /// counting at a cap of its choice (at least `documents / 5`), or estimate the count of
    /// a term in more than 1,000 items: such a term is common and its IDF small either way.
    pub document_frequency: Vec<u64>,
}

impl TermStatistics {
    /// The IDF of a term in `df` items: `ln(1 + (N − df + 0.5)/(df + 0.5))`, never negative.
    pub fn idf(&self, df: u64) -> f64 {
        let df = df as f64;
        let documents = (self.documents as f64).max(df);
        (1.0 + (documents - df + 0.5) / (df + 0.5)).ln()
    }

    /// How much of the request's weight the store holds at all: the IDF of its terms some
    /// item holds, against those plus each term no item holds at the IDF of a word in no item
    /// (the rarest there is); 1 for no term. [`rank`] weighs a term no item holds at nothing
    /// (a typo or a word the store never saw must not shrink every coverage alike), so one
    /// matching word of "automobile sedan ship" is a full match there; a hybrid search scales
    /// the lexical score by this share, leaving the words the store lacks to meaning.
    pub fn held_share(&self) -> f64 {
        let (mut held, mut absent) = (0.0, 0.0);
        for &df in &self.document_frequency {
            if df > 0 {
                held += self.idf(df);
            } else {
                absent += self.idf(0);
            }
        }
        if held + absent > 0.0 { held / (held + absent) } else { 1.0 }
    }
}

/// How many matches a store scores with its own relevance (FTS5's `bm25()`, `ts_rank`) in
/// one stage, per candidate asked for. Scoring is the expensive part of finding candidates
/// (~1–3 µs a match in FTS5), so a stage whose matches exceed `limit × SCORED_PER_CANDIDATE`
/// scores only that many of them, the newest (see [`CandidateStage`]).
pub const SCORED_PER_CANDIDATE: usize = 10;

/// One step of finding candidates: the items matching, for every group of `groups`, at
/// least one of its terms (`[[a], [b]]`: a and b; `[[a, b]]`: a or b; `[[a], [b, c]]`: a,
/// and b or c), best first by the store's relevance among at most `scored` matches — the
/// newest `scored` when there are more. A store runs the stages of [`plan_stages`] in order
/// until it has its candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CandidateStage {
    /// Indexes into the request's words.
    pub groups: Vec<Vec<usize>>,
    pub scored: usize,
}

/// Queries of up to this many terms have an "every term but one" stage.
const MAX_ALL_BUT_ONE_TERMS: usize = 5;

/// The stages that find a query's candidates, from the terms' statistics, in the order of
/// the coverage their items can reach:
/// 1. the items containing every term, then (3 to 5 terms) every term but one, missing the
///    most common term first — an item missing only the rarest word of a query is still
///    among the best;
/// 2. the items containing a *selective* term and another term — the selective terms are
///    the rarest, together in fewer items than the scoring budget (at least the rarest);
/// 3. the items containing a selective term, so an item with a rare word of the query is
///    found however common its other words are;
/// 4. the items containing any term.
///
/// Coverage (the ranking's first key) is the share of the query's IDF an item matches, so
/// the items it puts first are in the early stages; a stage of common words only is
/// bounded instead of scoring half the store (the newest matches are scored).
pub fn plan_stages(statistics: &TermStatistics, limit: usize) -> Vec<CandidateStage> {
    let count = statistics.document_frequency.len();
    if count == 0 || limit == 0 {
        return Vec::new();
    }
    let scored = limit.saturating_mul(SCORED_PER_CANDIDATE);
    let mut stages = vec![CandidateStage { groups: (0..count).map(|term| vec![term]).collect(), scored }];
    if count == 1 {
        return stages;
    }
    let mut by_rarity: Vec<usize> = (0..count).collect();
    by_rarity.sort_by_key(|&term| (statistics.document_frequency[term], term));
    if (3..=MAX_ALL_BUT_ONE_TERMS).contains(&count) {
        // Every term but one, one stage per missing term, the most common missing first:
        // the order of the coverage its items reach. Each stage is an AND of terms, so most
        // match fewer items than asked for and are not scored at all (one stage of every
        // pair of terms scored every match of each term twice).
        for &missing in by_rarity.iter().rev() {
            let groups = (0..count).filter(|&term| term != missing).map(|term| vec![term]).collect();
            stages.push(CandidateStage { groups, scored });
        }
    }
    let mut selective = Vec::new();
    let mut matches = 0u64;
    for &term in &by_rarity {
        let df = statistics.document_frequency[term];
        if !selective.is_empty() && matches.saturating_add(df) > scored as u64 {
            break;
        }
        matches = matches.saturating_add(df);
        selective.push(term);
    }
    selective.sort_unstable();
    let others: Vec<usize> = (0..count).filter(|term| !selective.contains(term)).collect();
    if others.is_empty() {
        stages.push(CandidateStage { groups: vec![selective], scored });
        return stages;
    }
    if selective.len() + others.len() > 2 {
        stages.push(CandidateStage { groups: vec![selective.clone(), others], scored });
    }
    stages.push(CandidateStage { groups: vec![selective], scored });
    stages.push(CandidateStage { groups: vec![(0..count).collect()], scored });
    stages
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

    fn statistics(df: &[u64]) -> TermStatistics {
        TermStatistics { documents: 100_000, document_frequency: df.to_vec() }
    }

    fn groups(stages: &[CandidateStage]) -> Vec<Vec<Vec<usize>>> {
        stages.iter().map(|stage| stage.groups.clone()).collect()
    }

    #[test]
    fn a_rare_term_gets_its_own_stage_before_common_ones() {
        // "vault" in half the store, "rotation" in 40 items: every item with "rotation" is
        // scored, not just the newest few hundred of the 50k with either word.
        let stages = plan_stages(&statistics(&[50_000, 40]), 50);
        assert_eq!(groups(&stages), vec![vec![vec![0], vec![1]], vec![vec![1]], vec![vec![0, 1]]]);
        assert!(stages.iter().all(|stage| stage.scored == 500));
    }

    #[test]
    fn items_with_a_rare_term_and_another_come_before_the_rare_term_alone() {
        let stages = plan_stages(&statistics(&[15_000, 2_000, 400]), 50);
        assert_eq!(
            groups(&stages),
            vec![
                vec![vec![0], vec![1], vec![2]],
                vec![vec![1], vec![2]],
                vec![vec![0], vec![2]],
                vec![vec![0], vec![1]],
                vec![vec![2], vec![0, 1]],
                vec![vec![2]],
                vec![vec![0, 1, 2]],
            ]
        );
    }

    #[test]
    fn an_item_missing_only_the_rarest_word_comes_before_items_with_the_rarest_alone() {
        // "rules for services/rate-limiter/migrations": the answer lacks "rules".
        let stages = plan_stages(&statistics(&[30, 2_000, 600, 600, 900]), 50);
        // Missing the most common term first, the rarest ("rules", 30) last.
        let missing: Vec<usize> = stages[1..6]
            .iter()
            .map(|stage| (0..5).find(|term| !stage.groups.contains(&vec![*term])).unwrap())
            .collect();
        assert_eq!(missing, [1, 4, 3, 2, 0]);
        assert!(stages[1..6].iter().all(|stage| stage.groups.len() == 4));
        assert_eq!(stages[6].groups[0], vec![0]);
        // Long queries skip it (a stage per term, each with every other term).
        let long = plan_stages(&statistics(&[30, 2_000, 600, 600, 900, 50]), 50);
        assert_eq!(long[1].groups.len(), 2, "{long:?}");
    }

    #[test]
    fn selective_terms_are_the_rarest_within_the_budget_and_at_least_one() {
        let stages = plan_stages(&statistics(&[300, 9000, 150, 20_000]), 50);
        assert_eq!(stages[6].groups, vec![vec![0, 2]]);
        let stages = plan_stages(&statistics(&[9000, 20_000]), 50);
        assert_eq!(stages[1].groups, vec![vec![0]]);
        // All terms rare: "any of them" is one stage after "all of them".
        assert_eq!(groups(&plan_stages(&statistics(&[30, 40]), 50)), vec![vec![vec![0], vec![1]], vec![vec![0, 1]]]);
        assert_eq!(plan_stages(&statistics(&[7]), 50).len(), 1);
        assert!(plan_stages(&statistics(&[]), 50).is_empty());
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
