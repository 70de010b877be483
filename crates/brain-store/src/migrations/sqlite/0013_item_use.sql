-- Migration 13: what sessions did with the items they were given (issue 32). One row per
-- item and session (a feedback is a session of its own, `feedback:<time>`): given and not
-- used, used (with the signal and its evidence), or said useful / not useful. Read at recall
-- for the items a session start ranks, and for `brain why-used` and the use rate. Rows
-- change recall, so writing them moves the write generation. Shipped migrations are never
-- edited.

CREATE TABLE IF NOT EXISTS item_use (
    item_id    TEXT NOT NULL,
    session    TEXT NOT NULL,
    project    TEXT NOT NULL,
    host       TEXT NOT NULL,
    verdict    TEXT NOT NULL,
    signal     TEXT,
    turn       INTEGER,
    evidence   TEXT NOT NULL,
    task       TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (item_id, session)
) STRICT;

CREATE INDEX IF NOT EXISTS item_use_by_time ON item_use (decided_at);
