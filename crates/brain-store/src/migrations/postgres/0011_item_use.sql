-- Migration 11 (PostgreSQL): what sessions did with the items they were given (issue 32);
-- see SQLite's migration 13. Writing rows moves the write generation.

CREATE TABLE IF NOT EXISTS item_use (
    item_id    text COLLATE "C" NOT NULL,
    session    text COLLATE "C" NOT NULL,
    project    text NOT NULL,
    host       text NOT NULL,
    verdict    text NOT NULL,
    signal     text,
    turn       bigint,
    evidence   text NOT NULL,
    task       text NOT NULL,
    tokens     bigint NOT NULL,
    decided_at timestamptz NOT NULL,
    PRIMARY KEY (item_id, session)
);

CREATE INDEX IF NOT EXISTS item_use_by_time ON item_use (decided_at);
