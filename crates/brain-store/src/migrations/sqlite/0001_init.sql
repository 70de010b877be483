-- Migration 1: memory items, their full-text index and the store metadata.
-- Shipped migrations are never edited; add a new file instead.

CREATE TABLE items (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    scope            TEXT NOT NULL,
    kind             TEXT NOT NULL,
    schema_key       TEXT NOT NULL,
    title            TEXT NOT NULL,
    content          TEXT NOT NULL,
    rationale        TEXT,
    confidence       REAL NOT NULL,
    importance       INTEGER NOT NULL,
    status           TEXT NOT NULL,
    severity         TEXT,
    pinned           INTEGER NOT NULL,
    pin_priority     INTEGER NOT NULL,
    stable           INTEGER NOT NULL,
    strength         REAL NOT NULL,
    decay_rate       REAL NOT NULL,
    tags             TEXT NOT NULL,
    files            TEXT NOT NULL,
    evidence         TEXT NOT NULL,
    dedup_hint       TEXT,
    supersedes       TEXT,
    superseded_by    TEXT,
    valid_from       TEXT,
    valid_until      TEXT,
    source           TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    last_accessed_at TEXT,
    access_count     INTEGER NOT NULL,
    review_due_at    TEXT,
    review_count     INTEGER NOT NULL,
    tokens           INTEGER NOT NULL,
    version          INTEGER NOT NULL
) STRICT;

CREATE INDEX items_by_scope_updated ON items (scope, updated_at DESC);
CREATE INDEX items_by_updated ON items (updated_at DESC, id DESC);
CREATE INDEX items_by_pinned ON items (pinned, scope) WHERE pinned = 1;

-- External-content FTS5 index: the text lives once, in items. Tags and files are indexed
-- as their JSON text; the tokenizer treats brackets, quotes and '/' as separators.
CREATE VIRTUAL TABLE items_fts USING fts5(
    title, content, tags, files, schema_key,
    content = 'items', content_rowid = 'seq',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN
    INSERT INTO items_fts (rowid, title, content, tags, files, schema_key)
    VALUES (new.seq, new.title, new.content, new.tags, new.files, new.schema_key);
END;

CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN
    INSERT INTO items_fts (items_fts, rowid, title, content, tags, files, schema_key)
    VALUES ('delete', old.seq, old.title, old.content, old.tags, old.files, old.schema_key);
END;

CREATE TRIGGER items_fts_update AFTER UPDATE OF title, content, tags, files, schema_key ON items BEGIN
    INSERT INTO items_fts (items_fts, rowid, title, content, tags, files, schema_key)
    VALUES ('delete', old.seq, old.title, old.content, old.tags, old.files, old.schema_key);
    INSERT INTO items_fts (rowid, title, content, tags, files, schema_key)
    VALUES (new.seq, new.title, new.content, new.tags, new.files, new.schema_key);
END;

-- Key/value metadata. `generation` grows with every committed write, so any process can
-- tell cheaply whether the store changed (cache keys, ETags).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;

INSERT INTO meta (key, value) VALUES ('generation', 0);
