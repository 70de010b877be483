//! SQLite's rows of the sync log and bookkeeping (see `crate::sync` for the rules).

use brain_core::Item;
use brain_core::time::{format_timestamp, parse_timestamp};
use rusqlite::{Connection, OptionalExtension, Row};

use super::{COLUMNS, WriteTx, lean::ReadTx, row_to_item};
use crate::sync::{ChangeRow, ConflictRow};
use crate::{StoreError, StoreResult};

/// The change columns read after the item's (`COLUMNS` of the joined item come first).
const CHANGE_COLUMNS: &str = "c.seq, c.item_id, c.scope, c.version, c.deleted, c.pending";

fn item_columns() -> String {
    COLUMNS.split(", ").map(|column| format!("i.{column}")).collect::<Vec<_>>().join(", ")
}

fn read_change(row: &Row<'_>, start: usize) -> rusqlite::Result<ChangeRow> {
    Ok(ChangeRow {
        seq: row.get::<_, Option<i64>>(start)?.map(|seq| seq as u64),
        id: row.get(start + 1)?,
        scope: row.get(start + 2)?,
        version: row.get::<_, i64>(start + 3)? as u64,
        deleted: row.get(start + 4)?,
        pending: row.get(start + 5)?,
    })
}

fn sql_error(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |err| StoreError::from_sqlite(path, err)
}

/// Rows of the log after `after` (pending ones only, with their base, when `pending`).
fn change_rows(
    connection: &Connection,
    path: &std::path::Path,
    after: u64,
    limit: usize,
    pending: bool,
) -> StoreResult<Vec<(ChangeRow, Option<Item>, u64)>> {
    let error = sql_error(path);
    // The pending changes are read from their partial index: a range of the cursor (the
    // primary key) would pass every change ever logged to find the few pending ones, and
    // the planner picks it when the statistics were taken with everything pending (right
    // after an import), costing an incremental sync of a 100k home ~25 ms.
    let (index, filter) = if pending {
        (
            "INDEXED BY changes_pending",
            "c.pending = 1 AND c.seq > ?1 AND NOT EXISTS (SELECT 1 FROM sync_conflicts k WHERE k.item_id = c.item_id)",
        )
    } else {
        ("", "c.seq > ?1")
    };
    let sql = format!(
        "SELECT {items}, {CHANGE_COLUMNS}, coalesce((SELECT b.version FROM sync_base b WHERE b.item_id = c.item_id), 0) \
         FROM changes c {index} LEFT JOIN items i ON i.id = c.item_id WHERE {filter} ORDER BY c.seq LIMIT ?2",
        items = item_columns()
    );
    let mut statement = connection.prepare_cached(&sql).map_err(&error)?;
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut rows = statement.query(rusqlite::params![after, limit]).map_err(&error)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(&error)? {
        let change = read_change(row, 33).map_err(&error)?;
        let base = row.get::<_, i64>(39).map_err(&error)? as u64;
        let item = if change.deleted { None } else { Some(row_to_item(row, 0, path)?) };
        out.push((change, item, base));
    }
    Ok(out)
}

fn conflict_rows(connection: &Connection, path: &std::path::Path, id: Option<&str>) -> StoreResult<Vec<ConflictRow>> {
    let error = sql_error(path);
    let sql = "SELECT item_id, remote_version, remote, found_at FROM sync_conflicts \
               WHERE ?1 IS NULL OR item_id = ?1 ORDER BY item_id";
    let mut statement = connection.prepare_cached(sql).map_err(&error)?;
    let mut rows = statement.query([id]).map_err(&error)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(&error)? {
        let id: String = row.get(0).map_err(&error)?;
        let found_at: String = row.get(3).map_err(&error)?;
        let found_at =
            parse_timestamp(&found_at).map_err(|detail| StoreError::InvalidRow { id: id.clone(), detail })?;
        out.push(ConflictRow {
            remote_version: row.get::<_, i64>(1).map_err(&error)? as u64,
            remote: row.get(2).map_err(&error)?,
            id,
            found_at,
        });
    }
    Ok(out)
}

fn cursor(connection: &Connection, path: &std::path::Path, name: &str) -> StoreResult<u64> {
    connection
        .prepare_cached("SELECT value FROM sync_cursors WHERE name = ?1")
        .and_then(|mut statement| statement.query_row([name], |row| row.get::<_, i64>(0)).optional())
        .map(|value| value.unwrap_or(0) as u64)
        .map_err(sql_error(path))
}

impl ReadTx<'_> {
    pub(crate) fn change_rows(
        &self,
        after: u64,
        limit: usize,
        pending: bool,
    ) -> StoreResult<Vec<(ChangeRow, Option<Item>, u64)>> {
        change_rows(&self.tx, self.store.path(), after, limit, pending)
    }

    pub(crate) fn pending_by_scope(&self) -> StoreResult<Vec<(String, u64)>> {
        let mut statement = self
            .tx
            .prepare_cached(
                "SELECT scope, count(*) FROM changes INDEXED BY changes_pending WHERE pending = 1 GROUP BY scope",
            )
            .map_err(sql_error(self.store.path()))?;
        let rows = statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)? as u64)))
            .map_err(sql_error(self.store.path()))?;
        rows.collect::<Result<_, _>>().map_err(sql_error(self.store.path()))
    }

    pub(crate) fn last_change(&self) -> StoreResult<u64> {
        self.tx
            .query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |row| row.get::<_, i64>(0))
            .map(|seq| seq as u64)
            .map_err(sql_error(self.store.path()))
    }

    pub(crate) fn conflict_rows(&self) -> StoreResult<Vec<ConflictRow>> {
        conflict_rows(&self.tx, self.store.path(), None)
    }

    pub(crate) fn cursor(&self, name: &str) -> StoreResult<u64> {
        cursor(&self.tx, self.store.path(), name)
    }
}

impl WriteTx<'_> {
    pub(crate) fn change_row(&self, id: &str) -> StoreResult<Option<ChangeRow>> {
        let error = sql_error(self.path);
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM changes c WHERE c.item_id = ?1");
        let mut statement = self.tx.prepare_cached(&sql).map_err(&error)?;
        statement.query_row([id], |row| read_change(row, 0)).optional().map_err(&error)
    }

    /// Clears the pending mark of `id`'s change (only if it is still the change at `seq`).
    pub(crate) fn settle_change(&mut self, id: &str, seq: Option<u64>) -> StoreResult<bool> {
        let seq = seq.map(|seq| i64::try_from(seq).unwrap_or(i64::MAX));
        self.tx
            .execute(
                "UPDATE changes SET pending = 0 WHERE item_id = ?1 AND (?2 IS NULL OR seq = ?2) AND pending = 1",
                rusqlite::params![id, seq],
            )
            .map(|changed| changed > 0)
            .map_err(sql_error(self.path))
    }

    pub(crate) fn mark_pending(&mut self, id: &str) -> StoreResult<()> {
        self.tx.execute("UPDATE changes SET pending = 1 WHERE item_id = ?1", [id]).map_err(sql_error(self.path))?;
        Ok(())
    }

    pub(crate) fn sync_base(&self, id: &str) -> StoreResult<u64> {
        self.tx
            .prepare_cached("SELECT version FROM sync_base WHERE item_id = ?1")
            .and_then(|mut statement| statement.query_row([id], |row| row.get::<_, i64>(0)).optional())
            .map(|version| version.unwrap_or(0) as u64)
            .map_err(sql_error(self.path))
    }

    pub(crate) fn set_sync_base(&mut self, id: &str, version: u64) -> StoreResult<()> {
        let version = i64::try_from(version).unwrap_or(i64::MAX);
        self.tx
            .prepare_cached(
                "INSERT INTO sync_base (item_id, version) VALUES (?1, ?2) \
                 ON CONFLICT (item_id) DO UPDATE SET version = max(version, excluded.version)",
            )
            .and_then(|mut statement| statement.execute(rusqlite::params![id, version]))
            .map_err(sql_error(self.path))?;
        Ok(())
    }

    pub(crate) fn conflict_row(&self, id: &str) -> StoreResult<Option<ConflictRow>> {
        Ok(conflict_rows(&self.tx, self.path, Some(id))?.into_iter().next())
    }

    pub(crate) fn put_conflict(&mut self, row: &ConflictRow) -> StoreResult<()> {
        let version = i64::try_from(row.remote_version).unwrap_or(i64::MAX);
        self.tx
            .execute(
                "INSERT INTO sync_conflicts (item_id, remote_version, remote, found_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (item_id) DO UPDATE SET remote_version = excluded.remote_version, \
                 remote = excluded.remote, found_at = excluded.found_at",
                rusqlite::params![row.id, version, row.remote, format_timestamp(row.found_at)],
            )
            .map_err(sql_error(self.path))?;
        Ok(())
    }

    pub(crate) fn remove_conflict(&mut self, id: &str) -> StoreResult<bool> {
        self.tx
            .execute("DELETE FROM sync_conflicts WHERE item_id = ?1", [id])
            .map(|removed| removed > 0)
            .map_err(sql_error(self.path))
    }

    pub(crate) fn set_cursor(&mut self, name: &str, value: u64) -> StoreResult<()> {
        let value = i64::try_from(value).unwrap_or(i64::MAX);
        self.tx
            .execute(
                "INSERT INTO sync_cursors (name, value) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                rusqlite::params![name, value],
            )
            .map_err(sql_error(self.path))?;
        Ok(())
    }
}

impl crate::sqlite::SqliteStore {
    /// Cursors are numbered at insert (`AUTOINCREMENT`) under SQLite's one-writer lock, so
    /// they already follow commit order: nothing to do.
    pub(crate) fn number_changes(&self) -> StoreResult<()> {
        Ok(())
    }
}
