-- Migration 4 (PostgreSQL): embedding vectors of items, for semantic and hybrid search (as
-- SQLite's migration 7). One vector per item and model; `vector` is L2-normalised. Derived
-- data: written without moving the write generation, dropped with the item, and dropped
-- when the text it was computed from changes (the next `brain embed` refills it). Plain
-- `real[]` with an exact scan: the pgvector extension is not needed (nor available on
-- every server).

CREATE TABLE item_vectors (
    id     text COLLATE "C" PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    model  text NOT NULL,
    vector real[] NOT NULL
);

CREATE INDEX item_vectors_by_model ON item_vectors (model);

CREATE FUNCTION brain_vectors_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.title IS DISTINCT FROM NEW.title OR OLD.content IS DISTINCT FROM NEW.content THEN
        DELETE FROM item_vectors WHERE id = OLD.id;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER item_vectors_stale AFTER UPDATE OF title, content ON items
    FOR EACH ROW EXECUTE FUNCTION brain_vectors_stale();
