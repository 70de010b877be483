//! What every request shares: a pool of opened brains (one store connection each), a probe
//! for the write generation, the brain-document cache, the clock, auth and metrics.
//!
//! The generation is read on every conditional request, so a write through any process or
//! replica is a new ETag everywhere at once. On SQLite that is one indexed read in process.
//! On a database server (fleet mode) it is a round trip, so reads are batched on a thread of
//! their own: a request waits for the next read that *starts* after it arrived (never one
//! already in flight), so it still sees every write acknowledged before it, while one read
//! answers every request that queued meanwhile.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use brain_core::{Scope, Timestamp};
use brain_store::{PageReads, Store, StoreLocation};
use tokio::sync::{Semaphore, broadcast};

use super::auth::Auth;
use super::error::ApiError;
use super::metrics::Metrics;
use brain_api::app::{Brain, Context};
use brain_api::config::{self, ServeConfig};
use brain_api::error::{BrainError, BrainResult};
use brain_api::read_cache::ReadCache;

/// Seconds the server's clock is rounded down to when no `now` is given: the brain document
/// depends on the clock (recency), so rounding keeps its ETag stable between writes.
pub const CLOCK_GRANULARITY_SECS: i64 = 60;

/// Most brain documents kept (one per project, budget and minute).
const CACHE_ENTRIES: usize = 64;

/// An event for `/api/v2/events` subscribers.
#[derive(Clone, Debug)]
pub struct Event {
    pub name: &'static str,
    pub data: serde_json::Value,
    /// Only subscribers who may read every one of these scopes receive the event (none:
    /// everyone).
    pub scopes: Vec<Scope>,
}

/// The cache key of an assembled brain document.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct DocumentKey {
    pub project: String,
    pub now: i64,
    pub budgets: [Option<usize>; 4],
    /// The store's write generation read before assembling: any write moves it.
    pub generation: u64,
}

/// An assembled brain document: its JSON body and hash.
#[derive(Clone, Debug)]
pub struct CachedDocument {
    pub body: Bytes,
    pub brain_hash: String,
}

/// Opened brains handed to blocking tasks one at a time.
pub struct Pool {
    context: Context,
    idle: Mutex<Vec<Brain>>,
    permits: Semaphore,
    /// What session starts read, kept between changes of the store (see `read_cache`).
    reads: Arc<ReadCache>,
    /// `serve --now`: every request's moment is the server's.
    fixed_clock: bool,
}

impl Pool {
    /// Runs `work` on a pooled brain (opened on demand) set to `project` and `now`, on a
    /// blocking thread.
    pub async fn run<T: Send + 'static>(
        self: &Arc<Pool>,
        project: String,
        now: Timestamp,
        work: impl FnOnce(&Brain) -> BrainResult<T> + Send + 'static,
    ) -> Result<T, ApiError> {
        let _permit = self.permits.acquire().await.map_err(|_| BrainError::internal("the server is shutting down"))?;
        let pool = Arc::clone(self);
        let outcome = tokio::task::spawn_blocking(move || {
            let pooled = pool.idle.lock().unwrap_or_else(|poison| poison.into_inner()).pop();
            let mut brain = match pooled {
                Some(brain) => brain,
                None => {
                    let mut brain = Brain::open_with(&pool.context, PageReads::Cached)?;
                    brain.keep_reads(Arc::clone(&pool.reads));
                    brain
                }
            };
            brain.serve_as(project, now);
            if !pool.fixed_clock && chosen_by_caller(now) {
                brain.stop_recording_reads();
            }
            let result = work(&brain);
            pool.idle.lock().unwrap_or_else(|poison| poison.into_inner()).push(brain);
            result
        })
        .await
        .map_err(|err| BrainError::internal(format!("request task failed: {err}")))?;
        Ok(outcome?)
    }
}

/// Whether `now`, a request's moment on a server on the wall clock, is not the wall clock's
/// (rounded by [`AppState::clock`]; a minute passing since is allowed for): the caller's
/// `?now=`.
fn chosen_by_caller(now: Timestamp) -> bool {
    (Timestamp::now().as_second() - now.as_second()).abs() > 2 * CLOCK_GRANULARITY_SECS
}

/// The server's shared state.
pub struct AppState {
    pub context: Context,
    /// The project of requests that name none.
    pub default_project: String,
    /// `serve --now`: a fixed clock (tests); otherwise the wall clock, rounded.
    pub fixed_now: Option<Timestamp>,
    pub config: ServeConfig,
    pub pool: Arc<Pool>,
    /// Reads the write generation (on every conditional GET).
    probe: Probe,
    /// Where the store lives (for connections of their own: the change follower).
    pub location: StoreLocation,
    documents: Mutex<HashMap<DocumentKey, CachedDocument>>,
    /// One brain document assembly at a time: bounds memory and lets waiters use the result.
    pub assembly: tokio::sync::Mutex<()>,
    known_projects: Mutex<HashSet<String>>,
    pub auth: Arc<Auth>,
    pub metrics: Arc<Metrics>,
    pub events: broadcast::Sender<Event>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").field("home", &self.context.home).finish()
    }
}

impl AppState {
    pub fn new(context: Context, fixed_now: Option<Timestamp>) -> BrainResult<AppState> {
        // Opening one brain up front checks the home, the database and the config (tokens
        // included) before the server listens; it becomes the pool's first connection.
        let mut brain = open_waiting_for_the_database(&context)?;
        let reads = Arc::new(ReadCache::new());
        brain.keep_reads(Arc::clone(&reads));
        let config = brain.config().serve.clone();
        let auth = Auth::from_config(&config.tokens)?;
        auth.set_stored(&brain_api::tokens::stored(&brain)?);
        let default_project = brain.project().to_string();
        let location = brain.store_location();
        let store = Store::open(&location, false, PageReads::Cached)?;
        let probe = if store.is_shared() {
            Probe::Shared(GenerationReader::start(store))
        } else {
            Probe::Local(Mutex::new(store))
        };
        let pool_size = config.pool_size.clamp(1, 64);
        let pool = Arc::new(Pool {
            context: context.clone(),
            idle: Mutex::new(vec![brain]),
            permits: Semaphore::new(pool_size),
            reads,
            fixed_clock: fixed_now.is_some(),
        });
        let (events, _) = broadcast::channel(256);
        Ok(AppState {
            context,
            default_project,
            fixed_now,
            config,
            pool,
            probe,
            location,
            documents: Mutex::new(HashMap::new()),
            assembly: tokio::sync::Mutex::new(()),
            known_projects: Mutex::new(HashSet::new()),
            auth: Arc::new(auth),
            metrics: Arc::new(Metrics::new()),
            events,
        })
    }

    /// Whether a request may set its clock (`now`): on a server started with `--now` (tests,
    /// demos), always; otherwise only a read (GET, HEAD). A write at a chosen time dated
    /// items 9999 (first in every newest-first list, "recent" forever, a signal never stale).
    pub fn may_set_clock(&self, method: &axum::http::Method) -> bool {
        self.fixed_now.is_some() || matches!(*method, axum::http::Method::GET | axum::http::Method::HEAD)
    }

    /// The clock of a request: its `now` parameter, else `serve --now`, else the wall clock
    /// rounded down to the minute.
    pub fn clock(&self, requested: Option<&str>) -> Result<Timestamp, ApiError> {
        if let Some(text) = requested {
            return brain_core::time::parse_timestamp(text)
                .map_err(|err| ApiError::bad_request(format!("invalid now {text:?}: {err} (use RFC 3339)")));
        }
        if let Some(now) = self.fixed_now {
            return Ok(now);
        }
        let seconds = Timestamp::now().as_second();
        Timestamp::from_second(seconds - seconds.rem_euclid(CLOCK_GRANULARITY_SECS))
            .map_err(|err| BrainError::internal(format!("clock: {err}")).into())
    }

    /// The project a request names (validated), or the default one.
    pub fn project(&self, requested: Option<&str>) -> Result<String, ApiError> {
        match requested.map(str::trim).filter(|name| !name.is_empty()) {
            None => Ok(self.default_project.clone()),
            Some(name) => config::resolve_project(Some(name), None, &self.context.cwd).map_err(ApiError::from),
        }
    }

    /// The store's write generation: as of now, whatever process or replica wrote last.
    pub async fn generation(&self) -> Result<u64, ApiError> {
        match &self.probe {
            Probe::Local(store) => {
                let store = store.lock().unwrap_or_else(|poison| poison.into_inner());
                Ok(store.generation().map_err(BrainError::from)?)
            }
            Probe::Shared(reader) => Ok(reader.read().await?),
        }
    }

    /// Whether the store lives on a database server shared with other replicas.
    pub fn is_shared(&self) -> bool {
        matches!(self.probe, Probe::Shared(_))
    }

    /// 404 for a project the store has never seen (a typo must not look like an empty brain).
    /// A project becomes known with its first item; known names are remembered.
    pub async fn require_known_project(&self, project: &str) -> Result<(), ApiError> {
        if self.known_projects.lock().unwrap_or_else(|poison| poison.into_inner()).contains(project) {
            return Ok(());
        }
        let scope = Scope::Project(project.to_string());
        let known = match &self.probe {
            Probe::Local(store) => {
                let store = store.lock().unwrap_or_else(|poison| poison.into_inner());
                store.has_scope(&scope).map_err(BrainError::from)?
            }
            Probe::Shared(_) => {
                let now = self.clock(None)?;
                self.pool.run(self.default_project.clone(), now, move |brain| brain.has_scope(&scope)).await?
            }
        };
        if !known {
            return Err(ApiError::new(
                axum::http::StatusCode::NOT_FOUND,
                "unknown_project",
                format!("project {project:?} has no items in this brain"),
            )
            .with_hint(format!(
                "check the name; a project starts with its first item (POST /api/v2/items?project={project})"
            )));
        }
        self.known_projects.lock().unwrap_or_else(|poison| poison.into_inner()).insert(project.to_string());
        Ok(())
    }

    pub fn cached_document(&self, key: &DocumentKey) -> Option<CachedDocument> {
        self.documents.lock().unwrap_or_else(|poison| poison.into_inner()).get(key).cloned()
    }

    /// Keeps a document, dropping entries of older generations (they can never match again).
    pub fn cache_document(&self, key: DocumentKey, document: CachedDocument) {
        let mut documents = self.documents.lock().unwrap_or_else(|poison| poison.into_inner());
        documents.retain(|existing, _| existing.generation >= key.generation);
        if documents.len() >= CACHE_ENTRIES {
            documents.clear();
        }
        documents.insert(key, document);
    }

    /// Reloads the store's tokens (called whenever the generation moves: a token may have
    /// been made or revoked by any process). A failure keeps the tokens known so far.
    pub async fn refresh_tokens(&self) {
        let Ok(now) = self.clock(None) else { return };
        let loaded = self.pool.run(self.default_project.clone(), now, brain_api::tokens::stored).await;
        match loaded {
            Ok(records) => self.auth.set_stored(&records),
            Err(err) => eprintln!("brain serve: cannot reload the stored tokens: {}", err.message),
        }
    }

    /// Announces an event to every `/api/v2/events` subscriber (none listening is fine).
    pub fn announce(&self, name: &'static str, data: serde_json::Value) {
        let _ = self.events.send(Event { name, data, scopes: Vec::new() });
    }

    /// Announces an event to the subscribers who may read `scope`.
    pub fn announce_in(&self, name: &'static str, data: serde_json::Value, scope: Scope) {
        let _ = self.events.send(Event { name, data, scopes: vec![scope] });
    }

    /// Announces an event about the whole vault to the subscribers who may read every
    /// project it names (`projects`).
    pub fn announce_vault(&self, name: &'static str, data: serde_json::Value, projects: Vec<String>) {
        let scopes = projects.into_iter().map(Scope::Project).collect();
        let _ = self.events.send(Event { name, data, scopes });
    }
}

/// How the server reads the write generation (see the module docs).
enum Probe {
    /// An embedded store: one indexed read in process, inline.
    Local(Mutex<Store>),
    /// A database server: reads batched on a thread of their own.
    Shared(Arc<GenerationReader>),
}

/// A failed generation read, as every waiter of the batch receives it.
type ReadOutcome = Result<u64, (bool, String)>;

/// Batched generation reads on a thread with its own store connection (see the module docs).
pub struct GenerationReader {
    waiting: Mutex<Vec<tokio::sync::oneshot::Sender<ReadOutcome>>>,
    wake: Condvar,
}

impl GenerationReader {
    fn start(store: Store) -> Arc<GenerationReader> {
        let reader = Arc::new(GenerationReader { waiting: Mutex::new(Vec::new()), wake: Condvar::new() });
        let worker = Arc::clone(&reader);
        // Not joined: it waits on the condition variable when idle and ends with the process.
        std::thread::Builder::new()
            .name("brain-generation".into())
            .spawn(move || worker.serve(&store))
            .map(|_| ())
            .unwrap_or_else(|err| eprintln!("brain serve: cannot start the generation reader: {err}"));
        reader
    }

    fn serve(&self, store: &Store) {
        loop {
            let batch = {
                let mut waiting = self.waiting.lock().unwrap_or_else(|poison| poison.into_inner());
                while waiting.is_empty() {
                    waiting = self.wake.wait(waiting).unwrap_or_else(|poison| poison.into_inner());
                }
                std::mem::take(&mut *waiting)
            };
            // Every waiter of this batch arrived before this read starts.
            let outcome: ReadOutcome =
                store.generation().map_err(|err| (err.is_unavailable(), BrainError::from(err).to_string()));
            for waiter in batch {
                let _ = waiter.send(outcome.clone());
            }
        }
    }

    /// The generation from a read that starts after this call.
    async fn read(&self) -> BrainResult<u64> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.waiting.lock().unwrap_or_else(|poison| poison.into_inner()).push(sender);
        self.wake.notify_one();
        match receiver.await {
            Ok(Ok(generation)) => Ok(generation),
            Ok(Err((true, message))) => Err(BrainError::Unavailable { message }),
            Ok(Err((false, message))) => Err(BrainError::internal(message)),
            Err(_) => Err(BrainError::internal("the generation reader stopped")),
        }
    }
}

/// Opens the brain, waiting for a database server that is not up yet (replicas may start
/// before it) for at most `[serve] database_wait_secs`, saying so on stderr.
fn open_waiting_for_the_database(context: &Context) -> BrainResult<Brain> {
    let wait = config::load(&context.home, &context.cwd, &context.env)
        .map(|loaded| Duration::from_secs(loaded.config.serve.database_wait_secs))
        .unwrap_or_default();
    let started = Instant::now();
    let mut pause = Duration::from_millis(250);
    loop {
        match Brain::open_with(context, PageReads::Cached) {
            Err(BrainError::Unavailable { message }) if started.elapsed() + pause < wait => {
                eprintln!("brain serve: waiting for the database: {message}");
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(5));
            }
            outcome => return outcome,
        }
    }
}
