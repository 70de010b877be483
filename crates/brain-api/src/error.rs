//! The one place errors are classified: user, not-found, conflict, config, internal. Each
//! kind maps to an exit code (and later an HTTP status and an MCP error) with a hint.

use brain_core::ValidationError;
use brain_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum BrainError {
    /// The user asked for something invalid; they can fix it.
    #[error("{message}")]
    User { message: String, hint: Option<String> },
    #[error("{message}")]
    NotFound { message: String, hint: Option<String> },
    /// Someone else changed the item since it was read.
    #[error("{message}")]
    Conflict { message: String },
    #[error("{message}")]
    Config { message: String, hint: Option<String> },
    /// The caller's credentials do not allow this (the HTTP API's scope grants).
    #[error("{message}")]
    Forbidden { message: String },
    /// A bug or an environment failure the user cannot fix by changing their input.
    #[error("{message}")]
    Internal { message: String },
    /// The database server cannot be reached right now; the same call may succeed later.
    #[error("{message}")]
    Unavailable { message: String },
}

pub type BrainResult<T> = Result<T, BrainError>;

impl BrainError {
    pub fn user(message: impl Into<String>) -> BrainError {
        BrainError::User { message: message.into(), hint: None }
    }

    pub fn user_with_hint(message: impl Into<String>, hint: impl Into<String>) -> BrainError {
        BrainError::User { message: message.into(), hint: Some(hint.into()) }
    }

    pub fn internal(message: impl Into<String>) -> BrainError {
        BrainError::Internal { message: message.into() }
    }

    /// Exit code of the CLI (SPEC §7.1): 1 for anything the user can act on, 2 for internal.
    pub fn exit_code(&self) -> u8 {
        match self {
            BrainError::Internal { .. } | BrainError::Unavailable { .. } => 2,
            _ => 1,
        }
    }

    /// A short machine-readable code (JSON errors, later HTTP and MCP).
    pub fn code(&self) -> &'static str {
        match self {
            BrainError::User { .. } => "invalid_input",
            BrainError::NotFound { .. } => "not_found",
            BrainError::Conflict { .. } => "conflict",
            BrainError::Config { .. } => "config",
            BrainError::Forbidden { .. } => "forbidden",
            BrainError::Internal { .. } => "internal",
            BrainError::Unavailable { .. } => "unavailable",
        }
    }

    pub fn hint(&self) -> Option<&str> {
        match self {
            BrainError::User { hint, .. } | BrainError::NotFound { hint, .. } | BrainError::Config { hint, .. } => {
                hint.as_deref()
            }
            BrainError::Conflict { .. } => Some("re-read the item (`brain show ID`) and apply your change again"),
            BrainError::Forbidden { .. } => None,
            BrainError::Internal { .. } => None,
            BrainError::Unavailable { .. } => {
                Some("check that the database server is running and reachable, then retry")
            }
        }
    }
}

impl From<ValidationError> for BrainError {
    /// The message quotes the offending value, which may hold a secret (a token pasted as a
    /// tag): redacted like the value would have been.
    fn from(err: ValidationError) -> BrainError {
        BrainError::user(brain_core::redact::redact_str(&err.to_string()))
    }
}

impl From<StoreError> for BrainError {
    fn from(err: StoreError) -> BrainError {
        let message = err.to_string();
        match err {
            StoreError::NotFound { .. } => {
                BrainError::NotFound { message, hint: Some("list ids with `brain list` or `brain search`".into()) }
            }
            StoreError::Conflict { .. } => BrainError::Conflict { message },
            StoreError::AlreadyExists { .. } | StoreError::InvalidQuery(_) | StoreError::Unsupported(_) => {
                BrainError::user(message)
            }
            StoreError::Missing { .. } => BrainError::user_with_hint(message, "create it with `brain init`"),
            StoreError::Corrupt { .. } => BrainError::user_with_hint(
                message,
                "restore the file from a backup or move it away and run `brain init` (then `brain import` an export)",
            ),
            StoreError::ReadOnly { .. } => BrainError::user_with_hint(
                message,
                "check the permissions and attributes of the brain home and its brain.db \
                     (`ls -ld`, `lsattr -d`: a read-only or immutable folder, a read-only mount)",
            ),
            StoreError::Busy { .. } => BrainError::user_with_hint(message, "another brain process is writing; retry"),
            StoreError::TooNew { .. } => BrainError::user_with_hint(message, "upgrade brain"),
            StoreError::InvalidRow { .. } | StoreError::Sqlite { .. } | StoreError::Postgres { .. } => {
                BrainError::internal(message)
            }
            StoreError::Unavailable { .. } => BrainError::Unavailable { message },
            StoreError::InvalidLocation { .. } => BrainError::Config {
                message,
                hint: Some("use postgres://USER[:PASSWORD]@HOST:5432/DATABASE, or sqlite:PATH".into()),
            },
            StoreError::NoDatabase { .. } => {
                BrainError::user_with_hint(message, "create it (e.g. `createdb NAME`) or fix the database URL")
            }
            StoreError::Unstorable { .. } => BrainError::user(message),
        }
    }
}

impl From<std::io::Error> for BrainError {
    fn from(err: std::io::Error) -> BrainError {
        BrainError::internal(format!("i/o error: {err}"))
    }
}
