//! The ranking of candidates (see the module docs of `search`): coverage, then BM25F.

use std::collections::HashMap;

use super::{Candidates, DateSpec, Query, Stemmer, is_task_word, words};
use crate::Item;

/// The fields of an item that search reads, as a small bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fields(u8);

impl Fields {
    pub const TITLE: Fields = Fields(1);
    pub const CONTENT: Fields = Fields(2);
    pub const TAGS: Fields = Fields(4);
    pub const FILES: Fields = Fields(8);
    pub const SCHEMA_KEY: Fields = Fields(16);
    const ALL: [(Fields, &'static str); 5] = [
        (Fields::TITLE, "title"),
        (Fields::CONTENT, "content"),
        (Fields::TAGS, "tags"),
        (Fields::FILES, "files"),
        (Fields::SCHEMA_KEY, "schema key"),
    ];

    pub fn contains(self, other: Fields) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Field names in index order ("title", "content", …).
    pub fn names(self) -> Vec<&'static str> {
        Fields::ALL.iter().filter(|(field, _)| self.contains(*field)).map(|(_, name)| *name).collect()
    }
}

impl std::ops::BitOrAssign for Fields {
    fn bitor_assign(&mut self, other: Fields) {
        self.0 |= other.0;
    }
}

/// The ranking's parameters. [`Ranking::default`] is what every surface uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// BM25 term-frequency saturation.
    pub k1: f64,
    /// BM25 length normalisation (0: none, 1: full).
    pub b: f64,
    /// Field weights in `Fields::ALL` order: title, content, tags, files, schema key.
    pub weights: [f64; 5],
    /// Coverage is rounded down to steps of this size before BM25 breaks ties (1.0: BM25
    /// alone ranks; small: coverage decides almost everything).
    pub coverage_step: f64,
    /// What a matching date is worth, as a share of the query's total weight.
    pub date_weight: f64,
    /// What a turn said by someone the query names is worth (its content starts `Kate: …`
    /// and the query names Kate), as a share of the query's total weight added to its
    /// coverage (past 1 too), when it also matches the query's subject: "What sports does
    /// Kate play?" is about what Kate said.
    /// In a two-person chat each name is in half the store, so the name alone weighs little.
    pub speaker_weight: f64,
    /// A weak term's weight, as a share of its IDF: a generic task word ([`is_task_word`]) or
    /// a word more than [`Ranking::common_share`] of the store contains, in a query that
    /// has other terms. Such words say what is to be done, not what about.
    pub weak_weight: f64,
    /// A term in more than this share of the store's items is weak, once the store holds
    /// [`Ranking::common_min_items`]: a smaller store (a new user's first items share their
    /// words) cannot tell a common word from its subject.
    pub common_share: f64,
    pub common_min_items: u64,
    /// What a term matched in the schema key alone is worth, as a share of its weight: a
    /// kind's default key (`root/bugs`) says nothing of an item's subject.
    pub schema_key_share: f64,
    /// A generic task word's weight, as a share of its IDF, in an item named for it (the word
    /// in its title, tags or files) that also matches a term of the query's subject: a flaky
    /// *test* of the billing worker is about a test, a note mentioning a test in passing is
    /// not. (A word most of the store shares stays weak wherever it is.)
    pub named_weak_weight: f64,
}

impl Default for Ranking {
    fn default() -> Ranking {
        Ranking {
            k1: 0.8,
            b: 0.5,
            weights: [1.5, 1.0, 1.5, 1.0, 0.5],
            coverage_step: 0.25,
            date_weight: 0.5,
            speaker_weight: 0.3,
            weak_weight: 0.3,
            common_share: 0.5,
            common_min_items: 20,
            schema_key_share: 0.25,
            named_weak_weight: 1.0,
        }
    }
}

/// Which fields of a candidate one query term matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermMatch {
    /// Index into `Query::terms`.
    pub term: usize,
    pub fields: Fields,
}

/// One ranked candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    /// Index into `Candidates::items`.
    pub index: usize,
    /// Coverage, plus the speaker lift for a turn said by someone the query names (rounded
    /// down to the ranking's step; one step less for an item that only asks), plus the step
    /// times the candidate's BM25F share: in `[-step, 1 + speaker_weight + step)`, higher is
    /// better, comparable within one query.
    pub score: f64,
    /// The share of the query's weight this candidate matches (dates included), `0..=1`: a
    /// term weighs its IDF, a weak term a share of it, a match in the schema key alone a
    /// share of that (see [`Ranking`]).
    pub coverage: f64,
    /// The BM25F score.
    pub bm25: f64,
    /// The terms it matched and where, in term order.
    pub matched: Vec<TermMatch>,
    /// The query date it was written on, if any.
    pub on_date: Option<DateSpec>,
    /// It is a turn said by someone the query names (see [`speaker_label`]), and it matches
    /// the query's subject besides the name: lifted by [`Ranking::speaker_weight`], past a
    /// full match too (its coverage does not include the lift).
    pub said_by_named: bool,
    /// Its content only asks (see [`only_asks`]): ranked one coverage step lower.
    pub asks: bool,
    /// It matched only weak terms (see [`Ranking::weak_weight`]) or only in its schema key:
    /// nothing of the query's subject. Session start leaves such an item out; search ranks
    /// it below every item that matched as much of the subject.
    pub generic_only: bool,
}

/// Whether a text only asks: it has a sentence and every sentence ends with `?`. A memory
/// that only asks holds no answer, yet it shares the most words with a question about its
/// subject (the other speaker asking the same thing, an open question in a note); so it
/// ranks one coverage step below what it matches — still above items matching less.
pub fn only_asks(text: &str) -> bool {
    let mut asked = false;
    for sentence in text.split_inclusive(['.', '!', '?', '\n']) {
        let sentence = sentence.trim_end_matches(|c: char| c.is_whitespace() || c == '"' || c == ')');
        if !sentence.chars().any(char::is_alphanumeric) {
            continue;
        }
        if !sentence.ends_with('?') {
            return false;
        }
        asked = true;
    }
    asked
}

struct Analysed {
    /// Per term, per field: occurrences.
    frequencies: Vec<[u32; 5]>,
    lengths: [u32; 5],
    /// Per term: it is a word of the content's speaker label (see [`speaker_label`]).
    spoken_by: Vec<bool>,
}

/// The label a dialogue line starts with, `Kate: …` or `Dr Ana Ruiz: …`: one to three words,
/// at most 40 bytes, then a colon and a space, on the content's first line. A turn of a
/// captured conversation says who said it that way.
fn speaker_label(content: &str) -> Option<&str> {
    let (label, rest) = content.split_once(':')?;
    if label.len() > 40 || !rest.starts_with([' ', '\t']) || label.contains('\n') {
        return None;
    }
    let count = label.split_whitespace().count();
    let plain = label.chars().all(|c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '.' || c == '\'');
    (plain && (1..=3).contains(&count)).then_some(label)
}

fn field_texts(item: &Item) -> [std::borrow::Cow<'_, str>; 5] {
    [
        item.title.as_str().into(),
        item.content.as_str().into(),
        item.tags.join(" ").into(),
        item.files.join(" ").into(),
        item.schema_key.as_str().into(),
    ]
}

/// Counts the query's terms in each field of an item. Only words sharing their first three
/// letters with some stem are stemmed (a stem is nearly always a prefix of its words), so a
/// candidate costs a pass over its words, not a stemmer call per word.
fn analyse(
    item: &Item,
    query: &Query,
    by_stem: &HashMap<&str, usize>,
    prefixes: &[&str],
    stemmer: &Stemmer,
) -> Analysed {
    let mut frequencies = vec![[0u32; 5]; query.terms.len()];
    let mut lengths = [0u32; 5];
    let mut spoken_by = vec![false; query.terms.len()];
    if let Some(label) = speaker_label(&item.content) {
        for word in words(label) {
            if let Some(&term) = by_stem.get(stemmer.stem(&word).as_ref()) {
                spoken_by[term] = true;
            }
        }
    }
    for (field, text) in field_texts(item).iter().enumerate() {
        for word in words(text) {
            lengths[field] += 1;
            if !prefixes.iter().any(|prefix| word.starts_with(prefix) || prefix.starts_with(word.as_ref())) {
                continue;
            }
            if let Some(&term) = by_stem.get(stemmer.stem(&word).as_ref()) {
                frequencies[term][field] += 1;
            }
        }
    }
    Analysed { frequencies, lengths, spoken_by }
}

/// Ranks candidates for a query, best first; candidates matching no term (and no date) are
/// left out. Ties keep the store's order.
pub fn rank(query: &Query, candidates: &Candidates, ranking: &Ranking) -> Vec<Ranked> {
    if query.terms.is_empty() || candidates.items.is_empty() {
        return Vec::new();
    }
    let stemmer = Stemmer::default();
    let by_stem: HashMap<&str, usize> =
        query.terms.iter().enumerate().map(|(index, term)| (term.stem.as_str(), index)).collect();
    let prefixes: Vec<&str> = query
        .terms
        .iter()
        .map(|term| {
            let mut end = term.stem.len().min(3);
            while !term.stem.is_char_boundary(end) {
                end -= 1;
            }
            &term.stem[..end]
        })
        .collect();
    let analysed: Vec<Analysed> =
        candidates.items.iter().map(|item| analyse(item, query, &by_stem, &prefixes, &stemmer)).collect();
    let mut average = [0f64; 5];
    for entry in &analysed {
        for (sum, length) in average.iter_mut().zip(entry.lengths) {
            *sum += f64::from(length);
        }
    }
    for sum in &mut average {
        *sum = (*sum / analysed.len() as f64).max(1.0);
    }
    let statistics = &candidates.statistics;
    // A term no item contains can match nothing: it weighs nothing (else a typo or a word
    // the store never saw would shrink every candidate's coverage alike).
    let idf: Vec<f64> = (0..query.terms.len())
        .map(|term| {
            let df = statistics.document_frequency.get(term).copied().unwrap_or(1);
            if df == 0 {
                return 0.0;
            }
            statistics.idf(df)
        })
        .collect();
    // Weak terms weigh a share of their IDF, unless they are all the query has ("fix the
    // bug" is about fixing a bug). A term no item contains is the subject the store lacks.
    let documents = statistics.documents as f64;
    let weak_candidate: Vec<bool> = query
        .terms
        .iter()
        .enumerate()
        .map(|(term, query_term)| {
            let df = statistics.document_frequency.get(term).copied().unwrap_or(0) as f64;
            let common = statistics.documents >= ranking.common_min_items && df > ranking.common_share * documents;
            is_task_word(&query_term.stem) || common
        })
        .collect();
    let all_weak = weak_candidate.iter().all(|&weak| weak);
    let weak: Vec<bool> = weak_candidate.iter().map(|&weak| weak && !all_weak).collect();
    let weight: Vec<f64> =
        idf.iter().zip(&weak).map(|(&idf, &weak)| if weak { idf * ranking.weak_weight } else { idf }).collect();
    let total_weight: f64 = weight.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let date_worth = if query.dates.is_empty() { 0.0 } else { ranking.date_weight * total_weight };
    let mut ranked: Vec<Ranked> = Vec::new();
    for (index, (item, entry)) in candidates.items.iter().zip(&analysed).enumerate() {
        // Per matched term: which fields, its BM25F term frequency and its weight's share.
        let mut terms: Vec<(usize, Fields, f64, f64)> = Vec::new();
        let mut subject = false;
        // A subject term besides the speaker's name (which a turn's label always matches).
        let mut told_subject = false;
        for (term, counts) in entry.frequencies.iter().enumerate() {
            let mut fields = Fields::default();
            let mut weighted = 0.0;
            for (field, &count) in counts.iter().enumerate() {
                if count == 0 {
                    continue;
                }
                fields |= Fields::ALL[field].0;
                let norm = 1.0 - ranking.b + ranking.b * f64::from(entry.lengths[field]) / average[field];
                weighted += ranking.weights[field] * f64::from(count) / norm;
            }
            if fields.is_empty() {
                continue;
            }
            let schema_key_only = fields == Fields::SCHEMA_KEY;
            let share = if schema_key_only { ranking.schema_key_share } else { 1.0 };
            subject |= !schema_key_only && !weak[term];
            told_subject |= !schema_key_only && !weak[term] && !entry.spoken_by[term];
            terms.push((term, fields, weighted, share));
        }
        let mut matched = Vec::with_capacity(terms.len());
        let mut matched_weight = 0.0;
        let mut bm25 = 0.0;
        for (term, fields, weighted, share) in terms {
            // A task word the item is named for (title, tags, files), in an item about the
            // query's subject, is part of that subject: a flaky *test* of the billing worker.
            // A word most of the store shares stays weak wherever it is.
            // (The query's total weight is unchanged, so coverage is clamped to 1 below.)
            let named =
                fields.contains(Fields::TITLE) || fields.contains(Fields::TAGS) || fields.contains(Fields::FILES);
            let task_word = is_task_word(&query.terms[term].stem);
            let term_weight = if weak[term] && task_word && named && subject {
                idf[term] * ranking.named_weak_weight.max(ranking.weak_weight)
            } else {
                weight[term]
            };
            matched_weight += term_weight * share;
            bm25 += term_weight * share * weighted * (ranking.k1 + 1.0) / (weighted + ranking.k1);
            matched.push(TermMatch { term, fields });
        }
        let day = item.created_at.to_zoned(jiff::tz::TimeZone::UTC).date();
        let on_date = query.dates.iter().copied().find(|date| date.matches(day));
        if matched.is_empty() && on_date.is_none() {
            continue;
        }
        let date_share = if on_date.is_some() { date_worth } else { 0.0 };
        // Said by someone the query names, about its subject: a share of the query's weight.
        let said_by_named = entry.spoken_by.iter().any(|&spoken| spoken) && told_subject;
        let coverage = ((matched_weight + date_share) / (total_weight + date_worth)).clamp(0.0, 1.0);
        // The lift counts past a full match: a turn of the person named matching every word
        // ranks above another speaker's turn matching every word.
        let lift = if said_by_named { ranking.speaker_weight } else { 0.0 };
        let step = ranking.coverage_step.clamp(1e-6, 1.0);
        let mut tier = ((coverage + lift) / step + 1e-9).floor() * step;
        let asks = only_asks(&item.content);
        if asks && step < 1.0 {
            tier -= step;
        }
        let bm25_share = bm25 / (bm25 + total_weight);
        let score = if step >= 1.0 { bm25_share } else { tier + step * bm25_share };
        let generic_only = !subject && on_date.is_none();
        ranked.push(Ranked { index, score, coverage, bm25, matched, on_date, said_by_named, asks, generic_only });
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::TermStatistics;

    fn item(title: &str, content: &str) -> Item {
        let now = "2024-06-01T00:00:00Z".parse().unwrap();
        let mut item = crate::assemble::fixtures::generate_items(1, 1, now).remove(0);
        item.title = title.into();
        item.content = content.into();
        item.tags.clear();
        item.files.clear();
        item
    }

    fn ranked(query: &str, items: Vec<Item>, documents: u64, df: &[u64]) -> Vec<(String, f64)> {
        let query = Query::parse(query);
        let candidates =
            Candidates { items, statistics: TermStatistics { documents, document_frequency: df.to_vec() } };
        rank(&query, &candidates, &Ranking::default())
            .into_iter()
            .map(|hit| (candidates.items[hit.index].title.clone(), hit.score))
            .collect()
    }

    #[test]
    fn an_item_matching_more_of_the_query_ranks_first_whatever_it_repeats() {
        let order = ranked(
            "retry jitter for the billing worker",
            vec![
                item("billing billing billing", "billing worker notes: billing, billing"),
                item("Retries need jitter", "the billing worker retried in lockstep; add jitter"),
            ],
            1000,
            &[30, 5, 40, 60],
        );
        assert_eq!(order[0].0, "Retries need jitter");
    }

    #[test]
    fn a_two_item_store_still_scores_real_matches() {
        // Both terms occur in one of two items: FTS5's bm25() gives them no weight here.
        let order = ranked(
            "cache eviction",
            vec![item("Cache eviction", "LRU of 500 entries"), item("Deploys", "on Fridays")],
            2,
            &[1, 1],
        );
        assert_eq!(order.len(), 1);
        assert!(order[0].1 > 0.5, "{order:?}");
    }

    #[test]
    fn stopwords_in_a_question_do_not_rank() {
        let order = ranked(
            "When did Kate start skiing?",
            vec![
                item("When did you get there? When?", "when when when did it"),
                item("Skiing", "Kate started skiing in 2013"),
            ],
            100,
            &[3, 10, 2],
        );
        assert_eq!(order.len(), 1);
        assert_eq!(order[0].0, "Skiing");
    }

    #[test]
    fn a_named_date_lifts_items_written_that_day() {
        let mut on_day = item("Pasta night", "made pasta with ham and peas");
        on_day.created_at = "2023-12-29T20:00:00Z".parse().unwrap();
        let mut other_day = item("Pasta again", "made pasta with ham and peas");
        other_day.created_at = "2024-02-01T20:00:00Z".parse().unwrap();
        let order = ranked("What pasta did Kate make on 29 Dec 2023?", vec![other_day, on_day], 100, &[4, 8, 20]);
        assert_eq!(order[0].0, "Pasta night");
    }

    #[test]
    fn an_answer_outranks_the_same_question_asked_back() {
        let order = ranked(
            "What did Kate cook for the party?",
            vec![
                item("What did you cook for the party?", "Emi: What did you cook for the party, Kate?"),
                item("I made lasagna", "Kate: I made lasagna for the party, and I cook it every year."),
            ],
            100,
            &[10, 5, 8],
        );
        assert_eq!(order[0].0, "I made lasagna");
        // Still found, above an item matching less of the query.
        let order = ranked(
            "kate cook party",
            vec![item("Party", "Kate: party tonight!"), item("Cook?", "Kate: did you cook for the party?")],
            100,
            &[10, 5, 8],
        );
        assert_eq!(order[0].0, "Cook?");
    }

    #[test]
    fn only_a_text_of_questions_asks() {
        assert!(only_asks("Kevin: What type of plans do you have?"));
        assert!(only_asks("Really? Where did you go?\n"));
        assert!(!only_asks("I went to Rome. Have you been?"));
        assert!(!only_asks("What type of plans do you have"));
        assert!(!only_asks("Why does the pool deadlock? Because it is too small."));
        assert!(!only_asks(""));
    }

    fn with_key(mut item: Item, schema_key: &str) -> Item {
        item.schema_key = schema_key.into();
        item
    }

    #[test]
    fn the_subject_outranks_generic_task_words() {
        // The README's demo: "fix" and "bug" are in as few items as "webhook", yet an item
        // matching only them (or "bug" only as its kind's schema key) is about something else.
        let query = Query::parse("fix the webhook signature bug");
        let candidates = Candidates {
            items: vec![
                with_key(item("Pagination skipped a row", "Keyset pagination fixed; the bug is gone"), "root/bugs"),
                with_key(item("Refresh token reuse", "Two tabs log the user out"), "root/bugs"),
                with_key(item("Webhook delivery worker", "retries failed webhook deliveries"), "root/implementation"),
            ],
            statistics: TermStatistics { documents: 33, document_frequency: vec![2, 2, 1, 3] },
        };
        let ranked = rank(&query, &candidates, &Ranking::default());
        let order: Vec<(&str, bool)> =
            ranked.iter().map(|hit| (candidates.items[hit.index].title.as_str(), hit.generic_only)).collect();
        assert_eq!(
            order,
            [("Webhook delivery worker", false), ("Pagination skipped a row", true), ("Refresh token reuse", true)]
        );
        // "webhook" alone is more of the query than "fix" and "bug" together.
        assert!(ranked[0].coverage > 0.25 && ranked[1].coverage < 0.25, "{ranked:?}");
    }

    #[test]
    fn a_task_word_an_item_is_named_for_counts_in_full_beside_the_subject() {
        // The coding corpus's "intermittent test failure … billing worker": both match "test",
        // "billing" and "worker", but only the first is named for the test.
        let query = Query::parse("intermittent test failure in the billing worker");
        let candidates = Candidates {
            items: vec![
                item("Design review: billing worker", "billing worker worker notes; we should test the schema"),
                item("Flaky billing worker integration test", "the billing worker test fails on clock skew"),
                item("Test plan", "every test runs twice"),
            ],
            statistics: TermStatistics { documents: 1000, document_frequency: vec![2, 40, 10, 30, 30] },
        };
        let coverage = |ranking: &Ranking| -> Vec<(String, f64, bool)> {
            rank(&query, &candidates, ranking)
                .into_iter()
                .map(|hit| (candidates.items[hit.index].title.clone(), hit.coverage, hit.generic_only))
                .collect()
        };
        let ranked = coverage(&Ranking::default());
        assert_eq!(ranked[0].0, "Flaky billing worker integration test", "{ranked:?}");
        assert!(ranked[0].1 > ranked[1].1 + 0.05, "{ranked:?}");
        // Named for "test" alone, without the subject, it stays a generic match.
        assert_eq!(ranked[2], ("Test plan".to_string(), ranked[2].1, true), "{ranked:?}");
        assert!(ranked[2].1 < 0.1, "{ranked:?}");
        // Without the rule the two are the same match.
        let flat = coverage(&Ranking { named_weak_weight: 0.0, ..Ranking::default() });
        assert!((flat[0].1 - flat[1].1).abs() < 1e-9, "{flat:?}");
    }

    #[test]
    fn generic_words_rank_when_they_are_all_the_query_has() {
        let query = Query::parse("fix the bug");
        let candidates = Candidates {
            items: vec![
                with_key(item("Deploys", "on Fridays"), "root/notes"),
                with_key(item("Parser bug", "fixed by escaping quotes"), "root/notes"),
            ],
            statistics: TermStatistics { documents: 33, document_frequency: vec![2, 2] },
        };
        let ranked = rank(&query, &candidates, &Ranking::default());
        assert_eq!(ranked.len(), 1);
        assert!(!ranked[0].generic_only);
        assert!((ranked[0].coverage - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_word_most_of_the_store_shares_weighs_little() {
        // "kate" is in 60 of 100 items: "pottery" alone is more of the query than "kate" and
        // "class" together (by IDF alone it is less). (Emi says both: no turn is Kate's.)
        let order = ranked(
            "kate pottery class",
            vec![item("Kate's class", "Emi: Kate's class starts at six"), item("Pottery", "Emi: pottery on Sunday")],
            100,
            &[60, 30, 40],
        );
        assert_eq!(order[0].0, "Pottery");
    }

    #[test]
    fn a_turn_said_by_someone_the_query_names_ranks_first_when_it_holds_the_subject() {
        // Both turns match "sports"; "kate" is in 60 of 100 items (the two speakers share
        // the store), so the name alone weighs little.
        let query = "What sports does Kate play?";
        let turns = || {
            vec![
                item("I love sports", "Emi: I love sports too, Kate, and I watch sports at night"),
                item("Sports are fun", "Kate: sports are fun, basketball with friends"),
                item("Morning", "Kate: good morning!"),
            ]
        };
        let query_parsed = Query::parse(query);
        let candidates = Candidates {
            items: turns(),
            statistics: TermStatistics { documents: 100, document_frequency: vec![10, 60, 20] },
        };
        let ranked = rank(&query_parsed, &candidates, &Ranking::default());
        let order: Vec<(&str, bool)> =
            ranked.iter().map(|hit| (candidates.items[hit.index].title.as_str(), hit.said_by_named)).collect();
        assert_eq!(order[0], ("Sports are fun", true));
        // A turn matching the name alone is not lifted: it says nothing of the subject.
        assert!(order.contains(&("Morning", false)), "{order:?}");
        // Without the rule Emi's turn, with more of the words, comes first.
        let off = Ranking { speaker_weight: 0.0, ..Ranking::default() };
        let first = rank(&query_parsed, &candidates, &off)[0].index;
        assert_eq!(candidates.items[first].title, "I love sports");
    }

    #[test]
    fn a_speaker_label_is_a_short_name_before_a_colon() {
        assert_eq!(speaker_label("Kate: I made lasagna"), Some("Kate"));
        assert_eq!(speaker_label("Fahim Khan: league tonight"), Some("Fahim Khan"));
        assert_eq!(speaker_label("elise:\tMiami"), Some("elise"));
        // Not a label: no space after the colon, a time, a sentence, a second line, a path.
        assert_eq!(speaker_label("Kate:lasagna"), None);
        assert_eq!(speaker_label("at 10:30 we met"), None);
        assert_eq!(speaker_label("We decided on the following plan: retries"), None);
        assert_eq!(speaker_label("Kate\nEmi: hi"), None);
        assert_eq!(speaker_label("src/app.rs: the entry point"), None);
        assert_eq!(speaker_label(": empty"), None);
    }

    #[test]
    fn a_match_in_the_schema_key_alone_is_no_subject() {
        let query = Query::parse("tenancy migrations");
        let candidates = Candidates {
            items: vec![
                with_key(item("Row-level security", "policies per table"), "root/architecture/tenancy"),
                with_key(item("Tenancy", "every table carries tenant_id"), "root/notes"),
            ],
            statistics: TermStatistics { documents: 33, document_frequency: vec![2, 9] },
        };
        let ranked = rank(&query, &candidates, &Ranking::default());
        let order: Vec<(&str, bool)> =
            ranked.iter().map(|hit| (candidates.items[hit.index].title.as_str(), hit.generic_only)).collect();
        assert_eq!(order, [("Tenancy", false), ("Row-level security", true)]);
    }

    #[test]
    fn task_words_are_known_in_every_form() {
        let stemmer = Stemmer::default();
        let words = "fix fixed fixes fixing bug bugs add added adds adding error errors issue issues implement \
                     implemented implementing test tests testing update updated updates change changed changes \
                     problem problems debug debugging";
        let missing: Vec<String> = words
            .split_whitespace()
            .filter(|word| !is_task_word(&stemmer.stem(word)))
            .map(|word| format!("{word} -> {}", stemmer.stem(word)))
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
        for word in ["webhook", "signature", "pottery", "tenancy"] {
            assert!(!is_task_word(&stemmer.stem(word)), "{word}");
        }
    }

    #[test]
    fn fields_matched_are_reported_per_term() {
        let query = Query::parse("retry webhook");
        let mut hit = item("Retry policy", "the webhook dispatcher retries");
        hit.tags = vec!["webhook".into()];
        let candidates = Candidates {
            items: vec![hit],
            statistics: TermStatistics { documents: 10, document_frequency: vec![2, 2] },
        };
        let ranked = rank(&query, &candidates, &Ranking::default());
        let fields: Vec<Vec<&str>> = ranked[0].matched.iter().map(|m| m.fields.names()).collect();
        assert_eq!(fields, vec![vec!["title", "content"], vec!["content", "tags"]]);
        assert!((ranked[0].coverage - 1.0).abs() < 1e-9);
    }
}
