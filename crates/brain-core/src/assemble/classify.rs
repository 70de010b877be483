//! Scoring, layer rules and dedup consolidation of the brain document (SPEC §4.1).
//!
//! One pass over the items computes everything the `brain` and `claude-md` plans need:
//! scores, the archive (Layer 3) with reasons, dedup consolidation, the Layer 1 / Layer 2
//! split, the Layer 0 brief and the schema-key counts of the tree. Nothing here sorts all
//! items: the plans rank lazily (see the engine), so 100k items cost one linear pass.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::item::{Item, Kind, Status};
use crate::time::{Timestamp, age_days};

/// Layer 3 (archive) thresholds; config, with the SPEC §4.1 defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArchiveThresholds {
    /// Items below this confidence …
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

fn score_at(item: &Item, age: f64, now: Timestamp) -> f64 {
    let base = f64::from(item.importance) / 5.0 * f64::from(item.confidence) * recency(age);
    if item.is_expired(now) { base * 0.25 } else { base }
}

/// The Layer 3 rule an item falls under, checked in the SPEC's order.
pub fn archive_reason(item: &Item, age: f64, thresholds: &ArchiveThresholds) -> Option<ArchiveReason> {
    archive_reason_with(item, age, thresholds, is_fixed_bug(item))
}

fn archive_reason_with(
    item: &Item,
    age: f64,
    thresholds: &ArchiveThresholds,
    fixed_bug: bool,
) -> Option<ArchiveReason> {
    if item.status != Status::Approved {
        return Some(ArchiveReason::Status(item.status));
    }
    if item.kind == Kind::Codemap {
        return Some(ArchiveReason::Codemap);
    }
    if item.kind == Kind::Implementation && age > thresholds.implementation_age_days {
        return Some(ArchiveReason::ImplementationTooOld);
    }
    if fixed_bug && age > thresholds.fixed_bug_age_days {
        return Some(ArchiveReason::FixedBugTooOld);
    }
    if item.confidence < thresholds.low_confidence && age > thresholds.low_confidence_age_days {
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

fn qualifies_with(item: &Item, age: f64, flags: u8) -> bool {
    let recent_and_important = age <= 30.0 && item.importance >= 3;
    let recent_decision = item.kind == Kind::Decision && age <= 30.0;
    let live_bug = item.kind == Kind::Bug && flags & FIXED == 0 && (item.importance >= 4 || age <= 7.0);
    let pending_todo = item.kind == Kind::Todo && flags & DONE == 0;
    let fresh_convention = item.kind == Kind::Convention && age <= 14.0;
    let important = item.importance >= 4 && age <= 60.0;
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

/// A small, fast, deterministic hasher (the FxHash mix) for the per-item maps. The maps are
/// only looked up, never iterated into output, so their order cannot leak.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }

    fn finish(&self) -> u64 {
        // The multiply leaves the low bits weak; hashbrown indexes buckets by them.
        self.hash.rotate_left(26)
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

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
    pub fn add(&mut self, status: Status) {
        self.add_many(status, 1);
    }

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

/// Everything computed from one pass over the items.
pub(crate) struct Analysis<'a> {
    pub items: &'a [Item],
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
}

impl<'a> Analysis<'a> {
    /// Analyses `items`; `with_tree` also counts statuses per schema key (it reads every
    /// item's schema key, a large part of the cost at 100k items).
    pub fn new(items: &'a [Item], now: Timestamp, thresholds: &ArchiveThresholds, with_tree: bool) -> Analysis<'a> {
        // One pass over the items: at 100k items the cost is memory traffic (each item's
        // struct and its strings), so every later phase works on `Live` copies.
        let mut schema_slots: Vec<(&'a str, StatusCounts)> = Vec::new();
        let mut schema_keys: HashedStrings<'a, usize> = HashedStrings::new();
        let mut candidates: Vec<(Live<'a>, u32)> = Vec::with_capacity(items.len());
        let mut archived = Vec::new();
        let mut hint_texts: Vec<&'a str> = Vec::new();
        let mut hints: HashedStrings<'a, u32> = HashedStrings::new();
        // Per hint group: the position in `candidates` of its best member so far.
        let mut group_best: Vec<usize> = Vec::new();
        const NO_GROUP: u32 = u32::MAX;

        // Items are taken in chunks. A tight first loop reads the strings of a chunk's items
        // (schema key, dedup hint, tags) — independent loads, so the CPU overlaps their cache
        // misses instead of waiting for each item in turn — and the second loop does the
        // rest with those strings already in cache.
        const CHUNK: usize = 64;
        let mut facts = [StringFacts::default(); CHUNK];
        for (chunk_number, chunk) in items.chunks(CHUNK).enumerate() {
            for (fact, item) in facts.iter_mut().zip(chunk) {
                *fact = StringFacts::of(item, with_tree);
            }
            for (offset, (item, strings)) in chunk.iter().zip(&facts).enumerate() {
                let fact = Fact::of(item, strings, now, thresholds);
                let index = chunk_number * CHUNK + offset;
                if with_tree {
                    let key: &'a str = &item.schema_key;
                    let slot = match schema_keys.get(fact.key_hash, key, |slot: usize| schema_slots[slot].0) {
                        Some(slot) => slot,
                        None => {
                            schema_slots.push((key, StatusCounts::default()));
                            schema_keys.insert(fact.key_hash, key, schema_slots.len() - 1);
                            schema_slots.len() - 1
                        }
                    };
                    schema_slots[slot].1.add(item.status);
                }
                if let Some(reason) = fact.archive {
                    archived.push((index, reason, fact.score));
                    continue;
                }
                let live = Live {
                    id: &item.id,
                    index,
                    score: fact.score,
                    age_days: fact.age,
                    kind: item.kind,
                    importance: item.importance,
                    stored_tokens: item.tokens,
                    flags: fact.flags,
                    active: fact.active,
                };
                let position = candidates.len();
                let mut group = NO_GROUP;
                if let Some(hint) = item.dedup_hint.as_deref() {
                    group = match hints.get(fact.hint_hash, hint, |group: u32| hint_texts[group as usize]) {
                        Some(group) => group,
                        None => {
                            let group = hint_texts.len() as u32;
                            hint_texts.push(hint);
                            hints.insert(fact.hint_hash, hint, group);
                            group_best.push(position);
                            group
                        }
                    };
                    let best = &mut group_best[group as usize];
                    if *best != position && better(&live, &candidates[*best].0) {
                        *best = position;
                    }
                }
                candidates.push((live, group));
            }
        }

        // Consolidate: each group's best member takes the others' Layer 1 qualification.
        let mut consolidated = Vec::new();
        for position in 0..candidates.len() {
            let (live, group) = candidates[position];
            if group == NO_GROUP {
                continue;
            }
            let winner_position = group_best[group as usize];
            if winner_position != position {
                consolidated.push(Consolidated {
                    winner: candidates[winner_position].0.index,
                    loser: live.index,
                    loser_id: live.id,
                    score: live.score,
                });
                if live.active {
                    candidates[winner_position].0.active = true;
                }
            }
        }
        consolidated.sort_unstable_by(|a, b| {
            a.winner.cmp(&b.winner).then_with(|| b.score.total_cmp(&a.score)).then_with(|| a.loser_id.cmp(b.loser_id))
        });
        // Keep the winners, in place (no second large vector).
        let mut kept = 0;
        for position in 0..candidates.len() {
            let group = candidates[position].1;
            if group == NO_GROUP || group_best[group as usize] == position {
                candidates[kept] = candidates[position];
                kept += 1;
            }
        }
        candidates.truncate(kept);
        let live: Vec<Live<'a>> = candidates.into_iter().map(|(live, _)| live).collect();

        let brief = Brief::collect(&live);
        let mut schema_counts = schema_slots;
        schema_counts.sort_unstable_by(|a, b| a.0.cmp(b.0));
        Analysis { items, now, live, archived, consolidated, brief, schema_counts }
    }

    /// The items consolidated into `winner`, best first.
    pub fn consolidated_into(&self, winner: usize) -> &[Consolidated<'a>] {
        let start = self.consolidated.partition_point(|c| c.winner < winner);
        let end = self.consolidated.partition_point(|c| c.winner <= winner);
        &self.consolidated[start..end]
    }
}

/// What an item's heap data (strings, tags) tells, read in the tight loop of a chunk.
#[derive(Clone, Copy, Debug, Default)]
struct StringFacts {
    key_hash: u64,
    hint_hash: u64,
    flags: u8,
}

impl StringFacts {
    fn of(item: &Item, with_tree: bool) -> StringFacts {
        StringFacts {
            key_hash: if with_tree { hash_str(&item.schema_key) } else { 0 },
            hint_hash: item.dedup_hint.as_deref().map_or(0, hash_str),
            flags: flags_of(item),
        }
    }
}

/// Everything computed from one item alone.
#[derive(Clone, Copy, Debug)]
struct Fact {
    key_hash: u64,
    hint_hash: u64,
    age: f64,
    score: f64,
    flags: u8,
    archive: Option<ArchiveReason>,
    active: bool,
}

impl Fact {
    fn of(item: &Item, strings: &StringFacts, now: Timestamp, thresholds: &ArchiveThresholds) -> Fact {
        let age = age_days(item.updated_at, now);
        let flags = strings.flags;
        Fact {
            key_hash: strings.key_hash,
            hint_hash: strings.hint_hash,
            age,
            score: score_at(item, age, now),
            flags,
            archive: archive_reason_with(item, age, thresholds, flags & FIXED != 0),
            active: qualifies_with(item, age, flags),
        }
    }
}

/// A bug tagged `fixed`.
pub(crate) const FIXED: u8 = 1;
/// A todo tagged `done`.
pub(crate) const DONE: u8 = 2;
/// A signal item with severity `resolved`.
pub(crate) const RESOLVED: u8 = 4;

/// The tag/severity facts of an item (tags are only looked at for bugs and todos).
fn flags_of(item: &Item) -> u8 {
    match item.kind {
        Kind::Bug if item.has_tag("fixed") => FIXED,
        Kind::Todo if item.has_tag("done") => DONE,
        Kind::Signal if item.severity == Some(crate::item::Severity::Resolved) => RESOLVED,
        _ => 0,
    }
}

/// A fast string hash (folded 64×64→128 multiplies over 16-byte blocks, as in foldhash
/// and wyhash): independent multiplies instead of a byte-serial chain.
fn hash_str(text: &str) -> u64 {
    const K0: u64 = 0x243f_6a88_85a3_08d3;
    const K1: u64 = 0x1319_8a2e_0370_7344;
    fn fold(a: u64, b: u64) -> u64 {
        let product = u128::from(a) * u128::from(b);
        (product as u64) ^ ((product >> 64) as u64)
    }
    fn u64_at(bytes: &[u8], at: usize) -> u64 {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    }
    fn u32_at(bytes: &[u8], at: usize) -> u64 {
        let mut word = [0u8; 4];
        word.copy_from_slice(&bytes[at..at + 4]);
        u64::from(u32::from_le_bytes(word))
    }
    let bytes = text.as_bytes();
    let length = bytes.len();
    let mut hash = (length as u64) ^ K0;
    // Fixed-size reads only (overlapping at the end), so no variable-length copies.
    let (a, b) = if length >= 16 {
        let mut at = 0;
        while length - at > 16 {
            hash = fold(u64_at(bytes, at) ^ hash, u64_at(bytes, at + 8) ^ K1);
            at += 16;
        }
        (u64_at(bytes, length - 16), u64_at(bytes, length - 8))
    } else if length >= 8 {
        (u64_at(bytes, 0), u64_at(bytes, length - 8))
    } else if length >= 4 {
        (u32_at(bytes, 0), u32_at(bytes, length - 4))
    } else if length > 0 {
        let (first, middle, last) = (bytes[0], bytes[length / 2], bytes[length - 1]);
        (u64::from(first) << 16 | u64::from(middle) << 8 | u64::from(last), 0)
    } else {
        (0, 0)
    };
    hash = fold(a ^ hash, b ^ K1);
    fold(hash, K0)
}

/// Strings keyed by a precomputed hash. A (rare) different string with an already used
/// hash goes to an exact map, so equal strings always share a value and different ones
/// never do.
struct HashedStrings<'a, V> {
    by_hash: FxMap<u64, V>,
    collisions: FxMap<&'a str, V>,
}

impl<'a, V: Copy> HashedStrings<'a, V> {
    fn new() -> Self {
        HashedStrings { by_hash: FxMap::default(), collisions: FxMap::default() }
    }

    /// The value of `text`; `text_of` names the string a stored value belongs to.
    fn get(&self, hash: u64, text: &str, text_of: impl Fn(V) -> &'a str) -> Option<V> {
        match self.by_hash.get(&hash) {
            None => None,
            Some(&value) if text_of(value) == text => Some(value),
            Some(_) => self.collisions.get(text).copied(),
        }
    }

    /// Stores the value of a `text` that [`HashedStrings::get`] did not find.
    fn insert(&mut self, hash: u64, text: &'a str, value: V) {
        match self.by_hash.entry(hash) {
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collisions.insert(text, value);
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(value);
            }
        }
    }
}

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
