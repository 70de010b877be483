-- Migration 7 (PostgreSQL): a covering index for the lean listing of the brain document and
-- the claude-md summary (every item of the session's scopes, without its texts), as SQLite's
-- migration 4. Without it the listing read the whole heap, texts and full-text vectors
-- included (about 7x the pages at 100k items: 180 ms of a cold brain document); with it,
-- an index-only scan (pages marked all-visible by VACUUM, which bulk loads end with and
-- autovacuum keeps up).

CREATE INDEX items_metas ON items (scope) INCLUDE (
    id, kind, schema_key, status, importance, confidence, severity, updated_at, valid_until, tokens,
    dedup_hint, tags
);

ANALYZE items;
