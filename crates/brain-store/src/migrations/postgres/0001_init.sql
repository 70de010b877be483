-- Migration 1 (PostgreSQL): memory items with their full-text vector, the store metadata
-- and the vault index; the same data as SQLite's migrations 1 to 4. Shipped migrations are
-- never edited; add a new file instead. Runs inside one transaction under an advisory lock.

-- Tags and files as one text for the full-text vector. array_to_string is only STABLE in
-- general (element output functions may depend on settings); for text elements it is
-- immutable, which a generated column needs.
CREATE FUNCTION brain_words(text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_to_string($1, ' ') $$;

-- The words of the full-text vector: English stems (snowball, like SQLite's porter) and,
-- as in SQLite, no stopword list: which words of a query count is decided above the SQL,
-- once for both backends, not by this dictionary.
CREATE TEXT SEARCH DICTIONARY brain_english_stem (TEMPLATE = snowball, LANGUAGE = english);
CREATE TEXT SEARCH CONFIGURATION brain_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION brain_english
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH brain_english_stem;

-- Identifiers, scopes and sources compare byte by byte ("C"), as in SQLite: ids order the
-- same way on both backends and prefix ranges are exact.
CREATE TABLE items (
    id               text COLLATE "C" PRIMARY KEY,
    scope            text COLLATE "C" NOT NULL,
    kind             text NOT NULL,
    schema_key       text NOT NULL,
    title            text NOT NULL,
    content          text NOT NULL,
    rationale        text,
    confidence       real NOT NULL,
    importance       smallint NOT NULL,
    status           text NOT NULL,
    severity         text,
    pinned           boolean NOT NULL,
    pin_priority     integer NOT NULL,
    stable           boolean NOT NULL,
    strength         real NOT NULL,
    decay_rate       real NOT NULL,
    tags             text[] NOT NULL,
    files            text[] NOT NULL,
    evidence         text[] NOT NULL,
    dedup_hint       text,
    supersedes       text,
    superseded_by    text,
    valid_from       timestamptz,
    valid_until      timestamptz,
    source           text COLLATE "C" NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    last_accessed_at timestamptz,
    access_count     bigint NOT NULL,
    review_due_at    timestamptz,
    review_count     bigint NOT NULL,
    tokens           bigint NOT NULL,
    version          bigint NOT NULL,
    -- Weights A..D: title, tags, schema key and files, content (SQLite's bm25 weights
    -- 10 / 5 / 3 and 2 / 1, as ts_rank's four classes).
    search           tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('brain_english', title), 'A')
        || setweight(to_tsvector('brain_english', brain_words(tags)), 'B')
        || setweight(to_tsvector('brain_english', schema_key || ' ' || brain_words(files)), 'C')
        || setweight(to_tsvector('brain_english', content), 'D')
    ) STORED
);

CREATE INDEX items_search ON items USING gin (search);
CREATE INDEX items_by_updated ON items (updated_at DESC, id DESC);
CREATE INDEX items_by_scope_updated ON items (scope, updated_at DESC, id DESC);
CREATE INDEX items_by_pinned ON items (scope) WHERE pinned;
-- The session-start counters and the lean meta listing read by scope and status.
CREATE INDEX items_by_scope_status ON items (scope, status, review_due_at);
CREATE INDEX items_by_source ON items (source);

-- Key/value metadata. `generation` grows with every committed write through any replica
-- or process: the cache key for documents and ETags.
CREATE TABLE meta (
    key   text PRIMARY KEY,
    value bigint NOT NULL
);
INSERT INTO meta (key, value) VALUES ('generation', 0);

-- The vault index (see SQLite's migration 2).
CREATE TABLE vault_files (
    relpath     text COLLATE "C" PRIMARY KEY,
    size        bigint NOT NULL,
    mtime_ns    bigint NOT NULL,
    sha256      text NOT NULL,
    diagnostics text NOT NULL DEFAULT '',
    state       text NOT NULL
);

CREATE TABLE vault_state (
    key   text PRIMARY KEY,
    value text NOT NULL
);
