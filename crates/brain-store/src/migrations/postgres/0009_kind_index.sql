-- Items by kind, status and scope (see SQLite's migration 11): the active signal items every
-- session start reads, without a walk of every item of its scopes.
CREATE INDEX IF NOT EXISTS items_by_kind_status ON items (kind, status, scope, updated_at DESC);
