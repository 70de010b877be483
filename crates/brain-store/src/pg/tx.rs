//! PostgreSQL's sides of [`crate::WriteTx`] and [`crate::ReadTx`].
//!
//! A write transaction runs at READ COMMITTED and locks what it reads (`FOR UPDATE`), so a
//! read-modify-write of an item is atomic exactly as under SQLite's write lock, while writes
//! to other items proceed beside it. The write generation moves in the same transaction,
//! last, on a counter of the connection's own (see migration 6); every replica is notified
//! right after the commit (`PgStore::announce`). A read transaction is one REPEATABLE READ
//! snapshot.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use brain_core::assemble::ItemMeta;
use brain_core::{Item, Scope};
use postgres::types::ToSql;
use postgres::{Row, Statement, Transaction};

use super::PgStore;
use super::rows::{self, COLUMN_COUNT, COLUMNS, META_COLUMNS, Params};
use crate::{StoreError, StoreResult, VaultFileRecord};

/// Rows per multi-row insert (33 parameters each, far below the protocol's 65,535).
const BATCH_ROWS: usize = 900;

/// A transaction with the connection's statement cache.
pub(crate) struct Session<'c> {
    tx: Transaction<'c>,
    statements: &'c mut StatementCache,
}

impl<'c> Session<'c> {
    pub(crate) fn new(tx: Transaction<'c>, statements: &'c mut StatementCache) -> Session<'c> {
        Session { tx, statements }
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.tx.prepare(sql)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error> {
        let statement = self.statement(sql)?;
        self.tx.query(&statement, params)
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, postgres::Error> {
        let statement = self.statement(sql)?;
        self.tx.execute(&statement, params)
    }

    pub(crate) fn commit(self) -> Result<(), postgres::Error> {
        self.tx.commit()
    }
}

/// The write side: the session (interior mutability, since reads take `&self`), whether
/// anything changed, and the store for error classification.
pub struct WriteTx<'c> {
    session: RefCell<Session<'c>>,
    changed: bool,
    store: &'c PgStore,
}

impl<'c> WriteTx<'c> {
    pub(crate) fn new(session: Session<'c>, store: &'c PgStore) -> WriteTx<'c> {
        WriteTx { session: RefCell::new(session), changed: false, store }
    }

    pub(super) fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Vec<Row>> {
        self.session.borrow_mut().query(sql, params).map_err(|err| self.store.error(err))
    }

    pub(super) fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<u64> {
        self.session.get_mut().execute(sql, params).map_err(|err| self.store.error(err))
    }

    /// Something changed: the write generation moves at commit.
    pub(super) fn mark_changed(&mut self) {
        self.changed = true;
    }

    /// Moves the write generation when anything changed (one of the counters of
    /// `generation_slots`, the one of this connection, so concurrent writers on other
    /// connections do not wait for this commit), then commits and announces the change to
    /// every replica (see [`PgStore::announce`]). Returns whether it announced anything.
    pub(crate) fn commit(self) -> StoreResult<bool> {
        let store = self.store;
        let mut session = self.session.into_inner();
        if self.changed {
            let sql = "UPDATE generation_slots SET value = value + 1 WHERE slot = pg_backend_pid() % 64";
            session.execute(sql, &[]).map_err(|err| store.error(err))?;
        }
        session.commit().map_err(|err| store.error(err))?;
        Ok(self.changed)
    }

    /// The item, its row locked until commit.
    pub(crate) fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        let rows = self.query(&format!("SELECT {COLUMNS} FROM items WHERE id = $1 FOR UPDATE"), &[&id])?;
        rows.first().map(rows::row_to_item).transpose()
    }

    pub(crate) fn insert(&mut self, item: &Item) -> StoreResult<()> {
        rows::check_storable(item)?;
        let marks: Vec<String> = (1..=COLUMN_COUNT).map(|n| format!("${n}")).collect();
        // ON CONFLICT rather than a unique violation: an error would abort the transaction,
        // while SQLite's stays usable after `AlreadyExists`.
        let sql = format!(
            "INSERT INTO items ({COLUMNS}) VALUES ({}) ON CONFLICT (id) DO NOTHING RETURNING id",
            marks.join(", ")
        );
        let params = rows::item_params(item);
        let inserted = self.query(&sql, &rows::refs(&params))?;
        if inserted.is_empty() {
            return Err(StoreError::AlreadyExists { id: item.id.clone() });
        }
        self.changed = true;
        Ok(())
    }

    /// Writes `written` over the stored row of its id if that row still has
    /// `stored_version`. Returns whether it did.
    pub(crate) fn replace(&mut self, written: &Item, stored_version: u64) -> StoreResult<bool> {
        rows::check_storable(written)?;
        let assignments: Vec<String> = COLUMNS
            .split(", ")
            .enumerate()
            .skip(1)
            .map(|(index, column)| format!("{column} = ${}", index + 1))
            .collect();
        let sql =
            format!("UPDATE items SET {} WHERE id = $1 AND version = ${}", assignments.join(", "), COLUMN_COUNT + 1);
        let mut params = rows::item_params(written);
        params.push(Box::new(i64::try_from(stored_version).unwrap_or(i64::MAX)));
        let replaced = self.execute(&sql, &rows::refs(&params))? == 1;
        self.changed |= replaced;
        Ok(replaced)
    }

    pub(crate) fn delete(&mut self, id: &str) -> StoreResult<bool> {
        let removed = self.execute("DELETE FROM items WHERE id = $1", &[&id])? > 0;
        self.changed |= removed;
        Ok(removed)
    }

    /// Inserts many items with one statement per [`BATCH_ROWS`] (one array per column,
    /// unnested), skipping taken ids and later repeats of an id of the batch.
    pub(crate) fn insert_many(&mut self, items: &[&Item]) -> StoreResult<Vec<String>> {
        let mut skipped = Vec::new();
        for chunk in items.chunks(BATCH_ROWS) {
            for item in chunk {
                rows::check_storable(item)?;
            }
            let (sql, params) = unnest_insert(chunk);
            let inserted: HashSet<String> = self
                .query(&sql, &rows::refs(&params))?
                .iter()
                .map(|row| row.try_get::<_, String>(0))
                .collect::<Result<_, _>>()
                .map_err(|err| self.store.error(err))?;
            self.changed |= !inserted.is_empty();
            let mut first: HashSet<&str> = HashSet::new();
            skipped.extend(
                chunk
                    .iter()
                    .filter(|item| !(inserted.contains(&item.id) && first.insert(item.id.as_str())))
                    .map(|item| item.id.clone()),
            );
        }
        Ok(skipped)
    }

    pub(crate) fn delete_many(&mut self, ids: &[String]) -> StoreResult<usize> {
        let mut removed = 0;
        for chunk in ids.chunks(BATCH_ROWS * 10) {
            removed += self.execute("DELETE FROM items WHERE id = ANY($1)", &[&chunk])? as usize;
        }
        self.changed |= removed > 0;
        Ok(removed)
    }

    pub(crate) fn delete_items_by_source_prefix(&mut self, prefix: &str) -> StoreResult<usize> {
        let upper = format!("{prefix}\u{10FFFF}");
        let removed =
            self.execute("DELETE FROM items WHERE source >= $1 AND source < $2", &[&prefix, &upper])? as usize;
        self.changed |= removed > 0;
        Ok(removed)
    }

    pub(crate) fn move_source(&mut self, ids: &[String], from: &str, to: &str) -> StoreResult<usize> {
        let mut moved = 0;
        for chunk in ids.chunks(BATCH_ROWS * 10) {
            moved += self.execute(
                "UPDATE items SET source = $3, version = version + 1 WHERE id = ANY($1) AND source = $2",
                &[&chunk, &from, &to],
            )? as usize;
        }
        self.changed |= moved > 0;
        Ok(moved)
    }

    pub(crate) fn put_vault_file(&mut self, record: &VaultFileRecord) -> StoreResult<()> {
        let size = i64::try_from(record.size).unwrap_or(i64::MAX);
        self.execute(
            "INSERT INTO vault_files (relpath, size, mtime_ns, sha256, state, diagnostics) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (relpath) DO UPDATE SET size = excluded.size, \
             mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, state = excluded.state, \
             diagnostics = excluded.diagnostics",
            &[&record.relpath, &size, &record.mtime_ns, &record.sha256, &record.state, &record.diagnostics],
        )?;
        Ok(())
    }

    pub(crate) fn touch_vault_file(&mut self, relpath: &str, size: u64, mtime_ns: i64) -> StoreResult<()> {
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        self.execute(
            "UPDATE vault_files SET size = $2, mtime_ns = $3 WHERE relpath = $1",
            &[&relpath, &size, &mtime_ns],
        )?;
        Ok(())
    }

    pub(crate) fn delete_vault_file(&mut self, relpath: &str) -> StoreResult<bool> {
        Ok(self.execute("DELETE FROM vault_files WHERE relpath = $1", &[&relpath])? > 0)
    }

    pub(crate) fn clear_vault_files(&mut self) -> StoreResult<usize> {
        Ok(self.execute("DELETE FROM vault_files", &[])? as usize)
    }

    pub(crate) fn vault_value(&self, key: &str) -> StoreResult<Option<String>> {
        let rows = self.query("SELECT value FROM vault_state WHERE key = $1 FOR UPDATE", &[&key])?;
        rows.first().map(|row| row.try_get(0)).transpose().map_err(|err| self.store.error(err))
    }

    pub(crate) fn set_vault_value(&mut self, key: &str, value: &str) -> StoreResult<bool> {
        if self.vault_value(key)?.as_deref() == Some(value) {
            return Ok(false);
        }
        self.execute(
            "INSERT INTO vault_state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&key, &value],
        )?;
        self.changed = true;
        Ok(true)
    }
}

/// `INSERT … SELECT FROM unnest(…)` of a batch: one array parameter per column. Lists are
/// passed as JSON texts (unnest would flatten arrays of arrays) and rebuilt in order.
fn unnest_insert(items: &[&Item]) -> (String, Params) {
    const LISTS: [usize; 3] = [16, 17, 18];
    let types = [
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
        "real",
        "smallint",
        "text",
        "text",
        "boolean",
        "integer",
        "boolean",
        "real",
        "real",
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
        "timestamptz",
        "timestamptz",
        "text",
        "timestamptz",
        "timestamptz",
        "timestamptz",
        "bigint",
        "timestamptz",
        "bigint",
        "bigint",
        "bigint",
    ];
    let mut params: Params = Vec::with_capacity(COLUMN_COUNT);
    macro_rules! column {
        ($get:expr) => {
            params.push(Box::new(items.iter().map($get).collect::<Vec<_>>()))
        };
    }
    let time = |value: Option<brain_core::Timestamp>| value.map(rows::whole_seconds);
    let json = |list: &Vec<String>| serde_json::to_string(list).unwrap_or_else(|_| "[]".into());
    column!(|item: &&Item| item.id.clone());
    column!(|item: &&Item| item.scope.to_string());
    column!(|item: &&Item| item.kind.as_str());
    column!(|item: &&Item| item.schema_key.clone());
    column!(|item: &&Item| item.title.clone());
    column!(|item: &&Item| item.content.clone());
    column!(|item: &&Item| item.rationale.clone());
    column!(|item: &&Item| item.confidence);
    column!(|item: &&Item| i16::from(item.importance));
    column!(|item: &&Item| item.status.as_str());
    column!(|item: &&Item| item.severity.map(|severity| severity.as_str()));
    column!(|item: &&Item| item.pinned);
    column!(|item: &&Item| item.pin_priority);
    column!(|item: &&Item| item.stable);
    column!(|item: &&Item| item.strength);
    column!(|item: &&Item| item.decay_rate);
    column!(|item: &&Item| json(&item.tags));
    column!(|item: &&Item| json(&item.files));
    column!(|item: &&Item| json(&item.evidence));
    column!(|item: &&Item| item.dedup_hint.clone());
    column!(|item: &&Item| item.supersedes.clone());
    column!(|item: &&Item| item.superseded_by.clone());
    column!(|item: &&Item| time(item.valid_from));
    column!(|item: &&Item| time(item.valid_until));
    column!(|item: &&Item| item.source.clone());
    column!(|item: &&Item| rows::whole_seconds(item.created_at));
    column!(|item: &&Item| rows::whole_seconds(item.updated_at));
    column!(|item: &&Item| time(item.last_accessed_at));
    column!(|item: &&Item| i64::from(item.access_count));
    column!(|item: &&Item| time(item.review_due_at));
    column!(|item: &&Item| i64::from(item.review_count));
    column!(|item: &&Item| i64::from(item.tokens));
    column!(|item: &&Item| i64::try_from(item.version).unwrap_or(i64::MAX));
    let arrays: Vec<String> =
        types.iter().enumerate().map(|(index, kind)| format!("${}::{kind}[]", index + 1)).collect();
    let names: Vec<String> = (0..COLUMN_COUNT).map(|index| format!("c{index}")).collect();
    let values: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            if LISTS.contains(&index) {
                format!("ARRAY(SELECT jsonb_array_elements_text({name}::jsonb))")
            } else {
                name.clone()
            }
        })
        .collect();
    let sql = format!(
        "INSERT INTO items ({COLUMNS}) SELECT {} FROM unnest({}) WITH ORDINALITY AS batch({}, ordinal) \
         ORDER BY ordinal ON CONFLICT (id) DO NOTHING RETURNING id",
        values.join(", "),
        arrays.join(", "),
        names.join(", ")
    );
    (sql, params)
}

/// The read side: one REPEATABLE READ, READ ONLY transaction.
pub struct ReadTx<'c> {
    session: RefCell<Session<'c>>,
    store: &'c PgStore,
}

impl<'c> ReadTx<'c> {
    pub(crate) fn new(session: Session<'c>, store: &'c PgStore) -> ReadTx<'c> {
        ReadTx { session: RefCell::new(session), store }
    }

    /// Ends the transaction. Nothing was written: it only releases the snapshot.
    pub(crate) fn finish(self) -> StoreResult<()> {
        let store = self.store;
        self.session.into_inner().commit().map_err(|err| store.error(err))
    }

    pub(super) fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> StoreResult<Vec<Row>> {
        self.session.borrow_mut().query(sql, params).map_err(|err| self.store.error(err))
    }

    pub(crate) fn list_metas(&self, scopes: &[Scope]) -> StoreResult<Vec<ItemMeta>> {
        if scopes.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<String> = scopes.iter().map(Scope::to_string).collect();
        let rows = self.query(&format!("SELECT {META_COLUMNS} FROM items WHERE scope = ANY($1)"), &[&names])?;
        rows.iter().map(rows::row_to_meta).collect()
    }

    pub(crate) fn items_after(&self, after: &str, limit: usize) -> StoreResult<Vec<Item>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows =
            self.query(&format!("SELECT {COLUMNS} FROM items WHERE id > $1 ORDER BY id LIMIT $2"), &[&after, &limit])?;
        rows.iter().map(rows::row_to_item).collect()
    }

    pub(crate) fn get_many(&self, ids: &[&str]) -> StoreResult<Vec<Item>> {
        let mut items = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BATCH_ROWS * 10) {
            let rows = self.query(&format!("SELECT {COLUMNS} FROM items WHERE id = ANY($1)"), &[&chunk])?;
            for row in &rows {
                items.push(rows::row_to_item(row)?);
            }
        }
        Ok(items)
    }
}

/// Statements prepared on one connection, by SQL text. Filters make a bounded number of
/// shapes; the cache is dropped whole if it ever grows past that.
#[derive(Default)]
pub(crate) struct StatementCache {
    statements: HashMap<String, Statement>,
}

impl StatementCache {
    const MAX: usize = 512;

    pub(crate) fn get(&self, sql: &str) -> Option<&Statement> {
        self.statements.get(sql)
    }

    pub(crate) fn insert(&mut self, sql: &str, statement: Statement) {
        if self.statements.len() >= Self::MAX {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), statement);
    }
}
