//! Persistence for brain: the `Store` (embedded SQLite today; PostgreSQL joins the closed
//! set later), versioned migrations and full-text search. The one crate that speaks SQL; it
//! returns core types, never rows.

mod error;
mod filter;
mod sqlite;

pub use error::StoreError;
pub use filter::{Access, ItemFilter, SearchHit, StoreStats};
pub use sqlite::lean::ReadTx;
pub use sqlite::vault::VaultFileRecord;
pub use sqlite::{PageReads, SqliteStore, WriteTx};

use brain_core::{Item, Timestamp};
use std::path::Path;

/// The closed set of storage backends, chosen once by location.
#[derive(Debug)]
pub enum Store {
    Sqlite(SqliteStore),
}

/// Result alias for store operations.
pub type StoreResult<T> = Result<T, StoreError>;

impl Store {
    /// Opens (creating and migrating when `create` is set) the SQLite store at `path`.
    pub fn open_sqlite(path: &Path, create: bool) -> StoreResult<Store> {
        SqliteStore::open(path, create).map(Store::Sqlite)
    }

    /// `open_sqlite` reading pages the given way (see [`PageReads`]).
    pub fn open_sqlite_with(path: &Path, create: bool, page_reads: PageReads) -> StoreResult<Store> {
        SqliteStore::open_with(path, create, sqlite::DEFAULT_BUSY_TIMEOUT, page_reads).map(Store::Sqlite)
    }

    pub fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        match self {
            Store::Sqlite(store) => store.get(id),
        }
    }

    /// Inserts a new item; fails with `AlreadyExists` when its id is taken.
    pub fn insert(&self, item: &Item) -> StoreResult<()> {
        match self {
            Store::Sqlite(store) => store.write(|tx| tx.insert(item)),
        }
    }

    /// Inserts many items in one transaction: all of them or none. `progress` is called with
    /// the number inserted so far.
    pub fn insert_all(&self, items: &[Item], progress: &mut dyn FnMut(usize)) -> StoreResult<()> {
        match self {
            Store::Sqlite(store) => store.insert_all(items, progress),
        }
    }

    /// Runs `change` inside one exclusive write transaction (read-modify-write is atomic).
    pub fn write<T>(&self, change: impl FnOnce(&mut WriteTx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        match self {
            Store::Sqlite(store) => store.write(change),
        }
    }

    pub fn list(&self, filter: &ItemFilter) -> StoreResult<Vec<Item>> {
        match self {
            Store::Sqlite(store) => store.list(filter),
        }
    }

    pub fn count(&self, filter: &ItemFilter) -> StoreResult<u64> {
        match self {
            Store::Sqlite(store) => store.count(filter),
        }
    }

    /// BM25 search over title, content, tags, files and schema key.
    pub fn search(&self, query: &str, filter: &ItemFilter) -> StoreResult<Vec<SearchHit>> {
        match self {
            Store::Sqlite(store) => store.search(query, filter),
        }
    }

    /// Records that items were returned to a reader (access count, time, reinforced
    /// strength). With `wait`, gives up (returning `Ok(false)`) rather than block longer.
    pub fn record_access(
        &self,
        accesses: &[Access],
        now: Timestamp,
        wait: Option<std::time::Duration>,
    ) -> StoreResult<bool> {
        match self {
            Store::Sqlite(store) => store.record_access(accesses, now, wait),
        }
    }

    /// The write generation: grows with every committed write through any process.
    pub fn generation(&self) -> StoreResult<u64> {
        match self {
            Store::Sqlite(store) => store.generation(),
        }
    }

    /// Whether any item (of any status) lives in `scope`.
    pub fn has_scope(&self, scope: &brain_core::Scope) -> StoreResult<bool> {
        match self {
            Store::Sqlite(store) => store.has_scope(scope),
        }
    }

    /// Database integrity, FTS index consistency and migration state.
    pub fn check(&self) -> StoreResult<StoreStats> {
        match self {
            Store::Sqlite(store) => store.check(),
        }
    }
}
