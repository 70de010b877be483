-- Migration 6: one-time claims among the processes sharing a store (a critical signal is
-- published to NATS or Redis by whichever server claims it first). Bookkeeping: claims
-- never move the write generation. Shipped migrations are never edited.

CREATE TABLE claims (
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    claimed_at TEXT NOT NULL,
    PRIMARY KEY (kind, key)
) STRICT;
