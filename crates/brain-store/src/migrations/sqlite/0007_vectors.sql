-- Migration 5: embedding vectors of items, for semantic and hybrid search.
-- One vector per item and model: `model` names the embedder (a model change re-embeds:
-- vectors of another model are not read). `vector` is little-endian f32, L2-normalised.
-- Derived data: written without bumping the write generation, dropped with the item, and
-- dropped when the text it was computed from changes (the next `brain embed` refills it).
CREATE TABLE item_vectors (
    seq    INTEGER PRIMARY KEY,
    model  TEXT NOT NULL,
    vector BLOB NOT NULL
) STRICT;

CREATE INDEX item_vectors_by_model ON item_vectors (model, seq);

CREATE TRIGGER item_vectors_delete AFTER DELETE ON items BEGIN
    DELETE FROM item_vectors WHERE seq = old.seq;
END;

-- Every update names every column, so the trigger compares the values.
CREATE TRIGGER item_vectors_stale AFTER UPDATE OF title, content ON items
WHEN old.title IS NOT new.title OR old.content IS NOT new.content BEGIN
    DELETE FROM item_vectors WHERE seq = old.seq;
END;
