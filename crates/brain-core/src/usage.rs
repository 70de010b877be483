//! Recall that learns from use (issue 32): which injected items a session *used*, told from
//! what its agent did, and how that moves recall afterwards.
//!
//! **Detection.** A session is given items (the hooks remember which); capture then reads
//! the session's transcript. An injected item counts as used when the agent
//! - fetched it: a tool call naming its id (`brain_get_memory`, `brain get mem_…`);
//! - touched a file it names: any tool given one of the item's `files` (read or edit);
//! - ran a command it names: a shell command containing one of the item's code spans;
//! - quoted or paraphrased it: one assistant message holds a four-word phrase of the item,
//!   or three of its *distinctive* terms — stems found in no other item the session was
//!   given and in none of the user's prompts (the agent repeating the user is not use).
//!
//! Each hit keeps its evidence (which turn, which signal, what matched) so a decision can be
//! explained. Detection is pure: the [`Watch`] is built from the items, the events come from
//! the transcript reader, and the same transcript gives the same hits.
//!
//! **Learning.** [`learned`] turns an item's recorded decisions into a factor on its recall
//! score, in `[FLOOR, 1 + MAX_BONUS]` from inference, so use alone can neither push an item
//! to the top nor erase it:
//! - explicit feedback (`brain feedback`, MCP `brain_feedback`) decides over any inference:
//!   the newest one gives [`USEFUL_FACTOR`] or [`NOT_USEFUL_FACTOR`];
//! - pinned and `stable` items are never lowered by inference;
//! - every session since the item was last used that was given it and did not use it,
//!   weighed by how alike its task was to the current one (shared task stems over the
//!   current task's) and by age (half-life [`HALF_LIFE_DAYS`]), adds to a penalty that moves
//!   the factor from 1 toward [`FLOOR`] (halfway per [`HALF_PENALTY`]). The approach is
//!   smooth, never flat: among items near the floor the one given less often ranks first, so
//!   recall keeps trying what it has tried least — which is how it recovers when needs
//!   change;
//! - sessions of like tasks that used it, weighed the same way, raise it by up to
//!   [`MAX_BONUS`].
//!
//! A used item is reinforced (its strength, by the caller); being returned is not.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::Item;
use crate::search::{Stemmer, is_stopword, is_task_word, words};
use crate::time::Timestamp;

/// The lowest factor inference gives (a never-used item still ranks on its relevance).
pub const FLOOR: f64 = 0.6;
/// The penalty (unused sessions of an identical task, weighed) that halves the distance of
/// the factor to [`FLOOR`]: one such session gives about 0.85, two 0.76, four 0.66.
pub const HALF_PENALTY: f64 = 1.5;
/// Half-life of an unused decision's weight, in days.
pub const HALF_LIFE_DAYS: f64 = 30.0;
/// Unused decisions considered per item (the newest ones).
pub const MAX_CONSIDERED: usize = 16;
/// The most inference adds for use: an item used in sessions of like tasks ranks up to this
/// much higher (halfway with [`HALF_BONUS`] weighed uses).
pub const MAX_BONUS: f64 = 0.15;
pub const HALF_BONUS: f64 = 1.0;
/// The factor of an item whose newest feedback says it was useful / not useful: beyond
/// anything inference gives, either way.
pub const USEFUL_FACTOR: f64 = 1.25;
pub const NOT_USEFUL_FACTOR: f64 = 0.5;
/// Task stems kept per decision.
pub const MAX_TASK_STEMS: usize = 24;
/// Words of a quoted phrase.
pub const PHRASE_WORDS: usize = 4;
/// Distinctive terms one message must share with an item to count as a paraphrase.
pub const PARAPHRASE_TERMS: usize = 3;
/// Bounds on what is watched per item.
const MAX_TERMS: usize = 64;
const MAX_PHRASES: usize = 256;
const MAX_COMMANDS: usize = 8;
/// Longest evidence text kept for one hit.
pub const EVIDENCE_CHARS: usize = 200;

/// How a session used an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UseSignal {
    /// A tool call named its id.
    Fetched,
    /// A tool was given a file the item names.
    File,
    /// A shell command contained a command the item names.
    Command,
    /// An assistant message quoted or paraphrased it.
    Quoted,
    /// The user or agent said so (`brain feedback`, `brain_feedback`).
    Feedback,
}

impl UseSignal {
    pub fn as_str(self) -> &'static str {
        match self {
            UseSignal::Fetched => "fetched",
            UseSignal::File => "file",
            UseSignal::Command => "command",
            UseSignal::Quoted => "quoted",
            UseSignal::Feedback => "feedback",
        }
    }

    pub fn parse(text: &str) -> Option<UseSignal> {
        [UseSignal::Fetched, UseSignal::File, UseSignal::Command, UseSignal::Quoted, UseSignal::Feedback]
            .into_iter()
            .find(|signal| signal.as_str() == text)
    }
}

/// One sign that a session used an item: the first one seen per item is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UseHit {
    pub id: String,
    pub signal: UseSignal,
    /// The prompt the agent was answering (1 = the first).
    pub turn: u32,
    /// What matched, bounded (the caller redacts it before it is stored).
    pub evidence: String,
}

/// What is watched for one item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Watched {
    id: String,
    files: Vec<String>,
    commands: Vec<String>,
    terms: BTreeSet<String>,
    phrases: BTreeSet<String>,
}

/// The items a session was given, as what would show their use.
#[derive(Debug, Default)]
pub struct Watch {
    items: Vec<Watched>,
    stemmer: Stemmer,
}

/// Distinct stems of the words of `text` that say what it is about: no stopwords, no generic
/// task words, no one-letter words.
fn subject_stems(stemmer: &Stemmer, text: &str) -> BTreeSet<String> {
    words(text)
        .filter(|word| word.chars().count() >= 3 && !is_stopword(word))
        .map(|word| stemmer.stem(&word).into_owned())
        .filter(|stem| !is_task_word(stem))
        .collect()
}

/// The stems of a task (a session's first prompts, a query) that decisions remember and
/// compare: sorted, at most [`MAX_TASK_STEMS`].
pub fn task_stems(text: &str) -> Vec<String> {
    subject_stems(&Stemmer::default(), text).into_iter().take(MAX_TASK_STEMS).collect()
}

/// Four-word phrases of `text` (lowercased words), skipping those of stopwords only.
fn phrases(text: &str) -> impl Iterator<Item = String> {
    let list: Vec<String> = words(text).map(|word| word.into_owned()).collect();
    let count = list.len().saturating_sub(PHRASE_WORDS - 1);
    (0..count).filter_map(move |start| {
        let window = &list[start..start + PHRASE_WORDS];
        let meaningful = window.iter().filter(|word| !is_stopword(word) && word.chars().count() >= 3).count();
        (meaningful >= 2).then(|| window.join(" "))
    })
}

/// Code spans of `content` that look like commands: `` `cargo test -p x` ``, fenced lines,
/// `$ make` lines. Normalised whitespace, 4..=200 characters, with a space.
fn commands(content: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut push = |span: &str| {
        let normal = span.split_whitespace().collect::<Vec<_>>().join(" ");
        let normal = normal.trim_start_matches("$ ").to_string();
        if (4..=200).contains(&normal.chars().count()) && normal.contains(' ') && !found.contains(&normal) {
            found.push(normal);
        }
    };
    let mut in_fence = false;
    for line in content.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || trimmed.starts_with("$ ") {
            push(trimmed);
            continue;
        }
        let mut parts = trimmed.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            push(span);
        }
    }
    found.truncate(MAX_COMMANDS);
    found
}

/// The item ids (`mem_` and 26 Crockford characters) named in `text`, at most 8.
fn item_ids(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    text.match_indices("mem_")
        .filter_map(move |(start, _)| {
            let end = start + 30;
            let id = text.get(start..end)?;
            let body = id[4..].bytes().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase());
            let whole = bytes.get(end).is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'_');
            (body && whole).then_some(id)
        })
        .take(8)
}

/// Whether `text` names `id` as a whole token.
fn mentions(text: &str, id: &str) -> bool {
    item_ids(text).any(|named| named == id) || text == id
}

fn normal_path(path: &str) -> &str {
    path.trim().trim_start_matches("./").trim_end_matches('/')
}

/// Whether two paths name the same file: equal, or one ends with the other at a `/`
/// (an absolute path against a project-relative one).
fn same_file(a: &str, b: &str) -> bool {
    let (a, b) = (normal_path(a), normal_path(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    long == short || (long.ends_with(short) && long.as_bytes()[long.len() - short.len() - 1] == b'/')
}

/// `text` on one line (runs of whitespace as one space), cut to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let single = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match single.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &single[..end]),
        None => single,
    }
}

fn bounded(text: &str) -> String {
    one_line(text, EVIDENCE_CHARS)
}

impl Watch {
    /// The watch over `items` (the items a session was given). A term counts as distinctive
    /// for an item only when no other watched item has it.
    pub fn new(items: &[Item]) -> Watch {
        let stemmer = Stemmer::default();
        let stems: Vec<BTreeSet<String>> = items
            .iter()
            .map(|item| subject_stems(&stemmer, &format!("{} {} {}", item.title, item.content, item.tags.join(" "))))
            .collect();
        let mut frequency: BTreeMap<&str, usize> = BTreeMap::new();
        for set in &stems {
            for stem in set {
                *frequency.entry(stem.as_str()).or_default() += 1;
            }
        }
        let watched = items
            .iter()
            .zip(&stems)
            .map(|(item, set)| Watched {
                id: item.id.clone(),
                files: item.files.iter().map(|file| normal_path(file).to_string()).filter(|f| !f.is_empty()).collect(),
                commands: commands(&item.content),
                terms: set
                    .iter()
                    .filter(|stem| frequency.get(stem.as_str()) == Some(&1))
                    .take(MAX_TERMS)
                    .cloned()
                    .collect(),
                phrases: phrases(&format!("{}\n{}", item.title, item.content)).take(MAX_PHRASES).collect(),
            })
            .collect();
        Watch { items: watched, stemmer }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The watched ids.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.items.iter().map(|item| item.id.as_str())
    }

    /// Hits of one tool call: `name`, the file it was given, the shell command it ran and
    /// the text of its input (where an id may be named).
    pub fn tool_call(
        &self,
        turn: u32,
        name: &str,
        file: Option<&str>,
        command: Option<&str>,
        input: &str,
    ) -> Vec<UseHit> {
        let command = command.map(|command| command.split_whitespace().collect::<Vec<_>>().join(" "));
        let mut hits = Vec::new();
        for item in &self.items {
            let hit = |signal, what: &str| UseHit {
                id: item.id.clone(),
                signal,
                turn,
                evidence: bounded(&format!("turn {turn}: {name} {what}")),
            };
            if mentions(input, &item.id) || command.as_deref().is_some_and(|command| mentions(command, &item.id)) {
                hits.push(hit(UseSignal::Fetched, &item.id));
            } else if let Some(file) = file.filter(|file| item.files.iter().any(|known| same_file(known, file))) {
                hits.push(hit(UseSignal::File, file));
            } else if let Some(command) = &command
                && let Some(known) = item.commands.iter().find(|known| command.contains(known.as_str()))
            {
                hits.push(hit(UseSignal::Command, known));
            }
        }
        // An item the session was not given but fetched (searched, then opened) is used too.
        for id in item_ids(input).chain(command.as_deref().into_iter().flat_map(item_ids)) {
            if !self.items.iter().any(|item| item.id == id) && !hits.iter().any(|hit: &UseHit| hit.id == id) {
                hits.push(UseHit {
                    id: id.to_string(),
                    signal: UseSignal::Fetched,
                    turn,
                    evidence: bounded(&format!("turn {turn}: {name} {id}")),
                });
            }
        }
        hits
    }

    /// Hits of one assistant message, given the stems of the user's prompts so far (the
    /// agent repeating the user is not use).
    pub fn assistant_text(&self, turn: u32, text: &str, prompt_stems: &BTreeSet<String>) -> Vec<UseHit> {
        if text.trim().is_empty() {
            return Vec::new();
        }
        let said: BTreeSet<String> = phrases(text).collect();
        let stems = subject_stems(&self.stemmer, text);
        let mut hits = Vec::new();
        for item in &self.items {
            let hit = |what: String| UseHit {
                id: item.id.clone(),
                signal: UseSignal::Quoted,
                turn,
                evidence: bounded(&format!("turn {turn}: {what}")),
            };
            if let Some(phrase) = item.phrases.iter().find(|phrase| {
                said.contains(*phrase)
                    && !subject_stems(&self.stemmer, phrase).iter().all(|stem| prompt_stems.contains(stem))
            }) {
                hits.push(hit(format!("quoted \"{phrase}\"")));
                continue;
            }
            let shared: Vec<&String> =
                item.terms.iter().filter(|term| stems.contains(*term) && !prompt_stems.contains(*term)).collect();
            if shared.len() >= PARAPHRASE_TERMS {
                let list = shared.iter().take(6).map(|term| term.as_str()).collect::<Vec<_>>().join(", ");
                hits.push(hit(format!("said its terms {list}")));
            }
        }
        hits
    }

    /// The stems of a prompt, to add to the prompt stems a session has typed.
    pub fn prompt_stems(&self, text: &str) -> BTreeSet<String> {
        subject_stems(&self.stemmer, text)
    }
}

/// What one decision said about an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The session was given it and did not use it.
    Unused,
    /// The session used it, as the signal shows.
    Used(UseSignal),
    /// Someone said whether it was useful (`brain feedback`, `brain_feedback`).
    Feedback { useful: bool },
}

/// One recorded decision about an item, as learning reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    /// The task stems of the session (sorted; empty for feedback and task-less sessions).
    pub task: Vec<String>,
    pub at: Timestamp,
}

/// What learning makes of an item's decisions for one task.
#[derive(Clone, Debug, PartialEq)]
pub struct Learned {
    /// Multiplies the recall score.
    pub factor: f64,
    /// Why, in a few words (empty when the factor is 1).
    pub why: String,
}

impl Learned {
    pub const NEUTRAL: Learned = Learned { factor: 1.0, why: String::new() };
}

/// How alike a decision's task is to the current one: the share of the current task's
/// stems it shared. Two task-less sessions are alike; one task-less and one not, half.
pub fn task_similarity(past: &[String], current: &[String]) -> f64 {
    match (past.is_empty(), current.is_empty()) {
        (true, true) => 1.0,
        (true, false) | (false, true) => 0.5,
        (false, false) => {
            let shared = current.iter().filter(|stem| past.binary_search(stem).is_ok()).count();
            shared as f64 / current.len() as f64
        }
    }
}

/// The learned factor (module docs) of an item with `decisions` (any order) for a task of
/// `task` stems (sorted), at `now`. `protected`: pinned or stable (inference never lowers it).
pub fn learned(decisions: &[Decision], task: &[String], protected: bool, now: Timestamp) -> Learned {
    let mut newest_first: Vec<&Decision> = decisions.iter().collect();
    newest_first.sort_by_key(|decision| std::cmp::Reverse(decision.at));
    let feedback = newest_first.iter().find_map(|decision| match decision.verdict {
        Verdict::Feedback { useful } => Some(useful),
        _ => None,
    });
    match feedback {
        Some(true) => return Learned { factor: USEFUL_FACTOR, why: "marked useful".into() },
        Some(false) => return Learned { factor: NOT_USEFUL_FACTOR, why: "marked not useful".into() },
        None if protected => return Learned::NEUTRAL,
        None => {}
    }
    let weight = |decision: &Decision| {
        let age = crate::time::age_days(decision.at, now).max(0.0);
        task_similarity(&decision.task, task) * 0.5_f64.powf(age / HALF_LIFE_DAYS)
    };
    let unused: Vec<f64> = newest_first
        .iter()
        .take_while(|d| d.verdict == Verdict::Unused)
        .take(MAX_CONSIDERED)
        .map(|d| weight(d))
        .filter(|w| *w > 0.0)
        .collect();
    let used: Vec<f64> = newest_first
        .iter()
        .filter(|d| matches!(d.verdict, Verdict::Used(_)))
        .take(MAX_CONSIDERED)
        .map(|d| weight(d))
        .filter(|w| *w > 0.0)
        .collect();
    let penalty: f64 = unused.iter().sum();
    let bonus: f64 = used.iter().sum();
    let factor = (FLOOR + (1.0 - FLOOR) * 0.5_f64.powf(penalty / HALF_PENALTY))
        * (1.0 + MAX_BONUS * (1.0 - 0.5_f64.powf(bonus / HALF_BONUS)));
    if (factor - 1.0).abs() < 1e-9 {
        return Learned::NEUTRAL;
    }
    let count = |n: usize| if n == 1 { "1 session".to_string() } else { format!("{n} sessions") };
    let why = match (used.len(), unused.len()) {
        (0, n) => format!("given and not used in {} of like tasks", count(n)),
        (u, 0) => format!("used in {} of like tasks", count(u)),
        (u, n) => format!("used in {} of like tasks, then given and not used in {}", count(u), count(n)),
    };
    Learned { factor, why }
}

#[cfg(test)]
mod tests;
