//! Session capture (SPEC §6.7): Claude Code transcripts → session summaries → arcs in the
//! vault, in batch (`brain extract`, `brain cluster`, `brain capture`) or one session at a
//! time from a hook ([`capture_session`]).
//!
//! The pipeline: [`transcript`] reads one JSONL file as a stream into a redacted
//! [`SessionSummary`] and a resumable state; [`extract`] finds the transcripts of a window and
//! reads them in parallel; [`cluster`] groups sessions and names arcs; [`write`] maps groups
//! onto existing arcs and writes the files; [`arc`] renders and updates their text; [`store`]
//! keeps the per-session states, the last extract and the lock under `<home>/capture/`.
//! [`hook_input`] reads the object every host's hook writes on stdin (the hooks live in the
//! CLI; the reading is here, beside the transcripts', so the fuzz build needs no server).
//!
//! Invariants: every string written anywhere has been through the redactor; no arc file is
//! written unless its text changed; user text outside the generated block is never touched.

pub mod arc;
pub mod cluster;
pub mod extract;
pub mod hook_input;
pub use brain_core::host;
pub mod lenient;
pub mod store;
pub mod transcript;
pub mod write;

use std::io::Read;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use extract::{ExtractOptions, ExtractReport, Window};
pub use host::Host;
pub use transcript::{LineStats, ReadBudget, SessionState, SessionSummary};
pub use write::{ArcAction, ArcOutcome};

use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};
use store::CaptureLock;

/// The vault capture writes into: `--vault`-less `vault_path` (config `[vault] path`, else `<home>/vault`).
pub fn vault_dir(brain: &Brain) -> PathBuf {
    brain_vault::vault_path(brain, None)
}

/// Where arcs live by default: `<vault>/clusters`.
pub fn clusters_dir(brain: &Brain) -> PathBuf {
    vault_dir(brain).join("clusters")
}

/// The result of clustering.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterReport {
    /// The clusters folder arcs were written under (`<out_dir>/<YYYY-MM-DD>/<id>.md`).
    pub out_dir: String,
    pub sessions: usize,
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub skipped: usize,
    pub arcs: Vec<ArcOutcome>,
}

impl ClusterReport {
    fn new(out_dir: &Path, sessions: usize, arcs: Vec<ArcOutcome>) -> ClusterReport {
        let count = |action: ArcAction| arcs.iter().filter(|arc| arc.action == action).count();
        ClusterReport {
            out_dir: out_dir.to_string_lossy().into_owned(),
            sessions,
            created: count(ArcAction::Created),
            updated: count(ArcAction::Updated),
            unchanged: count(ArcAction::Unchanged),
            skipped: count(ArcAction::Skipped),
            arcs,
        }
    }
}

/// `brain extract`: reads the window's transcripts, saves each session's state and the
/// result as the last extract (what `brain cluster` reads by default).
pub fn run_extract(
    brain: &Brain,
    options: &ExtractOptions,
    on_total: &dyn Fn(usize),
    on_file: &(dyn Fn() + Sync),
) -> BrainResult<ExtractReport> {
    let _lock = CaptureLock::acquire(brain.home(), None)?;
    let report = extract::extract(brain.home(), options, on_total, on_file)?;
    let path = store::last_extract_path(brain.home());
    let bytes = serde_json::to_vec(&report).map_err(|err| BrainError::internal(format!("cannot encode: {err}")))?;
    store::write_atomic(&path, &bytes, false)
        .map_err(|err| BrainError::internal(format!("cannot write {}: {err}", path.display())))?;
    Ok(report)
}

/// The sessions to cluster: from a bundle file (`-` for stdin) in the `brain extract --json`
/// format, else from the last extract. A bundle's text is redacted again: it may come from
/// anywhere.
pub fn load_sessions(brain: &Brain, bundle: Option<&Path>) -> BrainResult<Vec<SessionSummary>> {
    let (text, origin) = match bundle {
        Some(path) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|err| BrainError::user(format!("cannot read the bundle from stdin: {err}")))?;
            (text, "stdin".to_string())
        }
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|err| BrainError::user(format!("cannot read bundle {}: {err}", path.display())))?;
            (text, path.display().to_string())
        }
        None => {
            let path = store::last_extract_path(brain.home());
            match std::fs::read_to_string(&path) {
                Ok(text) => (text, path.display().to_string()),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    return Err(BrainError::user_with_hint(
                        "nothing to cluster: no extract has been made in this brain home",
                        "run `brain extract` first, pass --bundle FILE, or use `brain capture`",
                    ));
                }
                Err(err) => return Err(BrainError::user(format!("cannot read {}: {err}", path.display()))),
            }
        }
    };
    let report: ExtractReport = serde_json::from_str(&text).map_err(|err| {
        BrainError::user_with_hint(
            format!("bundle {origin} is not an extract: {err}"),
            "pass the output of `brain extract --json`",
        )
    })?;
    Ok(report.sessions.into_iter().map(SessionSummary::redacted).collect())
}

/// `brain cluster`: groups `sessions` into arcs and writes them under `out_dir`.
pub fn run_cluster(brain: &Brain, sessions: Vec<SessionSummary>, out_dir: &Path) -> BrainResult<ClusterReport> {
    let _lock = CaptureLock::acquire(brain.home(), None)?;
    brain_api::fsio::sweep_stale_temps(out_dir);
    let refs: Vec<&SessionSummary> = sessions.iter().collect();
    let groups = cluster::group_sessions(&refs);
    let arcs = write::write_groups(brain.home(), out_dir, &sessions, groups, brain.now())?;
    Ok(ClusterReport::new(out_dir, sessions.len(), arcs))
}

/// Options of [`capture_session`].
#[derive(Clone, Debug)]
pub struct SessionCaptureOptions {
    /// A session with fewer prompts gets no arc (yet).
    pub min_turns: u32,
    /// The clusters folder; `None` for the vault's.
    pub clusters_dir: Option<PathBuf>,
    /// How long to wait for a concurrent capture before giving up.
    pub lock_timeout: Duration,
    /// How much of the transcript this call may read (the rest is read by the next one).
    pub budget: ReadBudget,
    /// The host whose transcript it is.
    pub host: Host,
    /// The items the session was given, to find signs of their use while reading.
    pub watch: Option<std::sync::Arc<brain_core::usage::Watch>>,
}

impl Default for SessionCaptureOptions {
    fn default() -> Self {
        SessionCaptureOptions {
            min_turns: extract::DEFAULT_MIN_TURNS,
            clusters_dir: None,
            lock_timeout: Duration::from_secs(2),
            budget: ReadBudget::default(),
            host: Host::ClaudeCode,
            watch: None,
        }
    }
}

/// What [`capture_session`] did.
#[derive(Clone, Debug, Serialize)]
pub struct SessionCaptureOutcome {
    pub session_id: String,
    pub turns: u32,
    /// Bytes of the transcript read by this call (0 when it had not changed).
    pub bytes_read: u64,
    /// The arc written, when the session has enough turns.
    pub arc: Option<ArcOutcome>,
    /// Why no arc was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Reading stopped on its budget: the next capture reads on from there.
    pub pending: bool,
    /// Lines longer than the line bound skipped by this call.
    pub oversized_lines: u64,
    /// The project of the session's working directory.
    pub project: String,
    /// What the session was about: its first prompts (redacted).
    pub task: String,
    /// Signs that the session used what it was given, so far (the first per item).
    pub uses: Vec<brain_core::usage::UseHit>,
}

/// Captures one session (for the Stop and SessionEnd hooks): reads what the transcript
/// gained since the last capture, saves the session's state, and writes the arc of the
/// session and its neighbours (same project, within the gap). Incremental, bounded by a lock
/// timeout, and it never panics: a bug surfaces as an internal error.
pub fn capture_session(
    brain: &Brain,
    transcript_path: &Path,
    options: &SessionCaptureOptions,
) -> BrainResult<SessionCaptureOutcome> {
    std::panic::catch_unwind(AssertUnwindSafe(|| capture_one(brain, transcript_path, options))).unwrap_or_else(
        |panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(BrainError::internal(format!("capture of {} failed (a bug): {message}", transcript_path.display())))
        },
    )
}

fn capture_one(
    brain: &Brain,
    transcript_path: &Path,
    options: &SessionCaptureOptions,
) -> BrainResult<SessionCaptureOutcome> {
    let home = brain.home();
    let _lock = CaptureLock::acquire(home, Some(options.lock_timeout))?;
    let session_id = store::session_id_of(options.host, transcript_path);
    let mut shard = store::Shard::load(home, &store::shard_of(options.host, transcript_path));
    let prior = shard.get(&session_id).cloned();
    let mut projects = extract::ProjectNames::new(home);
    let state = transcript::scan(
        transcript_path,
        options.host,
        &session_id,
        prior.clone(),
        &mut |cwd| projects.name_of(cwd),
        &options.budget,
        options.watch.clone(),
    )
    .map_err(|err| BrainError::user(format!("cannot read transcript {}: {err}", transcript_path.display())))?;
    let bytes_read = state.offset - prior.as_ref().filter(|p| p.offset <= state.offset).map_or(0, |p| p.offset);
    if prior.as_ref() != Some(&state) {
        shard
            .save(home, vec![state.clone()])
            .map_err(|err| BrainError::internal(format!("cannot save the capture state: {err}")))?;
    }
    let pending = state.pending;
    let oversized_before = prior.as_ref().filter(|p| p.offset <= state.offset).map_or(0, |p| p.summary.lines.oversized);
    let oversized_lines = state.summary.lines.oversized.saturating_sub(oversized_before);
    let summary = state.summary;
    let mut outcome = SessionCaptureOutcome {
        session_id,
        turns: summary.turns,
        bytes_read,
        arc: None,
        note: None,
        pending,
        oversized_lines,
        project: summary.project.clone(),
        task: summary.early_prompts.join("\n"),
        uses: state.uses,
    };
    if summary.turns < options.min_turns {
        outcome.note = Some(format!("{} turn(s); an arc needs {}", summary.turns, options.min_turns));
        return Ok(outcome);
    }
    let Some(start) = summary.start else {
        outcome.note = Some("the transcript has no timestamps".into());
        return Ok(outcome);
    };
    // The neighbours: sessions of the same project folder and project in the week before.
    let lookback = jiff::SignedDuration::from_hours(24 * write::LOOKBACK_DAYS);
    let horizon = start.checked_sub(lookback).unwrap_or(start);
    let mut pool: Vec<SessionSummary> = shard
        .states()
        .map(|state| &state.summary)
        .filter(|other| {
            other.project == summary.project
                && other.session_id != summary.session_id
                && other.turns >= options.min_turns
                && other.end.is_some_and(|end| end >= horizon)
        })
        .cloned()
        .collect();
    pool.push(summary);
    let me = pool.len() - 1;
    let refs: Vec<&SessionSummary> = pool.iter().collect();
    let Some(group) = cluster::group_sessions(&refs).into_iter().find(|group| group.contains(&me)) else {
        return Ok(outcome);
    };
    let clusters = options.clusters_dir.clone().unwrap_or_else(|| clusters_dir(brain));
    // What a killed capture left behind goes now (the lock keeps other captures out).
    brain_api::fsio::sweep_stale_temps(&clusters);
    let arcs = write::write_groups(home, &clusters, &pool, vec![group], brain.now())?;
    outcome.arc = arcs.into_iter().next();
    Ok(outcome)
}
