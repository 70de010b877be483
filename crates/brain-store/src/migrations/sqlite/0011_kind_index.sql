-- Migration 11: items by kind, status and scope, newest first. Every session start reads
-- the active signal items of its scopes (the one signal model): without this index SQLite
-- walked every item of the scopes, newest first, to find the few of kind `signal` (0.4 s at
-- 100k items). With `updated_at` in it, the planner prefers it even without statistics.
CREATE INDEX IF NOT EXISTS items_by_kind_status ON items (kind, status, scope, updated_at DESC);
