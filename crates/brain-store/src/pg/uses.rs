//! PostgreSQL's table of decisions about item use (migration 11; see [`crate::UseRecord`]).

use postgres::Row;

use super::rows::{Params, whole_seconds};
use super::{PgStore, WriteTx};
use crate::{StoreResult, USES_KEPT_PER_ITEM, UseRecord};

const USE_COLUMNS: &str = "item_id, session, project, host, verdict, signal, turn, evidence, task, tokens, decided_at";

fn row_to_use(row: &Row) -> Result<UseRecord, postgres::Error> {
    let turn: Option<i64> = row.try_get(6)?;
    let tokens: i64 = row.try_get(9)?;
    Ok(UseRecord {
        item_id: row.try_get(0)?,
        session: row.try_get(1)?,
        project: row.try_get(2)?,
        host: row.try_get(3)?,
        verdict: row.try_get(4)?,
        signal: row.try_get(5)?,
        turn: turn.map(|turn| turn.clamp(0, i64::from(u32::MAX)) as u32),
        evidence: row.try_get(7)?,
        task: row.try_get(8)?,
        tokens: tokens.clamp(0, i64::from(u32::MAX)) as u32,
        decided_at: row.try_get(10)?,
    })
}

impl PgStore {
    /// The decisions about `ids`, newest first.
    pub(crate) fn uses_of(&self, ids: &[&str]) -> StoreResult<Vec<UseRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
        let params: Params = vec![Box::new(list)];
        let rows = self.rows(
            &format!(
                "SELECT {USE_COLUMNS} FROM item_use WHERE item_id = ANY($1) ORDER BY decided_at DESC, session DESC"
            ),
            &params,
        )?;
        rows.iter().map(row_to_use).collect::<Result<_, _>>().map_err(|err| self.error(err))
    }

    /// The items of `project` that sessions used (or someone marked useful), most recently
    /// used first.
    pub(crate) fn recently_used(&self, project: &str, limit: usize) -> StoreResult<Vec<String>> {
        let params: Params = vec![Box::new(project.to_string()), Box::new(limit as i64)];
        let rows = self.rows(
            "SELECT item_id FROM item_use WHERE project = $1 AND verdict IN ('used', 'useful') \
             GROUP BY item_id ORDER BY MAX(decided_at) DESC, item_id LIMIT $2",
            &params,
        )?;
        rows.iter().map(|row| row.try_get(0)).collect::<Result<_, _>>().map_err(|err| self.error(err))
    }

    /// The decisions made at or after `since` (of `project` when given), oldest first.
    pub(crate) fn uses_since(
        &self,
        project: Option<&str>,
        since: brain_core::Timestamp,
    ) -> StoreResult<Vec<UseRecord>> {
        let mut params: Params = vec![Box::new(whole_seconds(since))];
        let sql = match project {
            Some(project) => {
                params.push(Box::new(project.to_string()));
                format!(
                    "SELECT {USE_COLUMNS} FROM item_use WHERE decided_at >= $1 AND project = $2 \
                     ORDER BY decided_at, item_id, session"
                )
            }
            None => format!(
                "SELECT {USE_COLUMNS} FROM item_use WHERE decided_at >= $1 ORDER BY decided_at, item_id, session"
            ),
        };
        let rows = self.rows(&sql, &params)?;
        rows.iter().map(row_to_use).collect::<Result<_, _>>().map_err(|err| self.error(err))
    }
}

impl WriteTx<'_> {
    /// Records one decision (see [`crate::WriteTx::record_use`]).
    pub(crate) fn record_use(&mut self, record: &UseRecord) -> StoreResult<bool> {
        let stored = self.query(
            "SELECT verdict FROM item_use WHERE item_id = $1 AND session = $2 FOR UPDATE",
            &[&record.item_id, &record.session],
        )?;
        let write = match stored.first().map(|row| row.get::<_, String>(0)).as_deref() {
            None => true,
            // A session's "not used yet" becomes "used" when it uses the item; a use stays.
            Some("unused") => record.verdict != "unused",
            Some(_) => false,
        };
        if !write {
            return Ok(false);
        }
        let turn = record.turn.map(i64::from);
        let tokens = i64::from(record.tokens);
        let decided = whole_seconds(record.decided_at);
        self.execute(
            &format!(
                "INSERT INTO item_use ({USE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
                 ON CONFLICT (item_id, session) DO UPDATE SET project = EXCLUDED.project, host = EXCLUDED.host, \
                 verdict = EXCLUDED.verdict, signal = EXCLUDED.signal, turn = EXCLUDED.turn, \
                 evidence = EXCLUDED.evidence, task = EXCLUDED.task, tokens = EXCLUDED.tokens, \
                 decided_at = EXCLUDED.decided_at"
            ),
            &[
                &record.item_id,
                &record.session,
                &record.project,
                &record.host,
                &record.verdict,
                &record.signal,
                &turn,
                &record.evidence,
                &record.task,
                &tokens,
                &decided,
            ],
        )?;
        self.execute(
            "DELETE FROM item_use WHERE item_id = $1 AND session NOT IN (SELECT session FROM item_use \
             WHERE item_id = $1 ORDER BY decided_at DESC, session DESC LIMIT $2)",
            &[&record.item_id, &USES_KEPT_PER_ITEM],
        )?;
        self.mark_changed();
        Ok(record.verdict == "used")
    }
}
