//! The PostgreSQL backend (fleet mode): one database shared by any number of `brain serve`
//! replicas and CLI processes on any number of machines.
//!
//! One connection per store, through the blocking `postgres` client (each connection runs
//! its own small current-thread runtime, so no async runtime leaks into callers; the server
//! calls stores on blocking threads). A dropped connection is noticed on its next use and
//! replaced: reads retry once on a fresh connection, a write in flight fails with
//! `Unavailable` (the server rolled it back) and the next one reconnects. After a failed
//! connect, calls fail fast for a moment rather than each waiting for the connect timeout.
//!
//! Migrations are versioned (`schema_migrations`) and run in one transaction under an
//! advisory lock, so replicas starting together migrate once. Several brains may share one
//! database in different schemas (`?options=-c search_path=NAME`): locks and notification
//! channels are named after the schema.

pub(crate) mod listen;
pub(crate) mod rows;
pub(crate) mod search;
pub(crate) mod sync;
pub(crate) mod tokens;
pub(crate) mod tx;
pub(crate) mod uses;
pub(crate) mod vectors;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use brain_core::{Item, Scope, Timestamp};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, IsolationLevel, NoTls, Row};

use crate::location::PgLocation;
use crate::{Access, ItemFilter, ReadStamp, StoreError, StoreResult, StoreStats, VaultFileRecord};
use rows::{COLUMNS, Params};
pub(crate) use tx::{ReadTx, WriteTx};
use tx::{Session, StatementCache};

/// The shipped migrations, in order. Never edit one that has shipped: append a new one.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/postgres/0001_init.sql"),
    include_str!("migrations/postgres/0002_tokens.sql"),
    include_str!("migrations/postgres/0003_claims.sql"),
    include_str!("migrations/postgres/0004_vectors.sql"),
    include_str!("migrations/postgres/0005_sync.sql"),
    include_str!("migrations/postgres/0006_generation.sql"),
    include_str!("migrations/postgres/0007_fleet.sql"),
    include_str!("migrations/postgres/0008_vault_state_bytes.sql"),
    include_str!("migrations/postgres/0009_kind_index.sql"),
    include_str!("migrations/postgres/0010_source_index.sql"),
    include_str!("migrations/postgres/0011_item_use.sql"),
    include_str!("migrations/postgres/0012_token_review.sql"),
];

/// The write generation: the sum of the counters (see migration 6), in one snapshot.
pub(crate) const GENERATION_SQL: &str = "SELECT coalesce(sum(value), 0)::bigint FROM generation_slots";

/// The write generation and the access epoch (see [`ReadStamp`]), in one snapshot.
const READ_STAMP_SQL: &str = "SELECT (SELECT coalesce(sum(value), 0)::bigint FROM generation_slots), \
     coalesce((SELECT value FROM meta WHERE key = 'access_epoch'), 0)::bigint";

/// What a store handle's own committed writes moved the generation to (see
/// [`crate::Store::take_committed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Committed {
    /// A generation that includes every write this handle has committed.
    Generation(u64),
    /// Committed, but the generation after it could not be read (nor announced): the
    /// connection failed right after the commit.
    Unknown,
}

/// Waiting for a connection when the URL sets no `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// After a failed connect, calls fail at once for this long instead of each trying again.
const RECONNECT_PAUSE: Duration = Duration::from_millis(250);
/// A connection idle this long is checked (one round trip) before a write trusts it.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// The store's names inside the database: its schema, and the notification channel and
/// advisory lock keys derived from it.
#[derive(Debug)]
pub(crate) struct Namespace {
    pub(crate) schema: String,
    /// The channel every committed write notifies with the new generation.
    pub(crate) channel: String,
}

impl Namespace {
    fn new(schema: &str) -> Namespace {
        let channel = if schema == "public" { "brain_changes".to_string() } else { format!("brain_changes_{schema}") };
        // Channel names are identifiers (at most 63 bytes); a long schema name gets a digest.
        let channel = if channel.len() > 63 { format!("brain_changes_{:016x}", lock_key(schema, "")) } else { channel };
        Namespace { schema: schema.to_string(), channel }
    }

    /// The advisory lock key of `purpose` (e.g. `migrate`, `tick`) for this schema.
    pub(crate) fn lock_key(&self, purpose: &str) -> i64 {
        lock_key(&self.schema, purpose)
    }
}

/// A stable 64-bit key (FNV-1a): replicas built by different compilers must agree, which
/// std's hasher does not promise.
fn lock_key(schema: &str, purpose: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in "brain:".bytes().chain(schema.bytes()).chain([b':']).chain(purpose.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash as i64
}

/// One open connection and the statements prepared on it.
pub(crate) struct Connection {
    pub(crate) client: Client,
    statements: StatementCache,
    last_used: Instant,
}

impl Connection {
    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error> {
        let statement = match self.statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = self.client.prepare(sql)?;
                self.statements.insert(sql, statement.clone());
                statement
            }
        };
        self.client.query(&statement, params)
    }
}

pub struct PgStore {
    location: PgLocation,
    connection: Mutex<Option<Connection>>,
    pub(crate) namespace: Namespace,
    /// Set when a call saw the connection fail: the next call reconnects.
    broken: AtomicBool,
    /// No connect attempt before this instant (see [`RECONNECT_PAUSE`]).
    paused_until: Mutex<Option<Instant>>,
    /// What the last committed write announced, until taken (see [`Committed`]).
    committed: Mutex<Option<Committed>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("location", &self.location.to_string()).finish()
    }
}

impl PgStore {
    /// Connects, creates the schema named by the connection's `search_path` when it does
    /// not exist, and brings the tables up to date (once, under an advisory lock).
    pub(crate) fn open(location: &PgLocation) -> StoreResult<PgStore> {
        let mut store = PgStore {
            location: location.clone(),
            connection: Mutex::new(None),
            namespace: Namespace::new("public"),
            broken: AtomicBool::new(false),
            paused_until: Mutex::new(None),
            committed: Mutex::new(None),
        };
        let mut connection = store.connect()?;
        let schema = store.ensure_schema(&mut connection)?;
        store.namespace = Namespace::new(&schema);
        store.migrate(&mut connection)?;
        *store.connection.get_mut().unwrap_or_else(|poison| poison.into_inner()) = Some(connection);
        Ok(store)
    }

    /// The database this store uses (printable: no password).
    pub(crate) fn location(&self) -> &PgLocation {
        &self.location
    }

    fn display(&self) -> String {
        self.location.to_string()
    }

    /// Classifies a client error. Connection failures mark the connection for replacement.
    pub(crate) fn error(&self, err: postgres::Error) -> StoreError {
        if is_connection_error(&err) {
            self.broken.store(true, Ordering::Relaxed);
            return StoreError::Unavailable { location: self.display(), detail: err.to_string() };
        }
        let detail = match err.as_db_error() {
            Some(db) => db.message().to_string(),
            None => err.to_string(),
        };
        let code = err.code().cloned();
        match code {
            Some(code)
                if code == SqlState::T_R_DEADLOCK_DETECTED
                    || code == SqlState::LOCK_NOT_AVAILABLE
                    || code == SqlState::T_R_SERIALIZATION_FAILURE =>
            {
                StoreError::Busy { path: PathBuf::from(self.display()), detail }
            }
            Some(code) if code == SqlState::READ_ONLY_SQL_TRANSACTION => {
                StoreError::ReadOnly { path: PathBuf::from(self.display()), detail }
            }
            Some(code) if code == SqlState::INVALID_CATALOG_NAME => StoreError::NoDatabase { location: self.display() },
            _ => StoreError::Postgres { location: self.display(), detail },
        }
    }

    pub(crate) fn connect(&self) -> StoreResult<Connection> {
        let paused = *self.paused_until.lock().unwrap_or_else(|poison| poison.into_inner());
        if paused.is_some_and(|until| Instant::now() < until) {
            return Err(StoreError::Unavailable {
                location: self.display(),
                detail: "the last connection attempt failed moments ago".into(),
            });
        }
        let mut config = (*self.location.config).clone();
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("brain");
        }
        // A peer that vanished without closing the connection is noticed in seconds.
        config.keepalives_idle(Duration::from_secs(30));
        config.tcp_user_timeout(Duration::from_secs(30));
        match config.connect(NoTls) {
            Ok(client) => {
                *self.paused_until.lock().unwrap_or_else(|poison| poison.into_inner()) = None;
                self.broken.store(false, Ordering::Relaxed);
                Ok(Connection { client, statements: StatementCache::default(), last_used: Instant::now() })
            }
            Err(err) => {
                let classified = self.error(err);
                if classified.is_unavailable() {
                    *self.paused_until.lock().unwrap_or_else(|poison| poison.into_inner()) =
                        Some(Instant::now() + RECONNECT_PAUSE);
                }
                Err(classified)
            }
        }
    }

    /// The schema of the connection (`current_schema()`), created when the `search_path`
    /// names one that does not exist yet.
    fn ensure_schema(&self, connection: &mut Connection) -> StoreResult<String> {
        let current: Option<String> = connection
            .client
            .query_one("SELECT current_schema()::text", &[])
            .and_then(|row| row.try_get(0))
            .map_err(|err| self.error(err))?;
        if let Some(schema) = current {
            return Ok(schema);
        }
        let path: String = connection
            .client
            .query_one("SELECT current_setting('search_path')", &[])
            .and_then(|row| row.try_get(0))
            .map_err(|err| self.error(err))?;
        let first = path.split(',').map(|name| name.trim().trim_matches('"')).find(|name| !name.is_empty());
        let Some(schema) = first.filter(|name| *name != "$user") else {
            return Err(StoreError::Postgres {
                location: self.display(),
                detail: format!("the search_path {path:?} names no schema to create"),
            });
        };
        let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
        let mut tx = connection.client.transaction().map_err(|err| self.error(err))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(schema, "migrate")])
            .map_err(|err| self.error(err))?;
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}")).map_err(|err| self.error(err))?;
        tx.commit().map_err(|err| self.error(err))?;
        Ok(schema.to_string())
    }

    /// The applied schema version (0 for an empty schema).
    fn schema_version(&self, client: &mut impl postgres::GenericClient) -> StoreResult<i64> {
        let exists: bool = client
            .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
            .and_then(|row| row.try_get(0))
            .map_err(|err| self.error(err))?;
        if !exists {
            return Ok(0);
        }
        client
            .query_one("SELECT coalesce(max(version), 0)::bigint FROM schema_migrations", &[])
            .and_then(|row| row.try_get(0))
            .map_err(|err| self.error(err))
    }

    fn migrate(&self, connection: &mut Connection) -> StoreResult<()> {
        let known = MIGRATIONS.len() as i64;
        let too_new = |found: i64| StoreError::TooNew { path: PathBuf::from(self.display()), found, known };
        let version = self.schema_version(&mut connection.client)?;
        if version > known {
            return Err(too_new(version));
        }
        if version == known {
            return Ok(());
        }
        let mut tx = connection.client.transaction().map_err(|err| self.error(err))?;
        // Replicas starting together queue here; each re-reads the version inside the lock.
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&self.namespace.lock_key("migrate")])
            .map_err(|err| self.error(err))?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .map_err(|err| self.error(err))?;
        let version = self.schema_version(&mut tx)?;
        if version > known {
            return Err(too_new(version));
        }
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            tx.batch_execute(sql).map_err(|err| self.error(err))?;
            let number = index as i32 + 1;
            tx.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[&number])
                .map_err(|err| self.error(err))?;
        }
        tx.commit().map_err(|err| self.error(err))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Connection>> {
        // A poisoned lock only means another thread panicked mid-call; the server rolled back.
        self.connection.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// The connection, (re)connected when missing, broken, or idle and no longer answering.
    /// Returns whether it is a fresh one.
    fn ensure<'a>(&self, slot: &'a mut Option<Connection>) -> StoreResult<(&'a mut Connection, bool)> {
        let broken = self.broken.swap(false, Ordering::Relaxed);
        let usable = match slot.as_mut() {
            None => false,
            Some(connection) if broken || connection.client.is_closed() => false,
            Some(connection) if connection.last_used.elapsed() > IDLE_CHECK => {
                connection.client.is_valid(CONNECT_TIMEOUT).is_ok()
            }
            Some(_) => true,
        };
        let fresh = !usable;
        if fresh {
            *slot = None;
            *slot = Some(self.connect()?);
        }
        match slot.as_mut() {
            Some(connection) => {
                connection.last_used = Instant::now();
                Ok((connection, fresh))
            }
            None => Err(StoreError::Unavailable { location: self.display(), detail: "no connection".into() }),
        }
    }

    /// Runs a read (safe to repeat) on the connection, once more on a fresh connection if a
    /// reused one turned out to be dead.
    fn run<T>(&self, op: impl Fn(&mut Connection) -> Result<T, postgres::Error>) -> StoreResult<T> {
        let mut slot = self.lock();
        let (connection, fresh) = self.ensure(&mut slot)?;
        match op(connection) {
            Ok(value) => Ok(value),
            Err(err) if !fresh && is_connection_error(&err) => {
                let (connection, _) = self.ensure(&mut slot)?;
                op(connection).map_err(|err| self.error(err))
            }
            Err(err) => Err(self.error(err)),
        }
    }

    /// Rows of a read query.
    fn rows(&self, sql: &str, params: &Params) -> StoreResult<Vec<Row>> {
        self.run(|connection| connection.query(sql, &rows::refs(params)))
    }

    /// Rows of a read query planned for its parameters' values: a statement prepared for
    /// this call only. A statement kept for reuse may get a generic plan after a few runs,
    /// one plan for every value; search needs the plan of its words (an index walk in id
    /// order for a common word, the full-text index for a rare one).
    fn rows_planned_for(&self, sql: &str, params: &Params) -> StoreResult<Vec<Row>> {
        self.run(|connection| connection.client.query(sql, &rows::refs(params)))
    }

    /// The messages of text queries in the simple protocol (one round trip for all of them).
    fn simple(&self, sql: &str) -> StoreResult<Vec<postgres::SimpleQueryMessage>> {
        self.run(|connection| connection.client.simple_query(sql))
    }

    /// Runs `run` on one transaction, which `run` commits (returning its value and whether
    /// the write generation moved) or drops: any error rolls everything back. A write that
    /// moved the generation is then announced.
    pub(crate) fn write<T>(&self, run: impl FnOnce(WriteTx<'_>) -> StoreResult<(T, bool)>) -> StoreResult<T> {
        let mut slot = self.lock();
        let (connection, _) = self.ensure(&mut slot)?;
        let Connection { client, statements, .. } = connection;
        let tx = client.transaction().map_err(|err| self.error(err))?;
        let (value, moved) = run(WriteTx::new(Session::new(tx, statements), self))?;
        if moved {
            let committed = self.announce(client);
            *self.committed.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(committed);
        }
        Ok(value)
    }

    /// Notifies every listener (each replica) that the generation moved, with the generation
    /// as of now (it includes the write just committed), in a transaction of its own right
    /// after the write's commit. A `NOTIFY` inside the write transaction would serialise
    /// every commit of the database behind one lock held through each WAL flush; this one
    /// commits without waiting for the flush (a notification does not outlive a server
    /// crash anyway). The write is committed whatever happens here: a failure only marks the
    /// connection for replacement, and listeners notice the change with their next read of
    /// the generation (see `ChangeFeed`).
    fn announce(&self, client: &mut Client) -> Committed {
        let sql = format!(
            "BEGIN; SET LOCAL synchronous_commit = off; \
             SELECT pg_notify({}, generation::text), generation::text FROM ({GENERATION_SQL}) AS latest (generation); \
             COMMIT",
            quote_literal(&self.namespace.channel)
        );
        let generation = client.simple_query(&sql).map(|messages| {
            messages.iter().find_map(|message| match message {
                postgres::SimpleQueryMessage::Row(row) => row.get(1).and_then(|text| text.parse::<u64>().ok()),
                _ => None,
            })
        });
        match generation {
            Ok(Some(generation)) => Committed::Generation(generation),
            Ok(None) | Err(_) => {
                // Whatever state the connection is in (perhaps inside the aborted
                // transaction), the next call starts on a fresh one.
                self.broken.store(true, Ordering::Relaxed);
                Committed::Unknown
            }
        }
    }

    pub(crate) fn take_committed(&self) -> Option<Committed> {
        self.committed.lock().unwrap_or_else(|poison| poison.into_inner()).take()
    }

    /// Runs `run` on one REPEATABLE READ, READ ONLY transaction: one snapshot throughout.
    /// `run` ends it (see [`ReadTx::finish`]).
    pub(crate) fn read<T>(&self, run: impl FnOnce(ReadTx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        let mut slot = self.lock();
        let (connection, _) = self.ensure(&mut slot)?;
        let Connection { client, statements, .. } = connection;
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|err| self.error(err))?;
        run(ReadTx::new(Session::new(tx, statements), self))
    }

    /// After a bulk load: refreshes the planner's statistics (search reads its estimates
    /// from them, and plans by them) and vacuums, which merges the full-text index's list of
    /// pending entries into the index (every search would scan it otherwise) and marks the
    /// pages all-visible (counts then read the indexes only). Autovacuum would do both,
    /// some time later.
    pub(crate) fn analyze(&self) -> StoreResult<()> {
        self.run(|connection| connection.client.batch_execute("VACUUM (ANALYZE) items"))
    }

    pub(crate) fn get(&self, id: &str) -> StoreResult<Option<Item>> {
        let params: Params = vec![Box::new(id.to_string())];
        let rows = self.rows(&format!("SELECT {COLUMNS} FROM items WHERE id = $1"), &params)?;
        rows.first().map(rows::row_to_item).transpose()
    }

    /// Items newest first.
    pub(crate) fn list(&self, filter: &ItemFilter) -> StoreResult<Vec<Item>> {
        let mut params: Params = Vec::new();
        let where_sql = rows::filter_sql(filter, &mut params);
        let page = rows::page_sql(filter, &mut params);
        let sql = format!("SELECT {COLUMNS} FROM items{where_sql} ORDER BY updated_at DESC, id DESC{page}");
        self.rows(&sql, &params)?.iter().map(rows::row_to_item).collect()
    }

    /// The items of `filter` up to `reach` places before and after each anchor in its source,
    /// in `(created_at, id)` order (see the SQLite backend): two ranges of
    /// `items_by_source_created` per anchor.
    pub(crate) fn neighbours(
        &self,
        anchors: &[brain_core::search::Anchor<'_>],
        reach: usize,
        filter: &ItemFilter,
    ) -> StoreResult<Vec<Item>> {
        let filter = ItemFilter { limit: None, offset: 0, ..filter.clone() };
        let mut items: Vec<Item> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (comparison, order) in [("<", "DESC"), (">", "ASC")] {
            for anchor in anchors.iter().filter(|_| reach > 0) {
                let mut params: Params = Vec::new();
                let where_sql = rows::filter_sql(&filter, &mut params);
                let joiner = if where_sql.is_empty() { " WHERE" } else { " AND" };
                let first = params.len() + 1;
                params.push(Box::new(anchor.source.to_string()));
                params.push(Box::new(rows::whole_seconds(anchor.created_at)));
                params.push(Box::new(anchor.id.to_string()));
                params.push(Box::new(i64::try_from(reach).unwrap_or(i64::MAX)));
                let (source, created, id, limit) = (first, first + 1, first + 2, first + 3);
                let sql = format!(
                    "SELECT {COLUMNS} FROM items{where_sql}{joiner} source = ${source} \
                     AND (created_at, id) {comparison} (${created}, ${id}) \
                     ORDER BY created_at {order}, id {order} LIMIT ${limit}"
                );
                for row in self.rows(&sql, &params)? {
                    let item = rows::row_to_item(&row)?;
                    if seen.insert(item.id.clone()) {
                        items.push(item);
                    }
                }
            }
        }
        Ok(items)
    }

    pub(crate) fn count(&self, filter: &ItemFilter) -> StoreResult<u64> {
        let mut params: Params = Vec::new();
        let where_sql = rows::filter_sql(filter, &mut params);
        let rows = self.rows(&format!("SELECT count(*) FROM items{where_sql}"), &params)?;
        let count: i64 =
            rows.first().map(|row| row.try_get(0)).transpose().map_err(|err| self.error(err))?.unwrap_or(0);
        Ok(count.max(0) as u64)
    }

    /// Bumps access counters (and sets a reinforced strength) without touching `version` or
    /// the write generation. Rows are locked in id order (no deadlock between two of these);
    /// with `wait`, gives up after that long behind another writer and returns `Ok(false)`.
    pub(crate) fn record_access(
        &self,
        accesses: &[Access],
        now: Timestamp,
        wait: Option<Duration>,
    ) -> StoreResult<bool> {
        if accesses.is_empty() {
            return Ok(true);
        }
        let ids: Vec<&str> = accesses.iter().map(|access| access.id.as_str()).collect();
        let strengths: Vec<Option<f32>> = accesses.iter().map(|access| access.strength).collect();
        let stamp = rows::whole_seconds(now);
        let mut slot = self.lock();
        let (connection, _) = self.ensure(&mut slot)?;
        let outcome = (|| -> Result<(), postgres::Error> {
            let mut tx = connection.client.transaction()?;
            // Bookkeeping need not survive a crash of the server: no wait for the WAL flush.
            let mut settings = String::from("SET LOCAL synchronous_commit = off;");
            if let Some(wait) = wait {
                settings.push_str(&format!(" SET LOCAL lock_timeout = '{}ms';", wait.as_millis().max(1)));
            }
            tx.batch_execute(&settings)?;
            tx.execute(
                "WITH given AS (SELECT * FROM unnest($2::text[], $3::real[]) WITH ORDINALITY AS a(id, strength, ordinal)), \
                 grouped AS (SELECT id, count(*) AS n, \
                     (array_agg(strength ORDER BY ordinal DESC) FILTER (WHERE strength IS NOT NULL))[1] AS strength \
                     FROM given GROUP BY id), \
                 locked AS (SELECT i.id FROM items i JOIN grouped g ON g.id = i.id ORDER BY i.id FOR UPDATE OF i) \
                 UPDATE items SET access_count = LEAST(items.access_count + g.n, 4294967295), last_accessed_at = $1, \
                     strength = coalesce(g.strength, items.strength) \
                 FROM grouped g WHERE items.id = g.id AND items.id IN (SELECT id FROM locked)",
                &[&stamp, &ids, &strengths],
            )?;
            // The access epoch (see `ReadStamp`): one row every fold moves, rarely contended.
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('access_epoch', 1) \
                 ON CONFLICT (key) DO UPDATE SET value = meta.value + 1",
                &[],
            )?;
            tx.commit()
        })();
        match outcome {
            Ok(()) => Ok(true),
            Err(err) if wait.is_some() && err.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => Ok(false),
            Err(err) => Err(self.error(err)),
        }
    }

    pub(crate) fn generation(&self) -> StoreResult<u64> {
        let rows = self.rows(GENERATION_SQL, &Vec::new())?;
        let value: i64 =
            rows.first().map(|row| row.try_get(0)).transpose().map_err(|err| self.error(err))?.unwrap_or(0);
        Ok(value.max(0) as u64)
    }

    pub(crate) fn read_stamp(&self) -> StoreResult<ReadStamp> {
        let rows = self.rows(READ_STAMP_SQL, &Vec::new())?;
        let row = rows.first().ok_or_else(|| StoreError::Postgres {
            location: self.display(),
            detail: "the read stamp query returned no row".into(),
        })?;
        let generation: i64 = row.try_get(0).map_err(|err| self.error(err))?;
        let accesses: i64 = row.try_get(1).map_err(|err| self.error(err))?;
        Ok(ReadStamp { generation: generation.max(0) as u64, accesses: accesses.max(0) as u64 })
    }

    pub(crate) fn has_scope(&self, scope: &Scope) -> StoreResult<bool> {
        let params: Params = vec![Box::new(scope.to_string())];
        let rows = self.rows("SELECT EXISTS (SELECT 1 FROM items WHERE scope = $1)", &params)?;
        rows.first()
            .map(|row| row.try_get(0))
            .transpose()
            .map_err(|err| self.error(err))
            .map(|found| found == Some(true))
    }

    pub(crate) fn check(&self) -> StoreResult<StoreStats> {
        let mut slot = self.lock();
        let (connection, _) = self.ensure(&mut slot)?;
        let error = |err| self.error(err);
        let client = &mut connection.client;
        let known = MIGRATIONS.len() as i64;
        let schema_version = self.schema_version(client)?;
        let server: String =
            client.query_one("SHOW server_version", &[]).and_then(|row| row.try_get(0)).map_err(error)?;
        let mut stats = StoreStats {
            schema_version,
            journal_mode: format!("postgresql {server} (schema {})", self.namespace.schema),
            ..StoreStats::default()
        };
        if schema_version != known {
            stats.problems.push(format!("schema version {schema_version}, this build expects {known}"));
        }
        let invalid: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid \
                 WHERE c.oid = to_regclass('items') AND NOT i.indisvalid",
                &[],
            )
            .and_then(|row| row.try_get(0))
            .map_err(error)?;
        if invalid > 0 {
            stats
                .problems
                .push(format!("{invalid} index(es) of items are invalid (rebuild with `brain doctor --repair`)"));
        }
        stats.items = client
            .query_one("SELECT count(*) FROM items", &[])
            .and_then(|row| row.try_get::<_, i64>(0))
            .map_err(error)? as u64;
        stats.generation =
            client.query_one(GENERATION_SQL, &[]).and_then(|row| row.try_get::<_, i64>(0)).map_err(error)? as u64;
        stats.by_status = client
            .query("SELECT status, count(*) FROM items GROUP BY status ORDER BY status", &[])
            .map_err(error)?
            .iter()
            .map(|row| Ok((row.try_get::<_, String>(0)?, row.try_get::<_, i64>(1)? as u64)))
            .collect::<Result<_, postgres::Error>>()
            .map_err(error)?;
        Ok(stats)
    }

    /// Rebuilds the items' indexes (the full-text one among them).
    pub(crate) fn rebuild_search_index(&self) -> StoreResult<()> {
        self.run(|connection| connection.client.batch_execute("REINDEX TABLE items"))
    }

    pub(crate) fn vault_files_each(
        &self,
        with_state: bool,
        visit: &mut dyn FnMut(crate::VaultFileRow<'_>),
    ) -> StoreResult<()> {
        for record in self.vault_files(with_state)? {
            visit(crate::VaultFileRow {
                relpath: &record.relpath,
                size: record.size,
                mtime_ns: record.mtime_ns,
                sha256: &record.sha256,
                state: &record.state,
                diagnostics: &record.diagnostics,
            });
        }
        Ok(())
    }

    pub(crate) fn vault_files(&self, with_state: bool) -> StoreResult<Vec<VaultFileRecord>> {
        let sql = if with_state {
            "SELECT relpath, size, mtime_ns, sha256, state, diagnostics FROM vault_files"
        } else {
            "SELECT relpath, size, mtime_ns, sha256, ''::bytea, diagnostics FROM vault_files"
        };
        let rows = self.rows(sql, &Vec::new())?;
        rows.iter()
            .map(|row| {
                Ok(VaultFileRecord {
                    relpath: row.try_get(0)?,
                    size: row.try_get::<_, i64>(1)?.max(0) as u64,
                    mtime_ns: row.try_get(2)?,
                    sha256: row.try_get(3)?,
                    state: row.try_get(4)?,
                    diagnostics: row.try_get(5)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .map_err(|err| self.error(err))
    }

    pub(crate) fn vault_values(&self) -> StoreResult<Vec<(String, String)>> {
        let rows = self.rows("SELECT key, value FROM vault_state ORDER BY key", &Vec::new())?;
        rows.iter()
            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()
            .map_err(|err| self.error(err))
    }

    pub(crate) fn vault_value(&self, key: &str) -> StoreResult<Option<String>> {
        let params: Params = vec![Box::new(key.to_string())];
        let rows = self.rows("SELECT value FROM vault_state WHERE key = $1", &params)?;
        rows.first().map(|row| row.try_get(0)).transpose().map_err(|err| self.error(err))
    }
}

/// A string literal for SQL text whatever `standard_conforming_strings` says (an `E''`
/// string: backslashes and quotes escaped).
pub(crate) fn quote_literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// True for failures of the connection itself (refused, reset, closed, timed out, the
/// server shutting down or starting up): nothing can have been committed by the failed call.
fn is_connection_error(err: &postgres::Error) -> bool {
    if err.is_closed() {
        return true;
    }
    match err.code() {
        Some(code) => {
            code.code().starts_with("08")
                || *code == SqlState::ADMIN_SHUTDOWN
                || *code == SqlState::CRASH_SHUTDOWN
                || *code == SqlState::CANNOT_CONNECT_NOW
        }
        None => {
            let mut source = std::error::Error::source(err);
            while let Some(cause) = source {
                if cause.is::<std::io::Error>() {
                    return true;
                }
                source = cause.source();
            }
            let text = err.to_string();
            text.contains("timeout") || text.contains("error connecting")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_and_channels_are_stable_and_differ_per_schema() {
        assert_eq!(lock_key("public", "migrate"), lock_key("public", "migrate"));
        assert_ne!(lock_key("public", "migrate"), lock_key("public", "tick"));
        assert_ne!(lock_key("a", "migrate"), lock_key("b", "migrate"));
        // Fixed forever: replicas of different builds must agree on the key.
        assert_eq!(lock_key("public", "migrate"), -3_414_398_230_685_777_479);
        assert_eq!(Namespace::new("public").channel, "brain_changes");
        assert_eq!(Namespace::new("team_a").channel, "brain_changes_team_a");
        assert!(Namespace::new(&"x".repeat(80)).channel.len() <= 63);
    }

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(quote_literal("brain_changes"), "E'brain_changes'");
        assert_eq!(quote_literal(r"it's \x"), r"E'it\'s \\x'");
    }
}
