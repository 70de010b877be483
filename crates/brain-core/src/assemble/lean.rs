//! Lean assembly: the brain document and the claude-md summary of a big store without
//! holding every item in full.
//!
//! Layering reads little of an item — kind, status, schema key, scores, dates, the stored
//! token estimate, the dedup hint and the `fixed` / `done` tags — while a document renders
//! only a few hundred items. So a store lists [`ItemMeta`]s (no title, content, rationale,
//! files or evidence) for every item, and full [`Item`]s only for the items that are
//! rendered:
//!
//! 1. [`text_candidates`] names the items likely to be rendered (the brief's and the best
//!    ranked ones of each section); the caller fetches them in full.
//! 2. [`brain_document_lean`] / [`claude_md_summary_lean`] assemble over the metas with the
//!    full items given. An item a renderer needs but was not given makes them return
//!    [`MissingItems`] instead of a document; the caller fetches those and calls again.
//!
//! The result equals [`brain_document`](super::brain_document) /
//! [`claude_md_summary`](super::claude_md_summary) over the full items, byte for byte:
//! both run the same pass (generic over what layering reads of a row) and the same plans, and a lean
//! result is only returned when every text it rendered came from a full item. Each call
//! that fails adds at least one item to what is given, so the loop ends; in practice the
//! candidates cover everything and one call suffices.

use std::collections::HashMap;

use super::brain::{BrainDocument, BrainOptions, assemble_brain_document};
use super::classify::{Analysis, DONE, FIXED, Layered, RESOLVED, Rows, ends, is_done_todo, is_fixed_bug};
use super::claude_md::{ClaudeMdSummary, summary_from_analysis};
use super::engine::MAX_CONSECUTIVE_MISSES;
use super::feed::{Feed, InjectBlock};
use crate::item::{Item, Kind, Severity, Status};
use crate::time::Timestamp;
use crate::tokens::TokenCounter;

/// What layering reads of an item: everything but its texts. A store lists these for
/// every item of the session's scopes; a few hundred bytes less per item than [`Item`]
/// and no text to decode.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemMeta {
    pub id: String,
    pub kind: Kind,
    pub schema_key: String,
    pub status: Status,
    pub importance: u8,
    pub confidence: f32,
    pub severity: Option<Severity>,
    pub updated_at: Timestamp,
    pub valid_until: Option<Timestamp>,
    /// The item's stored token estimate (`Item::tokens`).
    pub tokens: u32,
    pub dedup_hint: Option<String>,
    /// A bug tagged `fixed` (see [`is_fixed_bug`]).
    pub fixed_bug: bool,
    /// A todo tagged `done` (see [`is_done_todo`]).
    pub done_todo: bool,
}

impl ItemMeta {
    /// The meta of a full item.
    pub fn of(item: &Item) -> ItemMeta {
        ItemMeta {
            id: item.id.clone(),
            kind: item.kind,
            schema_key: item.schema_key.clone(),
            status: item.status,
            importance: item.importance,
            confidence: item.confidence,
            severity: item.severity,
            updated_at: item.updated_at,
            valid_until: item.valid_until,
            tokens: item.tokens,
            dedup_hint: item.dedup_hint.clone(),
            fixed_bug: is_fixed_bug(item),
            done_todo: is_done_todo(item),
        }
    }
}

impl Layered for ItemMeta {
    fn id(&self) -> &str {
        &self.id
    }
    fn kind(&self) -> Kind {
        self.kind
    }
    fn status(&self) -> Status {
        self.status
    }
    fn schema_key(&self) -> &str {
        &self.schema_key
    }
    fn importance(&self) -> u8 {
        self.importance
    }
    fn confidence(&self) -> f32 {
        self.confidence
    }
    fn updated_at(&self) -> Timestamp {
        self.updated_at
    }
    fn valid_until(&self) -> Option<Timestamp> {
        self.valid_until
    }
    fn stored_tokens(&self) -> u32 {
        self.tokens
    }
    fn dedup_hint(&self) -> Option<&str> {
        self.dedup_hint.as_deref()
    }
    fn touch(&self, with_tree: bool) -> u64 {
        let mut touched = u64::from(self.importance) ^ self.updated_at.as_second() as u64;
        if with_tree {
            touched ^= ends(&self.schema_key);
        }
        if self.status == Status::Approved {
            touched ^= self.dedup_hint.as_deref().map_or(0, ends);
        }
        touched
    }
    fn flags(&self) -> u8 {
        if self.fixed_bug {
            FIXED
        } else if self.done_todo {
            DONE
        } else if self.kind == Kind::Signal && self.severity == Some(Severity::Resolved) {
            RESOLVED
        } else {
            0
        }
    }
}

/// Items a lean assembly needed in full but was not given: positions in the metas,
/// sorted, each once. Fetch them, add them to the full items and call again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingItems(pub Vec<usize>);

/// One pass over the metas, kept for every round of a lean assembly: the candidates to
/// fetch come from it, and so do the document and the summary once they are fetched.
pub struct LeanAssembly<'a> {
    analysis: Analysis<'a>,
}

impl std::fmt::Debug for LeanAssembly<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeanAssembly").field("live", &self.analysis.live.len()).finish()
    }
}

impl<'a> LeanAssembly<'a> {
    /// Analyses `metas` (every item of the session's scopes, any order); `with_tree` also
    /// counts statuses per schema key (the brain document's tree; the summary needs none).
    pub fn new(metas: &'a [ItemMeta], now: Timestamp, options: &BrainOptions, with_tree: bool) -> LeanAssembly<'a> {
        LeanAssembly { analysis: Analysis::new(Rows::Lean { metas, full: None }, now, &options.thresholds, with_tree) }
    }

    /// The items the document (and its summary) will most likely render; see
    /// [`text_candidates`].
    pub fn text_candidates(&self, options: &BrainOptions) -> Vec<usize> {
        candidates_of(&self.analysis, options)
    }

    /// The brain document with the full items given so far; equals
    /// [`brain_document`](super::brain_document) over the full items. Needs an assembly made
    /// `with_tree` when `options.include_tree` is set.
    pub fn brain_document(
        &self,
        full: &HashMap<usize, Item>,
        counter: &TokenCounter,
        options: &BrainOptions,
        feed: &Feed,
    ) -> Result<BrainDocument, MissingItems> {
        let analysis = self.analysis.with_full(full);
        let document = assemble_brain_document(&analysis, counter, options, feed);
        let missing = analysis.take_missing();
        if missing.is_empty() { Ok(document) } else { Err(MissingItems(missing)) }
    }

    /// The claude-md summary with the full items given so far; equals
    /// [`claude_md_summary`](super::claude_md_summary) over the full items.
    pub fn claude_md_summary(
        &self,
        full: &HashMap<usize, Item>,
        counter: &TokenCounter,
        options: &BrainOptions,
        injects: &[InjectBlock],
    ) -> Result<ClaudeMdSummary, MissingItems> {
        let analysis = self.analysis.with_full(full);
        let summary = summary_from_analysis(&analysis, counter, &options.summary, injects, options.list_limit);
        let missing = analysis.take_missing();
        if missing.is_empty() { Ok(summary) } else { Err(MissingItems(missing)) }
    }
}

/// The brain document over `metas` (every item of the session's scopes, any order) with
/// the full items given so far in `full` (by position in `metas`). Equals
/// [`brain_document`](super::brain_document) over the full items. One call, one pass; a
/// caller that fetches in rounds keeps a [`LeanAssembly`] instead.
pub fn brain_document_lean(
    metas: &[ItemMeta],
    full: &HashMap<usize, Item>,
    now: Timestamp,
    counter: &TokenCounter,
    options: &BrainOptions,
    feed: &Feed,
) -> Result<BrainDocument, MissingItems> {
    LeanAssembly::new(metas, now, options, options.include_tree).brain_document(full, counter, options, feed)
}

/// The claude-md summary over `metas` with the full items given so far; equals
/// [`claude_md_summary`](super::claude_md_summary) over the full items.
pub fn claude_md_summary_lean(
    metas: &[ItemMeta],
    full: &HashMap<usize, Item>,
    now: Timestamp,
    counter: &TokenCounter,
    options: &BrainOptions,
    injects: &[InjectBlock],
) -> Result<ClaudeMdSummary, MissingItems> {
    LeanAssembly::new(metas, now, options, false).claude_md_summary(full, counter, options, injects)
}

/// The items a brain document (and its summary) over `metas` will most likely render, by
/// position: the brief's items and, per ranked section, the best entries up to a bound
/// from the section's largest possible budget and the smallest plausible entry. A guess
/// that only saves round trips: [`brain_document_lean`] names anything it missed.
pub fn text_candidates(metas: &[ItemMeta], now: Timestamp, options: &BrainOptions) -> Vec<usize> {
    LeanAssembly::new(metas, now, options, false).text_candidates(options)
}

fn candidates_of(analysis: &Analysis<'_>, options: &BrainOptions) -> Vec<usize> {
    let budgets = options.layer_budgets();
    // A rendered entry takes at least a dozen tokens or so (a bullet, a title, a score),
    // and a section gives up after a run of misses: a section seldom reaches further down
    // its ranking than this.
    const SMALLEST_ENTRY_TOKENS: usize = 12;
    let bound = |tokens: usize| tokens / SMALLEST_ENTRY_TOKENS + MAX_CONSECUTIVE_MISSES;
    let active_budget = budgets.layer0.saturating_add(budgets.layer1);
    let reference_budget = options.token_budget;
    let summary_budget = options.summary.token_budget;

    let mut candidates = analysis.brief.indices();
    let mut active = Vec::new();
    let mut reference = Vec::new();
    let mut summary = Vec::new();
    for live in &analysis.live {
        if live.active {
            active.push(live);
        } else {
            reference.push(live);
        }
        if live.kind == Kind::Decision || live.is_known_issue() {
            summary.push(live);
        }
    }
    for (mut lives, limit) in
        [(active, bound(active_budget)), (reference, bound(reference_budget)), (summary, bound(summary_budget))]
    {
        let by_rank = |a: &&super::classify::Live<'_>, b: &&super::classify::Live<'_>| {
            b.score.total_cmp(&a.score).then_with(|| a.id.cmp(b.id)).then_with(|| a.index.cmp(&b.index))
        };
        if lives.len() > limit {
            lives.select_nth_unstable_by(limit, by_rank);
            lives.truncate(limit);
        }
        candidates.extend(lives.iter().map(|live| live.index));
    }
    candidates.sort_unstable();
    candidates.dedup();
    candidates
}
