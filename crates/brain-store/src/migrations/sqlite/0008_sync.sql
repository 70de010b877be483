-- Migration 8: the change log that `brain sync` moves between copies of a brain, and the
-- bookkeeping of a synced copy. Shipped migrations are never edited.
--
-- `changes` holds one row per item that ever existed here (vault-derived `mem_v…` items,
-- which every machine derives from its own files, are never logged): the item's latest
-- change under a cursor (`seq`) that only grows, so "what changed since cursor N" is one
-- range read. A delete leaves its row as a tombstone (`deleted = 1`, `version` one past the
-- deleted item's), so deletions travel like edits. `pending` marks a change made here that
-- no sync server has acknowledged yet; applying a pulled change clears it.
CREATE TABLE changes (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL UNIQUE,
    scope   TEXT NOT NULL,
    version INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    pending INTEGER NOT NULL
) STRICT;

CREATE INDEX changes_pending ON changes (seq) WHERE pending = 1;

-- Every item already stored is a change no server has seen.
INSERT INTO changes (item_id, scope, version, deleted, pending)
    SELECT id, scope, version, 0, 1 FROM items WHERE id NOT GLOB 'mem_v*' ORDER BY seq;

-- An item's row moves to the end of the log whenever it is inserted, edited (its version
-- moves; access bookkeeping leaves the version alone and is not a change) or deleted.
CREATE TRIGGER items_changes_insert AFTER INSERT ON items WHEN new.id NOT GLOB 'mem_v*' BEGIN
    DELETE FROM changes WHERE item_id = new.id;
    INSERT INTO changes (item_id, scope, version, deleted, pending) VALUES (new.id, new.scope, new.version, 0, 1);
END;

CREATE TRIGGER items_changes_update AFTER UPDATE ON items
    WHEN new.id NOT GLOB 'mem_v*' AND (new.version <> old.version OR new.scope <> old.scope) BEGIN
    DELETE FROM changes WHERE item_id = new.id;
    INSERT INTO changes (item_id, scope, version, deleted, pending) VALUES (new.id, new.scope, new.version, 0, 1);
END;

CREATE TRIGGER items_changes_delete AFTER DELETE ON items WHEN old.id NOT GLOB 'mem_v*' BEGIN
    DELETE FROM changes WHERE item_id = old.id;
    INSERT INTO changes (item_id, scope, version, deleted, pending) VALUES (old.id, old.scope, old.version + 1, 1, 1);
END;

-- A synced copy's view of the server: the server's version of each item this copy last
-- agreed with (0 or absent: never synced), an item changed on both sides since (the
-- server's version kept beside the local one until resolved, `remote` its JSON or NULL
-- for a tombstone), and the cursors of each server (`pull:<url>`).
CREATE TABLE sync_base (
    item_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE sync_conflicts (
    item_id        TEXT PRIMARY KEY,
    remote_version INTEGER NOT NULL,
    remote         TEXT,
    found_at       TEXT NOT NULL
) STRICT;

CREATE TABLE sync_cursors (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
