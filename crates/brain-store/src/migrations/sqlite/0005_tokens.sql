-- Migration 5: bearer tokens kept in the store (`brain token create|list|revoke`), beside
-- the ones of the config file. Only the SHA-256 of a secret is stored; a revoked token
-- stays listed with the time it was revoked. Shipped migrations are never edited.

CREATE TABLE api_tokens (
    name       TEXT PRIMARY KEY,
    sha256     TEXT NOT NULL UNIQUE,
    read       TEXT NOT NULL,
    write      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;
