//! What every request shares: a pool of opened brains (one SQLite connection each), a probe
//! connection for the write generation, the brain-document cache, the clock, auth and
//! metrics.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use brain_core::{Scope, Timestamp};
use brain_store::{PageReads, Store};
use tokio::sync::{Semaphore, broadcast};

use super::auth::Auth;
use super::error::ApiError;
use super::metrics::Metrics;
use crate::app::{Brain, Context};
use crate::config::{self, ServeConfig};
use crate::error::{BrainError, BrainResult};

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
                None => Brain::open_with(&pool.context, PageReads::Cached)?,
            };
            brain.project = project;
            brain.now = now;
            let result = work(&brain);
            pool.idle.lock().unwrap_or_else(|poison| poison.into_inner()).push(brain);
            result
        })
        .await
        .map_err(|err| BrainError::internal(format!("request task failed: {err}")))?;
        Ok(outcome?)
    }
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
    /// A connection of its own for the write generation (read on every conditional GET).
    probe: Mutex<Store>,
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
        let brain = Brain::open_with(&context, PageReads::Cached)?;
        let config = brain.config.serve.clone();
        let auth = Auth::from_config(&config.tokens)?;
        let default_project = brain.project.clone();
        let probe = Store::open_sqlite_with(&crate::app::database_path(&context.home), false, PageReads::Cached)?;
        let pool_size = config.pool_size.clamp(1, 64);
        let pool = Arc::new(Pool {
            context: context.clone(),
            idle: Mutex::new(vec![brain]),
            permits: Semaphore::new(pool_size),
        });
        let (events, _) = broadcast::channel(256);
        Ok(AppState {
            context,
            default_project,
            fixed_now,
            config,
            pool,
            probe: Mutex::new(probe),
            documents: Mutex::new(HashMap::new()),
            assembly: tokio::sync::Mutex::new(()),
            known_projects: Mutex::new(HashSet::new()),
            auth: Arc::new(auth),
            metrics: Arc::new(Metrics::new()),
            events,
        })
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

    /// The store's write generation, from the probe connection.
    pub fn generation(&self) -> Result<u64, ApiError> {
        let probe = self.probe.lock().unwrap_or_else(|poison| poison.into_inner());
        Ok(probe.generation().map_err(BrainError::from)?)
    }

    /// 404 for a project the store has never seen (a typo must not look like an empty brain).
    /// A project becomes known with its first item; known names are remembered.
    pub fn require_known_project(&self, project: &str) -> Result<(), ApiError> {
        if self.known_projects.lock().unwrap_or_else(|poison| poison.into_inner()).contains(project) {
            return Ok(());
        }
        let scope = Scope::Project(project.to_string());
        let known = {
            let probe = self.probe.lock().unwrap_or_else(|poison| poison.into_inner());
            probe.has_scope(&scope).map_err(BrainError::from)?
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

    /// Announces an event to every `/api/v2/events` subscriber (none listening is fine).
    pub fn announce(&self, name: &'static str, data: serde_json::Value) {
        let _ = self.events.send(Event { name, data });
    }
}
