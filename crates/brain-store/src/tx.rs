//! The backend-neutral transactions handed to [`Store::write`](crate::Store::write) and
//! [`Store::read`](crate::Store::read) closures. Callers see core types only; each backend's
//! transaction (its SQL and row mapping) stays private to its module.
//!
//! This is the dispatch above the backends: a backend opens its transaction and hands it
//! over; here the caller's closure runs on it and it commits (or ends); the backend then does
//! what follows a commit (PostgreSQL announces it). The face owns the backend's transaction
//! rather than borrowing it, so that `WriteTx` keeps one lifetime. No backend names this
//! module: what both speak lives below them (`filter.rs`, `records.rs`, `sync.rs`).
//!
//! The rules every backend shares live here, once: a versioned update checks the version
//! it read inside the same transaction and stores the next one; `require` turns a missing
//! item into `NotFound`; the rules of sync (`tx/sync.rs`). Backends supply row operations.

use brain_core::assemble::ItemMeta;
use brain_core::item::MAX_VERSION;
use brain_core::{Item, Scope};

use crate::{StoreError, StoreResult, TokenRecord, VaultFileRecord, pg, sqlite};

mod sync;

/// A write transaction: the only way to change items. Everything done through it commits
/// together when the closure returns `Ok`, or not at all.
pub struct WriteTx<'c> {
    pub(crate) backend: WriteBackend<'c>,
}

pub(crate) enum WriteBackend<'c> {
    Sqlite(sqlite::WriteTx<'c>),
    Postgres(pg::WriteTx<'c>),
}

/// Calls the same method on whichever backend the transaction belongs to.
macro_rules! dispatch {
    ($self:expr, $tx:ident => $call:expr) => {
        match $self {
            WriteBackend::Sqlite($tx) => $call,
            WriteBackend::Postgres($tx) => $call,
        }
    };
}

impl<'c> WriteTx<'c> {
    pub(crate) fn new(backend: WriteBackend<'c>) -> WriteTx<'c> {
        WriteTx { backend }
    }

    /// Runs `change` on the transaction and commits it when `change` returns `Ok`; an error
    /// drops it, which rolls everything back. Returns `change`'s value and whether the write
    /// generation moved (a backend announces that; see `PgStore::write`).
    pub(crate) fn run<T>(mut self, change: impl FnOnce(&mut WriteTx<'c>) -> StoreResult<T>) -> StoreResult<(T, bool)> {
        let value = change(&mut self)?;
        let moved = self.commit()?;
        Ok((value, moved))
    }

    /// Commits everything done through the transaction (moving the write generation when
    /// anything changed). Returns whether the generation moved.
    fn commit(self) -> StoreResult<bool> {
        dispatch!(self.backend, tx => tx.commit())
    }

    /// The stored item. Inside a write transaction the row stays as read until commit: no
    /// other writer changes it in between (SQLite holds the write lock; PostgreSQL locks
    /// the row).
    pub fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        dispatch!(&self.backend, tx => tx.get(id))
    }

    /// The item, or `NotFound`.
    pub fn require(&self, id: &str) -> StoreResult<Item> {
        self.get(id)?.ok_or_else(|| StoreError::NotFound { id: id.to_string() })
    }

    /// Inserts a new item; `AlreadyExists` when its id is taken.
    pub fn insert(&mut self, item: &Item) -> StoreResult<()> {
        dispatch!(&mut self.backend, tx => tx.insert(item))
    }

    /// Writes `item` over the stored one. With `expected_version`, the stored version must
    /// match or the write is a `Conflict`. The stored version becomes the old one + 1 and
    /// the written item (with its new version) is returned.
    pub fn update(&mut self, item: &Item, expected_version: Option<u64>) -> StoreResult<Item> {
        let current = self.require(&item.id)?;
        if let Some(expected) = expected_version
            && expected != current.version
        {
            return Err(StoreError::Conflict { id: item.id.clone(), expected, actual: current.version });
        }
        if current.version >= MAX_VERSION {
            return Err(version_exhausted(&item.id));
        }
        let mut written = item.clone();
        written.version = current.version + 1;
        let replaced = dispatch!(&mut self.backend, tx => tx.replace(&written, current.version))?;
        if !replaced {
            // The row is locked since it was read, so this cannot happen; kept so that no
            // backend can ever lose a write silently.
            return Err(StoreError::Conflict { id: item.id.clone(), expected: current.version, actual: 0 });
        }
        Ok(written)
    }

    /// Erases an item for good. Returns whether it existed.
    pub fn delete(&mut self, id: &str) -> StoreResult<bool> {
        // Its tombstone takes the next version.
        if self.require(id).is_ok_and(|current| current.version >= MAX_VERSION) {
            return Err(version_exhausted(id));
        }
        dispatch!(&mut self.backend, tx => tx.delete(id))
    }

    /// Inserts many items, skipping ids that already exist (and later rows repeating an id of
    /// the batch). Returns the ids of the skipped rows, one per row, in row order.
    pub fn insert_many(&mut self, items: &[&Item]) -> StoreResult<Vec<String>> {
        dispatch!(&mut self.backend, tx => tx.insert_many(items))
    }

    /// Makes the rest of this transaction a bulk load of about `expected` new items: on SQLite,
    /// when they outnumber the stored items, the secondary indexes of the items are built
    /// once before commit instead of row by row (see the SQLite backend); nothing on
    /// PostgreSQL. Reads in the transaction stay correct, only slower. Returns whether the
    /// indexes were deferred.
    pub fn defer_item_indexes(&mut self, expected: usize) -> StoreResult<bool> {
        match &mut self.backend {
            WriteBackend::Sqlite(tx) => tx.defer_item_indexes(expected),
            WriteBackend::Postgres(_) => Ok(false),
        }
    }

    /// Erases many items. Returns how many existed.
    pub fn delete_many(&mut self, ids: &[String]) -> StoreResult<usize> {
        dispatch!(&mut self.backend, tx => tx.delete_many(ids))
    }

    /// Erases every item whose source starts with `prefix`. Returns how many.
    pub fn delete_items_by_source_prefix(&mut self, prefix: &str) -> StoreResult<usize> {
        dispatch!(&mut self.backend, tx => tx.delete_items_by_source_prefix(prefix))
    }

    /// Gives the items `ids` whose source is `from` the source `to` (a moved vault file keeps
    /// its items); their text is not rewritten. Returns how many moved.
    pub fn move_source(&mut self, ids: &[String], from: &str, to: &str) -> StoreResult<usize> {
        dispatch!(&mut self.backend, tx => tx.move_source(ids, from, to))
    }

    /// Inserts or replaces the record of one vault file. Bookkeeping only: it does not move
    /// the write generation (no document depends on it).
    pub fn put_vault_file(&mut self, record: &VaultFileRecord) -> StoreResult<()> {
        dispatch!(&mut self.backend, tx => tx.put_vault_file(record))
    }

    /// Updates only the stat of a file whose bytes did not change (a touch).
    pub fn touch_vault_file(&mut self, relpath: &str, size: u64, mtime_ns: i64) -> StoreResult<()> {
        dispatch!(&mut self.backend, tx => tx.touch_vault_file(relpath, size, mtime_ns))
    }

    /// Forgets one vault file. Returns whether it was indexed.
    pub fn delete_vault_file(&mut self, relpath: &str) -> StoreResult<bool> {
        dispatch!(&mut self.backend, tx => tx.delete_vault_file(relpath))
    }

    /// Forgets every vault file record (re-indexing another vault). Returns how many.
    pub fn clear_vault_files(&mut self) -> StoreResult<usize> {
        dispatch!(&mut self.backend, tx => tx.clear_vault_files())
    }

    /// A vault-wide value (`root`, `feed`, …) as this transaction sees it.
    pub fn vault_value(&self, key: &str) -> StoreResult<Option<String>> {
        dispatch!(&self.backend, tx => tx.vault_value(key))
    }

    /// Records what a session did with an item it was given (or a feedback): a new row, or a
    /// session's "unused" turned "used"; a recorded use or feedback stays as it is. Keeps the
    /// newest [`crate::USES_KEPT_PER_ITEM`] decisions per item. Moves the write generation
    /// when it wrote (decisions change recall). Returns whether the item became used now.
    pub fn record_use(&mut self, record: &crate::UseRecord) -> StoreResult<bool> {
        dispatch!(&mut self.backend, tx => tx.record_use(record))
    }

    /// Stores a new bearer token; `AlreadyExists` when its name or secret is taken. Moves
    /// the write generation, so every server refreshes its tokens at once.
    pub fn insert_token(&mut self, token: &TokenRecord) -> StoreResult<()> {
        dispatch!(&mut self.backend, tx => tx.insert_token(token))
    }

    /// Revokes a stored token at `at`. Returns false when no such token is active. The
    /// revoked token stays in the store: a store that has had tokens keeps requiring one.
    pub fn revoke_token(&mut self, name: &str, at: brain_core::Timestamp) -> StoreResult<bool> {
        dispatch!(&mut self.backend, tx => tx.revoke_token(name, at))
    }

    /// Deletes every revoked token (active ones stay), returning how many; moves the write
    /// generation when there were some. A store without any token row requires none.
    pub fn forget_revoked_tokens(&mut self) -> StoreResult<u64> {
        dispatch!(&mut self.backend, tx => tx.forget_revoked_tokens())
    }

    /// Claims `key` of `kind` for this caller, once among every process sharing the store:
    /// true for the first claim, false when it was claimed before. Bookkeeping: it does not
    /// move the write generation.
    pub fn claim(&mut self, kind: &str, key: &str, at: brain_core::Timestamp) -> StoreResult<bool> {
        dispatch!(&mut self.backend, tx => tx.claim(kind, key, at))
    }

    /// Gives a claim back (the claimed work failed and may be tried again).
    pub fn release_claim(&mut self, kind: &str, key: &str) -> StoreResult<bool> {
        dispatch!(&mut self.backend, tx => tx.release_claim(kind, key))
    }

    /// Sets a vault-wide value. Returns false (and writes nothing) when it already held
    /// `value`. A change moves the write generation: the feed is part of assembled documents.
    pub fn set_vault_value(&mut self, key: &str, value: &str) -> StoreResult<bool> {
        dispatch!(&mut self.backend, tx => tx.set_vault_value(key, value))
    }
}

/// A read transaction: every read through it sees one snapshot of the store, so several
/// reads agree with each other whatever other processes commit meanwhile.
pub struct ReadTx<'c> {
    backend: ReadBackend<'c>,
}

pub(crate) enum ReadBackend<'c> {
    Sqlite(sqlite::lean::ReadTx<'c>),
    Postgres(pg::ReadTx<'c>),
}

impl<'c> ReadTx<'c> {
    pub(crate) fn new(backend: ReadBackend<'c>) -> ReadTx<'c> {
        ReadTx { backend }
    }

    /// Runs `read` on the transaction, then ends it (releasing its snapshot). An error drops
    /// it, which ends it too.
    pub(crate) fn run<T>(self, read: impl FnOnce(&ReadTx<'c>) -> StoreResult<T>) -> StoreResult<T> {
        let value = read(&self)?;
        match self.backend {
            ReadBackend::Sqlite(tx) => tx.finish()?,
            ReadBackend::Postgres(tx) => tx.finish()?,
        }
        Ok(value)
    }

    /// Every item of `scopes`, any status, as metas, in storage order. Reads no text
    /// column, so no title, content or rationale is decoded or copied.
    pub fn list_metas(&self, scopes: &[Scope]) -> StoreResult<Vec<ItemMeta>> {
        match &self.backend {
            ReadBackend::Sqlite(tx) => tx.list_metas(scopes),
            ReadBackend::Postgres(tx) => tx.list_metas(scopes),
        }
    }

    /// The full items with these ids (any order; ids not stored are left out).
    pub fn get_many(&self, ids: &[&str]) -> StoreResult<Vec<Item>> {
        match &self.backend {
            ReadBackend::Sqlite(tx) => tx.get_many(ids),
            ReadBackend::Postgres(tx) => tx.get_many(ids),
        }
    }

    /// At most `limit` items whose id sorts after `after` (bytewise), in id order: a walk
    /// over every item in pages that does not slow down as it goes.
    pub fn items_after(&self, after: &str, limit: usize) -> StoreResult<Vec<Item>> {
        match &self.backend {
            ReadBackend::Sqlite(tx) => tx.items_after(after, limit),
            ReadBackend::Postgres(tx) => tx.items_after(after, limit),
        }
    }
}

/// An item at the largest version sync carries (2^53 − 1, JSON's exact integers; only an
/// import can bring one there) is not changed again: a version past it would stop every
/// sync client.
fn version_exhausted(id: &str) -> StoreError {
    StoreError::Unstorable {
        id: id.to_string(),
        detail: format!(
            "its version is the largest sync carries ({MAX_VERSION}); export it, then import it as a new item"
        ),
    }
}
