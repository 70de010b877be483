//! Scoring, layer rules and dedup consolidation of the brain document (SPEC §4.1).
//!
//! One pass over the items computes everything the `brain` and `claude-md` plans need:
//! scores, the archive (Layer 3) with reasons, dedup consolidation, the Layer 1 / Layer 2
//! split, the Layer 0 brief and the schema-key counts of the tree. Nothing here sorts all
//! items: the plans rank lazily (see the engine), so 100k items cost one linear pass.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::interner::{StringTable, hash_str};
use super::lean::ItemMeta;
use crate::item::{Item, Kind, Status};
use crate::time::{Timestamp, age_days};

/// Layer 3 (archive) thresholds; config, with the SPEC §4.1 defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArchiveThresholds {
    /// Items below this confidence …
    #[serde(serialize_with = "crate::item::serialize_decimal_f32")]
    pub low_confidence: f32,
    /// … and older than this many days are archived.
    pub low_confidence_age_days: f64,
    /// Implementation facts older than this many days are archived.
    pub implementation_age_days: f64,
    /// Fixed bugs older than this many days are archived.
    pub fixed_bug_age_days: f64,
}

impl Default for ArchiveThresholds {
    fn default() -> Self {
        ArchiveThresholds {
            low_confidence: 0.4,
            low_confidence_age_days: 14.0,
            implementation_age_days: 90.0,
            fixed_bug_age_days: 30.0,
        }
    }
}

/// Why an item is in Layer 3 (excluded from the document).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArchiveReason {
    /// Not approved: draft, deprecated, superseded or archived.
    Status(Status),
    /// Code maps are never injected.
    Codemap,
    ImplementationTooOld,
    FixedBugTooOld,
    LowConfidence,
}

impl ArchiveReason {
    /// The overflow reason, naming the threshold that applied.
    pub fn describe(self, thresholds: &ArchiveThresholds) -> String {
        match self {
            ArchiveReason::Status(Status::Draft) => "archived: draft (not approved)".into(),
            ArchiveReason::Status(Status::Archived) => "archived: forgotten".into(),
            ArchiveReason::Status(status) => format!("archived: {status}"),
            ArchiveReason::Codemap => "archived: codemap".into(),
            ArchiveReason::ImplementationTooOld => {
                format!("archived: implementation fact older than {} days", thresholds.implementation_age_days)
            }
            ArchiveReason::FixedBugTooOld => {
                format!("archived: fixed bug older than {} days", thresholds.fixed_bug_age_days)
            }
            ArchiveReason::LowConfidence => format!(
                "archived: confidence below {} and older than {} days",
                thresholds.low_confidence, thresholds.low_confidence_age_days
            ),
        }
    }
}

/// The layer an item lands in on its own (before dedup consolidation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Layer 1 — active knowledge.
    Active,
    /// Layer 2 — reference knowledge.
    Reference,
    /// Layer 3 — excluded.
    Archived(ArchiveReason),
}

/// What the layering reads of an item: everything but its texts (title, content,
/// rationale, files, evidence). The full [`Item`] and the lean
/// [`ItemMeta`](super::lean::ItemMeta) both have it, so one pass serves both.
pub(crate) trait Layered {
    fn id(&self) -> &str;
    fn kind(&self) -> Kind;
    fn status(&self) -> Status;
    fn schema_key(&self) -> &str;
    fn importance(&self) -> u8;
    fn confidence(&self) -> f32;
    fn updated_at(&self) -> Timestamp;
    fn valid_until(&self) -> Option<Timestamp>;
    /// The stored token estimate of the whole item (`Item::tokens`).
    fn stored_tokens(&self) -> u32;
    fn dedup_hint(&self) -> Option<&str>;
    /// The [`FIXED`], [`DONE`] and [`RESOLVED`] facts (tags are only looked at for bugs and
    /// todos).
    fn flags(&self) -> u8;
    /// Reads one byte or word of every cache line the pass will read of this row — its
    /// fields and the strings they point to — and folds them into a meaningless value.
    /// See [`Pass::run`] for why.
    fn touch(&self, with_tree: bool) -> u64;
}

/// The first and last bytes of a string folded (a short string lies on at most the two
/// cache lines of its ends).
pub(crate) fn ends(text: &str) -> u64 {
    let bytes = text.as_bytes();
    u64::from(bytes.first().copied().unwrap_or(0) ^ bytes.last().copied().unwrap_or(0))
}

impl Layered for Item {
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
        let mut touched = u64::from(self.importance) ^ self.updated_at.as_second() as u64 ^ u64::from(self.tokens);
        touched ^= self.valid_until.map_or(0, |until| until.as_second() as u64);
        if with_tree {
            touched ^= ends(&self.schema_key);
        }
        // Only approved items are classified further (hint groups, tags).
        if self.status == Status::Approved {
            touched ^= self.dedup_hint.as_deref().map_or(0, ends);
            if matches!(self.kind, Kind::Bug | Kind::Todo) {
                touched ^= self.tags.first().map_or(0, |tag| tag.len() as u64);
            }
        }
        touched
    }
    fn flags(&self) -> u8 {
        match self.kind {
            Kind::Bug if self.has_tag("fixed") => FIXED,
            Kind::Todo if self.has_tag("done") => DONE,
            Kind::Signal if self.severity == Some(crate::item::Severity::Resolved) => RESOLVED,
            _ => 0,
        }
    }
}

/// A bug is fixed when tagged `fixed`; otherwise active.
pub fn is_fixed_bug(item: &Item) -> bool {
    item.kind == Kind::Bug && item.has_tag("fixed")
}

/// A todo is done when tagged `done`; otherwise pending.
pub fn is_done_todo(item: &Item) -> bool {
    item.kind == Kind::Todo && item.has_tag("done")
}

/// `recency = max(0.1, 1 − 0.9 × age_days / 90)`, age from `updated_at`.
pub fn recency(age_days: f64) -> f64 {
    (1.0 - 0.9 * age_days / 90.0).max(0.1)
}

/// `score = (importance / 5) × confidence × recency`, × 0.25 when expired (SPEC §2.1).
pub fn score(item: &Item, now: Timestamp) -> f64 {
    score_at(item, age_days(item.updated_at, now), now)
}

fn score_at(item: &impl Layered, age: f64, now: Timestamp) -> f64 {
    let base = f64::from(item.importance()) / 5.0 * f64::from(item.confidence()) * recency(age);
    let expired = item.valid_until().is_some_and(|until| until < now);
    if expired { base * 0.25 } else { base }
}

/// The Layer 3 rule an item falls under, checked in the SPEC's order.
pub fn archive_reason(item: &Item, age: f64, thresholds: &ArchiveThresholds) -> Option<ArchiveReason> {
    if item.status != Status::Approved {
        return Some(ArchiveReason::Status(item.status));
    }
    approved_archive_reason(item, age, thresholds, is_fixed_bug(item))
}

/// The Layer 3 rules after the status one (the item is approved).
fn approved_archive_reason(
    item: &impl Layered,
    age: f64,
    thresholds: &ArchiveThresholds,
    fixed_bug: bool,
) -> Option<ArchiveReason> {
    let kind = item.kind();
    if kind == Kind::Codemap {
        return Some(ArchiveReason::Codemap);
    }
    if kind == Kind::Implementation && age > thresholds.implementation_age_days {
        return Some(ArchiveReason::ImplementationTooOld);
    }
    if fixed_bug && age > thresholds.fixed_bug_age_days {
        return Some(ArchiveReason::FixedBugTooOld);
    }
    if item.confidence() < thresholds.low_confidence && age > thresholds.low_confidence_age_days {
        return Some(ArchiveReason::LowConfidence);
    }
    None
}

/// Layer 1 qualification: any of the SPEC §4.1 rules.
pub fn qualifies_for_active(item: &Item, age: f64) -> bool {
    let flags = if is_fixed_bug(item) {
        FIXED
    } else if is_done_todo(item) {
        DONE
    } else {
        0
    };
    qualifies_with(item, age, flags)
}

fn qualifies_with(item: &impl Layered, age: f64, flags: u8) -> bool {
    let (kind, importance) = (item.kind(), item.importance());
    let recent_and_important = age <= 30.0 && importance >= 3;
    let recent_decision = kind == Kind::Decision && age <= 30.0;
    let live_bug = kind == Kind::Bug && flags & FIXED == 0 && (importance >= 4 || age <= 7.0);
    let pending_todo = kind == Kind::Todo && flags & DONE == 0;
    let fresh_convention = kind == Kind::Convention && age <= 14.0;
    let important = importance >= 4 && age <= 60.0;
    recent_and_important || recent_decision || live_bug || pending_todo || fresh_convention || important
}

/// The layer of one item on its own, e.g. for tier badges in the dashboard. Dedup
/// consolidation can still merge it into another item's entry.
pub fn tier(item: &Item, now: Timestamp, thresholds: &ArchiveThresholds) -> Tier {
    let age = age_days(item.updated_at, now);
    if let Some(reason) = archive_reason(item, age, thresholds) {
        return Tier::Archived(reason);
    }
    if qualifies_for_active(item, age) { Tier::Active } else { Tier::Reference }
}

/// A live (not archived, not consolidated away) item, with what the plans need of it, so
/// later phases never go back to the (large, cold) item structs of 100k items.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Live<'a> {
    pub id: &'a str,
    pub index: usize,
    pub score: f64,
    pub age_days: f64,
    pub kind: Kind,
    pub importance: u8,
    /// The item's stored token estimate (`Item::tokens`).
    pub stored_tokens: u32,
    /// [`FIXED`], [`DONE`], [`RESOLVED`] bits.
    pub flags: u8,
    /// Layer 1 when the item — or any item consolidated into it — qualifies.
    pub active: bool,
    /// The item's dedup hint group, or [`NO_GROUP`].
    group: u32,
}

impl Live<'_> {
    /// An active bug or an unresolved signal.
    pub fn is_known_issue(&self) -> bool {
        match self.kind {
            Kind::Bug => self.flags & FIXED == 0,
            Kind::Signal => self.flags & RESOLVED == 0,
            _ => false,
        }
    }
}

/// An item consolidated into another one sharing its dedup hint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Consolidated<'a> {
    pub winner: usize,
    pub loser: usize,
    pub loser_id: &'a str,
    pub score: f64,
}

/// Counts per status for one schema key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StatusCounts {
    pub all: u32,
    pub draft: u32,
    pub approved: u32,
    pub deprecated: u32,
}

impl StatusCounts {
    pub fn add_many(&mut self, status: Status, count: u32) {
        self.all += count;
        match status {
            Status::Draft => self.draft += count,
            Status::Approved => self.approved += count,
            Status::Deprecated => self.deprecated += count,
            Status::Superseded | Status::Archived => {}
        }
    }
}

/// The ingredients of the Layer 0 brief (item indices, best first).
#[derive(Clone, Debug, Default)]
pub(crate) struct Brief {
    pub stack: Vec<usize>,
    pub decisions: Vec<usize>,
    pub conventions: Vec<usize>,
    pub active_areas: Vec<usize>,
    pub active_areas_total: usize,
    pub active_bugs: usize,
    pub pending_todos: usize,
}

/// How many entries each brief line lists.
pub(crate) const BRIEF_STACK: usize = 5;
pub(crate) const BRIEF_DECISIONS: usize = 3;
pub(crate) const BRIEF_CONVENTIONS: usize = 5;
pub(crate) const BRIEF_ACTIVE_AREAS: usize = 5;
/// "Active areas" are implementation facts updated within this many days.
pub(crate) const ACTIVE_AREA_DAYS: f64 = 14.0;

/// The items an analysis is made of: full items, or the metas of every item plus the full
/// items given so far (the lean path, see [`super::lean`]).
pub(crate) enum Rows<'a> {
    Items(&'a [Item]),
    /// `full: None` before any item has been fetched (the first analysis of the lean path).
    Lean {
        metas: &'a [ItemMeta],
        full: Option<&'a HashMap<usize, Item>>,
    },
}

impl<'a> Rows<'a> {
    pub fn id(&self, index: usize) -> &'a str {
        match self {
            Rows::Items(items) => &items[index].id,
            Rows::Lean { metas, .. } => &metas[index].id,
        }
    }

    pub fn schema_key(&self, index: usize) -> &'a str {
        match self {
            Rows::Items(items) => &items[index].schema_key,
            Rows::Lean { metas, .. } => &metas[index].schema_key,
        }
    }

    pub fn kind(&self, index: usize) -> Kind {
        match self {
            Rows::Items(items) => items[index].kind,
            Rows::Lean { metas, .. } => metas[index].kind,
        }
    }

    /// The [`FIXED`] / [`DONE`] / [`RESOLVED`] facts of an item.
    pub fn flags(&self, index: usize) -> u8 {
        match self {
            Rows::Items(items) => items[index].flags(),
            Rows::Lean { metas, .. } => metas[index].flags(),
        }
    }
}

/// Everything computed from one pass over the items.
pub(crate) struct Analysis<'a> {
    pub rows: Rows<'a>,
    pub now: Timestamp,
    /// Live entries in input order (winners of their dedup hint).
    pub live: Vec<Live<'a>>,
    /// Archived items with their reason and score, in input order.
    pub archived: Vec<(usize, ArchiveReason, f64)>,
    /// Consolidated items sorted by winner, then score descending, then id.
    pub consolidated: Vec<Consolidated<'a>>,
    pub brief: Brief,
    /// Status counts per schema key, sorted by key.
    pub schema_counts: Vec<(&'a str, StatusCounts)>,
    /// Items a renderer needed in full but the lean path did not have (see [`Analysis::full`]).
    missing: RefCell<Vec<usize>>,
}

impl<'a> Analysis<'a> {
    /// Analyses the rows; `with_tree` also counts statuses per schema key (it reads every
    /// item's schema key, a large part of the cost at 100k items).
    pub fn new(rows: Rows<'a>, now: Timestamp, thresholds: &ArchiveThresholds, with_tree: bool) -> Analysis<'a> {
        let pass = match rows {
            Rows::Items(items) => Pass::run(items, now, thresholds, with_tree),
            Rows::Lean { metas, .. } => Pass::run(metas, now, thresholds, with_tree),
        };
        pass.finish(rows, now)
    }

    /// The full item at `index`, for a renderer. On the lean path an item not given in full
    /// is noted as missing (the caller fetches it and assembles again) and `None` returned.
    pub fn full(&self, index: usize) -> Option<&'a Item> {
        match &self.rows {
            Rows::Items(items) => Some(&items[index]),
            Rows::Lean { full, .. } => {
                let item = full.and_then(|full| full.get(&index));
                if item.is_none() {
                    self.missing.borrow_mut().push(index);
                }
                item
            }
        }
    }

    /// The same analysis with other full items given (the lean path once the items it will
    /// render are fetched): copies the pass's results, never runs the pass again.
    pub fn with_full<'b>(&self, full: &'b HashMap<usize, Item>) -> Analysis<'b>
    where
        'a: 'b,
    {
        let rows = match self.rows {
            Rows::Items(items) => Rows::Items(items),
            Rows::Lean { metas, .. } => Rows::Lean { metas, full: Some(full) },
        };
        Analysis {
            rows,
            now: self.now,
            live: self.live.clone(),
            archived: self.archived.clone(),
            consolidated: self.consolidated.clone(),
            brief: self.brief.clone(),
            schema_counts: self.schema_counts.clone(),
            missing: RefCell::default(),
        }
    }

    /// The items renderers needed but did not have, sorted, each once.
    pub fn take_missing(&self) -> Vec<usize> {
        let mut missing = self.missing.take();
        missing.sort_unstable();
        missing.dedup();
        missing
    }

    /// The items consolidated into `winner`, best first.
    pub fn consolidated_into(&self, winner: usize) -> &[Consolidated<'a>] {
        let start = self.consolidated.partition_point(|c| c.winner < winner);
        let end = self.consolidated.partition_point(|c| c.winner <= winner);
        &self.consolidated[start..end]
    }
}

/// No dedup hint group.
const NO_GROUP: u32 = u32::MAX;
/// Marks a candidate consolidated into its group's best member.
const CONSOLIDATED: u32 = u32::MAX - 1;

/// What the pass over the rows collects, before consolidation.
struct Pass<'a> {
    /// Live candidates (before dedup consolidation), in input order.
    candidates: Vec<Live<'a>>,
    /// Positions in `candidates` of those with a dedup hint.
    grouped: Vec<usize>,
    archived: Vec<(usize, ArchiveReason, f64)>,
    /// Per hint group: the position in `candidates` of its best member.
    group_best: Vec<usize>,
    schema_counts: Vec<(&'a str, StatusCounts)>,
}

impl<'a> Pass<'a> {
    /// One pass over the rows. At 100k items the cost is memory traffic — the rows and the
    /// strings they point to, spread over a few hundred megabytes — so every later phase
    /// works on the small `Live` copies, and the rows are read in chunks: a tight loop
    /// first touches everything the chunk's rows will be read for (independent loads, so
    /// the CPU keeps many cache misses in flight; a long loop body would let it look only
    /// a few rows ahead), then the loops that hash, count and classify find it in cache.
    fn run<R: Layered>(rows: &'a [R], now: Timestamp, thresholds: &ArchiveThresholds, with_tree: bool) -> Pass<'a> {
        let mut keys: StringTable<'a> = StringTable::new();
        let mut key_counts: Vec<[u32; STATUS_COUNT]> = Vec::new();
        let mut hints: StringTable<'a> = StringTable::new();
        let mut group_best: Vec<usize> = Vec::new();
        let mut grouped: Vec<usize> = Vec::new();
        let mut candidates: Vec<Live<'a>> = Vec::with_capacity(rows.len() / 2);
        let mut archived = Vec::with_capacity(rows.len() / 2);

        const CHUNK: usize = 128;
        let mut key_hashes = [0u64; CHUNK];
        let mut touched = 0u64;
        for (chunk_number, chunk) in rows.chunks(CHUNK).enumerate() {
            for row in chunk {
                touched ^= row.touch(with_tree);
            }
            if with_tree {
                for (hash, row) in key_hashes.iter_mut().zip(chunk) {
                    *hash = hash_str(row.schema_key());
                }
                for (row, &hash) in chunk.iter().zip(&key_hashes) {
                    let slot = keys.slot(hash, row.schema_key());
                    if slot == key_counts.len() {
                        key_counts.push([0; STATUS_COUNT]);
                    }
                    key_counts[slot][row.status() as usize] += 1;
                }
            }
            for (offset, row) in chunk.iter().enumerate() {
                let index = chunk_number * CHUNK + offset;
                let age = age_days(row.updated_at(), now);
                let score = score_at(row, age, now);
                let status = row.status();
                if status != Status::Approved {
                    archived.push((index, ArchiveReason::Status(status), score));
                    continue;
                }
                let flags = row.flags();
                if let Some(reason) = approved_archive_reason(row, age, thresholds, flags & FIXED != 0) {
                    archived.push((index, reason, score));
                    continue;
                }
                let mut live = Live {
                    id: row.id(),
                    index,
                    score,
                    age_days: age,
                    kind: row.kind(),
                    importance: row.importance(),
                    stored_tokens: row.stored_tokens(),
                    flags,
                    active: qualifies_with(row, age, flags),
                    group: NO_GROUP,
                };
                let position = candidates.len();
                if let Some(hint) = row.dedup_hint() {
                    let group = hints.slot(hash_str(hint), hint);
                    if group == group_best.len() {
                        group_best.push(position);
                    }
                    let best = &mut group_best[group];
                    if *best != position && better(&live, &candidates[*best]) {
                        *best = position;
                    }
                    live.group = group as u32;
                    grouped.push(position);
                }
                candidates.push(live);
            }
        }

        // The touched values mean nothing; the loads that made them had to happen.
        std::hint::black_box(touched);

        let mut schema_counts: Vec<(&'a str, StatusCounts)> = keys
            .into_texts()
            .into_iter()
            .zip(key_counts)
            .map(|(key, counts)| {
                let mut status_counts = StatusCounts::default();
                for &status in Status::ALL {
                    status_counts.add_many(status, counts[status as usize]);
                }
                (key, status_counts)
            })
            .collect();
        schema_counts.sort_unstable_by(|a, b| a.0.cmp(b.0));
        Pass { candidates, grouped, archived, group_best, schema_counts }
    }

    /// Consolidates the dedup groups and collects the brief.
    fn finish(self, rows: Rows<'a>, now: Timestamp) -> Analysis<'a> {
        let Pass { mut candidates, grouped, archived, group_best, schema_counts } = self;
        // Each group's best member takes the others' Layer 1 qualification.
        let mut consolidated = Vec::new();
        for &position in &grouped {
            let live = candidates[position];
            let winner_position = group_best[live.group as usize];
            if winner_position == position {
                continue;
            }
            consolidated.push(Consolidated {
                winner: candidates[winner_position].index,
                loser: live.index,
                loser_id: live.id,
                score: live.score,
            });
            if live.active {
                candidates[winner_position].active = true;
            }
            candidates[position].group = CONSOLIDATED;
        }
        consolidated.sort_unstable_by(|a, b| {
            a.winner.cmp(&b.winner).then_with(|| b.score.total_cmp(&a.score)).then_with(|| a.loser_id.cmp(b.loser_id))
        });
        if !consolidated.is_empty() {
            candidates.retain(|live| live.group != CONSOLIDATED);
        }
        let live = candidates;
        let brief = Brief::collect(&live);
        Analysis { rows, now, live, archived, consolidated, brief, schema_counts, missing: RefCell::default() }
    }
}

/// A bug tagged `fixed`.
pub(crate) const FIXED: u8 = 1;
/// A todo tagged `done`.
pub(crate) const DONE: u8 = 2;
/// A signal item with severity `resolved`.
pub(crate) const RESOLVED: u8 = 4;

/// How many statuses there are (`Status as usize` indexes per-status counters).
const STATUS_COUNT: usize = Status::ALL.len();

/// Ranking order: higher score first, ties by id.
fn better(a: &Live<'_>, b: &Live<'_>) -> bool {
    match a.score.total_cmp(&b.score) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => a.id < b.id,
    }
}

/// Keeps the best `limit` entries under `is_better`, best first (insertion into a tiny
/// sorted vector: the limits are ≤ 5).
fn keep_best<T: Copy>(best: &mut Vec<T>, limit: usize, candidate: T, is_better: impl Fn(&T, &T) -> bool) {
    let position = best.iter().position(|kept| is_better(&candidate, kept)).unwrap_or(best.len());
    if position < limit {
        best.insert(position, candidate);
        best.truncate(limit);
    }
}

impl Brief {
    /// Every item the brief names.
    pub fn indices(&self) -> Vec<usize> {
        [&self.stack, &self.decisions, &self.conventions, &self.active_areas].into_iter().flatten().copied().collect()
    }

    fn collect(live: &[Live<'_>]) -> Brief {
        let mut brief = Brief::default();
        let mut stack: Vec<Live<'_>> = Vec::new();
        let mut decisions: Vec<Live<'_>> = Vec::new();
        let mut conventions: Vec<Live<'_>> = Vec::new();
        let mut active_areas: Vec<Live<'_>> = Vec::new();
        let by_importance =
            |a: &Live<'_>, b: &Live<'_>| a.importance > b.importance || (a.importance == b.importance && better(a, b));
        for candidate in live {
            match candidate.kind {
                Kind::Architecture => keep_best(&mut stack, BRIEF_STACK, *candidate, better),
                Kind::Decision => keep_best(&mut decisions, BRIEF_DECISIONS, *candidate, by_importance),
                Kind::Convention => keep_best(&mut conventions, BRIEF_CONVENTIONS, *candidate, better),
                Kind::Implementation if candidate.age_days <= ACTIVE_AREA_DAYS => {
                    brief.active_areas_total += 1;
                    keep_best(&mut active_areas, BRIEF_ACTIVE_AREAS, *candidate, better);
                }
                Kind::Bug if candidate.flags & FIXED == 0 => brief.active_bugs += 1,
                Kind::Todo if candidate.flags & DONE == 0 => brief.pending_todos += 1,
                _ => {}
            }
        }
        let indices = |list: Vec<Live<'_>>| list.into_iter().map(|live| live.index).collect();
        brief.stack = indices(stack);
        brief.decisions = indices(decisions);
        brief.conventions = indices(conventions);
        brief.active_areas = indices(active_areas);
        brief
    }
}
