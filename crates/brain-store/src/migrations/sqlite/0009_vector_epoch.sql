-- Migration 9: a counter that moves whenever a vector is written or dropped, so a process
-- keeping the vectors in memory for nearest-neighbour search (`sqlite/vector_index.rs`)
-- knows with one indexed read whether its copy is current (counting the vectors of a model
-- read 100k index entries per search). Derived data, like the vectors: not the write
-- generation.
INSERT INTO meta (key, value) VALUES ('vector_epoch', 0);

CREATE TRIGGER item_vectors_epoch_insert AFTER INSERT ON item_vectors BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'vector_epoch';
END;

CREATE TRIGGER item_vectors_epoch_update AFTER UPDATE ON item_vectors BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'vector_epoch';
END;

CREATE TRIGGER item_vectors_epoch_delete AFTER DELETE ON item_vectors BEGIN
    UPDATE meta SET value = value + 1 WHERE key = 'vector_epoch';
END;
