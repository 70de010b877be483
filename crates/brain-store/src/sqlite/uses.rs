//! SQLite's table of decisions about item use (migration 13; see [`crate::UseRecord`]).

use brain_core::time::{format_timestamp, parse_timestamp};
use rusqlite::{OptionalExtension, Row, params, params_from_iter};

use super::{SqliteStore, WriteTx};
use crate::{StoreError, StoreResult, USES_KEPT_PER_ITEM, UseRecord};

const USE_COLUMNS: &str = "item_id, session, project, host, verdict, signal, turn, evidence, task, tokens, decided_at";

fn row_to_use(row: &Row<'_>) -> rusqlite::Result<Result<UseRecord, String>> {
    let decided: String = row.get(10)?;
    let turn: Option<i64> = row.get(6)?;
    let tokens: i64 = row.get(9)?;
    Ok(parse_timestamp(&decided).map(|decided_at| UseRecord {
        item_id: row.get(0).unwrap_or_default(),
        session: row.get(1).unwrap_or_default(),
        project: row.get(2).unwrap_or_default(),
        host: row.get(3).unwrap_or_default(),
        verdict: row.get(4).unwrap_or_default(),
        signal: row.get(5).unwrap_or_default(),
        turn: turn.map(|turn| turn.clamp(0, i64::from(u32::MAX)) as u32),
        evidence: row.get(7).unwrap_or_default(),
        task: row.get(8).unwrap_or_default(),
        tokens: tokens.clamp(0, i64::from(u32::MAX)) as u32,
        decided_at,
    }))
}

impl SqliteStore {
    fn use_rows(&self, sql: &str, values: Vec<rusqlite::types::Value>) -> StoreResult<Vec<UseRecord>> {
        let connection = self.lock();
        let mut statement = connection.prepare_cached(sql).map_err(|e| self.sqlite_error(e))?;
        let rows = statement.query_map(params_from_iter(values), row_to_use).map_err(|e| self.sqlite_error(e))?;
        let mut uses = Vec::new();
        for row in rows {
            let record = row.map_err(|e| self.sqlite_error(e))?;
            uses.push(record.map_err(|detail| StoreError::InvalidRow { id: "item_use".into(), detail })?);
        }
        Ok(uses)
    }

    /// The decisions about `ids`, newest first.
    pub(crate) fn uses_of(&self, ids: &[&str]) -> StoreResult<Vec<UseRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; ids.len()].join(", ");
        let sql = format!(
            "SELECT {USE_COLUMNS} FROM item_use WHERE item_id IN ({marks}) ORDER BY decided_at DESC, session DESC"
        );
        self.use_rows(&sql, ids.iter().map(|id| rusqlite::types::Value::Text(id.to_string())).collect())
    }

    /// The items of `project` that sessions used (or someone marked useful), most recently
    /// used first.
    pub(crate) fn recently_used(&self, project: &str, limit: usize) -> StoreResult<Vec<String>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(
                "SELECT item_id FROM item_use WHERE project = ?1 AND verdict IN ('used', 'useful') \
                 GROUP BY item_id ORDER BY MAX(decided_at) DESC, item_id LIMIT ?2",
            )
            .map_err(|e| self.sqlite_error(e))?;
        let rows = statement
            .query_map(params![project, limit as i64], |row| row.get::<_, String>(0))
            .map_err(|e| self.sqlite_error(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite_error(e))
    }

    /// The decisions made at or after `since` (of `project` when given), oldest first.
    pub(crate) fn uses_since(
        &self,
        project: Option<&str>,
        since: brain_core::Timestamp,
    ) -> StoreResult<Vec<UseRecord>> {
        let since = rusqlite::types::Value::Text(format_timestamp(since));
        match project {
            Some(project) => self.use_rows(
                &format!(
                    "SELECT {USE_COLUMNS} FROM item_use WHERE decided_at >= ?1 AND project = ?2 \
                     ORDER BY decided_at, item_id, session"
                ),
                vec![since, rusqlite::types::Value::Text(project.to_string())],
            ),
            None => self.use_rows(
                &format!(
                    "SELECT {USE_COLUMNS} FROM item_use WHERE decided_at >= ?1 ORDER BY decided_at, item_id, session"
                ),
                vec![since],
            ),
        }
    }
}

impl WriteTx<'_> {
    /// Records one decision (see [`crate::WriteTx::record_use`]).
    pub(crate) fn record_use(&mut self, record: &UseRecord) -> StoreResult<bool> {
        let stored: Option<String> = self
            .tx
            .query_row(
                "SELECT verdict FROM item_use WHERE item_id = ?1 AND session = ?2",
                params![record.item_id, record.session],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.error(e))?;
        let write = match stored.as_deref() {
            None => true,
            // A session's "not used yet" becomes "used" when it uses the item; a use stays.
            Some("unused") => record.verdict != "unused",
            Some(_) => false,
        };
        if !write {
            return Ok(false);
        }
        self.tx
            .execute(
                &format!(
                    "INSERT OR REPLACE INTO item_use ({USE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
                ),
                params![
                    record.item_id,
                    record.session,
                    record.project,
                    record.host,
                    record.verdict,
                    record.signal,
                    record.turn.map(i64::from),
                    record.evidence,
                    record.task,
                    i64::from(record.tokens),
                    format_timestamp(record.decided_at),
                ],
            )
            .map_err(|e| self.error(e))?;
        self.tx
            .execute(
                "DELETE FROM item_use WHERE item_id = ?1 AND session NOT IN (SELECT session FROM item_use \
                 WHERE item_id = ?1 ORDER BY decided_at DESC, session DESC LIMIT ?2)",
                params![record.item_id, USES_KEPT_PER_ITEM],
            )
            .map_err(|e| self.error(e))?;
        self.changed = true;
        Ok(record.verdict == "used")
    }
}
