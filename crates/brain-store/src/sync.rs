//! What `brain sync` needs from a store, in the words every backend shares: an entry of
//! the change log and a page of them, what a pushed and a pulled change did, a conflict and
//! which side of it to keep, and the rows of the log and of the conflicts as the backends
//! read them.
//!
//! The log itself is written by triggers (migrations `0008_sync` / `0005_sync`): one row
//! per item with the item's latest change under a cursor that only grows, a tombstone when
//! it is deleted, and a `pending` mark until a server has acknowledged it. The rules on top
//! live once in `tx/sync.rs`, above the backends; the backends supply row operations
//! (`sqlite/sync.rs`, `pg/sync.rs`).

use brain_core::{Item, Timestamp};

/// One entry of the change log: an item's latest state at cursor `seq`, or its tombstone.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The cursor of this change in the log it was read from (0 when it was not read from
    /// a log, e.g. a change received over the network).
    pub seq: u64,
    pub id: String,
    /// The item's scope (a tombstone keeps the scope of the deleted item).
    pub scope: String,
    /// The item's version in the log it was read from; a tombstone's is one past the
    /// deleted item's.
    pub version: u64,
    /// For a pending local change: the server's version this copy last agreed with (0:
    /// never synced). The server applies the change only on that version.
    pub base_version: u64,
    /// The item; `None` for a tombstone.
    pub item: Option<Item>,
}

/// A page of the change log.
#[derive(Clone, Debug, Default)]
pub struct ChangePage {
    pub changes: Vec<Change>,
    /// The cursor to continue from: the last row read (kept or not), else the one asked for.
    pub next: u64,
    /// Whether rows past `next` may exist (the page was full).
    pub more: bool,
}

/// What the server did with a pushed change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushOutcome {
    /// Stored (or already stored: a replayed push); the server's version now.
    Accepted { version: u64 },
    /// The server's item changed since the pusher's base: nothing written; its version.
    Conflict { version: u64 },
}

/// What a synced copy did with a pulled change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PullOutcome {
    /// The local item now matches the server's.
    Applied,
    /// Nothing to do: already seen, or the same content.
    Unchanged,
    /// Changed here and there since the last sync: the server's version is kept beside the
    /// local one as a conflict.
    Conflict,
    /// Refused, nothing written: the local item is in `local_scope`, a scope this copy does
    /// not sync (any more), whatever scope the change claims.
    OutOfScope { local_scope: String },
}

/// An item changed on both sides since the last sync, both versions kept.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncConflict {
    pub id: String,
    /// The local item (`None`: deleted here).
    pub local: Option<Item>,
    pub remote_version: u64,
    /// The server's item (`None`: deleted there).
    pub remote: Option<Item>,
    pub found_at: Timestamp,
}

/// Which side of a conflict to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Local,
    Remote,
}

/// One row of the `changes` table, as the backends read it.
#[derive(Clone, Debug)]
pub(crate) struct ChangeRow {
    /// `None` on PostgreSQL until the writing transaction commits.
    pub seq: Option<u64>,
    pub id: String,
    pub scope: String,
    pub version: u64,
    pub deleted: bool,
    pub pending: bool,
}

/// A stored conflict: the server's version and its item as JSON (`None`: a tombstone).
#[derive(Clone, Debug)]
pub(crate) struct ConflictRow {
    pub id: String,
    pub remote_version: u64,
    pub remote: Option<String>,
    pub found_at: Timestamp,
}

/// True when two items say the same thing: every field but the version, the access
/// bookkeeping (count, time, reinforced strength) and the token count (each copy's own
/// tokenizer), which each copy keeps for itself.
pub fn same_content(a: &Item, b: &Item) -> bool {
    fn plain(item: &Item) -> Item {
        let mut plain = item.clone();
        plain.version = 0;
        plain.access_count = 0;
        plain.last_accessed_at = None;
        plain.strength = 0.0;
        plain.tokens = 0;
        plain
    }
    plain(a) == plain(b)
}
