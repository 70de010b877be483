-- Migration 3: a covering index for the counters of session start (approved items, items
-- due for review, low-confidence alerts), so they read the index and never the rows.

CREATE INDEX items_by_scope_status ON items (scope, status, review_due_at, access_count, confidence, pinned);

-- Fresh statistics so the planner weighs the new index against the ordered one.
ANALYZE;
