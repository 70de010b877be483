//! The vault on disk (SPEC §6): `brain vault init`, the incremental `brain vault scan`, and
//! phase 1 of `brain tick` (the keeper). The parsing itself is `brain_core::vault`; this
//! module walks, indexes, decides and writes.
//!
//! - [`init`] creates the compartments of SPEC §6.1.
//! - [`scan_vault`] indexes the vault into the store: every file's parsed state in
//!   `vault_files` (keyed by relpath; unchanged by `(size, mtime_ns)` → not read, changed
//!   stat but same SHA-256 → not parsed), its markers as items (`source = vault:<relpath>`,
//!   ids from `derived_items`, approved, read-only through the API), its arc as an item of
//!   kind `arc`. See [`scan`] for the incremental key.
//! - [`tick`] runs phase 1: heat, pointer notes for promotion and demotion (never copies),
//!   graduation, tombstones, amygdala notes, the five feed files and `health.jsonl`. See
//!   [`tick`] for the guarantees about user files.
//! - [`vault_doctor`] audits the files for drift and repairs what is safe (see `doctor.rs`);
//!   a graduation is crash-safe through the move journal of `moves.rs`.
//! - [`indexed_feed`] is what session start and the brain document read: the feed state the
//!   scan and the tick leave in the store (one row), never a walk of the vault.
//!
//! What the index holds: the user's text as written (no secret redaction: the vault is the
//! user's own file), except `<private>…</private>` blocks, which are dropped before indexing
//! so they never reach an agent. Items of an arc with `project: NAME` are scoped
//! `project/NAME`, all others `global` (so an arc without `project:` is every project's);
//! a signal marked `scope=global` is global too. The feed (hot arcs, signals, inject blocks)
//! is per project: a session of project P sees P's arcs and blocks, those of files without a
//! project, and the signals shared with everyone (`scope=global`, or at or above `[vault]
//! shared_signal_severity`); see [`feed`]. Generated notes (`generated_by:
//! brain-tick`), `*.merged.md` tombstones and the feed folder are not indexed; a second file
//! with an arc's `cluster_id` is reported, and the first by path owns the arc (`brain vault
//! doctor --repair` resolves it).
//!
//! Invariants: a symlink is never followed (nothing outside the vault is read); a user's file
//! is edited only in its `heat:`/`status:` values or by removing a tombstoned signal block
//! (and, by the AI phases of `brain_ai`, in the four edits `ai::apply` lists), atomically,
//! and never when it changed since it was read; `--dry-run` writes nothing at
//! all (no lock file, no store write, no vault or feed file); one tick or scan at a time per
//! home (`<home>/tick.lock`).

pub mod doctor;
pub mod feed;
mod mark;
pub mod moves;
pub mod scan;
mod tick;
mod verify;
pub mod walk;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use brain_api::feed_index::{
    PROJECT_FEED_FILES, indexed_feed, indexed_session_feed, indexed_signals, project_feed_file, vault_projects,
};
pub(crate) use brain_api::fsio;
pub use brain_core::keeper::config::VaultConfig;
pub(crate) use brain_core::keeper::{heat, state, text};
pub use doctor::{DoctorReport, Problem, vault_doctor};
pub use heat::{Health, HealthInputs, HeatInputs, health, heat};
pub use mark::{INBOX_NOTE, MARK_TYPES, MAX_MARK_TEXT_BYTES, MarkOutcome, MarkRequest, mark};
pub use moves::Recovered;
pub use scan::{DiagnosticOut, Progress, ScanReport};
pub use tick::{
    AiStatus, ArcMove, FeedFileChange, Graduation, HealthLine, HeatChange, InboxMove, LaterInput, LaterOutcome,
    LaterPhases, NoteChange, PhaseTiming, Skipped, StepTiming, TickOptions, TickReport, Tombstone, VerifyResult, tick,
};

use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};

/// The feed folder inside a vault (SPEC §6.1); never indexed.
pub const FEED_FOLDER: &str = "brain-feed";

/// The compartments `brain vault init` creates (SPEC §6.1).
pub const COMPARTMENTS: &[&str] = &[
    "clusters",
    "frontal-lobe/conscious",
    "frontal-lobe/unconscious",
    "amygdala",
    "pineal",
    "left",
    "right",
    FEED_FOLDER,
];

/// Where a vault and its feed are.
#[derive(Clone, Debug)]
pub struct Location {
    /// The vault folder, canonical.
    pub root: PathBuf,
    /// The feed folder (`<vault>/brain-feed` unless `--brain-feed`).
    pub feed_dir: PathBuf,
    /// Vault-relative folders the walk does not enter (the feed folders).
    pub skip: Vec<String>,
}

/// The vault folder: `flag` (`--vault`, already absolute), else `[vault] path` (relative to the
/// home), else `<home>/vault`.
pub fn vault_path(brain: &Brain, flag: Option<&Path>) -> PathBuf {
    match (flag, &brain.config().vault.path) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(path)) => brain.home().join(path),
        (None, None) => brain.home().join("vault"),
    }
}

impl Location {
    /// Resolves an existing vault (a missing one is a user error naming the path) and its
    /// feed folder (`feed`, already absolute, else `<vault>/brain-feed`).
    pub fn resolve(brain: &Brain, vault: Option<&Path>, feed: Option<&Path>) -> BrainResult<Location> {
        let root = scan::canonical_root(&vault_path(brain, vault))?;
        let feed_dir = match feed {
            Some(dir) => dir.to_path_buf(),
            None => tick::default_feed_dir(&root),
        };
        if feed_dir.exists() && !feed_dir.is_dir() {
            return Err(BrainError::user(format!("feed folder {} is not a folder", feed_dir.display())));
        }
        let mut skip = vec![FEED_FOLDER.to_string()];
        if let Some(inside) = relative_inside(&root, &feed_dir)
            && !inside.is_empty()
            && !skip.contains(&inside)
        {
            skip.push(inside);
        }
        if relative_inside(&root, &feed_dir).is_some_and(|inside| inside.is_empty()) {
            return Err(BrainError::user("the feed folder cannot be the vault itself"));
        }
        Ok(Location { root, feed_dir, skip })
    }
}

/// `path` relative to `root` (`/`-separated) when it lies inside it. Works for a path that
/// does not exist yet (its nearest existing ancestor is canonicalized).
fn relative_inside(root: &Path, path: &Path) -> Option<String> {
    let mut existing = path.to_path_buf();
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    let canonical = loop {
        if let Ok(canonical) = std::fs::canonicalize(&existing) {
            break canonical;
        }
        tail.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?.to_path_buf();
    };
    let mut full = canonical;
    for part in tail.iter().rev() {
        full.push(part);
    }
    let relative = full.strip_prefix(root).ok()?;
    Some(relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"))
}

/// What `brain vault init` did.
#[derive(Clone, Debug, Serialize)]
pub struct InitReport {
    pub vault: String,
    pub created: Vec<String>,
    pub existing: Vec<String>,
}

/// Creates the vault folder and its compartments; existing ones are left as they are.
pub fn init(path: &Path) -> BrainResult<InitReport> {
    if path.exists() && !path.is_dir() {
        return Err(BrainError::user(format!("{} exists and is not a folder", path.display())));
    }
    let mut report = InitReport { vault: path.display().to_string(), created: Vec::new(), existing: Vec::new() };
    for compartment in COMPARTMENTS {
        let dir = path.join(compartment);
        if dir.is_dir() {
            report.existing.push(compartment.to_string());
            continue;
        }
        std::fs::create_dir_all(&dir)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", dir.display())))?;
        report.created.push(compartment.to_string());
    }
    if let Ok(canonical) = std::fs::canonicalize(path) {
        report.vault = canonical.display().to_string();
    }
    Ok(report)
}

/// `brain vault scan`: indexes the vault (incrementally), refreshes the session feed when
/// something changed, and reports every file's diagnostics.
pub fn scan_vault(brain: &Brain, location: &Location, progress: Progress<'_>) -> BrainResult<ScanReport> {
    let _lock = fsio::lock(brain.home(), true)?;
    let recovered = moves::recover(&location.root);
    let mode = scan::ScanMode { dry_run: false, want_snapshot: false, write_feed: true, progress };
    let mut report = scan::scan(brain, &location.root, &location.skip, &mode)?.report;
    report.recovered = recovered;
    Ok(report)
}

/// Re-indexes the configured vault (incrementally) when there is one; false when there is
/// none or a tick or scan holds it (then the index is as the last one left it).
pub fn refresh_index(brain: &Brain) -> BrainResult<bool> {
    if !vault_path(brain, None).is_dir() {
        return Ok(false);
    }
    scan_unless_busy(brain, &Location::resolve(brain, None, None)?)
}

/// Indexes the vault at `location` (incrementally); false, with nothing done, when a tick or
/// scan holds it (the index is then as the last one left it).
pub(crate) fn scan_unless_busy(brain: &Brain, location: &Location) -> BrainResult<bool> {
    match scan_vault(brain, location, &|_, _| {}) {
        Ok(_) => Ok(true),
        Err(BrainError::User { message, .. }) if message.starts_with(fsio::BUSY) => Ok(false),
        Err(err) => Err(err),
    }
}

/// An indexed arc with its heat at a given time (`GET /api/v2/arcs`).
#[derive(Clone, Debug, Serialize)]
pub struct ArcSummary {
    /// Vault-relative path of the arc's file.
    pub path: String,
    pub id: String,
    pub title: String,
    pub heat: u8,
    pub region: String,
    pub status: String,
    /// The project of the arc (`project:`); absent for an arc of every project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The agent hosts of the arc's sessions (`hosts:` in its frontmatter).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// Every indexed arc of `project` (its own and those without a project; `None`: every
/// arc), hottest first, then newest, then by path. Reads the index only.
pub fn arcs(brain: &Brain, now: brain_core::Timestamp, project: Option<&str>) -> BrainResult<Vec<ArcSummary>> {
    let snapshot = scan::load_snapshot(brain)?;
    let mut views = feed::arc_views(&snapshot, now);
    if let Some(project) = project {
        views.retain(|view| view.project().is_empty() || view.project() == project);
    }
    views.sort_by(|a, b| b.heat.cmp(&a.heat).then(b.arc.created.cmp(&a.arc.created)).then(a.relpath.cmp(b.relpath)));
    Ok(views
        .iter()
        .map(|view| ArcSummary {
            path: view.relpath.to_string(),
            id: view.arc.cluster_id.clone(),
            title: view.arc.title.clone(),
            hosts: view.arc.hosts.clone(),
            heat: view.heat,
            region: view.region().to_string(),
            status: view.status().to_string(),
            project: Some(view.project().to_string()).filter(|project| !project.is_empty()),
        })
        .collect())
}

/// Frees `value` on a thread of its own. A tick's snapshot is ~100k allocations at 10k arcs:
/// a command about to exit need not wait for them, and a server frees them on another core.
/// When no thread can be started, `value` is freed here.
pub(crate) fn free_in_background<T: Send + 'static>(value: T) {
    // A failed spawn drops the closure, and `value` with it.
    let _ = std::thread::Builder::new().name("brain-free".into()).spawn(move || drop(value));
}
