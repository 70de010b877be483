//! The pure domain of brain: memory items and their validation, scopes, token counting,
//! redaction, scoring, the context assembler and the vault marker parser.
//!
//! Nothing in this crate does IO, reads the clock or the environment: "now", budgets and
//! token counters are passed in by the caller.

pub mod host;
pub mod item;
pub mod keeper;
pub mod memory_files;
pub mod near_dup;
pub mod scope;
pub mod signal;
pub mod time;

pub use item::{Item, ItemDraft, Kind, Severity, Status, ValidationError};
pub use scope::Scope;
pub use signal::{Signal, SignalOrigin};
pub use time::Timestamp;

pub mod assemble;
pub mod redact;
pub mod search;
pub mod tokens;
pub mod usage;
pub mod vault;
