//! The vault index (migration 2): what the last scan saw of each vault file, and vault-wide
//! values (the indexed root, the feed read at session start). The parsed state of a file is
//! opaque bytes here (migration 10); the application owns their encoding.

use brain_core::Item;
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params, params_from_iter};

use super::{COLUMNS, SqliteStore, WriteTx, item_values};
use crate::{StoreResult, VaultFileRecord, VaultFileRow};

/// Rows per multi-row statement of the batch methods (33 columns × 900 stays below SQLite's
/// 32,766 bound parameters). Fewer, larger statements journal each touched page fewer times.
const BATCH_ROWS: usize = 900;

/// Column `index` of `row` as borrowed text.
fn text<'row>(row: &'row rusqlite::Row<'_>, index: usize) -> rusqlite::Result<&'row str> {
    row.get_ref(index)?
        .as_str()
        .map_err(|err| rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(err)))
}

impl SqliteStore {
    /// Every indexed vault file, in no particular order, each passed to `visit` borrowed from
    /// the row: the states (megabytes at 10k files) are read in place, never copied. Without
    /// `with_state` the state column is not read.
    pub fn vault_files_each(&self, with_state: bool, visit: &mut dyn FnMut(VaultFileRow<'_>)) -> StoreResult<()> {
        let sql = if with_state {
            "SELECT relpath, size, mtime_ns, sha256, state, diagnostics FROM vault_files"
        } else {
            "SELECT relpath, size, mtime_ns, sha256, X'', diagnostics FROM vault_files"
        };
        let connection = self.lock();
        let mut statement = connection.prepare_cached(sql).map_err(|e| self.sqlite_error(e))?;
        let mut rows = statement.query([]).map_err(|e| self.sqlite_error(e))?;
        while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
            let read = || -> rusqlite::Result<VaultFileRow<'_>> {
                Ok(VaultFileRow {
                    relpath: text(row, 0)?,
                    size: row.get::<_, i64>(1)?.max(0) as u64,
                    mtime_ns: row.get(2)?,
                    sha256: text(row, 3)?,
                    state: row.get_ref(4)?.as_blob().map_err(|err| {
                        rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Blob, Box::new(err))
                    })?,
                    diagnostics: text(row, 5)?,
                })
            };
            visit(read().map_err(|e| self.sqlite_error(e))?);
        }
        Ok(())
    }

    /// Every indexed vault file, in no particular order (table order: a plain scan, no index
    /// lookups; callers sort or hash). Without `with_state` the (large) state column is not
    /// read: enough to tell which files changed and to list diagnostics.
    pub fn vault_files(&self, with_state: bool) -> StoreResult<Vec<VaultFileRecord>> {
        let mut records = Vec::new();
        self.vault_files_each(with_state, &mut |row| records.push(row.to_record()))?;
        Ok(records)
    }

    /// A vault-wide value (`root`, `feed`, …).
    pub fn vault_value(&self, key: &str) -> StoreResult<Option<String>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached("SELECT value FROM vault_state WHERE key = ?1")
            .map_err(|e| self.sqlite_error(e))?;
        statement.query_row([key], |row| row.get(0)).optional().map_err(|e| self.sqlite_error(e))
    }
}

/// The page cache of a bulk insert, in KiB. A first scan of a 10k-arc vault inserts ~34k
/// items: its scan took the same time with 16 MB as with 64 MB (alternated runs), and with the
/// tick reading the store through SQLite's cache instead of the memory map, its resident
/// memory fell by ~50 MB (docs/BENCHMARKS.md, "Beside the reference engine").
const BULK_CACHE_KIB: i64 = 16 * 1024;

/// What [`WriteTx::defer_item_indexes`] took away from `items` for a bulk load: the
/// statements that re-create it (as `sqlite_master` holds them) and the last row before the
/// load (the rows after it get their full-text entries when the indexes come back).
#[derive(Debug)]
pub(crate) struct DeferredIndexes {
    statements: Vec<String>,
    after_seq: i64,
    /// The planner had statistics of these indexes (dropping an index drops them too).
    had_statistics: bool,
}

impl WriteTx<'_> {
    /// Makes the rest of this transaction a bulk load of new items, when `expected` new rows
    /// outnumber the rows `items` holds: its secondary indexes and its full-text insert
    /// trigger are dropped now and re-created before the transaction commits (or before an
    /// item is updated or deleted in it), the new rows indexed for search in one statement.
    /// An index built over the whole table sorts it once; keeping five B-trees and the
    /// full-text index up to date row by row made the store thread of a first scan of a
    /// 10k-arc vault (~34k items) the scan's bottleneck (scan 2.1–3.0 s → 1.5–2.3 s,
    /// alternated runs, docs/BENCHMARKS.md). Everything happens inside the transaction: a
    /// rollback or a crash leaves the schema as it was, and no other connection ever sees the
    /// table without its indexes. Returns whether the indexes were deferred.
    pub fn defer_item_indexes(&mut self, expected: usize) -> StoreResult<bool> {
        if self.deferred.is_some() {
            return Ok(true);
        }
        let (rows, after_seq): (i64, i64) = self
            .tx
            .query_row("SELECT count(*), coalesce(max(seq), 0) FROM items", [], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(|e| self.error(e))?;
        if usize::try_from(rows).unwrap_or(usize::MAX) >= expected {
            return Ok(false);
        }
        let dropped: Vec<(String, String, String)> = {
            let mut statement = self
                .tx
                .prepare(
                    "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'items' AND sql IS NOT NULL \
                     AND (type = 'index' OR (type = 'trigger' AND name = 'items_fts_insert')) ORDER BY type, name",
                )
                .map_err(|e| self.error(e))?;
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .map_err(|e| self.error(e))?
                .collect::<Result<_, _>>()
                .map_err(|e| self.error(e))?
        };
        let statistics_kept: bool = self
            .tx
            .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1')", [], |row| row.get(0))
            .map_err(|e| self.error(e))?;
        let had_statistics = statistics_kept
            && self
                .tx
                .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_stat1 WHERE tbl = 'items')", [], |row| row.get(0))
                .map_err(|e| self.error(e))?;
        for (kind, name, _) in &dropped {
            let verb = if kind == "index" { "INDEX" } else { "TRIGGER" };
            self.tx.execute_batch(&format!("DROP {verb} \"{name}\"")).map_err(|e| self.error(e))?;
        }
        let statements = dropped.into_iter().map(|(_, _, sql)| sql).collect();
        self.deferred = Some(DeferredIndexes { statements, after_seq, had_statistics });
        Ok(true)
    }

    /// Re-creates what [`WriteTx::defer_item_indexes`] dropped and adds the rows inserted
    /// since to the full-text index. Nothing when nothing was deferred.
    pub(crate) fn restore_item_indexes(&mut self) -> StoreResult<()> {
        let Some(deferred) = self.deferred.take() else { return Ok(()) };
        self.tx
            .execute(
                "INSERT INTO items_fts (rowid, title, content, tags, files, schema_key) \
                 SELECT seq, title, content, tags, files, schema_key FROM items WHERE seq > ?1",
                [deferred.after_seq],
            )
            .map_err(|e| self.error(e))?;
        for statement in &deferred.statements {
            self.tx.execute_batch(statement).map_err(|e| self.error(e))?;
        }
        if deferred.had_statistics {
            self.tx.execute_batch("PRAGMA analysis_limit = 1000; ANALYZE items;").map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Inserts many items with one multi-row statement per [`BATCH_ROWS`] items, skipping
    /// ids that already exist (and later rows repeating an id of the batch). Returns the ids
    /// of the skipped rows, one per row, in row order.
    ///
    /// Why a batch: each statement that writes the full-text index opens a statement
    /// savepoint, and FTS5 flushes its pending terms to disk at every savepoint; one row per
    /// statement makes a bulk insert several times slower than one statement per batch.
    pub fn insert_many(&mut self, items: &[&Item]) -> StoreResult<Vec<String>> {
        let column_count = COLUMNS.split(", ").count();
        if items.len() > BATCH_ROWS {
            // A bulk load: statement journals in memory, and a page cache of BULK_CACHE_KIB
            // (pages beyond it spill to the WAL before the commit). Both are settings of this
            // connection only, not of the database; the cache size is restored (and the pages
            // beyond it freed) when the transaction ends (`SqliteStore::write`).
            let mut raised = self.store.bulk_cache.lock().unwrap_or_else(|poison| poison.into_inner());
            if raised.is_none() {
                let size: i64 =
                    self.tx.query_row("PRAGMA cache_size", [], |row| row.get(0)).map_err(|e| self.error(e))?;
                *raised = Some(size);
            }
            drop(raised);
            // Temp storage cannot change once this transaction has used it (an earlier write
            // of the same transaction that opened a statement journal): the journals then go
            // to temp files, as before this call — slower, just as correct.
            let _ = self.tx.execute_batch("PRAGMA temp_store = MEMORY;");
            self.tx.execute_batch(&format!("PRAGMA cache_size = -{BULK_CACHE_KIB};")).map_err(|e| self.error(e))?;
        }
        let mut skipped = Vec::new();
        for chunk in items.chunks(BATCH_ROWS) {
            let row = format!("({})", vec!["?"; column_count].join(", "));
            let sql = format!(
                "INSERT INTO items ({COLUMNS}) VALUES {} ON CONFLICT (id) DO NOTHING RETURNING id",
                vec![row; chunk.len()].join(", ")
            );
            let values: Vec<Value> = chunk.iter().flat_map(|item| item_values(item)).collect();
            let mut statement = self.tx.prepare_cached(&sql).map_err(|e| self.error(e))?;
            let inserted: std::collections::HashSet<String> = statement
                .query_map(params_from_iter(values), |row| row.get(0))
                .map_err(|e| self.error(e))?
                .collect::<Result<_, _>>()
                .map_err(|e| self.error(e))?;
            drop(statement);
            self.changed |= !inserted.is_empty();
            // An id given twice is inserted once, from its first row; the later rows are
            // skipped like ids the store already held.
            let mut first: std::collections::HashSet<&str> = std::collections::HashSet::new();
            skipped.extend(
                chunk
                    .iter()
                    .filter(|item| !(inserted.contains(&item.id) && first.insert(item.id.as_str())))
                    .map(|item| item.id.clone()),
            );
        }
        Ok(skipped)
    }

    /// Erases many items with one statement per [`BATCH_ROWS`] ids. Returns how many existed.
    pub fn delete_many(&mut self, ids: &[String]) -> StoreResult<usize> {
        self.restore_item_indexes()?;
        let mut removed = 0;
        for chunk in ids.chunks(BATCH_ROWS) {
            let sql = format!("DELETE FROM items WHERE id IN ({})", vec!["?"; chunk.len()].join(", "));
            let mut statement = self.tx.prepare_cached(&sql).map_err(|e| self.error(e))?;
            removed += statement.execute(params_from_iter(chunk)).map_err(|e| self.error(e))?;
        }
        self.changed |= removed > 0;
        Ok(removed)
    }

    /// Gives the items `ids` that come from `from` the source `to` (a vault file moved: the
    /// same items under its new path), one statement per id on the id index. The statement
    /// names no indexed text, so the full-text index is not touched. Returns how many moved.
    pub fn move_source(&mut self, ids: &[String], from: &str, to: &str) -> StoreResult<usize> {
        let mut statement = self
            .tx
            .prepare_cached("UPDATE items SET source = ?3, version = version + 1 WHERE id = ?1 AND source = ?2")
            .map_err(|e| self.error(e))?;
        let mut moved = 0;
        for id in ids {
            moved += statement.execute(params![id, from, to]).map_err(|e| self.error(e))?;
        }
        drop(statement);
        self.changed |= moved > 0;
        Ok(moved)
    }

    /// Inserts or replaces the record of one vault file. Bookkeeping only: it does not move
    /// the write generation (no document depends on it).
    pub fn put_vault_file(&mut self, record: &VaultFileRecord) -> StoreResult<()> {
        let mut statement = self
            .tx
            .prepare_cached(
                "INSERT INTO vault_files (relpath, size, mtime_ns, sha256, state, diagnostics) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (relpath) DO UPDATE SET size = excluded.size, \
                 mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, state = excluded.state, \
                 diagnostics = excluded.diagnostics",
            )
            .map_err(|e| self.error(e))?;
        statement
            .execute(params![
                record.relpath,
                i64::try_from(record.size).unwrap_or(i64::MAX),
                record.mtime_ns,
                record.sha256,
                record.state,
                record.diagnostics
            ])
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Updates only the stat of a file whose bytes did not change (a touch).
    pub fn touch_vault_file(&mut self, relpath: &str, size: u64, mtime_ns: i64) -> StoreResult<()> {
        let mut statement = self
            .tx
            .prepare_cached("UPDATE vault_files SET size = ?2, mtime_ns = ?3 WHERE relpath = ?1")
            .map_err(|e| self.error(e))?;
        statement
            .execute(params![relpath, i64::try_from(size).unwrap_or(i64::MAX), mtime_ns])
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Forgets one vault file. Returns whether it was indexed.
    pub fn delete_vault_file(&mut self, relpath: &str) -> StoreResult<bool> {
        let mut statement =
            self.tx.prepare_cached("DELETE FROM vault_files WHERE relpath = ?1").map_err(|e| self.error(e))?;
        Ok(statement.execute([relpath]).map_err(|e| self.error(e))? > 0)
    }

    /// Forgets every vault file record (re-indexing another vault). Returns how many.
    pub fn clear_vault_files(&mut self) -> StoreResult<usize> {
        self.tx.execute("DELETE FROM vault_files", []).map_err(|e| self.error(e))
    }

    /// Erases every item whose source starts with `prefix`. Returns how many.
    pub fn delete_items_by_source_prefix(&mut self, prefix: &str) -> StoreResult<usize> {
        self.restore_item_indexes()?;
        let removed = self
            .tx
            .execute(
                "DELETE FROM items WHERE source >= ?1 AND source < ?2",
                params![prefix, format!("{prefix}\u{10FFFF}")],
            )
            .map_err(|e| self.error(e))?;
        self.changed |= removed > 0;
        Ok(removed)
    }

    pub fn vault_value(&self, key: &str) -> StoreResult<Option<String>> {
        let mut statement =
            self.tx.prepare_cached("SELECT value FROM vault_state WHERE key = ?1").map_err(|e| self.error(e))?;
        statement.query_row([key], |row| row.get(0)).optional().map_err(|e| self.error(e))
    }

    /// Sets a vault-wide value. Returns false (and writes nothing) when it already held
    /// `value`. A change moves the write generation: the feed is part of assembled documents.
    pub fn set_vault_value(&mut self, key: &str, value: &str) -> StoreResult<bool> {
        if self.vault_value(key)?.as_deref() == Some(value) {
            return Ok(false);
        }
        let mut statement = self
            .tx
            .prepare_cached(
                "INSERT INTO vault_state (key, value) VALUES (?1, ?2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .map_err(|e| self.error(e))?;
        statement.execute(params![key, value]).map_err(|e| self.error(e))?;
        self.changed = true;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use brain_core::item::{NewItemContext, new_id};
    use brain_core::{ItemDraft, Scope, Status};

    use super::*;
    use crate::tx::WriteBackend;

    fn cache_size(store: &SqliteStore) -> i64 {
        store.lock().query_row("PRAGMA cache_size", [], |row| row.get(0)).unwrap()
    }

    /// `count` lessons numbered from `first`, all saying "retry with backoff".
    fn lessons(first: u64, count: u64) -> Vec<Item> {
        (first..first + count)
            .map(|n| {
                let draft = ItemDraft {
                    title: Some(format!("lesson {n}")),
                    content: Some("retry with backoff".into()),
                    ..ItemDraft::default()
                };
                draft
                    .into_new_item(NewItemContext {
                        id: new_id(ulid::Ulid::from_parts(1_700_000_000_000 + n, u128::from(n))),
                        now: "2026-11-21T10:00:00Z".parse().unwrap(),
                        default_scope: Scope::Global,
                        default_source: "vault:a.md".into(),
                        default_status: Status::Approved,
                    })
                    .unwrap()
            })
            .collect()
    }

    fn schema(store: &SqliteStore) -> Vec<(String, String)> {
        let connection = store.lock();
        let mut statement =
            connection.prepare("SELECT name, coalesce(sql, '') FROM sqlite_master ORDER BY name").unwrap();
        statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
    }

    fn matches(store: &SqliteStore, query: &str) -> i64 {
        let sql = "SELECT count(*) FROM items_fts WHERE items_fts MATCH ?1";
        store.lock().query_row(sql, [query], |row| row.get(0)).unwrap()
    }

    /// [`crate::Store::write`] on the SQLite store itself.
    fn write<T>(store: &SqliteStore, change: impl FnOnce(&mut crate::WriteTx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        store.write(|tx| crate::WriteTx::new(WriteBackend::Sqlite(tx)).run(change))
    }

    fn has_index(tx: &crate::WriteTx<'_>, name: &str) -> bool {
        let WriteBackend::Sqlite(tx) = &tx.backend else { unreachable!() };
        let sql = "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1)";
        tx.tx.query_row(sql, [name], |row| row.get(0)).unwrap()
    }

    #[test]
    fn a_bulk_load_builds_the_item_indexes_once_and_leaves_the_schema_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("brain.db"), true).unwrap();
        let stored = lessons(0, 3);
        for item in &stored {
            write(&store, |tx| tx.insert(item)).unwrap();
        }
        store.analyze().unwrap();
        let before = schema(&store);
        let loaded = lessons(100, 1000);
        let refs: Vec<&Item> = loaded.iter().collect();
        write(&store, |tx| {
            assert!(tx.defer_item_indexes(refs.len())?);
            assert!(!has_index(tx, "items_layering"), "deferred");
            assert!(tx.insert_many(&refs)?.is_empty());
            // Changes of loaded and of older rows in the same transaction: the indexes
            // come back first, so the full-text index never loses track of a row.
            let mut renamed = tx.get(&loaded[0].id)?.unwrap();
            renamed.title = "lesson about circuit breakers".into();
            tx.update(&renamed, None)?;
            assert!(has_index(tx, "items_layering"), "restored before the update");
            tx.delete(&loaded[1].id)?;
            tx.delete(&stored[0].id)?;
            Ok(())
        })
        .unwrap();
        assert_eq!(schema(&store), before, "every index and trigger is back as it was");
        assert!(store.check().unwrap().problems.is_empty(), "{:?}", store.check().unwrap().problems);
        assert_eq!(matches(&store, "backoff"), 2 + 999, "three stored and a thousand loaded, one of each deleted");
        assert_eq!(matches(&store, "breakers"), 1);
        let statistics: i64 = store
            .lock()
            .query_row("SELECT count(*) FROM sqlite_stat1 WHERE idx = 'items_layering'", [], |row| row.get(0))
            .unwrap();
        assert_eq!(statistics, 1, "the planner's statistics of a re-created index are refreshed");
    }

    #[test]
    fn a_bulk_load_rolled_back_leaves_the_indexes_and_a_large_store_defers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("brain.db"), true).unwrap();
        let before = schema(&store);
        let loaded = lessons(0, 100);
        let refs: Vec<&Item> = loaded.iter().collect();
        let failed: StoreResult<()> = write(&store, |tx| {
            assert!(tx.defer_item_indexes(refs.len())?);
            tx.insert_many(&refs)?;
            Err(crate::StoreError::NotFound { id: "a failure after the load".into() })
        });
        assert!(failed.is_err());
        assert_eq!(schema(&store), before);
        assert_eq!(store.count(&crate::ItemFilter::default()).unwrap(), 0);

        write(&store, |tx| tx.insert_many(&refs).map(drop)).unwrap();
        write(&store, |tx| {
            assert!(!tx.defer_item_indexes(50)?, "fewer new rows than stored ones: row by row");
            assert!(has_index(tx, "items_layering"));
            Ok(())
        })
        .unwrap();
        assert!(store.check().unwrap().problems.is_empty());
    }

    #[test]
    fn a_bulk_inserts_page_cache_goes_with_its_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("brain.db"), true).unwrap();
        let before = cache_size(&store);
        let items = lessons(0, 1000);
        let refs: Vec<&Item> = items.iter().collect();
        let during = write(&store, |tx| {
            tx.insert_many(&refs)?;
            let WriteBackend::Sqlite(tx) = &tx.backend else { unreachable!() };
            Ok(tx.tx.query_row("PRAGMA cache_size", [], |row| row.get::<_, i64>(0)).unwrap())
        })
        .unwrap();
        assert_eq!(during, -BULK_CACHE_KIB, "the bulk insert ran with the large cache");
        assert_eq!(cache_size(&store), before, "and the connection's size is back after it");
        assert_eq!(store.count(&crate::ItemFilter::default()).unwrap(), 1000);
    }
}
