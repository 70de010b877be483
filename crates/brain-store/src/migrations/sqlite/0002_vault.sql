-- Migration 2: the vault index. Shipped migrations are never edited; add a new file instead.

-- One row per vault file seen by the last scan. (size, mtime_ns) is the fast "unchanged"
-- check; sha256 decides when the stat changed; `state` is the app's parsed summary of the
-- file (JSON: arc frontmatter, derived item ids, signals, inject blocks), so an unchanged
-- file is never re-read or re-parsed; `diagnostics` (JSON, usually empty) lets a scan print
-- every file's problems without loading the states. `state` is the last column, so a scan
-- that reads only the others never steps over it.
CREATE TABLE vault_files (
    relpath     TEXT PRIMARY KEY,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    diagnostics TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL
) STRICT;

-- Vault-wide values: the indexed root (`root`), the feed the session-start path reads
-- (`feed`), the digest of the feed's inputs (`feed_cache`), the index's counts (`counts`).
CREATE TABLE vault_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
