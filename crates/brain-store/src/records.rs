//! What the store keeps besides items, as every backend reads and writes it: what the last
//! vault scan saw of each file, the bearer tokens, and the items waiting for a vector.

/// One vault file as the last scan saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VaultFileRecord {
    /// Vault-relative path with `/` separators.
    pub relpath: String,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch; 0 forces a hash check next scan.
    pub mtime_ns: i64,
    /// Lowercase hex SHA-256 of the bytes that were parsed.
    pub sha256: String,
    /// The application's parsed summary of the file (its own binary encoding). Empty when
    /// not requested.
    pub state: Vec<u8>,
    /// The file's diagnostics (JSON), empty when it has none. Always read.
    pub diagnostics: String,
}

/// One row of the vault index, borrowed, valid for the call it is passed to (see
/// [`crate::Store::vault_files_each`]).
#[derive(Clone, Copy, Debug)]
pub struct VaultFileRow<'a> {
    pub relpath: &'a str,
    pub size: u64,
    pub mtime_ns: i64,
    pub sha256: &'a str,
    /// Empty when not requested.
    pub state: &'a [u8],
    pub diagnostics: &'a str,
}

impl VaultFileRow<'_> {
    /// The row as an owned record.
    pub fn to_record(&self) -> VaultFileRecord {
        VaultFileRecord {
            relpath: self.relpath.to_string(),
            size: self.size,
            mtime_ns: self.mtime_ns,
            sha256: self.sha256.to_string(),
            state: self.state.to_vec(),
            diagnostics: self.diagnostics.to_string(),
        }
    }
}

/// A bearer token kept in the store: its name, the SHA-256 of its secret (lowercase hex; the
/// secret itself is never stored), its scope grants, and when it was made and revoked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    pub name: String,
    pub sha256: String,
    pub read: Vec<String>,
    pub write: Vec<String>,
    /// Scopes whose items it may approve, and change once approved, under
    /// `write_policy = "draft"` (migration 14 / PostgreSQL 12).
    pub review: Vec<String>,
    pub created_at: brain_core::Timestamp,
    pub revoked_at: Option<brain_core::Timestamp>,
}

/// An item waiting for its vector: its id and the text to embed (title, then content).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorJob {
    pub id: String,
    pub text: String,
}

/// What one session did with one item it was given (or one feedback about an item): see
/// `brain_core::usage`. `session` is `<host>:<session id>`, or `feedback:<time>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UseRecord {
    pub item_id: String,
    pub session: String,
    pub project: String,
    pub host: String,
    /// `unused`, `used`, `useful` or `not_useful`.
    pub verdict: String,
    /// How it was used (`fetched`, `file`, `command`, `quoted`, `feedback`).
    pub signal: Option<String>,
    /// The turn the use was seen in.
    pub turn: Option<u32>,
    /// What matched, redacted and bounded by the caller.
    pub evidence: String,
    /// The session's task stems, space-separated.
    pub task: String,
    /// The item's tokens when it was given (what being given cost the session).
    pub tokens: u32,
    pub decided_at: brain_core::Timestamp,
}

/// Decisions kept per item, the newest; older ones are dropped as new ones come.
pub const USES_KEPT_PER_ITEM: i64 = 32;
