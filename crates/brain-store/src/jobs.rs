//! Coordination of jobs among the processes that share a store: a lock that at most one
//! holder has at a time (the scheduled tick runs on one replica of a fleet), and one-time
//! claims (a critical signal is published by one replica, not by each).
//!
//! The lock is a PostgreSQL session advisory lock on a connection of its own, so a holder
//! that dies (even by `kill -9`) releases it with its connection; on SQLite it is an
//! exclusive lock on a file beside the database, released by the kernel likewise.

use std::fs::File;
use std::path::PathBuf;

use crate::{Store, StoreError, StoreResult};

/// A held job lock; dropping it releases the lock.
#[derive(Debug)]
pub struct JobLock {
    _held: Held,
}

#[derive(Debug)]
enum Held {
    File(#[allow(dead_code)] File),
    Postgres(#[allow(dead_code)] Box<crate::pg::listen::LockConnection>),
}

impl Store {
    /// Takes the lock named `purpose` (e.g. `tick`) if no one holds it; `None` when another
    /// process or replica does. Never waits.
    pub fn try_lock_job(&self, purpose: &str) -> StoreResult<Option<JobLock>> {
        match self {
            Store::Sqlite(store) => {
                let path = lock_path(store.path(), purpose);
                let file = File::options()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(&path)
                    .map_err(|err| StoreError::ReadOnly { path: path.clone(), detail: err.to_string() })?;
                match file.try_lock() {
                    Ok(()) => Ok(Some(JobLock { _held: Held::File(file) })),
                    Err(std::fs::TryLockError::WouldBlock) => Ok(None),
                    Err(std::fs::TryLockError::Error(err)) => {
                        Err(StoreError::ReadOnly { path, detail: format!("cannot lock: {err}") })
                    }
                }
            }
            Store::Postgres(store) => {
                Ok(store.try_lock(purpose)?.map(|connection| JobLock { _held: Held::Postgres(Box::new(connection)) }))
            }
        }
    }
}

/// `<database>.<purpose>.lock` beside a SQLite file.
fn lock_path(database: &std::path::Path, purpose: &str) -> PathBuf {
    let name = database.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let safe: String = purpose.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    database.with_file_name(format!("{name}.{safe}.lock"))
}
