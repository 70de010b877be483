//! The one application API every adapter calls (CLI now; HTTP, MCP and hooks later).
//! Adapters convert input, call one `Brain` method and render the result; rules about
//! items (redaction, validation, token counts, read-only vault items) live here.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use brain_core::assemble::agent::{AGENT_BUDGET, AgentContext, AgentFiles, agent_context};
use brain_core::item::{NewItemContext, new_id};
use brain_core::redact::redact_str;
use brain_core::tokens::TokenCounter;
use brain_core::{Item, ItemDraft, Scope, Status, Timestamp};
use brain_store::{Access, ItemFilter, PageReads, Store, StoreLocation, StoreStats};

use crate::config::{self, Config, DATABASE_FILE};
use crate::error::{BrainError, BrainResult};
pub use crate::fsio::write_atomically;
use crate::read_cache::ReadCache;

/// Everything a command needs to know about where and when it runs.
#[derive(Clone, Debug)]
pub struct Context {
    pub home: PathBuf,
    pub cwd: PathBuf,
    /// `--project` or `BRAIN_PROJECT`.
    pub project: Option<String>,
    /// `--now`, else the system clock.
    pub now: Timestamp,
    pub env: config::Environment,
}

impl Context {
    /// The current project of this context with its configuration `loaded`: `--project`, else
    /// the name the folder chose, checked against the folders it is tied to (a first use ties
    /// it; see `config::folders`).
    pub fn project_here(&self, loaded: &config::Loaded) -> BrainResult<config::folders::Tied> {
        self.project_here_recording(loaded, true)
    }

    /// [`Context::project_here`]; with `record` false a first use ties nothing (a dry run
    /// writes nothing under the home).
    pub fn project_here_recording(&self, loaded: &config::Loaded, record: bool) -> BrainResult<config::folders::Tied> {
        let (explicit, from_file) = (self.project.as_deref(), loaded.project_from_file.as_deref());
        config::project_here(&self.home, explicit, from_file, &self.cwd, record)
    }

    /// Fails, pointing at `brain init`, when the home does not exist.
    pub fn require_home(&self) -> BrainResult<()> {
        if self.home.is_dir() {
            return Ok(());
        }
        Err(BrainError::user_with_hint(
            format!("brain home {} does not exist", self.home.display()),
            "create it with `brain init` (or pass --home / set BRAIN_HOME)",
        ))
    }
}

/// An opened brain: home, configuration, project and store.
pub struct Brain {
    pub(crate) home: PathBuf,
    pub(crate) config: Config,
    pub(crate) project: String,
    pub(crate) now: Timestamp,
    pub(crate) store: Store,
    pub(crate) counter: TokenCounter,
    /// Reads kept between changes of the store, shared by a server's connections (see
    /// `crate::read_cache`); `None` in a process that reads once.
    pub(crate) reads: Option<Arc<ReadCache>>,
    /// Whether reads record their accesses (`crate::access_log`): not when the moment is a
    /// remote caller's choice, which would date uses (and the strength kept with them) at it.
    pub(crate) record_reads: bool,
    /// The folder holding the project name this folder chose, when this folder was given a
    /// project of its own instead (`config::folders`).
    pub(crate) project_held_by: Option<PathBuf>,
    /// Why the project ties could not be read (the folder then has a project of its own).
    pub(crate) project_ties_error: Option<String>,
}

/// Outcome of `brain migrate --to`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MigrateReport {
    /// Where the items went (printable: no password).
    pub to: String,
    pub items: usize,
    pub copied: usize,
    pub already_there: usize,
    pub vault_files_copied: usize,
    pub vault_values_copied: usize,
    pub tokens_copied: usize,
}

/// Outcome of an import.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportReport {
    pub imported: usize,
    pub redacted_fields: usize,
}

/// Budget overrides from a caller (flags, query parameters); unset ones come from config.
#[derive(Clone, Debug, Default)]
pub struct BudgetOverrides {
    pub token_budget: Option<usize>,
    pub layer0: Option<usize>,
    pub layer1: Option<usize>,
    pub layer2: Option<usize>,
}

/// What a session start asks for (flags, query parameters, hook input).
#[derive(Clone, Debug, Default)]
pub struct SessionRequest {
    pub topics: Option<String>,
    pub task: Option<String>,
    /// How many items to recall (default 5).
    pub top: usize,
    /// Character cap of the text form (hooks: 9500).
    pub max_chars: Option<usize>,
    /// Byte cap of the text form (Codex counts bytes): the character cap narrows until the
    /// UTF-8 text fits, within one session start (one read, one reinforcement).
    pub max_bytes: Option<usize>,
    /// A total token budget replacing the configured one; the section budgets scale with it.
    pub token_budget: Option<usize>,
}

/// File name of the session-start budgets (SPEC §4.2).
pub const SESSION_CONFIG_FILE: &str = "config.json";

/// Outcome of `brain embed`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EmbedReport {
    pub model: String,
    /// Items without a vector of the model when the run started.
    pub pending: u64,
    pub embedded: u64,
    pub seconds: f64,
    pub per_second: f64,
}

/// Outcome of `inject`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct InjectOutcome {
    pub path: String,
    /// False when the file already held exactly this block (nothing was written).
    pub changed: bool,
    pub tokens: usize,
}

/// Outcome of `doctor`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DoctorReport {
    pub home: String,
    pub database: String,
    pub project: String,
    pub tokenizer: String,
    pub schema_version: i64,
    pub items: u64,
    pub generation: u64,
    pub by_status: Vec<(String, u64)>,
    pub journal_mode: String,
    pub problems: Vec<String>,
    /// Another process held the write lock: the search index was not checked.
    pub locked: bool,
}

impl Brain {
    /// Creates the home (and its database and commented config) when missing. Idempotent.
    pub fn init(context: &Context) -> BrainResult<Brain> {
        std::fs::create_dir_all(&context.home)
            .map_err(|err| BrainError::user(format!("cannot create brain home {}: {err}", context.home.display())))?;
        let config_path = context.home.join(config::USER_CONFIG_FILE);
        if !config_path.exists() {
            std::fs::write(&config_path, config::DEFAULT_USER_CONFIG)
                .map_err(|err| BrainError::user(format!("cannot write {}: {err}", config_path.display())))?;
        }
        Brain::open_store(context, true, PageReads::Mapped, None)
    }

    /// Opens an existing home; a missing home is a user error pointing at `brain init`.
    /// Pages are memory-mapped (the hook path); see [`Brain::open_with`].
    pub fn open(context: &Context) -> BrainResult<Brain> {
        Brain::open_with(context, PageReads::Mapped)
    }

    /// `open`, reading the store's pages the given way: long-running processes and
    /// commands that list a whole session use [`PageReads::Cached`] (small resident memory
    /// on big stores, no slower for them).
    pub fn open_with(context: &Context, page_reads: PageReads) -> BrainResult<Brain> {
        context.require_home()?;
        Brain::open_store(context, false, page_reads, None)
    }

    /// [`Brain::open`] that records nothing in the home: the project is resolved as it would
    /// be, but a folder's first use does not tie the name to it (`brain setup --dry-run`,
    /// and setup's plan before the user says yes).
    pub fn open_without_recording(context: &Context) -> BrainResult<Brain> {
        context.require_home()?;
        Brain::open_store_recording(context, false, PageReads::Mapped, None, false)
    }

    /// `open` with the configuration the caller already loaded for `context` (a hook reads
    /// it first for its own settings; it is not read twice).
    pub fn open_loaded(context: &Context, loaded: config::Loaded) -> BrainResult<Brain> {
        if !context.home.is_dir() {
            return Brain::open(context);
        }
        Brain::open_store(context, false, PageReads::Mapped, Some(loaded))
    }

    /// Loads the configuration (unless given), then opens the store it names (see
    /// [`store_location`]).
    fn open_store(
        context: &Context,
        create: bool,
        page_reads: PageReads,
        loaded: Option<config::Loaded>,
    ) -> BrainResult<Brain> {
        Brain::open_store_recording(context, create, page_reads, loaded, true)
    }

    /// [`Brain::open_store`]; `record` ties the project to the folder on its first use.
    fn open_store_recording(
        context: &Context,
        create: bool,
        page_reads: PageReads,
        loaded: Option<config::Loaded>,
        record: bool,
    ) -> BrainResult<Brain> {
        let loaded = match loaded {
            Some(loaded) => loaded,
            None => config::load(&context.home, &context.cwd, &context.env)?,
        };
        let location = store_location(&context.home, &context.env, &loaded.config)?;
        let store = Store::open(&location, create, page_reads)?;
        let tied = context.project_here_recording(&loaded, record)?;
        let counter: TokenCounter =
            loaded.config.tokenizer.parse().map_err(|err: String| BrainError::Config { message: err, hint: None })?;
        Ok(Brain {
            home: context.home.clone(),
            config: loaded.config,
            project: tied.project,
            now: context.now,
            store,
            counter,
            reads: None,
            record_reads: true,
            project_held_by: tied.held_by,
            project_ties_error: tied.unreadable,
        })
    }

    /// The current project's scope.
    pub fn project_scope(&self) -> Scope {
        Scope::Project(self.project.clone())
    }

    /// The scopes a session sees: global and the current project.
    pub fn visible_scopes(&self) -> Vec<Scope> {
        vec![Scope::Global, self.project_scope()]
    }

    /// Keeps what session starts read in `cache` between changes of the store (a server
    /// shares one cache among its connections).
    pub fn keep_reads(&mut self, cache: Arc<ReadCache>) {
        self.reads = Some(cache);
    }

    /// The store, for the layers that keep their own records in it: the vault keeper's
    /// index, sync's change log, enrichment's stamps. Adapters (the server, the CLI, the
    /// hooks) call `Brain`'s methods instead; `.ci/layers.py` fails when they reach it.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The brain home.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The effective configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether this folder has a project of its own because another folder holds the name it
    /// chose, or because the ties could not be read (`config::folders`).
    pub fn has_own_project(&self) -> bool {
        self.project_held_by.is_some() || self.project_ties_error.is_some()
    }

    /// The current project.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// "Now" for everything this brain decides (`--now` in tests).
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The same brain at another moment (a long-lived process's clock).
    pub fn set_now(&mut self, now: Timestamp) {
        self.now = now;
    }

    /// The same brain for another project and moment (a server's pooled connection serving
    /// one request).
    pub fn serve_as(&mut self, project: String, now: Timestamp) {
        self.project = project;
        self.project_held_by = None;
        self.project_ties_error = None;
        self.now = now;
        self.record_reads = true;
    }

    /// Reads of this request leave no access behind (see [`Brain::serve_as`]): its moment
    /// was chosen by the caller (`?now=` on a server on the wall clock).
    pub fn stop_recording_reads(&mut self) {
        self.record_reads = false;
    }

    /// The store's write generation: it moves on every committed write, by any process.
    pub fn generation(&self) -> BrainResult<u64> {
        Ok(self.store.generation()?)
    }

    /// Where the store is (printable: no password).
    pub fn store_location(&self) -> StoreLocation {
        self.store.location()
    }

    /// Whether any item is stored in `scope`.
    pub fn has_scope(&self, scope: &Scope) -> BrainResult<bool> {
        Ok(self.store.has_scope(scope)?)
    }

    /// The lock of a job only one process sharing the store runs at a time (`None`: another
    /// holds it).
    pub fn try_lock_job(&self, purpose: &str) -> BrainResult<Option<brain_store::JobLock>> {
        Ok(self.store.try_lock_job(purpose)?)
    }

    /// A value kept beside the vault index (`vault_state`).
    pub fn vault_value(&self, key: &str) -> BrainResult<Option<String>> {
        Ok(self.store.vault_value(key)?)
    }

    pub fn set_vault_value(&self, key: &str, value: &str) -> BrainResult<()> {
        self.store.write(|tx| tx.set_vault_value(key, value))?;
        Ok(())
    }

    /// Claims `key` of `kind` once among every process sharing the store: true for the one
    /// that got it.
    pub fn claim(&self, kind: &str, key: &str) -> BrainResult<bool> {
        let now = self.now;
        Ok(self.store.write(|tx| tx.claim(kind, key, now))?)
    }

    /// Gives a claim back (its work failed; another may take it).
    pub fn release_claim(&self, kind: &str, key: &str) -> BrainResult<bool> {
        Ok(self.store.write(|tx| tx.release_claim(kind, key))?)
    }

    /// The sync conflicts waiting for `brain review`.
    pub fn sync_conflicts(&self) -> BrainResult<Vec<brain_store::SyncConflict>> {
        Ok(self.store.read(|tx| tx.sync_conflicts())?)
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    fn new_item_context(&self, source: &str, status: Status) -> NewItemContext {
        NewItemContext {
            id: new_id(ulid::Ulid::from_datetime(std::time::SystemTime::from(self.now))),
            now: self.now,
            default_scope: self.project_scope(),
            default_source: source.to_string(),
            default_status: status,
        }
    }

    /// Redacts every free-text field, validates, and computes the token estimate: the one
    /// gate every write path passes before anything touches disk. Returns how many fields
    /// the redactor changed.
    pub fn prepare(&self, item: &mut Item) -> BrainResult<usize> {
        // Every free-text field (title, content, rationale, source, files, evidence,
        // dedup_hint, tags, schema_key), redacted before validation so that no error
        // message quotes a secret either.
        let redacted = brain_core::redact::redact_item(item);
        item.title = item.title.trim().to_string();
        item.validate().map_err(|mut err| {
            // A text within its limit can pass it once its secrets are markers: say why.
            if redacted > 0 {
                err.message.push_str(&format!(
                    " once redacted ({redacted} field{} held secrets, each now a [REDACTED:kind] marker, and the markers count)",
                    if redacted == 1 { "" } else { "s" }
                ));
            }
            BrainError::from(err)
        })?;
        item.tokens = u32::try_from(self.counter.count(&item.rendered_text())).unwrap_or(u32::MAX);
        Ok(redacted)
    }

    /// Adds a new item from a draft (`remember`).
    /// Folds pending access bookkeeping into the store; every write path calls it first.
    pub(crate) fn fold_access_log(&self) {
        crate::access_log::fold(&self.home, &self.store);
    }

    pub fn remember(&self, draft: ItemDraft, source: &str) -> BrainResult<Item> {
        self.fold_access_log();
        let scheduled = draft.review_due_at.is_some();
        let mut item = draft.into_new_item(self.new_item_context(source, Status::Approved))?;
        severity_of_a_signal(&item)?;
        if !scheduled && !item.stable {
            // A new memory is first due for review a day later (SPEC §5.4).
            item.review_due_at = Some(next_review(self.now, 1));
        }
        self.prepare(&mut item)?;
        self.store.insert(&item)?;
        self.embed_if_warm(&item);
        Ok(item)
    }

    /// In a process that keeps an embedder warm (`brain serve`, `brain mcp`), a written item
    /// gets its vector at once; elsewhere it waits in the backlog for `brain embed`. Never
    /// fails a write: an embedder error leaves the item in the backlog.
    fn embed_if_warm(&self, item: &Item) {
        let Some(embedder) = crate::embed::warm(&self.config.embed) else { return };
        // The text `brain embed` would embed: the store's own job, with the item before it.
        let Ok(Some(job)) = self.store.vector_job(&item.id) else { return };
        if let Ok(mut vectors) = embedder.embed(&[job.text]) {
            let _ = self.store.put_vectors(&embedder.model_id(), &[(job.id, vectors.remove(0))]);
        }
    }

    /// Fills the vectors of every item without one of the configured model (`brain embed`),
    /// one committed batch at a time (an interrupted run resumes). With `dry_run`, only
    /// counts. `progress(done, total)` after each batch.
    pub fn embed(&self, dry_run: bool, progress: &mut dyn FnMut(u64, u64)) -> BrainResult<EmbedReport> {
        let embedder = crate::embed::shared(&self.config.embed)?.ok_or_else(|| {
            BrainError::user_with_hint(
                "no embedder is configured",
                format!("set [embed] provider in {}", self.home.join(config::USER_CONFIG_FILE).display()),
            )
        })?;
        let model = embedder.model_id();
        let pending = self.store.count_vector_backlog(&model)?;
        let mut report = EmbedReport { model: model.clone(), pending, embedded: 0, seconds: 0.0, per_second: 0.0 };
        if dry_run || pending == 0 {
            return Ok(report);
        }
        let started = std::time::Instant::now();
        loop {
            let jobs = self.store.vector_backlog(&model, embedder.batch())?;
            if jobs.is_empty() {
                break;
            }
            let texts: Vec<String> = jobs.iter().map(|job| job.text.clone()).collect();
            let vectors = embedder.embed(&texts).map_err(|err| BrainError::user(err.to_string()))?;
            let rows: Vec<(String, Vec<f32>)> = jobs.into_iter().map(|job| job.id).zip(vectors).collect();
            self.store.put_vectors(&model, &rows)?;
            report.embedded += rows.len() as u64;
            progress(report.embedded, pending.max(report.embedded));
        }
        report.seconds = started.elapsed().as_secs_f64();
        report.per_second = report.embedded as f64 / report.seconds.max(1e-9);
        Ok(report)
    }

    pub fn get(&self, id: &str) -> BrainResult<Item> {
        check_id(id)?;
        self.fold_access_log();
        self.store.get(id)?.ok_or_else(|| BrainError::NotFound {
            message: format!("item {id} not found"),
            hint: Some("list ids with `brain list` or `brain search`".into()),
        })
    }

    /// The item as stored, `None` when there is none — without folding the access log first
    /// (`get` does): the read of a hook's path, which never writes the store.
    pub fn item_as_stored(&self, id: &str) -> BrainResult<Option<Item>> {
        check_id(id)?;
        Ok(self.store.get(id)?)
    }

    pub fn list(&self, filter: &ItemFilter) -> BrainResult<Vec<Item>> {
        Ok(self.store.list(filter)?)
    }

    pub fn count(&self, filter: &ItemFilter) -> BrainResult<u64> {
        Ok(self.store.count(filter)?)
    }

    /// Ranked search (`crate::search`) in the configured mode: one page of `filter.limit`
    /// hits from `filter.offset`. A query with no words is a user error.
    pub fn search(&self, query: &str, filter: &ItemFilter) -> BrainResult<Vec<crate::search::Hit>> {
        self.search_in(query, filter, None)
    }

    /// `search` in `mode` (`None`: `[search] mode`).
    pub fn search_in(
        &self,
        query: &str,
        filter: &ItemFilter,
        mode: Option<crate::search::Mode>,
    ) -> BrainResult<Vec<crate::search::Hit>> {
        let mode = match mode {
            Some(mode) => mode,
            None => crate::search::Mode::parse(&self.config.search.mode)?,
        };
        let parsed = crate::search::parse(query)?;
        let limit = filter.limit.unwrap_or(crate::search::MAX_LIMIT + 1);
        let needed = filter.offset.saturating_add(limit);
        let hits: Vec<crate::search::Hit> =
            crate::search::search(&self.store, &self.config.embed, query, &parsed, filter, needed, mode)?
                .into_iter()
                .skip(filter.offset)
                .collect();
        let accesses: Vec<Access> = hits.iter().map(|hit| Access { id: hit.item.id.clone(), strength: None }).collect();
        // Being found is a use of the memory, recorded without writing to the store.
        if self.record_reads {
            crate::access_log::append(&self.home, &accesses, self.now);
        }
        Ok(hits)
    }

    /// Read-modify-write of one item in one transaction. `expected_version` turns a stale
    /// read into a conflict. Vault-derived items are read-only here.
    fn modify(
        &self,
        id: &str,
        expected_version: Option<u64>,
        change: impl FnOnce(&mut Item) -> BrainResult<()>,
    ) -> BrainResult<Item> {
        self.modify_guarded(id, expected_version, &|_| Ok(()), change)
    }

    /// `modify` with a `guard` run on the stored item and again on the changed one, inside
    /// the transaction (the HTTP API's scope grants): a guard error leaves the item as it was.
    fn modify_guarded(
        &self,
        id: &str,
        expected_version: Option<u64>,
        guard: &dyn Fn(&Item) -> BrainResult<()>,
        change: impl FnOnce(&mut Item) -> BrainResult<()>,
    ) -> BrainResult<Item> {
        check_id(id)?;
        self.fold_access_log();
        let mut outcome: BrainResult<()> = Ok(());
        let written = self.store.write(|tx| {
            let mut item = tx.require(id)?;
            let checked = guard(&item).and_then(|()| match item.source.strip_prefix("vault:") {
                Some(path) => Err(BrainError::user_with_hint(
                    format!("item {id} comes from the vault and is read-only here"),
                    format!("edit the file {path}"),
                )),
                None => Ok(()),
            });
            let changed = checked
                .and_then(|()| change(&mut item))
                .and_then(|()| guard(&item))
                .and_then(|()| self.prepare(&mut item).map(|_| ()));
            if let Err(err) = changed {
                outcome = Err(err);
                return Ok(None);
            }
            tx.update(&item, expected_version).map(Some)
        })?;
        outcome?;
        written.ok_or_else(|| BrainError::internal("write produced no item"))
    }

    /// Applies the set fields of a draft (`edit`); `updated_at` moves to now.
    pub fn edit(&self, id: &str, draft: &ItemDraft, expected_version: Option<u64>) -> BrainResult<Item> {
        self.edit_guarded(id, draft, expected_version, &|_| Ok(()))
    }

    /// `edit` with a guard on the item before and after the change (see `modify_guarded`).
    pub fn edit_guarded(
        &self,
        id: &str,
        draft: &ItemDraft,
        expected_version: Option<u64>,
        guard: &dyn Fn(&Item) -> BrainResult<()>,
    ) -> BrainResult<Item> {
        let now = self.now;
        self.modify_guarded(id, expected_version, guard, |item| {
            draft.apply_to(item)?;
            if draft.severity.is_some() {
                severity_of_a_signal(item)?;
            }
            if draft.updated_at.is_none() {
                item.updated_at = now;
            }
            Ok(())
        })
    }

    /// Changes the review status (`approve`, `deprecate`). Status changes do not count as
    /// content edits, so `updated_at` (recency) stays.
    pub fn set_status(&self, id: &str, status: Status) -> BrainResult<Item> {
        self.set_status_guarded(id, status, None, &|_| Ok(()))
    }

    /// `set_status` with an expected version and a guard (see `modify_guarded`).
    pub fn set_status_guarded(
        &self,
        id: &str,
        status: Status,
        expected_version: Option<u64>,
        guard: &dyn Fn(&Item) -> BrainResult<()>,
    ) -> BrainResult<Item> {
        self.modify_guarded(id, expected_version, guard, |item| {
            if item.status == Status::Superseded && status == Status::Approved {
                return Err(BrainError::user(format!(
                    "item {id} is superseded by {}; approve that one instead",
                    item.superseded_by.as_deref().unwrap_or("another item")
                )));
            }
            item.status = status;
            Ok(())
        })
    }

    /// Pins an item (always loaded first at session start). Expired items are never pinned.
    pub fn pin(&self, id: &str, priority: Option<i32>) -> BrainResult<Item> {
        let now = self.now;
        self.modify(id, None, |item| {
            if item.is_expired(now) {
                return Err(BrainError::user_with_hint(
                    format!("item {id} expired (valid_until has passed) and cannot be pinned"),
                    "extend it with `brain edit ID --valid-until …` first",
                ));
            }
            item.pinned = true;
            if let Some(priority) = priority {
                item.pin_priority = priority;
            }
            Ok(())
        })
    }

    pub fn unpin(&self, id: &str) -> BrainResult<Item> {
        self.modify(id, None, |item| {
            item.pinned = false;
            Ok(())
        })
    }

    /// Marks `old` as superseded by `new`, keeping both (history is never deleted).
    pub fn supersede(&self, old_id: &str, new_id: &str) -> BrainResult<(Item, Item)> {
        self.supersede_versioned(old_id, new_id, None, None)
    }

    /// `supersede` only if each item is still at the version given (`None`: any): an edit
    /// made since the caller read them is a `Conflict`, never overwritten (`brain hygiene`).
    pub fn supersede_versioned(
        &self,
        old_id: &str,
        new_id: &str,
        old_version: Option<u64>,
        new_version: Option<u64>,
    ) -> BrainResult<(Item, Item)> {
        self.supersede_guarded(old_id, new_id, old_version, new_version, &|_| Ok(()))
    }

    /// `supersede_versioned` with a guard run in the transaction on both items as stored
    /// (`policy`: the caller's write grant on each).
    pub fn supersede_guarded(
        &self,
        old_id: &str,
        new_id: &str,
        old_version: Option<u64>,
        new_version: Option<u64>,
        guard: &dyn Fn(&Item) -> BrainResult<()>,
    ) -> BrainResult<(Item, Item)> {
        check_id(old_id)?;
        check_id(new_id)?;
        if old_id == new_id {
            return Err(BrainError::user("an item cannot supersede itself"));
        }
        self.fold_access_log();
        let mut outcome: BrainResult<()> = Ok(());
        let pair = self.store.write(|tx| {
            let mut old = tx.require(old_id)?;
            let mut new = tx.require(new_id)?;
            let check = || -> BrainResult<()> {
                for item in [&old, &new] {
                    guard(item)?;
                }
                for item in [&old, &new] {
                    if let Some(path) = item.source.strip_prefix("vault:") {
                        return Err(BrainError::user_with_hint(
                            format!("item {} comes from the vault and is read-only here", item.id),
                            format!("edit the file {path}"),
                        ));
                    }
                }
                if let Some(existing) = old.superseded_by.as_deref().filter(|existing| *existing != new_id) {
                    return Err(BrainError::user(format!("item {old_id} is already superseded by {existing}")));
                }
                if new.status == Status::Superseded {
                    return Err(BrainError::user(format!("item {new_id} is itself superseded")));
                }
                Ok(())
            };
            if let Err(err) = check() {
                outcome = Err(err);
                return Ok(None);
            }
            old.status = Status::Superseded;
            old.superseded_by = Some(new_id.to_string());
            if old.pinned {
                old.pinned = false;
            }
            new.supersedes = Some(old_id.to_string());
            let old = tx.update(&old, old_version)?;
            let new = tx.update(&new, new_version)?;
            Ok(Some((old, new)))
        })?;
        outcome?;
        pair.ok_or_else(|| BrainError::internal("supersede produced no items"))
    }

    /// Soft forget archives the item (kept, searchable with a flag, never injected);
    /// `hard` erases it for good.
    pub fn forget(&self, id: &str, hard: bool) -> BrainResult<Option<Item>> {
        self.forget_guarded(id, hard, None, &|_| Ok(()))
    }

    /// `forget` with an expected version and a guard, both checked in the transaction.
    pub fn forget_guarded(
        &self,
        id: &str,
        hard: bool,
        expected_version: Option<u64>,
        guard: &dyn Fn(&Item) -> BrainResult<()>,
    ) -> BrainResult<Option<Item>> {
        if !hard {
            return self.set_status_guarded(id, Status::Archived, expected_version, guard).map(Some);
        }
        check_id(id)?;
        let mut outcome: BrainResult<()> = Ok(());
        self.store.write(|tx| {
            let item = tx.require(id)?;
            // The guard first: a version conflict would tell a caller that may not read the
            // item its version.
            if let Err(err) = guard(&item) {
                outcome = Err(err);
                return Ok(false);
            }
            if let Some(expected) = expected_version
                && expected != item.version
            {
                return Err(brain_store::StoreError::Conflict { id: id.to_string(), expected, actual: item.version });
            }
            tx.delete(id)
        })?;
        outcome?;
        Ok(None)
    }

    /// Imports JSONL (one item per line, SPEC §7.1), all or nothing: every line is parsed,
    /// validated and redacted first; then one transaction inserts them all. Errors name the
    /// line. `progress(done, total)` reports parsing (`total` = 0) and then inserting.
    pub fn import(&self, reader: impl BufRead, progress: &mut dyn FnMut(usize, usize)) -> BrainResult<ImportReport> {
        self.fold_access_log();
        let mut items: Vec<Item> = Vec::new();
        let mut line_of: HashMap<String, usize> = HashMap::new();
        let mut redacted_fields = 0;
        for (index, line) in reader.split(b'\n').enumerate() {
            let number = index + 1;
            let bytes = line.map_err(|err| BrainError::user(format!("cannot read line {number}: {err}")))?;
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| BrainError::user(format!("line {number}: not valid UTF-8")))?
                .trim();
            if text.is_empty() {
                continue;
            }
            // Messages quote the offending value, which may be a secret: redacted too.
            let line_error =
                |err: &dyn std::fmt::Display| BrainError::user(redact_str(&format!("line {number}: {err}")));
            let draft: ItemDraft =
                serde_json::from_str(text).map_err(|err| line_error(&format_args!("invalid item JSON: {err}")))?;
            let mut item =
                draft.into_new_item(self.new_item_context("cli", Status::Approved)).map_err(|err| line_error(&err))?;
            redacted_fields += self.prepare(&mut item).map_err(|err| line_error(&err))?;
            if let Some(first) = line_of.insert(item.id.clone(), number) {
                return Err(BrainError::user(format!("line {number}: id {} already used on line {first}", item.id)));
            }
            items.push(item);
            if items.len().is_multiple_of(1000) {
                progress(items.len(), 0);
            }
        }
        let total = items.len();
        self.store.insert_all(&items, &mut |done| progress(done, total)).map_err(|err| match &err {
            brain_store::StoreError::AlreadyExists { id } => BrainError::user_with_hint(
                format!("line {}: item {id} already exists in the store; nothing was imported", line_of[id]),
                "remove the existing item or the line, then import again",
            ),
            _ => BrainError::from(err),
        })?;
        Ok(ImportReport { imported: total, redacted_fields })
    }

    /// Copies this home's store into the store at `url` (a fleet's PostgreSQL, usually): every
    /// item, the vault index and the stored tokens, all or nothing; what the target already
    /// holds is kept, so a second run copies nothing. `progress(done, total)` follows the items.
    pub fn migrate_to(&self, url: &str, progress: &mut dyn FnMut(usize, usize)) -> BrainResult<MigrateReport> {
        let target_location = StoreLocation::parse(url).map_err(|err| BrainError::Config {
            message: format!("--to: {err}"),
            hint: Some("use postgres://USER[:PASSWORD]@HOST:5432/DATABASE, or sqlite:PATH".into()),
        })?;
        let source_location = self.store.location();
        if target_location.to_string() == source_location.to_string() {
            return Err(BrainError::user(format!("{target_location} is this home's own store; nothing to migrate")));
        }
        self.fold_access_log();
        let target = Store::open(&target_location, true, PageReads::Cached)?;
        let report = brain_store::copy_all(&self.store, &target, progress)?;
        Ok(MigrateReport {
            to: target_location.to_string(),
            items: report.items,
            copied: report.copied,
            already_there: report.already_there,
            vault_files_copied: report.vault_files_copied,
            vault_values_copied: report.vault_values_copied,
            tokens_copied: report.tokens_copied,
        })
    }

    /// Writes every item matching `filter` as JSONL, oldest id first. Returns the count.
    pub fn export(&self, filter: &ItemFilter, writer: &mut dyn Write) -> BrainResult<usize> {
        self.fold_access_log();
        let mut items = self.store.list(filter)?;
        items.sort_by(|a, b| a.id.cmp(&b.id));
        for item in &items {
            let line = serde_json::to_string(item).map_err(|err| BrainError::internal(err.to_string()))?;
            // DEL and C1 characters as `\u` escapes: the same JSON, nothing a terminal acts on.
            writer.write_all(crate::output::escape_controls(&line).as_bytes())?;
            writer.write_all(b"\n")?;
        }
        writer.flush()?;
        Ok(items.len())
    }

    /// The agent context (SPEC §4.3) of `agent`, with its `team`'s files and memories, the
    /// memories chosen for `topic`.
    pub fn agent_context(&self, agent: &str, team: Option<&str>, topic: Option<&str>) -> BrainResult<AgentContext> {
        let agent_scope = Scope::parse(&format!("agent/{agent}")).map_err(BrainError::user)?;
        let team_scope =
            team.map(|team| Scope::parse(&format!("team/{team}")).map_err(BrainError::user)).transpose()?;
        let agent_dir = self.home.join("agents").join(agent);
        let read = |path: PathBuf| -> Option<String> { read_text_file(&path) };
        let mut files = AgentFiles {
            identity: read(agent_dir.join("IDENTITY.md")),
            instructions: read(agent_dir.join("INSTRUCTIONS.md")),
            knowledge: read(agent_dir.join("KNOWLEDGE.md")),
            daily: recent_daily_files(&agent_dir.join("daily"), self.now),
            ..AgentFiles::default()
        };
        if let Some(team) = team {
            let team_dir = self.home.join("teams").join(team);
            files.team_goals = read(team_dir.join("GOALS.md"));
            files.team_context = read(team_dir.join("CONTEXT.md"));
            files.team_rules = read(team_dir.join("RULES.md"));
        }
        let team_memories = match &team_scope {
            Some(scope) => self.top_memories(scope, topic)?,
            None => Vec::new(),
        };
        let personal = self.top_memories(&agent_scope, topic)?;
        let team_refs: Vec<&Item> = team_memories.iter().collect();
        let personal_refs: Vec<&Item> = personal.iter().collect();
        Ok(agent_context(&files, &team_refs, &personal_refs, &self.counter, AGENT_BUDGET))
    }

    /// The top 5 memories of a scope for a topic: `0.5 × relevance + 0.3 × importance/5 +
    /// 0.2 × exp(−0.05 × days since last access)`; the most recent 5 without a topic or a match.
    /// An item matched only by the topic's generic words is no match, as in session start.
    fn top_memories(&self, scope: &Scope, topic: Option<&str>) -> BrainResult<Vec<Item>> {
        let filter = ItemFilter {
            scopes: Some(vec![scope.clone()]),
            statuses: vec![Status::Approved],
            limit: Some(50),
            ..ItemFilter::default()
        };
        let query = brain_core::search::Query::parse(topic.unwrap_or(""));
        let mut hits =
            if query.is_empty() { Vec::new() } else { crate::search::lexical(&self.store, &query, &filter, 50)? };
        hits.retain(|hit| !hit.generic_only);
        if hits.is_empty() {
            return Ok(self.store.list(&ItemFilter { limit: Some(5), ..filter })?);
        }
        let best = hits.iter().map(|hit| hit.score).fold(0.0_f64, f64::max);
        let now = self.now;
        let mut scored: Vec<(f64, Item)> = hits
            .into_iter()
            .map(|hit| {
                let relevance = if best > 0.0 { hit.score / best } else { 0.0 };
                let since = hit.item.last_accessed_at.unwrap_or(hit.item.updated_at);
                let days = brain_core::time::age_days(since, now);
                let score = 0.5 * relevance + 0.3 * f64::from(hit.item.importance) / 5.0 + 0.2 * (-0.05 * days).exp();
                (score, hit.item)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
        Ok(scored.into_iter().take(5).map(|(_, item)| item).collect())
    }

    /// Items due for review (SPEC §5.4), earliest due first.
    pub fn review_due(&self, limit: usize) -> BrainResult<Vec<Item>> {
        let mut items = self.store.list(&ItemFilter {
            scopes: Some(self.visible_scopes()),
            statuses: vec![Status::Approved],
            review_due_by: Some(self.now),
            ..ItemFilter::default()
        })?;
        items.sort_by(|a, b| a.review_due_at.cmp(&b.review_due_at).then_with(|| a.id.cmp(&b.id)));
        items.truncate(limit);
        Ok(items)
    }

    /// Puts an item into the review queue (due now) if it is still at `expected_version`; its
    /// content and `updated_at` stay (`brain hygiene`).
    pub fn queue_review(&self, id: &str, expected_version: u64) -> BrainResult<Item> {
        let now = self.now;
        self.modify(id, Some(expected_version), |item| {
            item.review_due_at = Some(now);
            Ok(())
        })
    }

    /// Records a review: `ok` grows the interval (1 day × 2.5^(n−1), n = min(reviews, 10)) and
    /// reinforces the item; a failed review starts the schedule again from one day and
    /// halves its strength.
    pub fn review(&self, id: &str, ok: bool) -> BrainResult<Item> {
        let now = self.now;
        self.modify(id, None, |item| {
            if ok {
                item.review_count = item.review_count.saturating_add(1);
                item.strength = crate::recall::reinforced_strength(item, now);
            } else {
                item.review_count = 0;
                item.strength = (crate::recall::effective_strength(item, now) * 0.5).max(0.05);
            }
            item.review_due_at = Some(next_review(now, item.review_count.max(1)));
            Ok(())
        })
    }

    /// Checks the database, the search index and the configuration.
    /// Writes nothing unless repairing (no access-log fold: it would wait for a writer).
    pub fn doctor(&self, repair: bool) -> BrainResult<DoctorReport> {
        let mut stats: StoreStats = self.store.check()?;
        if repair && !stats.problems.is_empty() && !stats.locked {
            self.store.repair_search_index()?;
            stats = self.store.check()?;
        }
        let mut problems = stats.problems;
        let probe = self.home.join(".doctor-write-test");
        match std::fs::write(&probe, b"ok") {
            Ok(()) => {
                let _ = std::fs::remove_file(&probe);
            }
            Err(err) => problems.push(format!("home {} is not writable: {err}", self.home.display())),
        }
        Ok(DoctorReport {
            home: self.home.display().to_string(),
            database: self.store.location().to_string(),
            project: self.project.clone(),
            tokenizer: self.config.tokenizer.clone(),
            schema_version: stats.schema_version,
            items: stats.items,
            generation: stats.generation,
            by_status: stats.by_status,
            journal_mode: stats.journal_mode,
            problems,
            locked: stats.locked,
        })
    }
}

/// A text file's contents, or `None` when it is missing, not a regular file (symlinks are
/// not followed), larger than 1 MiB or not UTF-8.
fn read_text_file(path: &Path) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > 1 << 20 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// `daily/YYYY-MM-DD.md` files of the 7 days up to `now`, newest first.
fn recent_daily_files(dir: &Path, now: Timestamp) -> Vec<(String, String)> {
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let mut files: Vec<(String, String)> = (0..7)
        .filter_map(|back| today.checked_sub(jiff::Span::new().days(back)).ok())
        .filter_map(|date| {
            let name = date.strftime("%Y-%m-%d").to_string();
            read_text_file(&dir.join(format!("{name}.md"))).map(|text| (name, text))
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0));
    files
}

/// When a review is next due: now + 1 day × 2.5^(n−1), n = min(review_count, 10).
pub fn next_review(now: Timestamp, review_count: u32) -> Timestamp {
    let n = review_count.clamp(1, 10);
    let days = 2.5_f64.powi(n as i32 - 1);
    let seconds = (days * 86_400.0) as i64;
    now.checked_add(jiff::SignedDuration::from_secs(seconds)).unwrap_or(now)
}

/// Rejects malformed ids before they reach the store (and before they could appear in a path).
fn check_id(id: &str) -> BrainResult<()> {
    brain_core::item::validate_id(id)
        .map_err(|err| BrainError::user_with_hint(err.message, "ids look like mem_01JD… (see `brain list`)"))
}

/// Where the store of a home lives: `BRAIN_DATABASE_URL` (or `brain serve --database`),
/// else `[store] url` of the user config, else `<home>/brain.db`. The URL's scheme picks
/// the backend; an invalid one is a configuration error naming where it came from (and
/// never repeating it: it may hold a password).
pub fn store_location(home: &Path, env: &config::Environment, config: &Config) -> BrainResult<StoreLocation> {
    let (url, origin) = match (&env.database_url, &config.store.url) {
        (Some(url), _) => (url, "BRAIN_DATABASE_URL (or --database)"),
        (None, Some(url)) => (url, "[store] url in config.toml"),
        (None, None) => return Ok(StoreLocation::sqlite_file(home, DATABASE_FILE)),
    };
    StoreLocation::parse(url).map_err(|err| BrainError::Config {
        message: format!("{origin}: {err}"),
        hint: Some("use postgres://USER[:PASSWORD]@HOST:5432/DATABASE, or sqlite:PATH".into()),
    })
}

/// A severity is what makes a signal urgent; on another kind it was stored and ignored, so a
/// "critical bug" never reached the urgent signals of a session start. A new item or an edit
/// that sets one on another kind is refused (items already stored keep theirs).
fn severity_of_a_signal(item: &Item) -> BrainResult<()> {
    match item.severity {
        Some(_) if item.kind != brain_core::Kind::Signal => Err(BrainError::user_with_hint(
            format!("a severity applies to signals only; this item is a {}", item.kind),
            "write it as a signal (kind signal, CLI --kind signal) to make it urgent, or without a severity",
        )),
        _ => Ok(()),
    }
}
