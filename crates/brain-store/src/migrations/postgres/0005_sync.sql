-- Migration 5 (PostgreSQL): the change log that `brain sync` moves between copies of a
-- brain (as SQLite's migration 8). Shipped migrations are never edited.
--
-- One row per item (vault-derived `mem_v…` items excepted), its latest change. A trigger
-- writes the row with `seq` NULL; before the log is read, the committed rows without one
-- are numbered from `changes_seq` in a transaction of their own (`PgStore::number_changes`,
-- under an advisory lock), so cursors follow commit order and a reader that has seen
-- cursor N never later finds a change below N appear, with no lock on the write path.
CREATE SEQUENCE changes_seq;

CREATE TABLE changes (
    item_id text COLLATE "C" PRIMARY KEY,
    seq     bigint UNIQUE,
    scope   text COLLATE "C" NOT NULL,
    version bigint NOT NULL,
    deleted boolean NOT NULL,
    pending boolean NOT NULL
);

CREATE INDEX changes_unnumbered ON changes (item_id) WHERE seq IS NULL;
CREATE INDEX changes_pending ON changes (seq) WHERE pending;

INSERT INTO changes (item_id, seq, scope, version, deleted, pending)
    SELECT id, nextval('changes_seq'), scope, version, false, true
    FROM (SELECT id, scope, version FROM items WHERE id NOT LIKE 'mem\_v%' ORDER BY created_at, id) AS stored;

CREATE FUNCTION brain_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.id LIKE 'mem\_v%' THEN RETURN OLD; END IF;
        INSERT INTO changes (item_id, seq, scope, version, deleted, pending)
            VALUES (OLD.id, NULL, OLD.scope, OLD.version + 1, true, true)
            ON CONFLICT (item_id) DO UPDATE SET seq = NULL, scope = excluded.scope,
                version = excluded.version, deleted = true, pending = true;
        RETURN OLD;
    END IF;
    IF NEW.id LIKE 'mem\_v%' THEN RETURN NEW; END IF;
    IF TG_OP = 'UPDATE' THEN
        -- Access bookkeeping leaves the version alone: being read is not a change.
        IF NEW.version = OLD.version AND NEW.scope = OLD.scope THEN RETURN NEW; END IF;
    END IF;
    INSERT INTO changes (item_id, seq, scope, version, deleted, pending)
        VALUES (NEW.id, NULL, NEW.scope, NEW.version, false, true)
        ON CONFLICT (item_id) DO UPDATE SET seq = NULL, scope = excluded.scope,
            version = excluded.version, deleted = false, pending = true;
    RETURN NEW;
END
$$;

CREATE TRIGGER items_changes AFTER INSERT OR UPDATE OR DELETE ON items
    FOR EACH ROW EXECUTE FUNCTION brain_log_change();

CREATE TABLE sync_base (
    item_id text COLLATE "C" PRIMARY KEY,
    version bigint NOT NULL
);

CREATE TABLE sync_conflicts (
    item_id        text COLLATE "C" PRIMARY KEY,
    remote_version bigint NOT NULL,
    remote         text,
    found_at       timestamptz NOT NULL
);

CREATE TABLE sync_cursors (
    name  text COLLATE "C" PRIMARY KEY,
    value bigint NOT NULL
);
