//! Recall that learns from use (SPEC §5, issue 32): what sessions did with the items they were
//! given, recorded with its evidence, and what recall makes of it. Detection and the learning
//! rule are pure (`brain_core::usage`); this module records decisions (redacted, scoped to the
//! session's project), takes feedback, explains an item's decisions and reports the use rate.
//!
//! Invariants:
//! - a decision names an item of the session's project or a global one: a transcript of
//!   another project never changes this project's items;
//! - evidence is redacted and bounded before it is stored;
//! - a used item is reinforced once per session (strength + `recall::REINFORCEMENT`); being
//!   returned reinforces nothing; with learning off (`[search] learn_from_use = false`)
//!   decisions are still recorded, and nothing is learned from them;
//! - writing decisions moves the write generation (they change recall), reading them is one
//!   indexed query per session start.

use std::collections::HashMap;

use brain_core::usage::{Decision, Learned, UseHit, UseSignal, Verdict, learned, task_stems};
use brain_core::{Item, Scope, Timestamp};
use brain_store::{Access, UseRecord};
use serde::Serialize;

use crate::app::Brain;
use crate::error::{BrainError, BrainResult};
use crate::policy::Caller;

/// Decisions one session records at most (the items a session is given are bounded far below).
pub const MAX_DECISIONS: usize = 400;
/// Longest feedback note.
pub const MAX_NOTE_CHARS: usize = 500;

/// What a session did with what it was given, as capture found it.
#[derive(Clone, Debug)]
pub struct SessionUse<'a> {
    /// The host (`claude-code`, `codex`, …).
    pub host: &'a str,
    /// The host's session id.
    pub session: &'a str,
    /// The project of the session's working directory.
    pub project: &'a str,
    /// What the session was about (its first prompts): decisions remember its stems.
    pub task: &'a str,
    /// The ids the session was given (pins are left out: they are never learned from).
    pub given: &'a [String],
    /// Items of `given` (or others) already read by the caller: not read again.
    pub read: &'a [Item],
    /// Signs of use, the first per item (an item fetched but not given counts too).
    pub hits: &'a [UseHit],
}

/// What recording a session's decisions did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UseReport {
    pub used: Vec<String>,
    pub unused: Vec<String>,
    /// Items reinforced now (used for the first time in this session).
    pub reinforced: usize,
    /// Ids left out: unknown, pinned, or of another project.
    pub skipped: usize,
}

/// One decision about an item, as `brain why-used` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UseEntry {
    pub session: String,
    pub project: String,
    pub host: String,
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    pub evidence: String,
    pub task: String,
    #[serde(with = "brain_core::time::serde_rfc3339")]
    pub decided_at: Timestamp,
}

/// An item's decisions and what recall makes of them now.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UseView {
    pub id: String,
    pub title: String,
    /// The factor on its recall score for a session without a task, and why.
    pub factor: f64,
    pub why: String,
    pub decisions: Vec<UseEntry>,
}

/// The use rate of one week: of the items sessions were given, how many (and how many of
/// their tokens) they used.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct UseRate {
    #[serde(with = "brain_core::time::serde_rfc3339")]
    pub from: Timestamp,
    #[serde(with = "brain_core::time::serde_rfc3339")]
    pub until: Timestamp,
    pub sessions: usize,
    pub given: usize,
    pub used: usize,
    pub given_tokens: u64,
    pub used_tokens: u64,
}

impl UseRate {
    /// The share of given tokens that were used (0 when nothing was given).
    pub fn token_share(&self) -> f64 {
        if self.given_tokens == 0 { 0.0 } else { self.used_tokens as f64 / self.given_tokens as f64 }
    }
}

fn decision_of(record: &UseRecord) -> Decision {
    let verdict = match record.verdict.as_str() {
        "used" => Verdict::Used(record.signal.as_deref().and_then(UseSignal::parse).unwrap_or(UseSignal::Quoted)),
        "useful" => Verdict::Feedback { useful: true },
        "not_useful" => Verdict::Feedback { useful: false },
        _ => Verdict::Unused,
    };
    let mut task: Vec<String> = record.task.split_whitespace().map(str::to_string).collect();
    task.sort();
    Decision { verdict, task, at: record.decided_at }
}

fn clean(text: &str, max: usize) -> String {
    brain_core::usage::one_line(&brain_core::redact::redact_str(text), max)
}

impl Brain {
    /// Whether recall learns from use here (`[search] learn_from_use`, on by default).
    pub fn learns_from_use(&self) -> bool {
        self.config().search.learn_from_use
    }

    /// What learning makes of each of `items` for a session of `query` (in order). One
    /// read of the decisions of all of them; neutral when learning is off.
    pub(crate) fn learned_for<'i>(
        &self,
        items: impl Iterator<Item = &'i Item>,
        query: &str,
    ) -> BrainResult<Vec<Learned>> {
        let items: Vec<&Item> = items.collect();
        if !self.learns_from_use() || items.is_empty() {
            return Ok(vec![Learned::NEUTRAL; items.len()]);
        }
        let ids: Vec<&str> = items.iter().map(|item| item.id.as_str()).collect();
        let mut by_item: HashMap<&str, Vec<Decision>> = HashMap::new();
        for record in self.store().uses_of(&ids)? {
            if let Some(id) = ids.iter().find(|id| **id == record.item_id) {
                by_item.entry(id).or_default().push(decision_of(&record));
            }
        }
        let task = task_stems(query);
        let now = self.now();
        Ok(items
            .iter()
            .map(|item| match by_item.get(item.id.as_str()) {
                Some(decisions) => learned(decisions, &task, item.pinned || item.stable, now),
                None => Learned::NEUTRAL,
            })
            .collect())
    }

    /// Records what one session did with what it was given: every given item (but pins) is
    /// used or not, with the evidence; an item the session fetched without being given it is
    /// used too. Items of another project are left out. Newly used items are reinforced.
    pub fn record_session_use(&self, session: &SessionUse<'_>) -> BrainResult<UseReport> {
        let mut report = UseReport::default();
        let key = format!("{}:{}", session.host, session.session);
        let task = task_stems(session.task).join(" ");
        let now = self.now();
        let mut ids: Vec<&str> = session.given.iter().map(String::as_str).collect();
        for hit in session.hits {
            if hit.signal == UseSignal::Fetched && !ids.contains(&hit.id.as_str()) {
                ids.push(&hit.id);
            }
        }
        ids.truncate(MAX_DECISIONS);
        let project_scope = Scope::Project(session.project.to_string());
        let mut records = Vec::new();
        let mut items: HashMap<String, Item> = HashMap::new();
        for id in ids {
            let known = session.read.iter().find(|item| item.id == id).cloned();
            let item = match known.map_or_else(|| self.item_as_stored(id), |item| Ok(Some(item))) {
                Ok(Some(item)) => item,
                _ => {
                    report.skipped += 1;
                    continue;
                }
            };
            if item.pinned || !(item.scope == Scope::Global || item.scope == project_scope) {
                report.skipped += 1;
                continue;
            }
            let hit = session.hits.iter().find(|hit| hit.id == item.id);
            match hit {
                Some(_) => report.used.push(item.id.clone()),
                None => report.unused.push(item.id.clone()),
            }
            records.push(UseRecord {
                item_id: item.id.clone(),
                session: clean(&key, 300),
                project: session.project.to_string(),
                host: session.host.to_string(),
                verdict: if hit.is_some() { "used" } else { "unused" }.to_string(),
                signal: hit.map(|hit| hit.signal.as_str().to_string()),
                turn: hit.map(|hit| hit.turn),
                evidence: hit.map_or_else(String::new, |hit| clean(&hit.evidence, brain_core::usage::EVIDENCE_CHARS)),
                task: clean(&task, 1000),
                tokens: item.tokens,
                decided_at: now,
            });
            items.insert(item.id.clone(), item);
        }
        if records.is_empty() {
            return Ok(report);
        }
        let newly_used: Vec<String> = self.store().write(|tx| {
            let mut newly = Vec::new();
            for record in &records {
                if tx.record_use(record)? {
                    newly.push(record.item_id.clone());
                }
            }
            Ok(newly)
        })?;
        if self.learns_from_use() {
            self.reinforce(newly_used.iter().filter_map(|id| items.get(id)))?;
            report.reinforced = newly_used.len();
        }
        Ok(report)
    }

    fn reinforce<'i>(&self, items: impl Iterator<Item = &'i Item>) -> BrainResult<()> {
        let now = self.now();
        let accesses: Vec<Access> = items
            .map(|item| Access { id: item.id.clone(), strength: Some(crate::recall::reinforced_strength(item, now)) })
            .collect();
        if !accesses.is_empty() {
            self.store().record_access(&accesses, now, None)?;
        }
        Ok(())
    }

    /// Feedback on an item (`brain feedback`, MCP `brain_feedback`): useful or not, with an
    /// optional note. It decides over anything inferred from transcripts; useful reinforces.
    /// `caller` must be allowed to write the item's scope; `by` names who said it (`cli`,
    /// `mcp`).
    pub fn feedback_for(
        &self,
        caller: &Caller,
        by: &str,
        id: &str,
        useful: bool,
        note: Option<&str>,
    ) -> BrainResult<UseEntry> {
        let item = self.get(id)?;
        caller.require_write(&item.scope)?;
        if note.is_some_and(|note| note.chars().count() > MAX_NOTE_CHARS) {
            return Err(BrainError::user(format!("the note is longer than {MAX_NOTE_CHARS} characters")));
        }
        let now = self.now();
        let project = match &item.scope {
            Scope::Project(name) => name.clone(),
            _ => self.project().to_string(),
        };
        let record = UseRecord {
            item_id: item.id.clone(),
            session: format!("feedback:{}", brain_core::time::format_timestamp(now)),
            project,
            host: clean(by, 100),
            verdict: if useful { "useful" } else { "not_useful" }.to_string(),
            signal: Some(UseSignal::Feedback.as_str().to_string()),
            turn: None,
            evidence: clean(note.unwrap_or(""), MAX_NOTE_CHARS),
            task: String::new(),
            tokens: item.tokens,
            decided_at: now,
        };
        self.store().write(|tx| tx.record_use(&record))?;
        if useful {
            self.reinforce(std::iter::once(&item))?;
        }
        Ok(entry_of(record))
    }

    /// An item's decisions, newest first, and what recall makes of them for a session
    /// without a task. `caller` must be allowed to read the item.
    pub fn use_of_for(&self, caller: &Caller, id: &str) -> BrainResult<UseView> {
        let item = self.get(id)?;
        caller.require_read(&item.scope)?;
        let records = self.store().uses_of(&[item.id.as_str()])?;
        let decisions: Vec<Decision> = records.iter().map(decision_of).collect();
        let learned = learned(&decisions, &[], item.pinned || item.stable, self.now());
        Ok(UseView {
            id: item.id.clone(),
            title: item.title.clone(),
            factor: learned.factor,
            why: if learned.why.is_empty() { "no change to its recall".into() } else { learned.why },
            decisions: records.into_iter().map(entry_of).collect(),
        })
    }

    /// The use rate of the current project over the last `weeks` weeks (oldest first), in
    /// weeks that end at `now`.
    pub fn use_rate(&self, weeks: usize) -> BrainResult<Vec<UseRate>> {
        const WEEK: i64 = 7 * 24 * 3600;
        let weeks = weeks.clamp(1, 52);
        let now = self.now().as_second();
        let since =
            Timestamp::from_second(now - WEEK * weeks as i64).map_err(|err| BrainError::user(err.to_string()))?;
        let mut rates: Vec<UseRate> = (0..weeks)
            .map(|index| {
                let from = now - WEEK * (weeks - index) as i64;
                UseRate {
                    from: Timestamp::from_second(from).unwrap_or(since),
                    until: Timestamp::from_second(from + WEEK).unwrap_or(since),
                    ..UseRate::default()
                }
            })
            .collect();
        let mut sessions: Vec<std::collections::BTreeSet<String>> = vec![Default::default(); weeks];
        for record in self.store().uses_since(Some(self.project()), since)? {
            if !matches!(record.verdict.as_str(), "used" | "unused") {
                continue;
            }
            let index =
                ((record.decided_at.as_second() - since.as_second()) / WEEK).clamp(0, weeks as i64 - 1) as usize;
            let rate = &mut rates[index];
            sessions[index].insert(record.session.clone());
            rate.given += 1;
            rate.given_tokens += u64::from(record.tokens);
            if record.verdict == "used" {
                rate.used += 1;
                rate.used_tokens += u64::from(record.tokens);
            }
        }
        for (rate, set) in rates.iter_mut().zip(sessions) {
            rate.sessions = set.len();
        }
        Ok(rates)
    }
}

fn entry_of(record: UseRecord) -> UseEntry {
    UseEntry {
        session: record.session,
        project: record.project,
        host: record.host,
        verdict: record.verdict,
        signal: record.signal,
        turn: record.turn,
        evidence: record.evidence,
        task: record.task,
        decided_at: record.decided_at,
    }
}
