//! Persistence for brain: the `Store` (embedded SQLite by default, PostgreSQL for fleets),
//! versioned migrations per backend and full-text search. The one crate that speaks SQL; it
//! returns core types, never rows.
//!
//! The face is backend-neutral: operations on [`Store`] and the transactions handed to its
//! closures ([`WriteTx`], [`ReadTx`]) take and return core types. Each backend's SQL,
//! migrations and row mapping stay private to its module.
//!
//! Modules, bottom up: the words every backend speaks (`error`, `filter`, `records`, `sync`,
//! `location`); the backends (`sqlite`, `pg`), which name nothing above them; and the dispatch
//! over the backends: [`Store`] here, its transactions (`tx`, with the rules of sync), `jobs`
//! and `copy`.

mod copy;
mod error;
mod filter;
mod jobs;
mod location;
mod pg;
mod records;
mod sqlite;
mod sync;
mod tx;

pub use copy::{CopyReport, copy_all};
pub use error::StoreError;
pub use filter::{Access, ItemFilter, ReadStamp, SearchHit, StoreStats};
pub use jobs::JobLock;
pub use location::{PgLocation, StoreLocation};
pub use pg::listen::ChangeFeed;
pub use pg::{Committed, PgStore};
pub use records::{TokenRecord, USES_KEPT_PER_ITEM, UseRecord, VaultFileRecord, VaultFileRow, VectorJob};
pub use sqlite::{PageReads, SqliteStore};
pub use sync::{Change, ChangePage, Keep, PullOutcome, PushOutcome, SyncConflict, same_content};
pub use tx::{ReadTx, WriteTx};

use brain_core::{Item, Timestamp};
use std::path::Path;
use tx::{ReadBackend, WriteBackend};

/// The closed set of storage backends, chosen once by location.
#[derive(Debug)]
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(Box<PgStore>),
}

/// Result alias for store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// Calls the same method on whichever backend the store is.
macro_rules! dispatch {
    ($self:expr, $store:ident => $call:expr) => {
        match $self {
            Store::Sqlite($store) => $call,
            Store::Postgres($store) => $call,
        }
    };
}

impl Store {
    /// Opens the store at `location`. SQLite: with `create`, a missing file is created and
    /// migrated; without it, a missing file is `Missing`. PostgreSQL: the database must exist;
    /// its schema is created and migrated when needed (once, under an advisory lock, however
    /// many replicas start together). `page_reads` matters to SQLite only.
    pub fn open(location: &StoreLocation, create: bool, page_reads: PageReads) -> StoreResult<Store> {
        match location {
            StoreLocation::Sqlite(path) => Store::open_sqlite_with(path, create, page_reads),
            StoreLocation::Postgres(location) => PgStore::open(location).map(|store| Store::Postgres(Box::new(store))),
        }
    }

    /// Opens (creating and migrating when `create` is set) the SQLite store at `path`.
    pub fn open_sqlite(path: &Path, create: bool) -> StoreResult<Store> {
        SqliteStore::open(path, create).map(Store::Sqlite)
    }

    /// `open_sqlite` reading pages the given way (see [`PageReads`]).
    pub fn open_sqlite_with(path: &Path, create: bool, page_reads: PageReads) -> StoreResult<Store> {
        SqliteStore::open_with(path, create, sqlite::DEFAULT_BUSY_TIMEOUT, page_reads).map(Store::Sqlite)
    }

    /// Where this store lives (prints without a password).
    pub fn location(&self) -> StoreLocation {
        match self {
            Store::Sqlite(store) => StoreLocation::Sqlite(store.path().to_path_buf()),
            Store::Postgres(store) => StoreLocation::Postgres(store.location().clone()),
        }
    }

    pub fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        dispatch!(self, store => store.get(id))
    }

    /// Inserts a new item; fails with `AlreadyExists` when its id is taken.
    pub fn insert(&self, item: &Item) -> StoreResult<()> {
        self.write(|tx| tx.insert(item))
    }

    /// Inserts many items in one transaction: all of them or none (`AlreadyExists` names the
    /// first taken id). `progress` is called with the number inserted so far.
    pub fn insert_all(&self, items: &[Item], progress: &mut dyn FnMut(usize)) -> StoreResult<()> {
        self.write(|tx| {
            tx.defer_item_indexes(items.len())?;
            let rows: Vec<&Item> = items.iter().collect();
            let mut done = 0;
            // Multi-row statements (see `WriteTx::insert_many`); chunks only pace the progress.
            for chunk in rows.chunks(9000) {
                if let Some(id) = tx.insert_many(chunk)?.into_iter().next() {
                    return Err(StoreError::AlreadyExists { id });
                }
                done += chunk.len();
                progress(done);
            }
            progress(items.len());
            Ok(())
        })?;
        // A bulk load changes the shape of the data: refresh the planner's statistics so a
        // scoped, ordered list walks the order index instead of sorting the whole table.
        if items.len() >= 1000 {
            self.analyze()?;
        }
        Ok(())
    }

    /// Refreshes the planner's statistics after a bulk load (see each backend's `analyze`).
    pub(crate) fn analyze(&self) -> StoreResult<()> {
        dispatch!(self, store => store.analyze())
    }

    /// Runs `change` inside one write transaction (read-modify-write is atomic): everything
    /// it does commits together when it returns `Ok`, nothing when it returns an error.
    pub fn write<T>(&self, change: impl FnOnce(&mut WriteTx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        match self {
            Store::Sqlite(store) => store.write(|tx| WriteTx::new(WriteBackend::Sqlite(tx)).run(change)),
            Store::Postgres(store) => store.write(|tx| WriteTx::new(WriteBackend::Postgres(tx)).run(change)),
        }
    }

    /// Runs `read` in one read transaction: every read through it sees the same snapshot.
    pub fn read<T>(&self, read: impl FnOnce(&ReadTx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        match self {
            Store::Sqlite(store) => store.read(|tx| ReadTx::new(ReadBackend::Sqlite(tx)).run(read)),
            Store::Postgres(store) => store.read(|tx| ReadTx::new(ReadBackend::Postgres(tx)).run(read)),
        }
    }

    pub fn list(&self, filter: &ItemFilter) -> StoreResult<Vec<Item>> {
        dispatch!(self, store => store.list(filter))
    }

    pub fn count(&self, filter: &ItemFilter) -> StoreResult<u64> {
        dispatch!(self, store => store.count(filter))
    }

    /// Search candidates for a query's words within `filter`, and the words' statistics
    /// over the whole store: the backend's half of search (`brain_core::search` ranks).
    pub fn candidates(
        &self,
        request: &brain_core::search::CandidateRequest<'_>,
        filter: &ItemFilter,
    ) -> StoreResult<brain_core::search::Candidates> {
        dispatch!(self, store => store.candidates(request, filter))
    }

    /// The items of `filter` written next to each anchor in its source: up to `reach`
    /// before and after it in `(created_at, id)` order, each item once (the backend's half
    /// of `brain_core::search::lend`).
    pub fn neighbours(
        &self,
        anchors: &[brain_core::search::Anchor<'_>],
        reach: usize,
        filter: &ItemFilter,
    ) -> StoreResult<Vec<Item>> {
        dispatch!(self, store => store.neighbours(anchors, reach, filter))
    }

    /// Up to `limit` items with no vector of `model`, oldest first.
    pub fn vector_backlog(&self, model: &str, limit: usize) -> StoreResult<Vec<VectorJob>> {
        dispatch!(self, store => store.vector_backlog(model, limit))
    }

    /// The embedding job of one item, as `vector_backlog` gives it (with the item written
    /// before it in its source), whether or not it has a vector; `None` when there is none.
    pub fn vector_job(&self, id: &str) -> StoreResult<Option<VectorJob>> {
        dispatch!(self, store => store.vector_job(id))
    }

    /// How many items have no vector of `model`.
    pub fn count_vector_backlog(&self, model: &str) -> StoreResult<u64> {
        dispatch!(self, store => store.count_vector_backlog(model))
    }

    /// Stores vectors of `model` (one per item; a vector of another model is replaced).
    /// Derived data: `version` and the write generation do not change.
    pub fn put_vectors(&self, model: &str, vectors: &[(String, Vec<f32>)]) -> StoreResult<()> {
        dispatch!(self, store => store.put_vectors(model, vectors))
    }

    /// The `limit` items of `filter` nearest to `query` among vectors of `model`, with
    /// their cosine similarity, best first.
    pub fn nearest(
        &self,
        model: &str,
        query: &[f32],
        filter: &ItemFilter,
        limit: usize,
    ) -> StoreResult<Vec<(Item, f32)>> {
        dispatch!(self, store => store.nearest(model, query, filter, limit))
    }

    /// Records that items were returned to a reader (access count, time, reinforced
    /// strength), moving the access epoch (see [`ReadStamp`]) but not the write
    /// generation. With `wait`, gives up (returning `Ok(false)`) rather than block longer.
    pub fn record_access(
        &self,
        accesses: &[Access],
        now: Timestamp,
        wait: Option<std::time::Duration>,
    ) -> StoreResult<bool> {
        dispatch!(self, store => store.record_access(accesses, now, wait))
    }

    /// The recorded decisions about `ids` (see [`UseRecord`]), newest first.
    pub fn uses_of(&self, ids: &[&str]) -> StoreResult<Vec<UseRecord>> {
        dispatch!(self, store => store.uses_of(ids))
    }

    /// The items of `project` that sessions used (or someone marked useful), most recently
    /// used first, at most `limit`.
    pub fn recently_used(&self, project: &str, limit: usize) -> StoreResult<Vec<String>> {
        dispatch!(self, store => store.recently_used(project, limit))
    }

    /// The decisions made at or after `since`, of `project` when given, oldest first.
    pub fn uses_since(&self, project: Option<&str>, since: Timestamp) -> StoreResult<Vec<UseRecord>> {
        dispatch!(self, store => store.uses_since(project, since))
    }

    /// The write generation: grows with every committed write through any process.
    pub fn generation(&self) -> StoreResult<u64> {
        dispatch!(self, store => store.generation())
    }

    /// The write generation and the access epoch, in one snapshot: a copy of any read of
    /// the items made after a stamp is still exact while the stamp reads the same (see
    /// [`ReadStamp`]).
    pub fn read_stamp(&self) -> StoreResult<ReadStamp> {
        dispatch!(self, store => store.read_stamp())
    }

    /// Whether any item (of any status) lives in `scope`.
    pub fn has_scope(&self, scope: &brain_core::Scope) -> StoreResult<bool> {
        dispatch!(self, store => store.has_scope(scope))
    }

    /// Database integrity, search index consistency and migration state.
    pub fn check(&self) -> StoreResult<StoreStats> {
        dispatch!(self, store => store.check())
    }

    /// Rebuilds the full-text index from the items (repairs what `check` reported).
    pub fn repair_search_index(&self) -> StoreResult<()> {
        dispatch!(self, store => store.rebuild_search_index())
    }

    /// Every indexed vault file, in no particular order. Without `with_state` the (large)
    /// state column is not read: enough to tell which files changed and to list diagnostics.
    pub fn vault_files(&self, with_state: bool) -> StoreResult<Vec<VaultFileRecord>> {
        dispatch!(self, store => store.vault_files(with_state))
    }

    /// [`Store::vault_files`], each row passed to `visit` borrowed instead of
    /// collected (SQLite reads the states in place: no copy of the column).
    pub fn vault_files_each(&self, with_state: bool, visit: &mut dyn FnMut(VaultFileRow<'_>)) -> StoreResult<()> {
        dispatch!(self, store => store.vault_files_each(with_state, visit))
    }

    /// Follows writes committed by any process as they happen, where the backend pushes
    /// them (PostgreSQL: `LISTEN` on a connection of its own). `None` for SQLite, whose
    /// readers poll [`Store::generation`] (one indexed read in process).
    pub fn listen(&self) -> StoreResult<Option<ChangeFeed>> {
        match self {
            Store::Sqlite(_) => Ok(None),
            Store::Postgres(store) => store.listen().map(Some),
        }
    }

    /// Whether this handle committed a write that moved the generation since the last call,
    /// and if so a generation that includes it (PostgreSQL only: SQLite's readers share the
    /// file and read the generation in process). A server folds it into its cached
    /// generation, so a write it acknowledged is a new ETag on that server at once.
    pub fn take_committed(&self) -> Option<Committed> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(store) => store.take_committed(),
        }
    }

    /// True when the store lives on a database server that other machines share (a cache
    /// or an event must then cross processes through the database).
    pub fn is_shared(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// Every vault-wide value, by key.
    pub fn vault_values(&self) -> StoreResult<Vec<(String, String)>> {
        dispatch!(self, store => store.vault_values())
    }

    /// Every bearer token kept in the store (revoked ones too), by name.
    pub fn tokens(&self) -> StoreResult<Vec<TokenRecord>> {
        dispatch!(self, store => store.tokens())
    }

    /// A vault-wide value (`root`, `feed`, …).
    pub fn vault_value(&self, key: &str) -> StoreResult<Option<String>> {
        dispatch!(self, store => store.vault_value(key))
    }
}

/// A stored use or review count as an item holds it: 0 to `u32::MAX`, saturating. Both
/// backends read it so (one past the largest — a count synced there, then one more access —
/// wrapped to 0 on SQLite and failed every read of its scope on PostgreSQL), and the access
/// fold never writes past it.
pub(crate) fn saturating_count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}
