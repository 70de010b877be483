-- Migration 3 (PostgreSQL): one-time claims among the replicas (a critical signal is
-- published to NATS or Redis by whichever replica claims it first). Bookkeeping: claims
-- never move the write generation.

CREATE TABLE claims (
    kind       text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    claimed_at timestamptz NOT NULL,
    PRIMARY KEY (kind, key)
);
