-- Migration 6 (PostgreSQL): the write generation as the sum of 64 counters. With one
-- counter row, every write transaction locked that row until its commit was flushed, so the
-- fleet's writes committed one at a time (one WAL flush each, no group commit). A write now
-- adds one to the counter of its connection (`pg_backend_pid() % 64`): writers on different
-- connections rarely meet. A reader adds the counters up in one snapshot; the sum moves by
-- exactly one with every committed write and never counts an uncommitted one.

CREATE TABLE generation_slots (
    slot  smallint PRIMARY KEY,
    value bigint NOT NULL
) WITH (fillfactor = 10);

INSERT INTO generation_slots (slot, value)
    SELECT s, CASE WHEN s = 0 THEN coalesce((SELECT value FROM meta WHERE key = 'generation'), 0) ELSE 0 END
    FROM generate_series(0, 63) AS s;

DELETE FROM meta WHERE key = 'generation';
