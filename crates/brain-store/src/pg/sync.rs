//! PostgreSQL's rows of the sync log and bookkeeping (see `crate::sync` for the rules).
//! A change is logged without a cursor; [`PgStore::number_changes`] numbers the committed
//! ones before the log is read, so cursors follow commit order without any lock on the
//! write path.

use brain_core::Item;
use postgres::Row;

use super::PgStore;
use super::rows::{self, COLUMNS, whole_seconds};
use super::tx::{ReadTx, WriteTx};
use crate::StoreResult;
use crate::sync::{ChangeRow, ConflictRow};

const CHANGE_COLUMNS: &str = "c.seq, c.item_id, c.scope, c.version, c.deleted, c.pending";

fn item_columns() -> String {
    COLUMNS.split(", ").map(|column| format!("i.{column}")).collect::<Vec<_>>().join(", ")
}

fn read_change(row: &Row, start: usize) -> Result<ChangeRow, postgres::Error> {
    Ok(ChangeRow {
        seq: row.try_get::<_, Option<i64>>(start)?.map(|seq| seq as u64),
        id: row.try_get(start + 1)?,
        scope: row.try_get(start + 2)?,
        version: row.try_get::<_, i64>(start + 3)? as u64,
        deleted: row.try_get(start + 4)?,
        pending: row.try_get(start + 5)?,
    })
}

fn invalid(err: postgres::Error) -> crate::StoreError {
    crate::StoreError::InvalidRow { id: "?".into(), detail: err.to_string() }
}

fn read_conflict(row: &Row) -> StoreResult<ConflictRow> {
    Ok(ConflictRow {
        id: row.try_get(0).map_err(invalid)?,
        remote_version: row.try_get::<_, i64>(1).map_err(invalid)? as u64,
        remote: row.try_get(2).map_err(invalid)?,
        found_at: row.try_get(3).map_err(invalid)?,
    })
}

fn as_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

const CONFLICT_COLUMNS: &str = "item_id, remote_version, remote, found_at";

impl PgStore {
    /// Gives every committed change without a cursor the next cursors, in a transaction of
    /// its own under the schema's numbering lock. Only committed rows are visible to it, so a
    /// change committed after a reader saw cursor N is numbered later, above N: nothing
    /// appears below a cursor already read. A row an open transaction is rewriting is
    /// skipped (`SKIP LOCKED`): that transaction's version is numbered by a later run.
    pub(crate) fn number_changes(&self) -> StoreResult<()> {
        let key = self.namespace.lock_key("sync-numbering");
        self.run(|connection| {
            let mut tx = connection.client.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&key])?;
            tx.execute(
                "UPDATE changes SET seq = nextval('changes_seq') WHERE item_id IN \
                 (SELECT item_id FROM changes WHERE seq IS NULL ORDER BY item_id FOR UPDATE SKIP LOCKED)",
                &[],
            )?;
            tx.commit()
        })
    }
}

impl ReadTx<'_> {
    pub(crate) fn change_rows(
        &self,
        after: u64,
        limit: usize,
        pending: bool,
    ) -> StoreResult<Vec<(ChangeRow, Option<Item>, u64)>> {
        let filter = if pending {
            "c.pending AND c.seq > $1 AND NOT EXISTS (SELECT 1 FROM sync_conflicts k WHERE k.item_id = c.item_id)"
        } else {
            "c.seq > $1"
        };
        let sql = format!(
            "SELECT {items}, {CHANGE_COLUMNS}, \
             coalesce((SELECT b.version FROM sync_base b WHERE b.item_id = c.item_id), 0) \
             FROM changes c LEFT JOIN items i ON i.id = c.item_id WHERE {filter} ORDER BY c.seq LIMIT $2",
            items = item_columns()
        );
        let rows = self.query(&sql, &[&as_i64(after), &as_i64(limit as u64)])?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let change = read_change(row, 33).map_err(invalid)?;
            let base = row.try_get::<_, i64>(39).map_err(invalid)? as u64;
            let item = if change.deleted { None } else { Some(rows::row_to_item(row)?) };
            out.push((change, item, base));
        }
        Ok(out)
    }

    pub(crate) fn pending_by_scope(&self) -> StoreResult<Vec<(String, u64)>> {
        let rows = self.query("SELECT scope, count(*) FROM changes WHERE pending GROUP BY scope", &[])?;
        rows.iter()
            .map(|row| {
                Ok((row.try_get::<_, String>(0).map_err(invalid)?, row.try_get::<_, i64>(1).map_err(invalid)? as u64))
            })
            .collect()
    }

    pub(crate) fn last_change(&self) -> StoreResult<u64> {
        let rows = self.query("SELECT coalesce(max(seq), 0)::bigint FROM changes", &[])?;
        Ok(rows.first().map(|row| row.try_get::<_, i64>(0)).transpose().map_err(invalid)?.unwrap_or(0) as u64)
    }

    pub(crate) fn conflict_rows(&self) -> StoreResult<Vec<ConflictRow>> {
        let rows = self.query(&format!("SELECT {CONFLICT_COLUMNS} FROM sync_conflicts ORDER BY item_id"), &[])?;
        rows.iter().map(read_conflict).collect()
    }

    pub(crate) fn cursor(&self, name: &str) -> StoreResult<u64> {
        let rows = self.query("SELECT value FROM sync_cursors WHERE name = $1", &[&name])?;
        Ok(rows.first().map(|row| row.try_get::<_, i64>(0)).transpose().map_err(invalid)?.unwrap_or(0) as u64)
    }
}

impl WriteTx<'_> {
    pub(crate) fn change_row(&self, id: &str) -> StoreResult<Option<ChangeRow>> {
        let rows =
            self.query(&format!("SELECT {CHANGE_COLUMNS} FROM changes c WHERE c.item_id = $1 FOR UPDATE"), &[&id])?;
        rows.first().map(|row| read_change(row, 0)).transpose().map_err(invalid)
    }

    /// Clears the pending mark of `id`'s change (only if it is still the change at `seq`).
    pub(crate) fn settle_change(&mut self, id: &str, seq: Option<u64>) -> StoreResult<bool> {
        let seq = seq.map(as_i64);
        let changed = self.execute(
            "UPDATE changes SET pending = false WHERE item_id = $1 AND ($2::bigint IS NULL OR seq = $2) AND pending",
            &[&id, &seq],
        )?;
        Ok(changed > 0)
    }

    pub(crate) fn mark_pending(&mut self, id: &str) -> StoreResult<()> {
        self.execute("UPDATE changes SET pending = true WHERE item_id = $1", &[&id])?;
        Ok(())
    }

    pub(crate) fn sync_base(&self, id: &str) -> StoreResult<u64> {
        let rows = self.query("SELECT version FROM sync_base WHERE item_id = $1", &[&id])?;
        Ok(rows.first().map(|row| row.try_get::<_, i64>(0)).transpose().map_err(invalid)?.unwrap_or(0) as u64)
    }

    pub(crate) fn set_sync_base(&mut self, id: &str, version: u64) -> StoreResult<()> {
        self.execute(
            "INSERT INTO sync_base (item_id, version) VALUES ($1, $2) \
             ON CONFLICT (item_id) DO UPDATE SET version = greatest(sync_base.version, excluded.version)",
            &[&id, &as_i64(version)],
        )?;
        Ok(())
    }

    pub(crate) fn conflict_row(&self, id: &str) -> StoreResult<Option<ConflictRow>> {
        let rows = self.query(&format!("SELECT {CONFLICT_COLUMNS} FROM sync_conflicts WHERE item_id = $1"), &[&id])?;
        rows.first().map(read_conflict).transpose()
    }

    pub(crate) fn put_conflict(&mut self, row: &ConflictRow) -> StoreResult<()> {
        self.execute(
            "INSERT INTO sync_conflicts (item_id, remote_version, remote, found_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (item_id) DO UPDATE SET remote_version = excluded.remote_version, \
             remote = excluded.remote, found_at = excluded.found_at",
            &[&row.id, &as_i64(row.remote_version), &row.remote, &whole_seconds(row.found_at)],
        )?;
        Ok(())
    }

    pub(crate) fn remove_conflict(&mut self, id: &str) -> StoreResult<bool> {
        Ok(self.execute("DELETE FROM sync_conflicts WHERE item_id = $1", &[&id])? > 0)
    }

    pub(crate) fn set_cursor(&mut self, name: &str, value: u64) -> StoreResult<()> {
        self.execute(
            "INSERT INTO sync_cursors (name, value) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            &[&name, &as_i64(value)],
        )?;
        Ok(())
    }
}
