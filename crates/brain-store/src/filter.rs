//! Query shapes and results shared by every backend: which items a read covers, an access
//! to record, a read's stamp, a search hit, what a check found.

use brain_core::{Item, Kind, Scope, Status};

/// Which items a list, count or search covers. Empty vectors mean "any".
#[derive(Clone, Debug, Default)]
pub struct ItemFilter {
    /// `None`: every scope.
    pub scopes: Option<Vec<Scope>>,
    pub kinds: Vec<Kind>,
    pub statuses: Vec<Status>,
    /// Items carrying every one of these tags.
    pub tags: Vec<String>,
    pub pinned: Option<bool>,
    /// Items at or below this schema key, whole segments only: `root/decisions` selects
    /// `root/decisions` and `root/decisions/db`, not `root/decisionsx` (the brain tree's count).
    pub schema_key: Option<String>,
    /// Items whose `source` starts with this (e.g. `vault:` for vault-derived items).
    pub source_prefix: Option<String>,
    /// Items whose `source` does not start with this (e.g. `vault:`: the items written
    /// through the API only).
    pub source_prefix_not: Option<String>,
    /// Items whose `review_due_at` is at or before this instant.
    pub review_due_by: Option<brain_core::Timestamp>,
    /// Items accessed at least this often.
    pub min_access_count: Option<u32>,
    /// Items with a confidence below this.
    pub confidence_below: Option<f32>,
    pub limit: Option<usize>,
    pub offset: usize,
}

/// One recorded access: the item and, optionally, its reinforced strength.
#[derive(Clone, Debug)]
pub struct Access {
    pub id: String,
    pub strength: Option<f32>,
}

/// What a reader's cached copy of the items depends on, read in one snapshot: the write
/// generation (moved by every committed write, through any process) and the access epoch
/// (moved by every fold of access bookkeeping, which changes access counts, last access
/// times and strengths without moving the generation). Both only grow: two equal stamps
/// mean no committed change of the items between their reads.
#[derive(Clone, Copy, Debug, Default, Hash, PartialEq, Eq)]
pub struct ReadStamp {
    pub generation: u64,
    pub accesses: u64,
}

impl ReadStamp {
    /// Whether this stamp was read no earlier than `other` (both parts only grow).
    pub fn is_at_least(&self, other: &ReadStamp) -> bool {
        self.generation >= other.generation && self.accesses >= other.accesses
    }
}

/// One search result: the item and its BM25 relevance (higher is better; comparable only
/// within one result list).
#[derive(Clone, Debug)]
pub struct SearchHit {
    pub item: Item,
    pub score: f64,
}

/// What a store check found.
#[derive(Clone, Debug, Default)]
pub struct StoreStats {
    pub schema_version: i64,
    pub items: u64,
    pub generation: u64,
    pub by_status: Vec<(String, u64)>,
    /// Problems found; empty when healthy.
    pub problems: Vec<String>,
    pub journal_mode: String,
    /// Another process held the write lock: the checks that need it were skipped.
    pub locked: bool,
}
