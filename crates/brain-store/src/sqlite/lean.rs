//! Lean reads for assembling over big stores: every item of some scopes as an
//! [`ItemMeta`] (no texts), then full items by id, both inside one read transaction so they
//! see the same snapshot (see `brain_core::assemble::lean`).

use brain_core::assemble::ItemMeta;
use brain_core::time::parse_timestamp;
use brain_core::{Item, Kind, Scope, Status};
use rusqlite::types::Value;
use rusqlite::{Row, TransactionBehavior, params_from_iter};

use super::{COLUMNS, SqliteStore, row_to_item};
use crate::{StoreError, StoreResult};

/// Ids per `IN (…)` list when fetching full items.
const IDS_PER_QUERY: usize = 500;

/// SQLite's side of a [`crate::ReadTx`]: one deferred transaction (a WAL snapshot).
pub struct ReadTx<'conn> {
    pub(super) tx: rusqlite::Transaction<'conn>,
    pub(super) store: &'conn SqliteStore,
}

impl SqliteStore {
    /// Runs `run` on one read transaction (a WAL snapshot): nothing another process commits
    /// meanwhile is seen, so several reads agree with each other. `run` ends it (see
    /// [`ReadTx::finish`]).
    pub(crate) fn read<T>(&self, run: impl FnOnce(ReadTx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        let mut connection = self.lock();
        let tx =
            connection.transaction_with_behavior(TransactionBehavior::Deferred).map_err(|e| self.sqlite_error(e))?;
        run(ReadTx { tx, store: self })
    }
}

impl ReadTx<'_> {
    /// Ends the transaction. Nothing was written: it only releases the snapshot.
    pub(crate) fn finish(self) -> StoreResult<()> {
        let store = self.store;
        self.tx.commit().map_err(|e| store.sqlite_error(e))
    }

    /// Every item of `scopes`, any status, as metas, in storage order. Reads no text
    /// column, so no title, content or rationale is decoded or copied.
    pub(crate) fn list_metas(&self, scopes: &[Scope]) -> StoreResult<Vec<ItemMeta>> {
        if scopes.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; scopes.len()].join(", ");
        let sql = format!(
            "SELECT id, kind, schema_key, status, importance, confidence, severity, updated_at, valid_until, tokens, \
             dedup_hint, tags FROM items WHERE scope IN ({marks})"
        );
        let values = scopes.iter().map(|scope| Value::Text(scope.to_string()));
        let mut statement = self.tx.prepare_cached(&sql).map_err(|e| self.store.sqlite_error(e))?;
        let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.store.sqlite_error(e))?;
        let mut metas = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.store.sqlite_error(e))? {
            metas.push(self.row_to_meta(row)?);
        }
        Ok(metas)
    }

    /// The full items with these ids (any order; ids not stored are left out).
    pub(crate) fn get_many(&self, ids: &[&str]) -> StoreResult<Vec<Item>> {
        let mut items = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = format!("SELECT {COLUMNS} FROM items WHERE id IN ({marks})");
            let mut statement = self.tx.prepare_cached(&sql).map_err(|e| self.store.sqlite_error(e))?;
            let mut rows = statement.query(params_from_iter(chunk)).map_err(|e| self.store.sqlite_error(e))?;
            while let Some(row) = rows.next().map_err(|e| self.store.sqlite_error(e))? {
                items.push(row_to_item(row, 0, self.store.path())?);
            }
        }
        Ok(items)
    }

    pub(crate) fn items_after(&self, after: &str, limit: usize) -> StoreResult<Vec<Item>> {
        let sql = format!("SELECT {COLUMNS} FROM items WHERE id > ?1 ORDER BY id LIMIT ?2");
        let mut statement = self.tx.prepare_cached(&sql).map_err(|e| self.store.sqlite_error(e))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = statement.query(rusqlite::params![after, limit]).map_err(|e| self.store.sqlite_error(e))?;
        let mut items = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.store.sqlite_error(e))? {
            items.push(row_to_item(row, 0, self.store.path())?);
        }
        Ok(items)
    }

    /// A meta from a `list_metas` row: the same conversions as `row_to_item`, so a meta
    /// always agrees with the full item. Only the id, the schema key and the dedup hint
    /// are copied out of SQLite; every other text is read in place.
    fn row_to_meta(&self, row: &Row<'_>) -> StoreResult<ItemMeta> {
        let sql = |err| self.store.sqlite_error(err);
        let id: String = row.get(0).map_err(sql)?;
        let invalid = |detail: String| StoreError::InvalidRow { id: id.clone(), detail };
        let borrowed = |index: usize| -> StoreResult<Option<&str>> {
            let value = row.get_ref(index).map_err(sql)?;
            value.as_str_or_null().map_err(|err| invalid(format!("column {index}: {err}")))
        };
        let text = |index: usize| -> StoreResult<&str> {
            borrowed(index)?.ok_or_else(|| invalid(format!("column {index} is null")))
        };
        let kind: Kind = closed_value(text(1)?).map_err(invalid)?;
        let status: Status = closed_value(text(3)?).map_err(invalid)?;
        // Only bugs (`fixed`) and todos (`done`) are classified by a tag.
        let tagged = |tag: &str| -> StoreResult<bool> {
            let tags: Vec<String> =
                serde_json::from_str(text(11)?).map_err(|err| invalid(format!("column 16: {err}")))?;
            Ok(tags.iter().any(|t| t == tag))
        };
        let fixed_bug = kind == Kind::Bug && tagged("fixed")?;
        let done_todo = kind == Kind::Todo && tagged("done")?;
        let severity = borrowed(6)?.map(closed_value).transpose().map_err(invalid)?;
        let updated_at = parse_timestamp(text(7)?).map_err(invalid)?;
        let valid_until = borrowed(8)?.map(parse_timestamp).transpose().map_err(invalid)?;
        let schema_key = text(2)?.to_string();
        let dedup_hint = borrowed(10)?.map(str::to_string);
        let importance = row.get::<_, i64>(4).map_err(sql)? as u8;
        let confidence = row.get::<_, f64>(5).map_err(sql)? as f32;
        let tokens = row.get::<_, i64>(9).map_err(sql)? as u32;
        Ok(ItemMeta {
            id,
            kind,
            schema_key,
            status,
            importance,
            confidence,
            severity,
            updated_at,
            valid_until,
            tokens,
            dedup_hint,
            fixed_bug,
            done_todo,
        })
    }
}

/// A closed-set value from its stored text: the stored form exactly, without the
/// allocation of the lenient parser (which still decides anything else).
fn closed_value<T: std::str::FromStr<Err = String> + ClosedSet>(text: &str) -> Result<T, String> {
    match T::all().iter().find(|value| value.name() == text) {
        Some(value) => Ok(*value),
        None => text.parse(),
    }
}

/// The closed sets stored as text.
trait ClosedSet: Copy + 'static {
    fn all() -> &'static [Self];
    fn name(&self) -> &'static str;
}

impl ClosedSet for Kind {
    fn all() -> &'static [Self] {
        Kind::ALL
    }
    fn name(&self) -> &'static str {
        self.as_str()
    }
}

impl ClosedSet for Status {
    fn all() -> &'static [Self] {
        Status::ALL
    }
    fn name(&self) -> &'static str {
        self.as_str()
    }
}

impl ClosedSet for brain_core::Severity {
    fn all() -> &'static [Self] {
        brain_core::Severity::ALL
    }
    fn name(&self) -> &'static str {
        self.as_str()
    }
}
