//! `brain hygiene`: a deterministic plan over the store's items, optionally confirmed or refined
//! by the configured LLM, applied only on request and only through `Brain` with the versions
//! the plan read.
//!
//! The plan (over the approved and draft items of the session's scopes; vault-derived items
//! are read-only and left out), each item in at most one action, in this order:
//! 1. **same dedup hint** (`supersede`): items of one scope sharing a `dedup_hint` (trimmed,
//!    case-folded) — the survivor is the approved one if any, then the newest; the others are
//!    superseded by it;
//! 2. **near-duplicate** (`supersede`): items of one scope whose title + content have a word
//!    3-shingle Jaccard similarity ≥ [`NEAR_THRESHOLD`] with the group's survivor, found by
//!    MinHash + LSH buckets (`brain_core::near_dup`: no O(n²) comparison);
//! 3. **low confidence** (`review`): approved items with confidence < [`LOW_CONFIDENCE`];
//! 4. **stale** (`review`): approved items, not pinned or stable, whose decayed strength is
//!    under [`STALE_STRENGTH`] or that nobody used for [`STALE_DAYS`] days.
//!
//! A pinned item is never superseded by the plan; an item already due for review is not queued
//! again. `review` sets `review_due_at` to now (the item then shows in `brain review`);
//! `supersede` keeps both items (history is never deleted). Every write carries the version
//! the plan read: an item edited meanwhile is reported as a conflict and left as it is.

pub mod ai;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use brain_core::near_dup::{self, Signature};
use brain_core::{Item, Status};
use brain_store::ItemFilter;
use serde::Serialize;

use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};

/// Near-duplicates: at least this Jaccard similarity of word 3-shingles.
pub const NEAR_THRESHOLD: f64 = 0.8;
/// Approved items below this confidence go to review.
pub const LOW_CONFIDENCE: f32 = 0.4;
/// Approved items whose decayed strength is below this go to review.
pub const STALE_STRENGTH: f32 = 0.2;
/// Approved items neither used nor edited for this many days go to review.
pub const STALE_DAYS: f64 = 180.0;
/// The plan lists at most this many actions unless told otherwise.
pub const DEFAULT_LIMIT: usize = 1_000;

/// What `brain hygiene` was asked.
#[derive(Clone, Debug)]
pub struct HygieneOptions {
    /// Act on the plan (default: print it).
    pub apply: bool,
    /// Plan deterministically only, even when `[ai]` is set.
    pub no_ai: bool,
    /// At most this many actions (the first ones in plan order).
    pub limit: usize,
}

impl Default for HygieneOptions {
    fn default() -> Self {
        HygieneOptions { apply: false, no_ai: false, limit: DEFAULT_LIMIT }
    }
}

/// One planned action and what became of it.
#[derive(Clone, Debug, Serialize)]
pub struct Action {
    /// `h1`, `h2`… (what the LLM names it by).
    pub id: String,
    /// `supersede` or `review`.
    pub action: &'static str,
    /// `same-dedup-hint`, `near-duplicate`, `low-confidence` or `stale`.
    pub rule: &'static str,
    /// The item acted on (superseded, or queued for review).
    pub item: String,
    pub item_version: u64,
    pub title: String,
    /// The survivor of a supersession.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub into: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub into_version: Option<u64>,
    /// The exact similarity with the survivor (near-duplicates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// Why, in words.
    pub why: String,
    /// `planned` (dry run), then `applied`, `conflict` (the item changed since the plan read
    /// it), `failed`, or `dropped` (the LLM rejected it).
    pub status: String,
    /// What the LLM said of it, or why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The items' text in one line each, clipped, for the LLM's prompt (redacted there).
    #[serde(skip)]
    pub(crate) brief: Vec<String>,
}

/// The plan, before and after it is applied.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HygieneReport {
    pub dry_run: bool,
    /// Items the plan looked at.
    pub items: usize,
    /// Actions found (before `limit`).
    pub found: usize,
    /// Actions by rule (before `limit`).
    pub rules: BTreeMap<&'static str, usize>,
    pub actions: Vec<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ai: Option<ai::AiCheck>,
    pub applied: usize,
    pub conflicts: usize,
    pub failed: usize,
    pub dropped: usize,
    pub plan_ms: f64,
    pub apply_ms: f64,
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Survivor order: approved before draft, then newest, then the larger id.
fn better(a: &Item, b: &Item) -> bool {
    let rank = |item: &Item| (item.status == Status::Approved, item.updated_at, item.id.clone());
    rank(a) > rank(b)
}

/// An item for the LLM: id, kind, status, confidence, title and the start of the content.
fn brief(item: &Item) -> String {
    let text = format!("{} — {}", item.title, item.content);
    format!(
        "{} [{} {} conf {:.2}] {}",
        item.id,
        item.kind,
        item.status,
        item.confidence,
        brain_core::keeper::text::clip(&brain_core::keeper::text::one_line(&text), 240)
    )
}

fn clip_title(title: &str) -> String {
    brain_core::keeper::text::clip(&brain_core::keeper::text::one_line(title), 100).into_owned()
}

/// `progress(stage, done, total)` as the plan goes.
pub type Progress<'a> = &'a mut dyn FnMut(&'static str, u64, u64);

/// The deterministic plan over the items of the session's scopes.
pub fn plan(brain: &Brain, options: &HygieneOptions, progress: Progress<'_>) -> BrainResult<HygieneReport> {
    let started = Instant::now();
    progress("reading", 0, 0);
    let mut items = brain.list(&ItemFilter {
        scopes: Some(brain.visible_scopes()),
        statuses: vec![Status::Approved, Status::Draft],
        ..ItemFilter::default()
    })?;
    items.retain(|item| !item.source.starts_with("vault:"));
    items.sort_by(|a, b| a.id.cmp(&b.id));
    let report = plan_items(brain, &items, options, progress);
    Ok(HygieneReport { plan_ms: ms(started), ..report })
}

fn plan_items(brain: &Brain, items: &[Item], options: &HygieneOptions, progress: Progress<'_>) -> HygieneReport {
    let now = brain.now();
    let mut actions: Vec<Action> = Vec::new();
    // Items already given an action (absorbed or queued).
    let mut taken: HashSet<usize> = HashSet::new();
    // Survivors: never absorbed afterwards.
    let mut kept: HashSet<usize> = HashSet::new();
    let supersede = |rule: &'static str, old: &Item, new: &Item, similarity: Option<f64>, why: String| Action {
        id: String::new(),
        action: "supersede",
        rule,
        item: old.id.clone(),
        item_version: old.version,
        title: clip_title(&old.title),
        into: Some(new.id.clone()),
        into_version: Some(new.version),
        similarity,
        why,
        status: "planned".into(),
        note: None,
        brief: vec![brief(old), brief(new)],
    };

    // 1. Same dedup hint.
    let mut by_hint: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        if let Some(hint) = item.dedup_hint.as_deref().map(|h| h.trim().to_lowercase()).filter(|h| !h.is_empty()) {
            by_hint.entry((item.scope.to_string(), hint)).or_default().push(index);
        }
    }
    for ((_, hint), members) in by_hint.iter().filter(|(_, members)| members.len() > 1) {
        let survivor = *members.iter().reduce(|a, b| if better(&items[*b], &items[*a]) { b } else { a }).unwrap();
        kept.insert(survivor);
        for &member in members.iter().filter(|m| **m != survivor && !items[**m].pinned) {
            taken.insert(member);
            actions.push(supersede(
                "same-dedup-hint",
                &items[member],
                &items[survivor],
                None,
                format!("shares the dedup hint {hint:?} with the newer {}", items[survivor].id),
            ));
        }
    }

    // 2. Near-duplicates (MinHash + LSH, then the exact similarity).
    let total = items.len() as u64;
    let mut shingle_sets: Vec<Vec<u64>> = Vec::with_capacity(items.len());
    let mut signatures: Vec<Signature> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let set = near_dup::shingles(&format!("{}\n{}", item.title, item.content));
        signatures.push(Signature::of(&set));
        shingle_sets.push(set);
        if index % 1024 == 0 {
            progress("signatures", index as u64, total);
        }
    }
    progress("signatures", total, total);
    let scope_of: Vec<String> = items.iter().map(|item| item.scope.to_string()).collect();
    let pairs = near_dup::candidate_pairs(
        &shingle_sets,
        &signatures,
        NEAR_THRESHOLD,
        &|a, b| scope_of[a] == scope_of[b],
        &mut |done, all| progress("buckets", done as u64, all as u64),
    );
    for group in near_dup::groups(items.len(), &pairs) {
        let free: Vec<usize> = group.into_iter().filter(|index| !taken.contains(index)).collect();
        if free.len() < 2 {
            continue;
        }
        let survivor = *free.iter().reduce(|a, b| if better(&items[*b], &items[*a]) { b } else { a }).unwrap();
        let absorbable: Vec<usize> =
            free.iter().copied().filter(|m| *m != survivor && !items[*m].pinned && !kept.contains(m)).collect();
        for member in absorbable {
            let similarity = near_dup::jaccard(&shingle_sets[member], &shingle_sets[survivor]);
            if similarity < NEAR_THRESHOLD {
                continue;
            }
            taken.insert(member);
            kept.insert(survivor);
            let rounded = (similarity * 1000.0).round() / 1000.0;
            actions.push(supersede(
                "near-duplicate",
                &items[member],
                &items[survivor],
                Some(rounded),
                format!("{:.0}% the same words as {}", similarity * 100.0, items[survivor].id),
            ));
        }
    }

    // 3 and 4. Low confidence, stale: into the review queue.
    let mut reviews: Vec<Action> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        if taken.contains(&index) || item.status != Status::Approved || item.pinned {
            continue;
        }
        if item.review_due_at.is_some_and(|due| due <= now) {
            continue;
        }
        let last_used = item.last_accessed_at.unwrap_or(item.updated_at).max(item.updated_at);
        let idle_days = brain_core::time::age_days(last_used, now);
        let strength = brain_api::recall::effective_strength(item, now);
        let (rule, why) = if item.confidence < LOW_CONFIDENCE {
            ("low-confidence", format!("confidence {:.2} is under {LOW_CONFIDENCE}", item.confidence))
        } else if !item.stable && strength < STALE_STRENGTH {
            ("stale", format!("strength decayed to {strength:.2} (under {STALE_STRENGTH})"))
        } else if !item.stable && idle_days >= STALE_DAYS {
            ("stale", format!("neither used nor edited for {idle_days:.0} days"))
        } else {
            continue;
        };
        reviews.push(Action {
            id: String::new(),
            action: "review",
            rule,
            item: item.id.clone(),
            item_version: item.version,
            title: clip_title(&item.title),
            into: None,
            into_version: None,
            similarity: None,
            why,
            status: "planned".into(),
            note: None,
            brief: vec![brief(item)],
        });
    }
    reviews.sort_by_key(|action| action.rule != "low-confidence");
    actions.extend(reviews);

    let mut rules: BTreeMap<&'static str, usize> = BTreeMap::new();
    for action in &actions {
        *rules.entry(action.rule).or_default() += 1;
    }
    let found = actions.len();
    actions.truncate(options.limit);
    for (index, action) in actions.iter_mut().enumerate() {
        action.id = format!("h{}", index + 1);
    }
    HygieneReport { dry_run: !options.apply, items: items.len(), found, rules, actions, ..HygieneReport::default() }
}

/// Applies the actions still `planned` through `Brain`, each with the versions the plan read
/// (updated by this run's own earlier writes, never by anyone else's): an item edited since
/// the plan is a `conflict`, left as it is.
pub fn apply(brain: &Brain, report: &mut HygieneReport, progress: Progress<'_>) {
    let started = Instant::now();
    // Versions this run wrote: a survivor absorbing several items moves on each, and its
    // next write expects the version this run left, not the one the plan read.
    let mut ours: HashMap<String, u64> = HashMap::new();
    let total = report.actions.len() as u64;
    for (done, action) in report.actions.iter_mut().enumerate() {
        progress("applying", done as u64, total);
        if action.status != "planned" {
            continue;
        }
        let item_version = ours.get(&action.item).copied().unwrap_or(action.item_version);
        let outcome: BrainResult<Vec<Item>> = match (action.action, &action.into) {
            ("supersede", Some(into)) => {
                let into_version = ours.get(into).copied().unwrap_or(action.into_version.unwrap_or_default());
                brain
                    .supersede_versioned(&action.item, into, Some(item_version), Some(into_version))
                    .map(|(old, new)| vec![old, new])
            }
            _ => brain.queue_review(&action.item, item_version).map(|item| vec![item]),
        };
        match outcome {
            Ok(written) => {
                action.status = "applied".into();
                for item in written {
                    ours.insert(item.id, item.version);
                }
            }
            Err(BrainError::Conflict { message }) => {
                action.status = "conflict".into();
                action.note = Some(format!("changed since the plan read it; left as it is ({message})"));
            }
            Err(err) => {
                action.status = "failed".into();
                action.note = Some(err.to_string());
            }
        }
    }
    progress("applying", total, total);
    report.apply_ms = ms(started);
    count(report);
}

/// Recounts the outcomes.
pub(crate) fn count(report: &mut HygieneReport) {
    let count = |status: &str| report.actions.iter().filter(|a| a.status == status).count();
    report.applied = count("applied");
    report.conflicts = count("conflict");
    report.failed = count("failed");
    report.dropped = count("dropped");
}

/// `brain hygiene`: the plan, the LLM's check when `[ai]` is set (and not `no_ai`), then the
/// writes when `apply`.
pub fn run(brain: &Brain, options: &HygieneOptions, progress: Progress<'_>) -> BrainResult<HygieneReport> {
    let mut report = plan(brain, options, progress)?;
    if !options.no_ai && !report.actions.is_empty() {
        ai::check(brain, &mut report, !options.apply);
    }
    if options.apply {
        apply(brain, &mut report, progress);
    } else {
        count(&mut report);
    }
    Ok(report)
}
