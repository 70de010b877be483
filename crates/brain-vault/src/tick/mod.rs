//! `brain tick`, phase 1 (the keeper, SPEC §6.2–6.5): scan, heat, promotion and demotion as
//! pointer notes, graduation, tombstones, amygdala notes, the feed files and `health.jsonl`.
//!
//! The tick first plans everything from the index (nothing is written while planning), then,
//! unless it is a dry run, applies the plan: user files get only their `heat:`/`status:`
//! rewritten or a tombstoned signal block removed, each through the changed-since-read
//! guard of [`super::fsio`]; generated notes are rewritten only when their bytes change;
//! feed files only when their content changes, except `health.jsonl` (one line per tick) and
//! `last-tick-diff.md` (stamped with the tick's time). Finally the index learns about what
//! was written, in one transaction, so the next tick finds nothing to re-parse.
//!
//! A user file's edit is checked twice: its bytes must still hash to what the scan indexed
//! (else "changed since the scan"), and just before the atomic rename it is read again and
//! compared with the bytes the edit was computed from (else "changed while the tick was
//! updating it"). A graduation writes the new file first (never over an existing one) and
//! removes the original only if it is still byte for byte what was read, under the move
//! journal of [`super::moves`], which the next tick completes should this one be killed
//! between the two steps. Promotion and
//! demotion are pointer notes (`frontal-lobe/{conscious,unconscious}/<stem>.pointer.md`,
//! frontmatter `generated_by: brain-tick`, `cluster_id`, `heat`, a path wikilink to the arc,
//! its summary): promote at `promote_heat`, demote a promoted arc below `demote_heat`,
//! drop the pointer when the arc graduates or disappears. Only generated notes in the folders
//! the tick writes them into are rewritten or removed: a copy kept elsewhere is the user's.
//! A cleared signal (`severity=
//! resolved` with `(CLEARED:` in its text) never shows and its block is removed from the file
//! by the first tick that sees it.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use brain_core::Timestamp;
use brain_core::time::{age_days, format_timestamp};
use brain_core::tokens::TokenCounter;
use brain_core::vault::{DerivedMarker, Diagnostic, derived_items, parse, set_frontmatter_scalar};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde::Serialize;

use super::feed::{
    ActiveSignal, ArcView, FeedCache, FeedState, active_inject_states, active_injects, active_signals, arc_heat,
    arc_views, feed_digest, hot_views, project_hot_views, render_diff, render_hot_arcs, render_injects,
    render_intent_placeholder, render_signals,
};
use super::fsio::{self, read_optional, sha256_hex, write_owned};
use super::heat::{HealthInputs, health};
use super::moves;
use super::scan::{
    ChangedFile, IndexChanges, KeptItems, Progress, ScanMode, ScanReport, Snapshot, apply, overlay, scan,
};
use super::state::{GENERATED_BY, analyze, timestamp};
use super::text::{clip, one_line, redacted, slug, yaml_quoted};
use super::verify::{self, MAX_VERIFY_PER_TICK};
use super::{FEED_FOLDER, Location, free_in_background};
use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};

mod commit;
mod diff;
mod health;
mod plan;
mod pool;
mod render;

pub(crate) use commit::*;
pub(crate) use diff::*;
pub(crate) use health::*;
pub(crate) use plan::*;
pub(crate) use pool::*;
pub(crate) use render::*;

/// Folders of the generated notes.
pub(super) const CONSCIOUS: &str = "frontal-lobe/conscious";
pub(super) const UNCONSCIOUS: &str = "frontal-lobe/unconscious";
pub(crate) const AMYGDALA: &str = "amygdala";
/// The generated dashboard of a date folder under `clusters/`.
pub(crate) const DASHBOARD: &str = "_dashboard.md";

/// How a tick runs.
pub struct TickOptions<'a> {
    pub location: Location,
    /// Plan and print; write nothing anywhere.
    pub dry_run: bool,
    /// `--no-ai`: phase 1 only even when an LLM is configured.
    pub no_ai: bool,
    pub progress: Progress<'a>,
    /// Called with the path of a user file after it was read for an edit and before the edit
    /// is written (tests use it to edit the file in between).
    pub before_write: Option<&'a (dyn Fn(&Path) + Sync)>,
}

/// Whether the AI phases ran.
#[derive(Clone, Debug, Serialize)]
pub struct AiStatus<R> {
    pub ran: bool,
    pub reason: String,
    /// What phases 2–5 did (prompt, tokens, cost, proposals and their outcomes), when they ran
    /// or failed.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub report: Option<R>,
}

/// The phases after phase 1 (the AI phases, 2–5), as the tick runs them: the keeper decides
/// when they run and what they are handed, not what they do.
pub trait LaterPhases {
    /// What they report, flattened into the tick's `ai`.
    type Report: Serialize + Clone + std::fmt::Debug;
    /// Runs them after phase 1 has written its feed. Never fails the tick.
    fn run(&self, brain: &Brain, input: LaterInput<'_>) -> LaterOutcome<Self::Report>;
}

/// What the tick hands the later phases, after phase 1.
pub struct LaterInput<'a> {
    pub location: &'a Location,
    /// The index as phase 1 left it (updated by the later phases with what they write).
    pub snapshot: &'a mut Snapshot,
    pub dry_run: bool,
    pub no_ai: bool,
    /// `last-tick-diff.md` as phase 1 rendered it.
    pub last_diff: &'a str,
}

/// What the tick reports of the later phases.
pub struct LaterOutcome<R> {
    /// Whether they ran, why not, and what they did.
    pub status: AiStatus<R>,
    pub phases: Vec<PhaseTiming>,
}

/// Time spent in one phase (and its steps).
#[derive(Clone, Debug, Serialize)]
pub struct PhaseTiming {
    pub phase: u8,
    pub name: &'static str,
    pub ran: bool,
    pub ms: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepTiming>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StepTiming {
    pub name: &'static str,
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HeatChange {
    pub file: String,
    pub cluster_id: String,
    pub from: Option<u8>,
    pub to: u8,
}

#[derive(Clone, Debug, Serialize)]
pub struct ArcMove {
    pub cluster_id: String,
    pub title: String,
    pub heat: u8,
}

#[derive(Clone, Debug, Serialize)]
pub struct Graduation {
    pub cluster_id: String,
    pub from: String,
    pub to: String,
}

/// An inbox note moved (or, on a dry run, to be moved) into its region folder.
#[derive(Clone, Debug, Serialize)]
pub struct InboxMove {
    pub from: String,
    pub to: String,
    /// The tag that chose the folder (none: the default, `left`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Tombstone {
    pub file: String,
    pub signal: String,
    pub text: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct NoteChange {
    pub path: String,
    /// `write` or `remove`.
    pub action: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct FeedFileChange {
    pub name: String,
    pub changed: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct VerifyResult {
    pub signal: String,
    pub file: String,
    pub command: String,
    pub outcome: String,
}

/// A file the tick left alone, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// One line of `health.jsonl`.
#[derive(Clone, Debug, Serialize)]
pub struct HealthLine {
    pub timestamp: String,
    pub score: u8,
    pub reason: String,
    pub arcs: usize,
    pub signals: usize,
    pub lessons: usize,
    pub edges: usize,
    pub orphans: usize,
    pub duplicates: usize,
}

/// What a tick did (or, with `--dry-run`, would do).
#[derive(Clone, Debug, Serialize)]
pub struct TickReport<R> {
    pub vault: String,
    pub brain_feed: String,
    pub dry_run: bool,
    pub ai: AiStatus<R>,
    pub phases: Vec<PhaseTiming>,
    pub scan: ScanReport,
    pub arcs: usize,
    pub heat_changes: Vec<HeatChange>,
    pub promotions: Vec<ArcMove>,
    pub demotions: Vec<ArcMove>,
    pub graduations: Vec<Graduation>,
    pub inbox: Vec<InboxMove>,
    pub tombstones: Vec<Tombstone>,
    pub notes: Vec<NoteChange>,
    pub feed_files: Vec<FeedFileChange>,
    pub verify: Vec<VerifyResult>,
    pub health: HealthLine,
    pub skipped: Vec<Skipped>,
    pub ms: f64,
}

/// The edit of one user file.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileEdit {
    relpath: String,
    sha256: String,
    set_heat: Option<u8>,
    graduate: bool,
    move_to: Option<String>,
    tombstones: Vec<String>,
    /// An inbox note drained into its region folder: `region:` to write, and `status:
    /// active` when it had no status.
    set_region: Option<&'static str>,
    set_active: bool,
}

/// A generated note to write or remove.
#[derive(Clone, Debug)]
pub(crate) enum NoteOp {
    Write { relpath: String, content: String, existing_sha: Option<String> },
    Remove { relpath: String, sha256: String },
}

/// Which frontal-lobe folder a pointer note is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lobe {
    Conscious,
    Unconscious,
}

impl Lobe {
    fn folder(self) -> &'static str {
        match self {
            Lobe::Conscious => CONSCIOUS,
            Lobe::Unconscious => UNCONSCIOUS,
        }
    }
}

pub(crate) struct Clock {
    started: Instant,
    steps: Vec<StepTiming>,
}

impl Clock {
    fn new() -> Clock {
        Clock { started: Instant::now(), steps: Vec::new() }
    }

    fn step(&mut self, name: &'static str, since: Instant) -> Instant {
        self.steps.push(StepTiming { name, ms: ms(since) });
        Instant::now()
    }
}

pub(crate) fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Runs phase 1 of a tick (phases 2–5 need an LLM, which is not configured).
pub fn tick<P: LaterPhases>(brain: &Brain, options: &TickOptions<'_>, later: &P) -> BrainResult<TickReport<P::Report>> {
    let location = &options.location;
    let _lock = fsio::lock(brain.home(), !options.dry_run)?;
    if !options.dry_run {
        // A killed tick, scan or capture may have left its temp files behind: those in the
        // vault are found by the scan's walk (and removed below), those of the feed here.
        fsio::sweep_stale_temps(&location.feed_dir);
    }
    // A graduation interrupted by a kill is finished before anything reads the vault.
    let recovered = if options.dry_run { Vec::new() } else { moves::recover(&location.root) };
    let now = brain.now();
    let config = &brain.config().vault;
    let mut clock = Clock::new();
    let mut step = Instant::now();

    let mode =
        ScanMode { dry_run: options.dry_run, want_snapshot: true, write_feed: false, progress: options.progress };
    let scanned = scan(brain, &location.root, &location.skip, &mode)?;
    if !options.dry_run {
        fsio::remove_stale_temps(&scanned.temps);
    }
    let mut snapshot = scanned.snapshot.unwrap_or_default();
    let mut scan_report = scanned.report;
    scan_report.recovered = recovered;
    step = clock.step("scan", step);

    let mut views = arc_views(&snapshot, now);
    step = clock.step("heat", step);

    let mut skipped: Vec<Skipped> = Vec::new();
    let mut edits: BTreeMap<String, FileEdit> = BTreeMap::new();
    let mut heat_changes = Vec::new();
    let mut graduations = Vec::new();
    let mut planned_targets: HashSet<String> = HashSet::new();
    for view in &mut views {
        let file = view.file;
        if file.state.readonly {
            continue;
        }
        let mut graduate = false;
        let mut move_to = None;
        let old_enough = age_days(timestamp(view.arc.created), now) > config.graduate_days;
        if !view.graduated && view.heat <= config.graduate_heat && old_enough {
            let folder = region_folder(view.arc.region.as_deref());
            let file_name = view.relpath.rsplit('/').next().unwrap_or(view.relpath);
            let target = format!("{folder}/{file_name}");
            let in_place = view.relpath.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/'));
            if !in_place && (snapshot.contains_key(&target) || !planned_targets.insert(target.clone())) {
                skipped.push(Skipped {
                    path: view.relpath.to_string(),
                    reason: format!("not graduated: {target} already exists"),
                });
            } else {
                graduate = true;
                view.graduated = true;
                // A graduate is no longer active: its heat is written without that bonus, so
                // the next tick does not change it again.
                view.heat = arc_heat(view.arc, view.replays, false, now);
                graduations.push(Graduation {
                    cluster_id: view.arc.cluster_id.clone(),
                    from: view.relpath.to_string(),
                    to: if in_place { view.relpath.to_string() } else { target.clone() },
                });
                move_to = (!in_place).then_some(target);
            }
        }
        let set_heat = (view.arc.heat != Some(view.heat)).then_some(view.heat);
        if let Some(to) = set_heat {
            heat_changes.push(HeatChange {
                file: view.relpath.to_string(),
                cluster_id: view.arc.cluster_id.clone(),
                from: view.arc.heat,
                to,
            });
        }
        if set_heat.is_some() || graduate {
            let relpath = view.relpath.to_string();
            let edit = FileEdit {
                relpath: relpath.clone(),
                sha256: file.sha256.clone(),
                set_heat,
                graduate,
                move_to,
                ..FileEdit::default()
            };
            edits.insert(relpath, edit);
        }
    }
    let mut tombstones = Vec::new();
    for (relpath, file) in &snapshot {
        if file.state.generated.is_some() {
            continue;
        }
        for signal in file.state.signals.iter().filter(|signal| signal.tombstone) {
            if file.state.readonly {
                skipped.push(Skipped {
                    path: relpath.clone(),
                    reason: "cleared signal not removed: the file is not valid UTF-8 text".into(),
                });
                continue;
            }
            let edit = edits.entry(relpath.clone()).or_insert_with(|| FileEdit {
                relpath: relpath.clone(),
                sha256: file.sha256.clone(),
                ..FileEdit::default()
            });
            edit.tombstones.push(signal.id.clone());
            tombstones.push(Tombstone {
                file: relpath.clone(),
                signal: signal.id.clone(),
                text: one_line(&signal.text).into_owned(),
            });
        }
    }
    let mut inbox = plan_inbox(&location.root, &snapshot, &mut edits, &mut planned_targets, &mut skipped);
    let moved: HashMap<&str, &str> =
        edits.values().filter_map(|e| Some((e.relpath.as_str(), e.move_to.as_deref()?))).collect();
    let active = active_signals(&snapshot, now, config);
    // The generated notes are planned on this thread while another works out the feed's
    // inputs as they will be after this tick: both only read the index and the views, and
    // each was a sixth of a steady tick.
    let views_read = &views;
    let ((note_ops, promotions, demotions), (hot, inject_states, health_line, digest)) = std::thread::scope(|scope| {
        let feed_inputs = scope.spawn(|| {
            let hot = hot_views(views_read, config.hot_arcs);
            let inject_states = active_inject_states(&snapshot, now);
            let health_line = health_line(&snapshot, views_read, active.len(), now);
            // Feed hashing: the feed files and the session feed are a function of these
            // inputs. When their digest matches the last tick's and the files on disk are
            // still the ones it wrote, nothing is rendered (and nothing redacted) again.
            let digest = feed_digest(now, &project_hot_views(views_read, config.hot_arcs), &active, &inject_states);
            (hot, inject_states, health_line, digest)
        });
        let planned = plan_notes(&snapshot, views_read, &active, &moved, config, &mut skipped);
        (planned, feed_inputs.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    step = clock.step("plan", step);

    let verify_results = verify_signals(&active, location, config, options.dry_run);
    step = clock.step("verify", step);
    let cache: Option<FeedCache> =
        brain.store().vault_value("feed_cache")?.and_then(|text| serde_json::from_str(&text).ok());
    let reuse = cache.as_ref().is_some_and(|cache| cache.digest == digest && cache.files_intact(&location.feed_dir));
    let mut files: Vec<(&'static str, String)> = Vec::new();
    let mut feed_state = None;
    // The last feed names the signals the diff calls new; an unchanged digest means none is.
    let previous_feed_text = if reuse { None } else { brain.store().vault_value("feed")? };
    let previous_feed: Option<FeedState> =
        previous_feed_text.as_deref().and_then(|text| serde_json::from_str(text).ok());
    if !reuse {
        let injects = active_injects(&inject_states);
        files.push(("hot-arcs.md", render_hot_arcs(&hot, now)));
        files.push(("inject.md", render_injects(&injects, now)));
        files.push(("signals.md", render_signals(&active, now)));
        feed_state = Some(FeedState::from_parts(&views, &snapshot, now, config));
    }
    if !location.feed_dir.join("intent.md").exists() {
        files.push(("intent.md", render_intent_placeholder()));
    }
    step = clock.step("feed", step);

    let mut notes: Vec<NoteChange> = note_ops
        .iter()
        .map(|op| match op {
            NoteOp::Write { relpath, .. } => NoteChange { path: relpath.clone(), action: "write" },
            NoteOp::Remove { relpath, .. } => NoteChange { path: relpath.clone(), action: "remove" },
        })
        .collect();
    let mut changes = IndexChanges::default();
    let mut removed: Vec<String> = Vec::new();
    if !options.dry_run {
        // Edits and notes are independent files: staged on several threads, made durable by
        // one sync, put in place (results come back in plan order), each re-parsed for the
        // index where it was staged. An edit of `heat:`/`status:` only keeps its items, which
        // are then neither held nor compared (see `kept_items`).
        let max_bytes = config.max_file_bytes;
        let counter = *brain.counter();
        let edit_list: Vec<&FileEdit> = edits.values().collect();
        let by_target: HashMap<&str, &FileEdit> =
            edit_list.iter().map(|edit| (edit.move_to.as_deref().unwrap_or(&edit.relpath), *edit)).collect();
        let reindex_one = |relpath: &str, bytes: &[u8], stat: &Path| {
            let mut changed = reindex(stat, relpath, bytes, max_bytes, counter);
            if let Some(edit) = by_target.get(relpath) {
                changed.kept_items = kept_items(&snapshot, edit, &changed);
                if changed.kept_items.is_some() {
                    changed.analyzed.items = Vec::new();
                }
            }
            changed
        };
        let (edited, written) = apply_writes(&location.root, &edit_list, &note_ops, options.before_write, &reindex_one);
        // Exactly once: ~10k entries of ~600 bytes at a first tick, grown by doubling they
        // would leave megabytes of slack beside the results they are moved from.
        changes.changed.reserve_exact(edit_list.len() + note_ops.len());
        let mut failed: HashSet<&str> = HashSet::new();
        for (edit, outcome) in edit_list.iter().zip(edited) {
            match outcome {
                Ok(changed) => {
                    if changed.relpath != edit.relpath {
                        removed.push(edit.relpath.clone());
                    }
                    changes.changed.push(changed);
                }
                Err(reason) => {
                    failed.insert(edit.relpath.as_str());
                    skipped.push(Skipped { path: edit.relpath.clone(), reason });
                }
            }
        }
        if !failed.is_empty() {
            heat_changes.retain(|change| !failed.contains(change.file.as_str()));
            graduations.retain(|graduation| !failed.contains(graduation.from.as_str()));
            inbox.retain(|drained| !failed.contains(drained.from.as_str()));
            tombstones.retain(|tombstone| !failed.contains(tombstone.file.as_str()));
        }
        let mut failed_notes: HashSet<String> = HashSet::new();
        for (op, outcome) in note_ops.iter().zip(written) {
            match outcome {
                Ok(Some(changed)) => changes.changed.push(changed),
                Ok(None) => {
                    if let NoteOp::Remove { relpath, .. } = op {
                        removed.push(relpath.clone());
                    }
                }
                Err((relpath, reason)) => {
                    failed_notes.insert(relpath.clone());
                    skipped.push(Skipped { path: relpath, reason });
                }
            }
        }
        notes.retain(|note| !failed_notes.contains(&note.path));
        step = clock.step("apply", step);
    }

    // The diff says what this tick did (after the edits: skipped files are listed as such).
    let previous_ids: HashSet<&str> =
        previous_feed.iter().flat_map(|feed| feed.signals.iter().map(|s| s.signal.id.as_str())).collect();
    let diff = diff_sections(DiffInput {
        promotions: &promotions,
        demotions: &demotions,
        graduations: &graduations,
        inbox: &inbox,
        heat_changes: &heat_changes,
        tombstones: &tombstones,
        active: &active,
        // Reused feed: same signals as last tick, none new.
        previous_ids: if previous_feed.is_some() { Some(&previous_ids) } else { None },
        health: &health_line,
        skipped: &skipped,
        dry_run: options.dry_run,
    });
    files.push(("last-tick-diff.md", render_diff(now, &diff)));
    let mut feed_files = Vec::new();
    if reuse {
        for name in FeedCache::FILES {
            feed_files.push(FeedFileChange { name: name.to_string(), changed: false });
        }
    }
    for (name, content) in &files {
        let path = location.feed_dir.join(name);
        let changed = read_optional(&path).ok().flatten().as_deref() != Some(content.as_bytes());
        if changed && !options.dry_run {
            write_owned(&path, content.as_bytes())
                .map_err(|err| BrainError::user(format!("cannot write {}: {err}", path.display())))?;
        }
        feed_files.push(FeedFileChange { name: name.to_string(), changed });
    }
    feed_files.push(FeedFileChange { name: "health.jsonl".into(), changed: true });
    let arcs = views.len();
    // Done with: freed before the index update, whose allocations reuse the memory (at a
    // first tick the edits and the generated notes' texts are megabytes).
    drop(views);
    drop(edits);
    drop(note_ops);
    if !options.dry_run {
        append_health(&location.feed_dir, &health_line)?;
        // The index learns what the tick wrote (so the next scan finds nothing to parse), and
        // the session feed is refreshed when it changed.
        if !changes.changed.is_empty() || !removed.is_empty() {
            overlay(&mut snapshot, &mut changes, &removed);
        }
        if let Some(feed_state) = &feed_state {
            let internal = |err: serde_json::Error| BrainError::internal(err.to_string());
            let feed_json = serde_json::to_string(feed_state).map_err(internal)?;
            if previous_feed_text.as_deref() != Some(feed_json.as_str()) {
                changes.feed = Some(feed_json);
            }
            let files: Vec<(String, String)> = files
                .iter()
                .filter(|(name, _)| FeedCache::FILES.contains(name))
                .map(|(name, content)| (name.to_string(), sha256_hex(content.as_bytes())))
                .collect();
            let cache = FeedCache { digest: digest.clone(), files };
            changes.feed_cache = Some(serde_json::to_string(&cache).map_err(internal)?);
        }
        if !changes.is_empty() || changes.feed.is_some() || changes.feed_cache.is_some() {
            let mut diagnostics: Vec<Diagnostic> = Vec::new();
            apply(brain, &changes, &mut diagnostics)?;
            for diagnostic in diagnostics {
                skipped.push(Skipped { path: diagnostic.file, reason: diagnostic.message });
            }
        }
    }
    clock.step("write", step);

    let keeper_ms = ms(clock.started);
    let mut phases = vec![PhaseTiming { phase: 1, name: "keeper", ran: true, ms: keeper_ms, steps: clock.steps }];
    // ---- The later phases (2–5, the AI's): after phase 1 has written its feed; they never fail the tick.
    let last_diff = files.iter().find(|(name, _)| *name == "last-tick-diff.md").map_or("", |(_, text)| text.as_str());
    let input =
        LaterInput { location, snapshot: &mut snapshot, dry_run: options.dry_run, no_ai: options.no_ai, last_diff };
    let ai = later.run(brain, input);
    // ~100k allocations at 10k arcs: freed beside the rest (a command about to exit does not
    // wait for them; a server frees them on another core).
    free_in_background(snapshot);
    phases.extend(ai.phases);
    let ai_status = ai.status;
    // ---- end of the later phases.
    Ok(TickReport {
        vault: location.root.display().to_string(),
        brain_feed: location.feed_dir.display().to_string(),
        dry_run: options.dry_run,
        ai: ai_status,
        phases,
        scan: scan_report,
        arcs,
        heat_changes,
        promotions,
        demotions,
        graduations,
        inbox,
        tombstones,
        notes,
        feed_files,
        verify: verify_results,
        health: health_line,
        skipped,
        ms: keeper_ms,
    })
}

/// Runs (or reports not running) the `verify=` commands of active signals.
pub(crate) fn verify_signals(
    active: &[ActiveSignal<'_>],
    location: &Location,
    config: &super::VaultConfig,
    dry_run: bool,
) -> Vec<VerifyResult> {
    let mut results = Vec::new();
    for signal in active {
        let Some(command) = &signal.signal.verify else { continue };
        let outcome = if !config.allow_verify_commands {
            "not run: allow_verify_commands is off".to_string()
        } else if dry_run {
            "not run: dry run".to_string()
        } else if results.len() >= MAX_VERIFY_PER_TICK {
            format!("not run: at most {MAX_VERIFY_PER_TICK} commands per tick")
        } else {
            verify::run(command, &location.root, Duration::from_secs(config.verify_timeout_secs))
        };
        results.push(VerifyResult {
            signal: signal.signal.id.clone(),
            file: signal.relpath.to_string(),
            command: command.clone(),
            outcome,
        });
    }
    results
}

/// Appends one line to `health.jsonl` (one `write` of the whole line, in append mode).
pub(crate) fn append_health(feed_dir: &Path, line: &HealthLine) -> BrainResult<()> {
    use std::io::Write;
    let path = feed_dir.join("health.jsonl");
    let mut text = serde_json::to_string(line).map_err(|err| BrainError::internal(err.to_string()))?;
    text.push('\n');
    let cannot = |err: std::io::Error| BrainError::user(format!("cannot write {}: {err}", path.display()));
    std::fs::create_dir_all(feed_dir).map_err(cannot)?;
    let mut file = std::fs::File::options().create(true).append(true).open(&path).map_err(cannot)?;
    // One line, one append; not fsynced: a health line lost to a power cut costs nothing.
    file.write_all(text.as_bytes()).map_err(cannot)
}

/// Default feed folder of a vault.
pub(crate) fn default_feed_dir(root: &Path) -> PathBuf {
    root.join(FEED_FOLDER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_same_length_change_within_one_sector_is_written_in_place() {
        let old = format!("---\nheat: 4\n---\n{}", "x".repeat(2000));
        let at = old.find('4').unwrap();
        assert_eq!(in_place_range(old.as_bytes(), old.replace("heat: 4", "heat: 3").as_bytes()), Some(at..at + 1));
        assert_eq!(in_place_range(old.as_bytes(), old.replace("heat: 4", "heat: 10").as_bytes()), None, "longer");
        assert_eq!(in_place_range(old.as_bytes(), old.as_bytes()), None, "nothing to write");
        // Two changes a sector apart: a crash could tear them.
        let mut far = old.replace("heat: 4", "heat: 3").into_bytes();
        far[SECTOR + 100] = b'y';
        assert_eq!(in_place_range(old.as_bytes(), &far), None);
        // Two changes in one sector: one range over both.
        let mut near = old.replace("heat: 4", "heat: 3").into_bytes();
        near[at + 10] = b'y';
        assert_eq!(in_place_range(old.as_bytes(), &near), Some(at..at + 11));
        // A range across a sector boundary.
        let mut across = old.clone().into_bytes();
        across[SECTOR - 1] = b'y';
        across[SECTOR] = b'y';
        assert_eq!(in_place_range(old.as_bytes(), &across), None);
    }

    #[test]
    fn dashboard_cells_and_heats_read_as_their_formatted_forms() {
        for heat in [0u8, 7, 10, 42, 255] {
            let mut out = String::from("x");
            push_heat(&mut out, heat);
            assert_eq!(out, format!("x{heat}"));
        }
        let long = format!("{}|tail", "é".repeat(130));
        for text in ["plain", "  a | b  ", "two\nlines\there", "|", "", "x||y", long.as_str()] {
            let mut out = String::new();
            push_cell(&mut out, text);
            assert_eq!(out, clip(&one_line(text), 120).replace('|', "\\|"), "{text:?}");
        }
    }

    #[test]
    fn a_removed_block_takes_its_own_lines_with_it() {
        let mut text = String::from("a\n<!-- @signal -->\nx\n<!-- @/signal -->\nb\n");
        let start = text.find("<!--").unwrap();
        let end = text.rfind("-->").unwrap() + 3;
        remove_block(&mut text, start..end);
        assert_eq!(text, "a\nb\n");
        let mut inline = String::from("a <!-- @signal -->x<!-- @/signal --> b\n");
        let start = inline.find("<!--").unwrap();
        let end = inline.rfind("-->").unwrap() + 3;
        remove_block(&mut inline, start..end);
        assert_eq!(inline, "a  b\n");
    }

    #[test]
    fn graduates_go_to_their_region_folder() {
        assert_eq!(region_folder(Some("right-hemisphere")), "right");
        assert_eq!(region_folder(Some("frontal-lobe")), "left");
        assert_eq!(region_folder(None), "left");
        assert_eq!(
            pointer_relpath(Lobe::Conscious, "clusters/2026-11-20/abc.md"),
            "frontal-lobe/conscious/abc.pointer.md"
        );
    }
}
