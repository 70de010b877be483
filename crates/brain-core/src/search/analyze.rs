//! Text analysis shared by queries and candidates: words, stopwords, stems and dates.
//!
//! A word is a maximal run of alphanumeric characters, lowercased (FTS5's `unicode61` splits
//! the same way). Stopwords are dropped *before* stemming: stemmed, `has` becomes `ha` and
//! `was` becomes `wa`, which look like rare terms and used to rank. Stems are Snowball
//! English (Porter 2); the store's own matcher (FTS5's Porter, PostgreSQL's `english`
//! configuration) may conflate a few forms differently, which only moves an edge case
//! between "matched" and "not matched" — the store finds candidates, this module ranks them.

use std::borrow::Cow;

/// At most this many distinct terms of a query are searched for (the rest are ignored, so a
/// pasted 10 KB text costs what a long sentence costs).
pub const MAX_QUERY_TERMS: usize = 32;

/// At most this many bytes of a query are read.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

/// English stopwords: the Snowball list, the pieces contractions split into (`don`, `isn`)
/// and the modal verbs. Sorted, for a binary search.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "ain",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "m",
    "ma",
    "may",
    "me",
    "might",
    "mightn",
    "more",
    "most",
    "must",
    "mustn",
    "my",
    "myself",
    "needn",
    "no",
    "nor",
    "not",
    "now",
    "o",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shall",
    "shan",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "won",
    "would",
    "wouldn",
    "y",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether `word` (lowercased) says nothing about what a text is about.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Stems of the words a coding task names whatever its subject ("fix the webhook signature
/// bug", "add a test for the parser"): in a coding memory they are nearly stopwords, yet a
/// small store's IDF cannot tell (three items saying "fix" make it look rare). Sorted, for a
/// binary search; Snowball stems, so every form of a word shares its entry (Snowball stems
/// "added" and "adding" to "ad", which makes "ads" weak too: a small price).
const TASK_STEMS: &[&str] =
    &["ad", "add", "bug", "chang", "debug", "error", "fix", "implement", "issu", "problem", "test", "updat"];

/// Whether a stem is a generic task word (see [`TASK_STEMS`]): such a term counts for
/// little in a query that has a subject.
pub fn is_task_word(stem: &str) -> bool {
    TASK_STEMS.binary_search(&stem).is_ok()
}

/// The lowercased words of `text`, in order.
pub fn words(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).map(|word| {
        if word.chars().any(char::is_uppercase) { Cow::Owned(word.to_lowercase()) } else { Cow::Borrowed(word) }
    })
}

/// A stemmer for one language (English for now; the one place another language would join).
pub struct Stemmer(rust_stemmers::Stemmer);

impl std::fmt::Debug for Stemmer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Stemmer(english)")
    }
}

impl Default for Stemmer {
    fn default() -> Stemmer {
        Stemmer(rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
    }
}

impl Stemmer {
    /// The stem of a lowercased word. Numbers and words mixing digits stay as they are.
    pub fn stem<'w>(&self, word: &'w str) -> Cow<'w, str> {
        if word.bytes().any(|b| b.is_ascii_digit()) {
            return Cow::Borrowed(word);
        }
        self.0.stem(word)
    }
}

/// A calendar date a query names ("May 4th", "29 Dec 2023", "2023-05-04", "25.01.2024",
/// "May 2023").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateSpec {
    pub year: Option<i16>,
    pub month: i8,
    pub day: Option<i8>,
}

impl DateSpec {
    /// Whether `date` falls on this date (any year when none was named; a day either side,
    /// since the query's time zone is unknown), or in this month when no day was named.
    pub fn matches(&self, date: jiff::civil::Date) -> bool {
        if self.year.is_some_and(|year| year != date.year()) && self.day.is_none() {
            return false;
        }
        match self.day {
            None => date.month() == self.month,
            Some(day) => [-1i64, 0, 1].iter().any(|shift| {
                let Ok(shifted) = date.checked_add(jiff::Span::new().days(*shift)) else { return false };
                shifted.month() == self.month
                    && shifted.day() == day
                    && self.year.is_none_or(|year| year == shifted.year())
            }),
        }
    }
}

impl std::fmt::Display for DateSpec {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.year, self.day) {
            (Some(year), Some(day)) => write!(formatter, "{year:04}-{:02}-{day:02}", self.month),
            (Some(year), None) => write!(formatter, "{year:04}-{:02}", self.month),
            (None, Some(day)) => write!(formatter, "--{:02}-{day:02}", self.month),
            (None, None) => write!(formatter, "--{:02}", self.month),
        }
    }
}

fn month_number(word: &str) -> Option<i8> {
    let month = match word {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    };
    Some(month)
}

/// A day of the month written as `4`, `04` or `4th`.
fn day_number(word: &str) -> Option<i8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if digits.is_empty() || digits.len() > 2 || !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    let day: i8 = digits.parse().ok()?;
    (1..=31).contains(&day).then_some(day)
}

fn year_number(word: &str) -> Option<i16> {
    if word.len() != 4 {
        return None;
    }
    let year: i16 = word.parse().ok()?;
    (1900..=2199).contains(&year).then_some(year)
}

/// The dates named in a list of words, and which words they used. A month name counts only
/// next to a day or a year, so "may" the verb and "march" the walk stay words.
pub fn find_dates(words: &[String]) -> (Vec<DateSpec>, Vec<bool>) {
    let mut used = vec![false; words.len()];
    let mut dates = Vec::new();
    let mut index = 0;
    while index < words.len() {
        // Numeric day and month before a year: 25.01.2024, 1/25/2024. Day first where the
        // month could be either (most of the world writes it so); both readings when both
        // are valid (10.01.2024: 10 January or 1 October), since the writer's is unknown.
        if index + 2 < words.len()
            && words[index].len() <= 2
            && words[index + 1].len() <= 2
            && let (Ok(first), Ok(second), Some(year)) =
                (words[index].parse::<i8>(), words[index + 1].parse::<i8>(), year_number(&words[index + 2]))
        {
            let before = dates.len();
            if (1..=12).contains(&second) && (1..=31).contains(&first) {
                dates.push(DateSpec { year: Some(year), month: second, day: Some(first) });
            }
            if (1..=12).contains(&first) && (1..=31).contains(&second) && first != second {
                dates.push(DateSpec { year: Some(year), month: first, day: Some(second) });
            }
            if dates.len() > before {
                used[index..index + 3].iter_mut().for_each(|flag| *flag = true);
                index += 3;
                continue;
            }
        }
        // ISO: 2023-05-04 arrives as three words.
        if index + 2 < words.len()
            && let (Some(year), Ok(month), Some(day)) =
                (year_number(&words[index]), words[index + 1].parse::<i8>(), day_number(&words[index + 2]))
            && words[index + 1].len() == 2
            && (1..=12).contains(&month)
        {
            dates.push(DateSpec { year: Some(year), month, day: Some(day) });
            used[index..index + 3].iter_mut().for_each(|flag| *flag = true);
            index += 3;
            continue;
        }
        let Some(month) = month_number(&words[index]) else {
            index += 1;
            continue;
        };
        let before_day = index.checked_sub(1).filter(|b| !used[*b]).and_then(|b| day_number(&words[b]).map(|d| (b, d)));
        // "4th of May"
        let before_of_day = index
            .checked_sub(2)
            .filter(|b| words[b + 1] == "of" && !used[*b])
            .and_then(|b| day_number(&words[b]).map(|d| (b, d)));
        let after_day = words.get(index + 1).and_then(|w| day_number(w)).map(|d| (index + 1, d));
        let (day, mut last) = match (before_day.or(before_of_day), after_day) {
            (Some((start, day)), _) => {
                used[start..index].iter_mut().for_each(|flag| *flag = true);
                (Some(day), index)
            }
            (None, Some((at, day))) => (Some(day), at),
            (None, None) => (None, index),
        };
        let year = words.get(last + 1).and_then(|w| year_number(w));
        if year.is_some() {
            last += 1;
        }
        if day.is_none() && year.is_none() {
            index += 1;
            continue;
        }
        used[index..=last].iter_mut().for_each(|flag| *flag = true);
        dates.push(DateSpec { year, month, day });
        index = last + 1;
    }
    (dates, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(text: &str) -> Vec<String> {
        words(text).map(Cow::into_owned).collect()
    }

    #[test]
    fn the_stopword_list_is_sorted_so_lookups_find_every_word() {
        assert!(STOPWORDS.windows(2).all(|pair| pair[0] < pair[1]));
        for word in ["when", "did", "has", "his", "does", "was", "the", "may"] {
            assert!(is_stopword(word), "{word}");
        }
        assert!(!is_stopword("retry"));
    }

    #[test]
    fn words_split_on_anything_not_alphanumeric_and_lowercase() {
        assert_eq!(owned("Retry-logic: the WEBHOOK's 502!"), ["retry", "logic", "the", "webhook", "s", "502"]);
        assert_eq!(owned("\"a\" OR b* NEAR(c)"), ["a", "or", "b", "near", "c"]);
    }

    #[test]
    fn stems_conflate_forms_and_leave_numbers() {
        let stemmer = Stemmer::default();
        assert_eq!(stemmer.stem("retries"), stemmer.stem("retry"));
        assert_eq!(stemmer.stem("running"), "run");
        assert_eq!(stemmer.stem("502"), "502");
        assert_eq!(stemmer.stem("v2"), "v2");
    }

    #[test]
    fn dates_are_found_next_to_days_and_years_only() {
        let check = |text: &str, expected: &[&str], kept: &[&str]| {
            let words = owned(text);
            let (dates, used) = find_dates(&words);
            let shown: Vec<String> = dates.iter().map(ToString::to_string).collect();
            assert_eq!(shown, expected, "{text}");
            let rest: Vec<&str> =
                words.iter().zip(&used).filter(|(_, used)| !**used).map(|(word, _)| word.as_str()).collect();
            assert_eq!(rest, kept, "{text}");
        };
        check("what did Kate cook on 29 Dec 2023", &["2023-12-29"], &["what", "did", "kate", "cook", "on"]);
        check("On May 4th, I asked", &["--05-04"], &["on", "i", "asked"]);
        check("trip in May 2023", &["2023-05"], &["trip", "in"]);
        check("the 4th of July party", &["--07-04"], &["the", "party"]);
        check("deploy 2024-03-07 failed", &["2024-03-07"], &["deploy", "failed"]);
        check("may I march on", &[], &["may", "i", "march", "on"]);
        check("version 4 of the api", &[], &["version", "4", "of", "the", "api"]);
        check("movie on 25.01.2024?", &["2024-01-25"], &["movie", "on"]);
        check("on 1/25/2024", &["2024-01-25"], &["on"]);
        check("plans for 10.01.2024", &["2024-01-10", "2024-10-01"], &["plans", "for"]);
        check("read 11/22/63 by King", &[], &["read", "11", "22", "63", "by", "king"]);
    }

    #[test]
    fn a_date_matches_its_day_a_day_either_side_or_its_month() {
        let date = |y, m, d| jiff::civil::date(y, m, d);
        let may4 = DateSpec { year: None, month: 5, day: Some(4) };
        assert!(may4.matches(date(2023, 5, 4)));
        assert!(may4.matches(date(2021, 5, 5)));
        assert!(!may4.matches(date(2023, 5, 7)));
        let dec = DateSpec { year: Some(2023), month: 12, day: None };
        assert!(dec.matches(date(2023, 12, 31)));
        assert!(!dec.matches(date(2024, 12, 1)));
        let new_year = DateSpec { year: Some(2024), month: 1, day: Some(1) };
        assert!(new_year.matches(date(2023, 12, 31)));
    }
}
