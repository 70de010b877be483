-- Migration 2 (PostgreSQL): bearer tokens kept in the store (`brain token create|list|revoke`),
-- beside the ones of the config file; every replica reads them. Only the SHA-256 of a secret
-- is stored; a revoked token stays listed with the time it was revoked.

CREATE TABLE api_tokens (
    name       text COLLATE "C" PRIMARY KEY,
    sha256     text NOT NULL UNIQUE,
    read       text[] NOT NULL,
    write      text[] NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
