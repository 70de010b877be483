//! Store errors, typed so the app can classify them once (user, conflict, internal).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("item {id} not found")]
    NotFound { id: String },
    #[error("item {id} already exists")]
    AlreadyExists { id: String },
    #[error(
        "conflict on item {id}: expected version {expected}, the store has version {actual} (someone else changed it; re-read and retry)"
    )]
    Conflict { id: String, expected: u64, actual: u64 },
    #[error("database {path} is not a valid brain database ({detail})")]
    Corrupt { path: PathBuf, detail: String },
    #[error("database {path} is read-only ({detail})")]
    ReadOnly { path: PathBuf, detail: String },
    #[error("database {path} is busy: another process held the write lock too long ({detail})")]
    Busy { path: PathBuf, detail: String },
    #[error("database {path} does not exist (run `brain init`)")]
    Missing { path: PathBuf },
    #[error("database {path} was written by a newer brain (schema version {found}, this build knows {known})")]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error("invalid search query: {0}")]
    InvalidQuery(String),
    #[error("invalid stored row for item {id}: {detail}")]
    InvalidRow { id: String, detail: String },
    #[error("database error on {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("invalid database URL: {detail}")]
    InvalidLocation { detail: String },
    /// The database server cannot be reached (refused, dropped, shutting down): retry later.
    #[error("database {location} is unreachable: {detail}")]
    Unavailable { location: String, detail: String },
    /// The database server is reachable but its database does not exist.
    #[error("database {location} does not exist on the server")]
    NoDatabase { location: String },
    /// A value this backend cannot store (PostgreSQL text cannot hold NUL characters).
    #[error("item {id} cannot be stored: {detail}")]
    Unstorable { id: String, detail: String },
    #[error("database error on {location}: {detail}")]
    Postgres { location: String, detail: String },
    /// An operation this backend does not offer (yet).
    #[error("{0}")]
    Unsupported(String),
}

impl StoreError {
    /// True when the database could not be reached at all (a server backend that is down):
    /// nothing was changed and the same call may succeed later.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }

    /// Classifies a raw SQLite error for the database at `path`.
    pub(crate) fn from_sqlite(path: &std::path::Path, err: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode;
        let path = path.to_path_buf();
        if let rusqlite::Error::SqliteFailure(failure, message) = &err {
            let detail = message.clone().unwrap_or_else(|| failure.to_string());
            match failure.code {
                ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => return StoreError::Corrupt { path, detail },
                ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied
                    if detail.contains("readonly") || failure.code != ErrorCode::CannotOpen =>
                {
                    return StoreError::ReadOnly { path, detail };
                }
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => return StoreError::Busy { path, detail },
                _ => {}
            }
        }
        StoreError::Sqlite { path, source: err }
    }
}
