//! The embedded SQLite backend: bundled SQLite, WAL, FTS5 BM25, versioned migrations.
//!
//! Concurrency model: every write runs in a `BEGIN IMMEDIATE` transaction, so the write lock
//! is taken before anything is read and a read-modify-write can never interleave with
//! another process's write. Waiting for the lock is bounded by the busy timeout. Callers that
//! read an item earlier (an editor, an HTTP client with `If-Match`) pass the version they
//! read, and a mismatch is a `Conflict`, never a silent overwrite.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use brain_core::time::{format_timestamp, parse_timestamp};
use brain_core::{Item, Scope, Timestamp};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params_from_iter};

use crate::{Access, ItemFilter, ReadStamp, SearchHit, StoreError, StoreResult, StoreStats};

pub(crate) mod lean;
pub(crate) mod search;
pub(crate) mod sync;
pub(crate) mod tokens;
pub(crate) mod uses;
pub(crate) mod vault;
mod vector_index;
pub(crate) mod vectors;

/// The shipped migrations, in order. Never edit one that has shipped: append a new one.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/sqlite/0001_init.sql"),
    include_str!("migrations/sqlite/0002_vault.sql"),
    include_str!("migrations/sqlite/0003_session_index.sql"),
    include_str!("migrations/sqlite/0004_layering_index.sql"),
    include_str!("migrations/sqlite/0005_tokens.sql"),
    include_str!("migrations/sqlite/0006_claims.sql"),
    include_str!("migrations/sqlite/0007_vectors.sql"),
    include_str!("migrations/sqlite/0008_sync.sql"),
    include_str!("migrations/sqlite/0009_vector_epoch.sql"),
    include_str!("migrations/sqlite/0010_vault_state_bytes.sql"),
    include_str!("migrations/sqlite/0011_kind_index.sql"),
    include_str!("migrations/sqlite/0012_source_index.sql"),
    include_str!("migrations/sqlite/0013_item_use.sql"),
    include_str!("migrations/sqlite/0014_token_review.sql"),
];

/// How a process reads the database's pages, chosen by how long it lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PageReads {
    /// Through a memory map of up to 256 MB: no copy per page read, which short-lived
    /// processes on the hook path gain from. Every page touched counts in the process's
    /// resident memory (with the kernel's read-around, its neighbours too) until it exits.
    #[default]
    Mapped,
    /// Through SQLite's own page cache (2 MB) and `read(2)` from the OS page cache: the
    /// resident memory stays small however much of a big store is read. For long-running
    /// processes (`brain mcp`, the server) and for commands that list a whole session (the
    /// brain document, the claude-md summary), which gain nothing from the map.
    Cached,
}

/// Default wait for another process's write lock.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a check waits for another process's write lock before reporting it locked.
/// Moves the access epoch (see [`ReadStamp`]) in the transaction of a fold of access
/// bookkeeping: a `meta` row of its own, made by the first fold.
const ACCESS_EPOCH_MOVE: &str = "INSERT INTO meta (key, value) VALUES ('access_epoch', 1) \
     ON CONFLICT (key) DO UPDATE SET value = value + 1";

const CHECK_LOCK_WAIT: Duration = Duration::from_millis(500);

const COLUMNS: &str = "id, scope, kind, schema_key, title, content, rationale, confidence, importance, status, \
    severity, pinned, pin_priority, stable, strength, decay_rate, tags, files, evidence, dedup_hint, supersedes, \
    superseded_by, valid_from, valid_until, source, created_at, updated_at, last_accessed_at, access_count, \
    review_due_at, review_count, tokens, version";

/// BM25 column weights, in index order: title, content, tags, files, schema_key: the order in
/// which `sqlite/search.rs` picks candidates (core ranks them).
const BM25_WEIGHTS: &str = "10.0, 1.0, 5.0, 2.0, 3.0";

#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    connection: Mutex<Connection>,
    /// Whether this handle committed a write (see `Drop`).
    wrote: std::sync::atomic::AtomicBool,
    /// The page cache size (`PRAGMA cache_size`) a bulk insert raised, to restore when its
    /// transaction ends (see `WriteTx::insert_many`).
    bulk_cache: Mutex<Option<i64>>,
    /// Whether a vector index this handle builds is also written to the index file for the
    /// next process (`sqlite/vector_index.rs`): by short-lived processes
    /// ([`PageReads::Mapped`]: the CLI), which would each rebuild it, not by long-running ones
    /// ([`PageReads::Cached`]: `serve`, which rebuilds in memory as vectors change under it
    /// and would otherwise write the whole file after every write that embeds).
    writes_index_file: bool,
}

/// SQLite's side of a [`crate::WriteTx`]: one `BEGIN IMMEDIATE` transaction.
pub struct WriteTx<'conn> {
    tx: rusqlite::Transaction<'conn>,
    path: &'conn Path,
    /// Whether anything was written (the write generation moves at commit).
    changed: bool,
    store: &'conn SqliteStore,
    /// The indexes of `items` a bulk load dropped, rebuilt before commit
    /// (`WriteTx::defer_item_indexes` in `sqlite/vault.rs`).
    deferred: Option<vault::DeferredIndexes>,
}

impl SqliteStore {
    /// Opens the database at `path`. With `create`, a missing file is created and migrated;
    /// without it, a missing file is `StoreError::Missing`.
    pub fn open(path: &Path, create: bool) -> StoreResult<SqliteStore> {
        SqliteStore::open_with(path, create, DEFAULT_BUSY_TIMEOUT, PageReads::Mapped)
    }

    /// `open` with an explicit bound on waiting for another writer and a way to read pages.
    pub fn open_with(
        path: &Path,
        create: bool,
        busy_timeout: Duration,
        page_reads: PageReads,
    ) -> StoreResult<SqliteStore> {
        if !create && !path.exists() {
            return Err(StoreError::Missing { path: path.to_path_buf() });
        }
        // SQLite takes an empty file for an empty database and would migrate it into a fresh
        // store: a truncated brain.db would silently lose everything.
        if !create && std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.len() == 0) {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: "the file is empty (0 bytes): its items are gone".into(),
            });
        }
        let sqlite_error = |err| cannot_open_diagnosed(path, StoreError::from_sqlite(path, err));
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let connection = Connection::open_with_flags(path, flags).map_err(sqlite_error)?;
        connection.busy_timeout(busy_timeout).map_err(sqlite_error)?;
        if page_reads == PageReads::Mapped {
            // Memory-mapped reads: short-lived processes (hooks, CLI) skip copying every
            // page they touch through read(2).
            connection.execute_batch("PRAGMA mmap_size = 268435456;").map_err(sqlite_error)?;
        }
        // Reading the schema version is the first real read: a file that is not a database
        // fails here with a clear error.
        let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(sqlite_error)?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(StoreError::TooNew { path: path.to_path_buf(), found: version, known });
        }
        if !create && version == 0 {
            // Every brain database has a schema version; none means another program's file.
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: "it has no brain schema (schema version 0): not a brain database".into(),
            });
        }
        let readonly = connection.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
        if !readonly {
            // WAL lets readers (hooks, the server) run while one process writes; FULL makes
            // every acknowledged commit durable.
            let _mode: String =
                connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)).map_err(sqlite_error)?;
            connection.execute_batch("PRAGMA synchronous = FULL;").map_err(sqlite_error)?;
        }
        let mut store = SqliteStore {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            wrote: std::sync::atomic::AtomicBool::new(false),
            bulk_cache: Mutex::new(None),
            writes_index_file: page_reads == PageReads::Mapped,
        };
        if version < known {
            if readonly {
                return Err(StoreError::ReadOnly {
                    path: path.to_path_buf(),
                    detail: "the schema needs upgrading but the file is read-only".into(),
                });
            }
            store.migrate()?;
        }
        Ok(store)
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn migrate(&mut self) -> StoreResult<()> {
        let path = self.path.clone();
        let connection = self.connection.get_mut().unwrap_or_else(|poison| poison.into_inner());
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|err| StoreError::from_sqlite(&path, err))?;
        // Re-read inside the lock: another process may have migrated meanwhile.
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(|err| StoreError::from_sqlite(&path, err))?;
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            tx.execute_batch(sql).map_err(|err| StoreError::from_sqlite(&path, err))?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", index + 1))
                .map_err(|err| StoreError::from_sqlite(&path, err))?;
        }
        tx.commit().map_err(|err| StoreError::from_sqlite(&path, err))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A poisoned lock only means another thread panicked mid-call; SQLite rolled back.
        self.connection.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    fn sqlite_error(&self, err: rusqlite::Error) -> StoreError {
        StoreError::from_sqlite(&self.path, err)
    }

    /// Runs `run` on one `BEGIN IMMEDIATE` transaction, which `run` commits (returning its
    /// value and whether the write generation moved) or drops: any error rolls everything
    /// back.
    pub(crate) fn write<T>(&self, run: impl FnOnce(WriteTx<'_>) -> StoreResult<(T, bool)>) -> StoreResult<T> {
        let mut connection = self.lock();
        let outcome = (|| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| self.sqlite_error(e))?;
            // Readers in other processes see the moved generation in the file: nothing to
            // announce.
            let (value, _moved) = run(WriteTx { tx, path: &self.path, changed: false, store: self, deferred: None })?;
            Ok(value)
        })();
        // A bulk insert's large page cache goes with its transaction (committed or rolled
        // back): the pages it holds are freed, so what the process does next (a tick's writes,
        // its final index update) reuses that memory instead of adding to it.
        // So do its in-memory statement journals (later transactions journal to temp files
        // again) and its cached 900-row insert programs (megabytes each).
        let raised = self.bulk_cache.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        if let Some(size) = raised {
            connection.flush_prepared_statement_cache();
            let _ = connection.execute_batch(&format!(
                "PRAGMA cache_size = {size}; PRAGMA temp_store = DEFAULT; PRAGMA shrink_memory;"
            ));
        }
        outcome
    }

    /// Refreshes the planner's statistics after a bulk load.
    pub(crate) fn analyze(&self) -> StoreResult<()> {
        let connection = self.lock();
        connection.execute_batch("PRAGMA analysis_limit = 1000; ANALYZE;").map_err(|e| self.sqlite_error(e))
    }

    pub(crate) fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        let connection = self.lock();
        get_item(&connection, &self.path, id)
    }

    /// Items newest first. A page of several scopes is read as one ordered index range per
    /// scope, merged (SQLite cannot walk one index in order across an `IN` list, and would
    /// otherwise sort every item of the scopes to return twenty).
    pub(crate) fn list(&self, filter: &ItemFilter) -> StoreResult<Vec<Item>> {
        let (mut sql, mut values) = match (&filter.scopes, filter.limit) {
            (Some(scopes), Some(limit)) if scopes.len() > 1 => {
                let per_scope = filter.offset.saturating_add(limit);
                let mut branches = Vec::new();
                let mut values = Vec::new();
                for scope in scopes {
                    let branch_filter =
                        ItemFilter { scopes: Some(vec![scope.clone()]), limit: None, offset: 0, ..filter.clone() };
                    let (where_sql, mut branch_values) = filter_sql(&branch_filter, "");
                    branches.push(format!(
                        "SELECT * FROM (SELECT {COLUMNS} FROM items{where_sql} ORDER BY updated_at DESC, id DESC LIMIT ?)"
                    ));
                    values.append(&mut branch_values);
                    values.push(Value::Integer(i64::try_from(per_scope).unwrap_or(i64::MAX)));
                }
                (format!("{} ORDER BY updated_at DESC, id DESC", branches.join(" UNION ALL ")), values)
            }
            _ => {
                let (where_sql, values) = filter_sql(filter, "");
                (format!("SELECT {COLUMNS} FROM items{where_sql} ORDER BY updated_at DESC, id DESC"), values)
            }
        };
        push_limit(&mut sql, &mut values, filter);
        let connection = self.lock();
        let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
        let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.sqlite_error(e))?;
        let mut items = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
            items.push(row_to_item(row, 0, &self.path)?);
        }
        Ok(items)
    }

    /// The items of `filter` up to `reach` places before and after each anchor in its source,
    /// in `(created_at, id)` order: two ranges of `items_by_source_created` per anchor. Each
    /// item once, anchors only as another anchor's neighbour.
    pub(crate) fn neighbours(
        &self,
        anchors: &[brain_core::search::Anchor<'_>],
        reach: usize,
        filter: &ItemFilter,
    ) -> StoreResult<Vec<Item>> {
        if anchors.is_empty() || reach == 0 {
            return Ok(Vec::new());
        }
        let filter = ItemFilter { limit: None, offset: 0, ..filter.clone() };
        let (where_sql, filter_values) = filter_sql(&filter, "");
        let joiner = if where_sql.is_empty() { " WHERE" } else { " AND" };
        let side = |comparison: &str, order: &str| {
            format!(
                "SELECT {COLUMNS} FROM items{where_sql}{joiner} source = ? \
                 AND (created_at {comparison} ? OR (created_at = ? AND id {comparison} ?)) \
                 ORDER BY created_at {order}, id {order} LIMIT ?"
            )
        };
        let connection = self.lock();
        let mut items: Vec<Item> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for sql in [side("<", "DESC"), side(">", "ASC")] {
            let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
            for anchor in anchors {
                let created = format_timestamp(anchor.created_at);
                let mut values = filter_values.clone();
                values.extend([
                    Value::Text(anchor.source.to_string()),
                    Value::Text(created.clone()),
                    Value::Text(created),
                    Value::Text(anchor.id.to_string()),
                    Value::Integer(i64::try_from(reach).unwrap_or(i64::MAX)),
                ]);
                let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.sqlite_error(e))?;
                while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
                    let item = row_to_item(row, 0, &self.path)?;
                    if seen.insert(item.id.clone()) {
                        items.push(item);
                    }
                }
            }
        }
        Ok(items)
    }

    pub(crate) fn count(&self, filter: &ItemFilter) -> StoreResult<u64> {
        let (where_sql, values) = filter_sql(filter, "");
        let sql = format!("SELECT count(*) FROM items{where_sql}");
        let connection = self.lock();
        connection
            .query_row(&sql, params_from_iter(values), |row| row.get::<_, i64>(0))
            .map(|count| count as u64)
            .map_err(|e| self.sqlite_error(e))
    }

    /// The best `needed` filtered matches of an FTS expression by `bm25()`, among the newest
    /// `scored` matches. BM25 over every match is the cost that grows with the store (~1–3
    /// µs a match), so only a window of matches is scored: FTS5 walks a term's matches from
    /// the highest rowid down and stops at the window. When the filters leave too few, the
    /// window grows until it covers every match.
    fn ranked(
        &self,
        connection: &Connection,
        match_expression: &str,
        filter: &ItemFilter,
        needed: usize,
        scored: usize,
    ) -> StoreResult<Vec<SearchHit>> {
        let (where_sql, filter_values) = filter_sql(filter, "i.");
        let where_sql = where_sql.replacen(" WHERE ", " AND ", 1);
        let columns: String = COLUMNS.split(", ").map(|c| format!("i.{c}")).collect::<Vec<_>>().join(", ");
        let limit = i64::try_from(needed).unwrap_or(-1);
        let column_count = COLUMNS.split(", ").count();
        // No more matches than needed: every one is a candidate, and scoring them (whose
        // set-up alone walks every word's whole match list) would order them for nothing.
        if !self.window_was_full(connection, match_expression, limit)? {
            let sql = format!(
                "SELECT {columns}, 0.0 FROM (SELECT rowid AS seq FROM items_fts WHERE items_fts MATCH ?1) c \
                 JOIN items i ON i.seq = c.seq WHERE 1{where_sql}"
            );
            let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
            let mut values = vec![Value::Text(match_expression.to_string())];
            values.extend(filter_values.iter().cloned());
            let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.sqlite_error(e))?;
            let mut hits = Vec::new();
            while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
                hits.push(SearchHit { item: row_to_item(row, 0, &self.path)?, score: 0.0 });
            }
            return Ok(hits);
        }
        // Scoring runs on the FTS index alone (rowid and rank, no row data); item rows are
        // then read best first, a batch at a time, and only until `needed` pass the filters:
        // reading a row, not scoring, is the larger cost per candidate.
        let window_sql = format!(
            "SELECT rowid, bm25(items_fts, {BM25_WEIGHTS}) FROM items_fts WHERE items_fts MATCH ?1 \
             ORDER BY rowid DESC LIMIT ?2"
        );
        let batch = needed.saturating_add(needed / 2).max(16);
        let mut window: i64 = scored.max(needed).clamp(64, 1 << 40) as i64;
        loop {
            let mut statement = connection.prepare_cached(&window_sql).map_err(|e| self.sqlite_error(e))?;
            let mut ranked: Vec<(i64, f64)> = statement
                .query_map(rusqlite::params![match_expression, window], |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(|e| self.sqlite_error(e))?
                .collect::<Result<_, _>>()
                .map_err(|e| self.sqlite_error(e))?;
            let every_match = window < 0 || (ranked.len() as i64) < window;
            // SQLite's bm25() is negative (lower is better).
            ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            let mut hits = Vec::new();
            for chunk in ranked.chunks(batch) {
                let marks = vec!["?"; chunk.len()].join(", ");
                let sql = format!("SELECT {columns}, i.seq FROM items i WHERE i.seq IN ({marks}){where_sql}");
                // Cached: chunks have `batch` rows but the last, so two texts at most per stage.
                let mut statement = connection.prepare_cached(&sql).map_err(|e| self.sqlite_error(e))?;
                let mut values: Vec<Value> = chunk.iter().map(|(seq, _)| Value::Integer(*seq)).collect();
                values.extend(filter_values.iter().cloned());
                let mut rows = statement.query(params_from_iter(values)).map_err(|e| self.sqlite_error(e))?;
                let mut found: std::collections::HashMap<i64, Item> = std::collections::HashMap::new();
                while let Some(row) = rows.next().map_err(|e| self.sqlite_error(e))? {
                    let seq: i64 = row.get(column_count).map_err(|e| self.sqlite_error(e))?;
                    found.insert(seq, row_to_item(row, 0, &self.path)?);
                }
                for (seq, rank) in chunk {
                    if let Some(item) = found.remove(seq) {
                        // Report the usual positive form of bm25().
                        hits.push(SearchHit { item, score: -rank });
                    }
                }
                if hits.len() >= needed {
                    hits.truncate(needed);
                    return Ok(hits);
                }
            }
            // The window already held every match: this is the answer.
            if every_match {
                return Ok(hits);
            }
            window = if window >= (1 << 20) { -1 } else { window * 8 };
        }
    }

    /// True when the match has more than `window` rows (so a larger window may add results).
    fn window_was_full(&self, connection: &Connection, match_expression: &str, window: i64) -> StoreResult<bool> {
        let mut statement = connection
            .prepare_cached("SELECT count(*) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ?1 LIMIT ?2)")
            .map_err(|e| self.sqlite_error(e))?;
        let count: i64 = statement
            .query_row(rusqlite::params![match_expression, window + 1], |row| row.get(0))
            .map_err(|e| self.sqlite_error(e))?;
        Ok(count > window)
    }

    /// Bumps access counters (and sets a reinforced strength) without touching `version` or
    /// the write generation: being read is not an edit, must not make an editor's version
    /// stale, and must not invalidate cached documents. With `wait`, gives up after that long
    /// if another process holds the write lock and returns `Ok(false)`: a reader on the
    /// session-start path must never block on bookkeeping.
    pub(crate) fn record_access(
        &self,
        accesses: &[Access],
        now: Timestamp,
        wait: Option<Duration>,
    ) -> StoreResult<bool> {
        if accesses.is_empty() {
            return Ok(true);
        }
        let mut connection = self.lock();
        if let Some(wait) = wait {
            connection.busy_timeout(wait).map_err(|e| self.sqlite_error(e))?;
        }
        let outcome = (|| {
            // Bookkeeping need not survive a power cut: no fsync for it (WAL, NORMAL).
            connection.execute_batch("PRAGMA synchronous = NORMAL")?;
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut statement = tx.prepare_cached(
                    "UPDATE items SET access_count = min(access_count + 1, 4294967295), last_accessed_at = ?1, \
                     strength = coalesce(?2, strength) WHERE id = ?3",
                )?;
                let stamp = format_timestamp(now);
                for access in accesses {
                    statement.execute(rusqlite::params![stamp, access.strength.map(f64::from), access.id])?;
                }
            }
            tx.execute(ACCESS_EPOCH_MOVE, [])?;
            tx.commit()
        })();
        if wait.is_some() {
            connection.busy_timeout(DEFAULT_BUSY_TIMEOUT).map_err(|e| self.sqlite_error(e))?;
        }
        connection.execute_batch("PRAGMA synchronous = FULL").map_err(|e| self.sqlite_error(e))?;
        match outcome.map_err(|e| self.sqlite_error(e)) {
            Ok(()) => Ok(true),
            Err(StoreError::Busy { .. }) if wait.is_some() => Ok(false),
            Err(err) => Err(err),
        }
    }

    pub(crate) fn read_stamp(&self) -> StoreResult<ReadStamp> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(
                "SELECT (SELECT value FROM meta WHERE key = 'generation'), \
                 coalesce((SELECT value FROM meta WHERE key = 'access_epoch'), 0)",
            )
            .map_err(|e| self.sqlite_error(e))?;
        statement
            .query_row([], |row| {
                Ok(ReadStamp {
                    generation: row.get::<_, i64>(0)?.max(0) as u64,
                    accesses: row.get::<_, i64>(1)?.max(0) as u64,
                })
            })
            .map_err(|e| self.sqlite_error(e))
    }

    pub(crate) fn generation(&self) -> StoreResult<u64> {
        let connection = self.lock();
        // Cached: `brain serve` reads it on every conditional request.
        let mut statement = connection
            .prepare_cached("SELECT value FROM meta WHERE key = 'generation'")
            .map_err(|e| self.sqlite_error(e))?;
        statement.query_row([], |row| row.get::<_, i64>(0)).map(|value| value as u64).map_err(|e| self.sqlite_error(e))
    }

    /// Every vault-wide value, by key.
    pub(crate) fn vault_values(&self) -> StoreResult<Vec<(String, String)>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached("SELECT key, value FROM vault_state ORDER BY key")
            .map_err(|e| self.sqlite_error(e))?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).map_err(|e| self.sqlite_error(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sqlite_error(e))
    }

    /// Whether any item (of any status) lives in `scope`: one index probe.
    pub(crate) fn has_scope(&self, scope: &brain_core::Scope) -> StoreResult<bool> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM items WHERE scope = ?1)")
            .map_err(|e| self.sqlite_error(e))?;
        statement.query_row([scope.to_string()], |row| row.get::<_, bool>(0)).map_err(|e| self.sqlite_error(e))
    }

    /// Integrity, the search index and the counts. Never waits long for another writer: the
    /// search-index check needs the write lock, and a process holding it (an import, a scan)
    /// is reported as such (`locked`), not as a damaged index.
    pub(crate) fn check(&self) -> StoreResult<StoreStats> {
        let connection = self.lock();
        let error = |e| StoreError::from_sqlite(&self.path, e);
        let mut stats = StoreStats {
            schema_version: connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(error)?,
            journal_mode: connection.query_row("PRAGMA journal_mode", [], |row| row.get(0)).map_err(error)?,
            ..StoreStats::default()
        };
        let mut statement = connection.prepare("PRAGMA integrity_check").map_err(error)?;
        let messages: Vec<String> =
            statement.query_map([], |row| row.get(0)).map_err(error)?.collect::<Result<_, _>>().map_err(error)?;
        stats.problems.extend(messages.into_iter().filter(|m| m != "ok").map(|m| format!("integrity: {m}")));
        connection.busy_timeout(CHECK_LOCK_WAIT).map_err(error)?;
        let fts_check = connection.execute("INSERT INTO items_fts (items_fts) VALUES ('integrity-check')", []);
        connection.busy_timeout(DEFAULT_BUSY_TIMEOUT).map_err(error)?;
        match fts_check.map_err(error) {
            Ok(_) => {}
            Err(StoreError::Busy { .. }) => {
                stats.locked = true;
                stats.problems.push(
                    "the database is locked by another process (a write in progress): the search index was not \
                     checked"
                        .into(),
                );
            }
            Err(err) => stats.problems.push(format!("search index: {err}")),
        }
        stats.items =
            connection.query_row("SELECT count(*) FROM items", [], |row| row.get::<_, i64>(0)).map_err(error)? as u64;
        stats.generation = connection
            .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |row| row.get::<_, i64>(0))
            .map_err(error)? as u64;
        let mut statement =
            connection.prepare("SELECT status, count(*) FROM items GROUP BY status ORDER BY status").map_err(error)?;
        stats.by_status = statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)? as u64)))
            .map_err(error)?
            .collect::<Result<_, _>>()
            .map_err(error)?;
        Ok(stats)
    }

    /// Rebuilds the full-text index from the items (repairs a damaged index).
    pub(crate) fn rebuild_search_index(&self) -> StoreResult<()> {
        let mut connection = self.lock();
        let tx =
            connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| self.sqlite_error(e))?;
        tx.execute("INSERT INTO items_fts (items_fts) VALUES ('rebuild')", []).map_err(|e| self.sqlite_error(e))?;
        tx.commit().map_err(|e| self.sqlite_error(e))
    }
}

/// "unable to open database file" says nothing of why: when the folder refuses new files
/// (read-only, immutable, a read-only mount), SQLite cannot create the `-wal` and `-shm`
/// files it needs beside the database. Probed by creating and removing a file there.
fn cannot_open_diagnosed(path: &Path, err: StoreError) -> StoreError {
    let StoreError::Sqlite { source: rusqlite::Error::SqliteFailure(failure, _), .. } = &err else {
        return err;
    };
    if failure.code != rusqlite::ErrorCode::CannotOpen {
        return err;
    }
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let probe = folder.join(format!(".brain-open-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            err
        }
        Err(why) => StoreError::ReadOnly {
            path: path.to_path_buf(),
            detail: format!(
                "SQLite cannot open it: the folder {} refuses new files ({why}), and SQLite needs to create \
                 {name}-wal and {name}-shm beside it",
                folder.display(),
                name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            ),
        },
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // A process that wrote keeps the planner statistics fresh as the store grows
        // (usually a no-op; bounded work). Readers never write here, and nobody waits for
        // a lock on the way out.
        if !*self.wrote.get_mut() {
            return;
        }
        let connection = self.connection.get_mut().unwrap_or_else(|poison| poison.into_inner());
        let _ = connection.busy_timeout(Duration::ZERO);
        let _ = connection.execute_batch("PRAGMA analysis_limit = 400; PRAGMA optimize;");
    }
}

impl WriteTx<'_> {
    fn error(&self, err: rusqlite::Error) -> StoreError {
        StoreError::from_sqlite(self.path, err)
    }

    /// Moves the write generation when anything changed, then commits. Returns whether the
    /// generation moved.
    pub(crate) fn commit(mut self) -> StoreResult<bool> {
        self.restore_item_indexes()?;
        let changed = self.changed;
        if changed {
            self.tx
                .execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'", [])
                .map_err(|e| self.error(e))?;
        }
        let store = self.store;
        self.tx.commit().map_err(|e| store.sqlite_error(e))?;
        store.wrote.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(changed)
    }

    pub(crate) fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        get_item(&self.tx, self.path, id)
    }

    pub(crate) fn insert(&mut self, item: &Item) -> StoreResult<()> {
        let mut statement = self
            .tx
            .prepare_cached(&format!(
                "INSERT INTO items ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, \
                 ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)"
            ))
            .map_err(|e| self.error(e))?;
        match statement.execute(params_from_iter(item_values(item))) {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(failure, _))
                if failure.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                return Err(StoreError::AlreadyExists { id: item.id.clone() });
            }
            Err(err) => return Err(self.error(err)),
        }
        drop(statement);
        self.changed = true;
        Ok(())
    }

    /// Writes `written` over the stored row of its id if that row still has
    /// `stored_version`. Returns whether it did.
    pub(crate) fn replace(&mut self, written: &Item, stored_version: u64) -> StoreResult<bool> {
        let assignments: String = COLUMNS
            .split(", ")
            .enumerate()
            .skip(1)
            .map(|(index, column)| format!("{column} = ?{}", index + 1))
            .collect::<Vec<_>>()
            .join(", ");
        self.restore_item_indexes()?;
        let sql = format!("UPDATE items SET {assignments} WHERE id = ?1 AND version = ?34");
        let mut values = item_values(written);
        values.push(Value::Integer(stored_version as i64));
        let changed = self.tx.execute(&sql, params_from_iter(values)).map_err(|e| self.error(e))?;
        self.changed |= changed == 1;
        Ok(changed == 1)
    }

    /// Erases an item for good. Returns whether it existed.
    pub(crate) fn delete(&mut self, id: &str) -> StoreResult<bool> {
        self.restore_item_indexes()?;
        let removed = self.tx.execute("DELETE FROM items WHERE id = ?1", [id]).map_err(|e| self.error(e))?;
        self.changed |= removed > 0;
        Ok(removed > 0)
    }
}

fn get_item(connection: &Connection, path: &Path, id: &str) -> StoreResult<Option<Item>> {
    let mut statement = connection
        .prepare_cached(&format!("SELECT {COLUMNS} FROM items WHERE id = ?1"))
        .map_err(|e| StoreError::from_sqlite(path, e))?;
    let row = statement
        .query_row([id], |row| Ok(row_to_item(row, 0, path)))
        .optional()
        .map_err(|e| StoreError::from_sqlite(path, e))?;
    row.transpose()
}

fn push_limit(sql: &mut String, values: &mut Vec<Value>, filter: &ItemFilter) {
    let limit = filter.limit.map(|limit| limit as i64).unwrap_or(-1);
    sql.push_str(" LIMIT ? OFFSET ?");
    values.push(Value::Integer(limit));
    values.push(Value::Integer(filter.offset as i64));
}

/// Builds ` WHERE …` (or an empty string) and its parameters for a filter; `prefix` qualifies
/// column names (`"i."` inside a join). The filter's `limit` and `offset` are not part of it.
fn filter_sql(filter: &ItemFilter, prefix: &str) -> (String, Vec<Value>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let mut any_of = |column: &str, texts: Vec<String>, clauses: &mut Vec<String>| {
        if texts.is_empty() {
            return;
        }
        let marks = vec!["?"; texts.len()].join(", ");
        clauses.push(format!("{prefix}{column} IN ({marks})"));
        values.extend(texts.into_iter().map(Value::Text));
    };
    if let Some(scopes) = &filter.scopes {
        if scopes.is_empty() {
            clauses.push("0".into());
        }
        any_of("scope", scopes.iter().map(Scope::to_string).collect(), &mut clauses);
    }
    any_of("kind", filter.kinds.iter().map(|k| k.as_str().to_string()).collect(), &mut clauses);
    any_of("status", filter.statuses.iter().map(|s| s.as_str().to_string()).collect(), &mut clauses);
    for tag in &filter.tags {
        clauses.push(format!("EXISTS (SELECT 1 FROM json_each({prefix}tags) WHERE value = ?)"));
        values.push(Value::Text(tag.clone()));
    }
    if let Some(key) = &filter.schema_key {
        // The key itself or a key below it: `substr` compares the `key/` prefix exactly (no
        // LIKE wildcards to escape), whatever characters the key holds.
        clauses.push(format!("({prefix}schema_key = ? OR substr({prefix}schema_key, 1, length(?)) = ?)"));
        let below = format!("{key}/");
        values.push(Value::Text(key.clone()));
        values.push(Value::Text(below.clone()));
        values.push(Value::Text(below));
    }
    if let Some(source_prefix) = &filter.source_prefix {
        // A range rather than LIKE: exact for any prefix (no wildcard escaping).
        clauses.push(format!("{prefix}source >= ? AND {prefix}source < ?"));
        values.push(Value::Text(source_prefix.clone()));
        values.push(Value::Text(format!("{source_prefix}\u{10FFFF}")));
    }
    if let Some(source_prefix) = &filter.source_prefix_not {
        clauses.push(format!("({prefix}source < ? OR {prefix}source >= ?)"));
        values.push(Value::Text(source_prefix.clone()));
        values.push(Value::Text(format!("{source_prefix}\u{10FFFF}")));
    }
    if let Some(due) = filter.review_due_by {
        clauses.push(format!("{prefix}review_due_at IS NOT NULL AND {prefix}review_due_at <= ?"));
        values.push(Value::Text(format_timestamp(due)));
    }
    if let Some(count) = filter.min_access_count {
        clauses.push(format!("{prefix}access_count >= ?"));
        values.push(Value::Integer(i64::from(count)));
    }
    if let Some(confidence) = filter.confidence_below {
        clauses.push(format!("{prefix}confidence < ?"));
        values.push(Value::Real(f64::from(confidence)));
    }
    if let Some(pinned) = filter.pinned {
        clauses.push(format!("{prefix}pinned = ?"));
        values.push(Value::Integer(i64::from(pinned)));
    }
    if clauses.is_empty() {
        return (String::new(), values);
    }
    (format!(" WHERE {}", clauses.join(" AND ")), values)
}

fn json_list(values: &[String]) -> Value {
    Value::Text(serde_json::to_string(values).unwrap_or_else(|_| "[]".into()))
}

fn optional_text(value: &Option<String>) -> Value {
    value.as_ref().map_or(Value::Null, |text| Value::Text(text.clone()))
}

fn optional_time(value: Option<Timestamp>) -> Value {
    value.map_or(Value::Null, |time| Value::Text(format_timestamp(time)))
}

/// Column values in `COLUMNS` order.
fn item_values(item: &Item) -> Vec<Value> {
    vec![
        Value::Text(item.id.clone()),
        Value::Text(item.scope.to_string()),
        Value::Text(item.kind.as_str().into()),
        Value::Text(item.schema_key.clone()),
        Value::Text(item.title.clone()),
        Value::Text(item.content.clone()),
        optional_text(&item.rationale),
        Value::Real(f64::from(item.confidence)),
        Value::Integer(i64::from(item.importance)),
        Value::Text(item.status.as_str().into()),
        item.severity.map_or(Value::Null, |s| Value::Text(s.as_str().into())),
        Value::Integer(i64::from(item.pinned)),
        Value::Integer(i64::from(item.pin_priority)),
        Value::Integer(i64::from(item.stable)),
        Value::Real(f64::from(item.strength)),
        Value::Real(f64::from(item.decay_rate)),
        json_list(&item.tags),
        json_list(&item.files),
        json_list(&item.evidence),
        optional_text(&item.dedup_hint),
        optional_text(&item.supersedes),
        optional_text(&item.superseded_by),
        optional_time(item.valid_from),
        optional_time(item.valid_until),
        Value::Text(item.source.clone()),
        Value::Text(format_timestamp(item.created_at)),
        Value::Text(format_timestamp(item.updated_at)),
        optional_time(item.last_accessed_at),
        Value::Integer(i64::from(item.access_count)),
        optional_time(item.review_due_at),
        Value::Integer(i64::from(item.review_count)),
        Value::Integer(i64::from(item.tokens)),
        Value::Integer(item.version as i64),
    ]
}

/// Reads an item from a row whose columns start at `start` in `COLUMNS` order.
fn row_to_item(row: &Row<'_>, start: usize, path: &Path) -> StoreResult<Item> {
    let sql = |err| StoreError::from_sqlite(path, err);
    let id: String = row.get(start).map_err(sql)?;
    let invalid = |detail: String| StoreError::InvalidRow { id: id.clone(), detail };
    let text = |index: usize| -> StoreResult<String> { row.get::<_, String>(start + index).map_err(sql) };
    let optional = |index: usize| -> StoreResult<Option<String>> { row.get(start + index).map_err(sql) };
    let time = |index: usize| -> StoreResult<Timestamp> { parse_timestamp(&text(index)?).map_err(invalid) };
    let optional_time = |index: usize| -> StoreResult<Option<Timestamp>> {
        optional(index)?.map(|t| parse_timestamp(&t).map_err(invalid)).transpose()
    };
    let list = |index: usize| -> StoreResult<Vec<String>> {
        serde_json::from_str(&text(index)?).map_err(|err| invalid(format!("column {index}: {err}")))
    };
    let integer = |index: usize| -> StoreResult<i64> { row.get::<_, i64>(start + index).map_err(sql) };
    let real = |index: usize| -> StoreResult<f64> { row.get::<_, f64>(start + index).map_err(sql) };
    Ok(Item {
        id: id.clone(),
        scope: Scope::parse(&text(1)?).map_err(invalid)?,
        kind: text(2)?.parse().map_err(invalid)?,
        schema_key: text(3)?,
        title: text(4)?,
        content: text(5)?,
        rationale: optional(6)?,
        confidence: real(7)? as f32,
        importance: integer(8)? as u8,
        status: text(9)?.parse().map_err(invalid)?,
        severity: optional(10)?.map(|s| s.parse()).transpose().map_err(invalid)?,
        pinned: integer(11)? != 0,
        pin_priority: integer(12)? as i32,
        stable: integer(13)? != 0,
        strength: real(14)? as f32,
        decay_rate: real(15)? as f32,
        tags: list(16)?,
        files: list(17)?,
        evidence: list(18)?,
        dedup_hint: optional(19)?,
        supersedes: optional(20)?,
        superseded_by: optional(21)?,
        valid_from: optional_time(22)?,
        valid_until: optional_time(23)?,
        source: text(24)?,
        created_at: time(25)?,
        updated_at: time(26)?,
        last_accessed_at: optional_time(27)?,
        // Counts read saturating: one past the largest (a count pushed there, then one more
        // access) wrapped to 0 here and failed every read of the scope on PostgreSQL.
        access_count: crate::saturating_count(integer(28)?),
        review_due_at: optional_time(29)?,
        review_count: crate::saturating_count(integer(30)?),
        tokens: integer(31)? as u32,
        version: integer(32)? as u64,
    })
}
