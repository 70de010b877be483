-- Migration 12: items by source, in the order they were written. Search lends a match's
-- score to the items written next to it in the same session, capture or arc
-- (`brain_core::search::lend`), and asks for the few either side of each of its best
-- matches: an index range each, where SQLite had no index on `source` at all.
CREATE INDEX IF NOT EXISTS items_by_source_created ON items (source, created_at, id);
