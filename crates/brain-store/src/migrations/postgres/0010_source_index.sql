-- Items by source, in the order they were written (see SQLite's migration 12): the
-- neighbours of a search's best matches, an index range each.
CREATE INDEX IF NOT EXISTS items_by_source_created ON items (source, created_at, id);
