//! The vault index in memory: every indexed file by its path relative to the vault, with
//! its stat, its SHA-256, its derived state and its diagnostics.

use std::collections::BTreeMap;

use super::state::FileState;
use crate::vault::Diagnostic;

/// One indexed file.
#[derive(Clone, Debug, Default)]
pub struct IndexedFile {
    pub size: u64,
    pub mtime_ns: i64,
    pub sha256: String,
    pub state: FileState,
    pub diagnostics: Vec<Diagnostic>,
}

/// The whole index in memory, by relpath.
pub type Snapshot = BTreeMap<String, IndexedFile>;
