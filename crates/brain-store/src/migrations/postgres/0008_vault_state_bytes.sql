-- The parsed state of a vault file in the application's binary encoding (see SQLite's
-- migration 10): the old JSON states are dropped and the index format forgotten, so the
-- next scan re-parses every file once.
ALTER TABLE vault_files ALTER COLUMN state TYPE bytea USING ''::bytea;
DELETE FROM vault_state WHERE key = 'format';
