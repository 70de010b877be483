-- Migration 10: the parsed state of a vault file is stored in the application's binary
-- encoding (a BLOB) instead of JSON text: decoding ~11k JSON states was a third of a
-- steady tick at 10k arcs. A STRICT table's column cannot change type, so the table is
-- made again. The states are derived data: the old ones are dropped (empty), and the
-- vault's index format is forgotten, so the next scan re-parses every file once and
-- compares its items with the stored ones (nothing of the items is lost).
CREATE TABLE vault_files_next (
    relpath     TEXT PRIMARY KEY,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    diagnostics TEXT NOT NULL DEFAULT '',
    state       BLOB NOT NULL
) STRICT;
INSERT INTO vault_files_next (relpath, size, mtime_ns, sha256, diagnostics, state)
    SELECT relpath, size, mtime_ns, sha256, diagnostics, X'' FROM vault_files;
DROP TABLE vault_files;
ALTER TABLE vault_files_next RENAME TO vault_files;
DELETE FROM vault_state WHERE key = 'format';
