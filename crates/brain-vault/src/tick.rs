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

/// Folders of the generated notes.
pub(super) const CONSCIOUS: &str = "frontal-lobe/conscious";
pub(super) const UNCONSCIOUS: &str = "frontal-lobe/unconscious";
const AMYGDALA: &str = "amygdala";
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
struct FileEdit {
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
enum NoteOp {
    Write { relpath: String, content: String, existing_sha: Option<String> },
    Remove { relpath: String, sha256: String },
}

/// Which frontal-lobe folder a pointer note is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lobe {
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

struct Clock {
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

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Runs phase 1 of a tick (phases 2–5 need an LLM, which is not configured).
pub fn tick<P: LaterPhases>(brain: &Brain, options: &TickOptions<'_>, later: &P) -> BrainResult<TickReport<P::Report>> {
    let location = &options.location;
    let _lock = fsio::lock(&brain.home, !options.dry_run)?;
    if !options.dry_run {
        // A killed tick, scan or capture may have left its temp files behind: those in the
        // vault are found by the scan's walk (and removed below), those of the feed here.
        fsio::sweep_stale_temps(&location.feed_dir);
    }
    // A graduation interrupted by a kill is finished before anything reads the vault.
    let recovered = if options.dry_run { Vec::new() } else { moves::recover(&location.root) };
    let now = brain.now;
    let config = &brain.config.vault;
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

/// The folder whose notes are drained into region folders (SPEC §6.1 `raw/inbox`).
const INBOX: &str = "raw/inbox";

/// Where a drained inbox note goes, by its first tag that names one (as the reference
/// engine's keeper does); notes without such a tag go to `left`.
const TAG_FOLDERS: &[(&str, &str)] = &[
    ("architecture", "left"),
    ("infrastructure", "left"),
    ("deployment", "left"),
    ("code", "left"),
    ("bug", "left"),
    ("fix", "left"),
    ("ci", "left"),
    ("database", "left"),
    ("api", "left"),
    ("security", "left"),
    ("research", "left/research"),
    ("incident", "left/incidents"),
    ("decision", "left/decisions"),
    ("reference", "left/reference"),
    ("idea", "right/ideas"),
    ("strategy", "right/strategy"),
    ("creative", "right/creative"),
    ("vision", "right"),
    ("risk", "right/risk"),
    ("life", "right/life"),
    ("brain-system", "bridge"),
    ("cross-cutting", "bridge"),
];

/// A name is tried with at most this many numeric suffixes before a drain is skipped.
const MAX_NAME_SUFFIX: usize = 100;

/// The tags of a note's frontmatter (a list, or one comma-separated value), lowercased, and
/// whether it has a `status:`.
fn inbox_note(bytes: &[u8], relpath: &str) -> (Vec<String>, bool) {
    let (doc, _) = parse(relpath, bytes, usize::MAX);
    let Some(fm) = doc.frontmatter.as_ref() else { return (Vec::new(), false) };
    let tags = match fm.get("tags").map(|entry| &entry.value) {
        Some(brain_core::vault::FmValue::List(items)) => {
            items.iter().filter_map(|item| item.as_scalar()).map(|tag| tag.trim().to_lowercase()).collect()
        }
        Some(value) => value
            .as_scalar()
            .map(|text| text.split(',').map(|tag| tag.trim().to_lowercase()).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    };
    (tags, fm.get("status").is_some())
}

/// Plans the drain of `raw/inbox`: every note directly in it (but brain mark's own inbox
/// note, which agents keep appending to) moves into the folder its tags name, with
/// `region:` set (and `status: active` when it has none), under the same rules as a
/// graduation (read again and checked against the scan, journaled, never over a file). A
/// name taken in the target folder gets the first free `-2`, `-3`, … suffix.
fn plan_inbox(
    root: &Path,
    snapshot: &Snapshot,
    edits: &mut BTreeMap<String, FileEdit>,
    planned_targets: &mut HashSet<String>,
    skipped: &mut Vec<Skipped>,
) -> Vec<InboxMove> {
    let mut drained = Vec::new();
    let prefix = format!("{INBOX}/");
    for (relpath, file) in snapshot.range(prefix.clone()..) {
        let Some(name) = relpath.strip_prefix(&prefix) else { break };
        if name.contains('/') || !name.ends_with(".md") || relpath == super::mark::INBOX_NOTE {
            continue;
        }
        if file.state.generated.is_some() || file.state.merged {
            continue;
        }
        let leave = |reason: String, skipped: &mut Vec<Skipped>| {
            skipped.push(Skipped { path: relpath.clone(), reason: format!("not drained from the inbox: {reason}") })
        };
        if file.state.readonly {
            leave("not valid UTF-8 text".into(), skipped);
            continue;
        }
        if edits.get(relpath).is_some_and(|edit| edit.move_to.is_some()) {
            continue;
        }
        let bytes = match read_optional(&root.join(relpath)) {
            Ok(Some(bytes)) if sha256_hex(&bytes) == file.sha256 => bytes,
            Ok(Some(_)) => {
                leave("it changed since the scan (the next tick picks it up)".into(), skipped);
                continue;
            }
            Ok(None) => continue,
            Err(err) => {
                leave(format!("cannot read it: {err}"), skipped);
                continue;
            }
        };
        let (tags, has_status) = inbox_note(&bytes, relpath);
        let chosen = tags.iter().find_map(|tag| TAG_FOLDERS.iter().find(|(name, _)| name == tag));
        let folder = chosen.map_or("left", |(_, folder)| *folder);
        let region = match folder.split('/').next() {
            Some("right") => "right-hemisphere",
            Some("bridge") => "bridge",
            _ => "left-hemisphere",
        };
        let stem = name.strip_suffix(".md").unwrap_or(name);
        let free = |candidate: &String| {
            !snapshot.contains_key(candidate)
                && !planned_targets.contains(candidate)
                && std::fs::symlink_metadata(root.join(candidate)).is_err()
        };
        let target = (1..=MAX_NAME_SUFFIX)
            .map(|n| if n == 1 { format!("{folder}/{name}") } else { format!("{folder}/{stem}-{n}.md") })
            .find(|candidate| free(candidate));
        let Some(target) = target else {
            leave(format!("{folder}/{name} and its numbered variants are taken"), skipped);
            continue;
        };
        planned_targets.insert(target.clone());
        let edit = edits.entry(relpath.clone()).or_insert_with(|| FileEdit {
            relpath: relpath.clone(),
            sha256: file.sha256.clone(),
            ..FileEdit::default()
        });
        edit.move_to = Some(target.clone());
        edit.set_region = Some(region);
        edit.set_active = !has_status;
        drained.push(InboxMove { from: relpath.clone(), to: target, tag: chosen.map(|(tag, _)| tag.to_string()) });
    }
    drained
}

/// The folder an arc of `region` graduates into.
pub(super) fn region_folder(region: Option<&str>) -> &'static str {
    match region {
        Some("right-hemisphere") => "right",
        Some("amygdala") => "amygdala",
        Some("pineal") => "pineal",
        Some("bridge") => "bridge",
        // Technical memory is the default home (left hemisphere), frontal-lobe included:
        // that folder holds generated notes only.
        _ => "left",
    }
}

/// Plans the pointer notes (promotion, demotion) and the amygdala notes.
fn plan_notes(
    snapshot: &Snapshot,
    views: &[ArcView<'_>],
    active: &[ActiveSignal<'_>],
    moved: &HashMap<&str, &str>,
    config: &super::VaultConfig,
    skipped: &mut Vec<Skipped>,
) -> (Vec<NoteOp>, Vec<ArcMove>, Vec<ArcMove>) {
    // Existing generated notes: pointer notes by cluster id, signal notes by relpath. Only
    // those in the folders the tick writes them into: a copy a person keeps elsewhere is
    // theirs, never rewritten or removed (issue 27).
    let mut pointers: HashMap<&str, Vec<(&str, Lobe)>> = HashMap::new();
    let mut signal_notes: Vec<&str> = Vec::new();
    for (relpath, file) in snapshot {
        let Some(generated) = &file.state.generated else { continue };
        if !in_generated_folder(relpath, &generated.note) {
            continue;
        }
        match generated.note.as_str() {
            "pointer" => {
                let lobe =
                    if relpath.starts_with(&format!("{UNCONSCIOUS}/")) { Lobe::Unconscious } else { Lobe::Conscious };
                pointers.entry(generated.key.as_str()).or_default().push((relpath.as_str(), lobe));
            }
            "signal" | "dashboard" => signal_notes.push(relpath.as_str()),
            _ => {}
        }
    }
    let mut ops = Vec::new();
    let mut wanted: HashSet<String> = HashSet::new();
    let mut promotions = Vec::new();
    let mut demotions = Vec::new();
    let write = |relpath: String, content: String, ops: &mut Vec<NoteOp>, skipped: &mut Vec<Skipped>| match snapshot
        .get(&relpath)
    {
        Some(file) if file.state.generated.is_none() => skipped.push(Skipped {
            path: relpath,
            reason: "not replaced: the file exists and was not generated by brain".into(),
        }),
        Some(file) if file.sha256 == sha256_hex(content.as_bytes()) => {}
        Some(file) => ops.push(NoteOp::Write { relpath, content, existing_sha: Some(file.sha256.clone()) }),
        None => ops.push(NoteOp::Write { relpath, content, existing_sha: None }),
    };
    for view in views {
        let current: Option<Lobe> = pointers.get(view.arc.cluster_id.as_str()).and_then(|notes| {
            notes.iter().map(|(_, lobe)| *lobe).find(|lobe| *lobe == Lobe::Conscious).or(Some(notes[0].1))
        });
        let desired = if view.graduated {
            None
        } else if view.heat >= config.promote_heat {
            Some(Lobe::Conscious)
        } else if view.heat < config.demote_heat {
            current.map(|_| Lobe::Unconscious)
        } else {
            current
        };
        let moved_to = moved.get(view.relpath).copied().unwrap_or(view.relpath);
        let summary =
            || ArcMove { cluster_id: view.arc.cluster_id.clone(), title: view.arc.title.clone(), heat: view.heat };
        if desired == Some(Lobe::Conscious) && current != Some(Lobe::Conscious) {
            promotions.push(summary());
        }
        if desired == Some(Lobe::Unconscious) && current == Some(Lobe::Conscious) {
            demotions.push(summary());
        }
        if let Some(lobe) = desired {
            let relpath = pointer_relpath(lobe, moved_to);
            wanted.insert(relpath.clone());
            write(relpath, render_pointer(view, moved_to), &mut ops, skipped);
        }
    }
    for signal in
        active.iter().filter(|s| matches!(s.severity, brain_core::Severity::Critical | brain_core::Severity::Nuclear))
    {
        let relpath = signal_relpath(signal);
        if !wanted.insert(relpath.clone()) {
            continue;
        }
        // A signal of an arc graduating in this tick links to where the arc goes.
        let arc_relpath = moved.get(signal.relpath).copied().unwrap_or(signal.relpath);
        write(relpath, render_signal_note(signal, arc_relpath), &mut ops, skipped);
    }
    for (relpath, content) in render_dashboards(views, moved) {
        wanted.insert(relpath.clone());
        write(relpath, content, &mut ops, skipped);
    }
    let mut removals: Vec<&str> = pointers.values().flatten().map(|(relpath, _)| *relpath).collect();
    removals.extend(signal_notes);
    removals.sort_unstable();
    for relpath in removals {
        if !wanted.contains(relpath) {
            ops.push(NoteOp::Remove { relpath: relpath.to_string(), sha256: snapshot[relpath].sha256.clone() });
        }
    }
    (ops, promotions, demotions)
}

/// Whether `relpath` is where the tick writes a generated note of kind `note`: a pointer
/// directly in a frontal-lobe folder, a signal note directly in `amygdala/`, a dashboard in
/// a date folder of `clusters/`.
fn in_generated_folder(relpath: &str, note: &str) -> bool {
    let directly_in = |folder: &str| {
        relpath.strip_prefix(folder).and_then(|rest| rest.strip_prefix('/')).is_some_and(|name| !name.contains('/'))
    };
    match note {
        "pointer" => directly_in(CONSCIOUS) || directly_in(UNCONSCIOUS),
        "signal" => directly_in(AMYGDALA),
        "dashboard" => relpath
            .strip_prefix("clusters/")
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(folder, name)| !folder.is_empty() && name == DASHBOARD),
        _ => false,
    }
}

/// The dashboard of each date folder (`clusters/<folder>/_dashboard.md`) that holds an arc
/// after this tick's moves: its arcs hottest first (then by path), with heat, region, status
/// and title. No clock in it: it changes only when one of its arcs does.
fn render_dashboards(views: &[ArcView<'_>], moved: &HashMap<&str, &str>) -> Vec<(String, String)> {
    let mut folders: BTreeMap<&str, Vec<(&ArcView<'_>, &str)>> = BTreeMap::new();
    for view in views {
        let relpath = moved.get(view.relpath).copied().unwrap_or(view.relpath);
        let Some((folder, _)) = relpath.rsplit_once('/') else { continue };
        let in_date_folder =
            folder.strip_prefix("clusters/").is_some_and(|name| !name.is_empty() && !name.contains('/'));
        if in_date_folder {
            folders.entry(folder).or_default().push((view, relpath));
        }
    }
    folders
        .into_iter()
        .map(|(folder, mut arcs)| {
            arcs.sort_by(|(a, a_path), (b, b_path)| b.heat.cmp(&a.heat).then(a_path.cmp(b_path)));
            let name = folder.strip_prefix("clusters/").unwrap_or(folder);
            let relpath = format!("{folder}/{DASHBOARD}");
            let mut out = format!(
                "---\ngenerated_by: {GENERATED_BY}\nbrain_note: dashboard\nbrain_key: {}\n---\n\n# Cluster Dashboard — {}\n\n\
                 | Arc | Heat | Region | Status | Title |\n|---|---|---|---|---|\n",
                yaml_quoted(folder),
                one_line(name)
            );
            // Written into the page as it grows: ~10k lines at 10k arcs, every tick (a line
            // made of its own strings was ~5% of a steady tick).
            for (view, path) in arcs {
                out.push_str("| [[");
                let stem = stem(path);
                if stem.contains(['|', ']', '[']) {
                    out.push_str(&stem.replace(['|', ']', '['], " "));
                } else {
                    out.push_str(stem);
                }
                out.push_str("]] | ");
                push_heat(&mut out, view.heat);
                for text in [view.region(), view.status(), &view.arc.title] {
                    out.push_str(" | ");
                    push_cell(&mut out, text);
                }
                out.push_str(" |\n");
            }
            out.push_str("\n_Generated by `brain tick`; rewritten when an arc of this folder changes._\n");
            (relpath, out)
        })
        .collect()
}

/// A heat in decimal, without formatting machinery.
fn push_heat(out: &mut String, heat: u8) {
    if heat >= 100 {
        out.push(char::from(b'0' + heat / 100));
    }
    if heat >= 10 {
        out.push(char::from(b'0' + heat / 10 % 10));
    }
    out.push(char::from(b'0' + heat % 10));
}

/// `text` as one table cell of a dashboard: one line, at most 120 characters, pipes escaped.
fn push_cell(out: &mut String, text: &str) {
    let line = one_line(text);
    let clipped = clip(&line, 120);
    let mut parts = clipped.split('|');
    out.push_str(parts.next().unwrap_or_default());
    for part in parts {
        out.push_str("\\|");
        out.push_str(part);
    }
}

pub(super) fn stem(relpath: &str) -> &str {
    let name = relpath.rsplit('/').next().unwrap_or(relpath);
    name.strip_suffix(".md").or_else(|| name.strip_suffix(".MD")).unwrap_or(name)
}

fn pointer_relpath(lobe: Lobe, arc_relpath: &str) -> String {
    format!("{}/{}.pointer.md", lobe.folder(), stem(arc_relpath))
}

/// A pointer note: frontmatter with the cluster id and heat, a wikilink to the arc by its
/// path (unambiguous), its summary. Never a copy of the arc.
fn render_pointer(view: &ArcView<'_>, arc_relpath: &str) -> String {
    render_pointer_note(&PointerNote {
        cluster_id: &view.arc.cluster_id,
        title: &view.arc.title,
        heat: view.heat,
        link: arc_relpath.strip_suffix(".md").unwrap_or(arc_relpath),
        region: view.region(),
        status: view.status(),
        summary: view.arc.summary.as_deref(),
    })
}

/// What a pointer note is made of: [`render_pointer`] takes it from the arc, the vault
/// doctor from the note itself (to tell a note brain wrote from one a person added to).
pub(super) struct PointerNote<'a> {
    pub cluster_id: &'a str,
    pub title: &'a str,
    pub heat: u8,
    /// The arc's path without `.md`.
    pub link: &'a str,
    pub region: &'a str,
    pub status: &'a str,
    pub summary: Option<&'a str>,
}

/// The footer of every pointer note.
pub(super) const POINTER_FOOTER: &str = "\n_Generated by `brain tick`: a pointer, not a copy. Edit the arc itself._\n";

pub(super) fn render_pointer_note(note: &PointerNote<'_>) -> String {
    let title = one_line(note.title).into_owned();
    let mut out = format!(
        "---\ngenerated_by: {GENERATED_BY}\nbrain_note: pointer\nbrain_key: {}\ncluster_id: {}\ntitle: {}\nheat: {}\n---\n\n",
        yaml_quoted(note.cluster_id),
        yaml_quoted(note.cluster_id),
        yaml_quoted(&title),
        note.heat
    );
    out.push_str(&format!("# {}\n\n", clip(&title, 200)));
    out.push_str(&format!(
        "[[{}|{}]] · heat {} · {} · {}\n",
        note.link,
        title.replace(['|', ']', '['], " "),
        note.heat,
        note.region,
        note.status
    ));
    if let Some(summary) = note.summary {
        out.push_str(&format!("\n{}\n", one_line(summary)));
    }
    out.push_str(POINTER_FOOTER);
    out
}

fn signal_relpath(signal: &ActiveSignal<'_>) -> String {
    let id = signal.signal.id.strip_prefix("mem_v").unwrap_or(&signal.signal.id);
    let short = id.get(..12).unwrap_or(id);
    format!("{AMYGDALA}/signal-{}-{short}.md", slug(signal.signal.source.as_deref().unwrap_or("signal"), 40))
}

/// One amygdala note per active critical or nuclear signal.
fn render_signal_note(signal: &ActiveSignal<'_>, arc_relpath: &str) -> String {
    let source = one_line(signal.signal.source.as_deref().unwrap_or("unknown")).into_owned();
    let link = arc_relpath.strip_suffix(".md").unwrap_or(arc_relpath);
    let mut out = format!(
        "---\ngenerated_by: {GENERATED_BY}\nbrain_note: signal\nbrain_key: {}\nseverity: {}\nsource: {}\n---\n\n",
        yaml_quoted(&signal.signal.id),
        signal.severity,
        yaml_quoted(&source)
    );
    out.push_str(&format!("# [{}] {}\n\n", signal.severity, source));
    out.push_str(signal.signal.text.trim());
    out.push_str(&format!("\n\nFrom [[{link}]]. _Generated by `brain tick`; clear the signal in its arc._\n"));
    out
}

/// Runs (or reports not running) the `verify=` commands of active signals.
fn verify_signals(
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

fn health_line(snapshot: &Snapshot, views: &[ArcView<'_>], signals: usize, now: Timestamp) -> HealthLine {
    // Each id hashed once into the position of its first arc, connections marked by position
    // (sorting ten thousand ids that share their date prefixes was 10% of a steady tick, and
    // hash sets of them hashed each id three times over).
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(views.len());
    let own: Vec<usize> =
        views.iter().enumerate().map(|(k, view)| *first.entry(view.arc.cluster_id.as_str()).or_insert(k)).collect();
    let mut connected = vec![false; views.len()];
    let mut edges = 0;
    for (view, &me) in views.iter().zip(&own) {
        edges += view.arc.edges.len();
        for target in &view.arc.edges {
            if let Some(&other) = first.get(target.as_str())
                && other != me
            {
                connected[me] = true;
                connected[other] = true;
            }
        }
    }
    // Titles compared case- and spacing-insensitively, by a hash of their words (no copies).
    let mut titles: Vec<u64> = views.iter().map(|view| title_key(&view.arc.title)).collect();
    titles.sort_unstable();
    let mut duplicates = titles.windows(2).filter(|pair| pair[0] == pair[1]).count();
    duplicates += snapshot.values().filter(|file| file.state.arc.is_some() && !file.state.arc_owner).count();
    let newest_age_days = views.iter().map(|view| age_days(timestamp(view.arc.created), now)).min_by(f64::total_cmp);
    let orphans = own.iter().filter(|&&me| !connected[me]).count();
    let inputs = HealthInputs {
        arcs: views.len(),
        covered: views.iter().filter(|view| view.arc.summary.is_some() || view.arc.synthesized).count(),
        newest_age_days,
        orphans,
        duplicates,
    };
    let result = health(&inputs);
    HealthLine {
        timestamp: format_timestamp(now),
        score: result.score,
        reason: result.reason,
        arcs: inputs.arcs,
        signals,
        lessons: snapshot.values().map(|file| file.state.lessons as usize).sum(),
        edges,
        orphans: inputs.orphans,
        duplicates,
    }
}

/// A hash (FNV-1a) of a title's words, lowercased: equal for titles that differ only in case
/// and spacing. Ten thousand titles, no allocation.
fn title_key(title: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |byte: u8| {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    };
    for word in title.split_whitespace() {
        if word.is_ascii() {
            word.bytes().for_each(|byte| feed(byte.to_ascii_lowercase()));
        } else {
            for c in word.chars().flat_map(char::to_lowercase) {
                let mut buffer = [0; 4];
                c.encode_utf8(&mut buffer).bytes().for_each(&mut feed);
            }
        }
        feed(b' ');
    }
    hash
}

struct DiffInput<'a> {
    promotions: &'a [ArcMove],
    demotions: &'a [ArcMove],
    graduations: &'a [Graduation],
    inbox: &'a [InboxMove],
    heat_changes: &'a [HeatChange],
    tombstones: &'a [Tombstone],
    active: &'a [ActiveSignal<'a>],
    previous_ids: Option<&'a HashSet<&'a str>>,
    health: &'a HealthLine,
    skipped: &'a [Skipped],
    dry_run: bool,
}

/// At most this many lines per section of `last-tick-diff.md`.
const DIFF_LINES: usize = 20;

fn capped(mut lines: Vec<String>) -> Vec<String> {
    if lines.len() > DIFF_LINES {
        let more = lines.len() - DIFF_LINES;
        lines.truncate(DIFF_LINES);
        lines.push(format!("… and {more} more"));
    }
    lines
}

fn diff_sections(input: DiffInput<'_>) -> Vec<(String, Vec<String>)> {
    let moves = |list: &[ArcMove], to: &str| {
        capped(
            list.iter()
                .map(|m| format!("{} ({}) → {to}, heat {}", clip(&redacted(&m.title), 80), m.cluster_id, m.heat))
                .collect(),
        )
    };
    let mut signals = vec![format!(
        "{} active ({} critical or nuclear)",
        input.active.len(),
        input
            .active
            .iter()
            .filter(|s| matches!(s.severity, brain_core::Severity::Critical | brain_core::Severity::Nuclear))
            .count()
    )];
    if let Some(previous) = input.previous_ids {
        let new: Vec<String> = input
            .active
            .iter()
            .filter(|s| !previous.contains(s.signal.id.as_str()))
            .map(|s| {
                format!(
                    "new: [{}] ({}) {}",
                    s.severity,
                    redacted(s.signal.source.as_deref().unwrap_or("unknown")),
                    clip(&one_line(&redacted(&s.signal.text)), 120)
                )
            })
            .collect();
        signals.extend(capped(new));
    }
    signals.extend(capped(
        input
            .tombstones
            .iter()
            .map(|t| format!("cleared, block removed from {}: {}", t.file, clip(&redacted(&t.text), 120)))
            .collect(),
    ));
    let mut heat = vec![format!("{} arcs changed heat", input.heat_changes.len())];
    heat.extend(capped(
        input
            .heat_changes
            .iter()
            .map(|c| format!("{}: {} → {}", c.cluster_id, c.from.map_or("none".to_string(), |h| h.to_string()), c.to))
            .collect(),
    ));
    let mut sections = vec![
        ("Promotions".to_string(), moves(input.promotions, "frontal-lobe/conscious")),
        ("Demotions".to_string(), moves(input.demotions, "frontal-lobe/unconscious")),
        (
            "Graduations".to_string(),
            capped(input.graduations.iter().map(|g| format!("{}: {} → {}", g.cluster_id, g.from, g.to)).collect()),
        ),
        ("Inbox".to_string(), capped(input.inbox.iter().map(|m| format!("{} → {}", m.from, m.to)).collect())),
        ("Heat".to_string(), heat),
        ("Signals".to_string(), signals),
        (
            "Edges".to_string(),
            vec![format!(
                "{} edges; {} orphan arcs of {}; {} duplicates",
                input.health.edges, input.health.orphans, input.health.arcs, input.health.duplicates
            )],
        ),
        (
            "Merges".to_string(),
            vec!["none in phase 1: merges come from the AI phases (see AI below when they ran)".into()],
        ),
    ];
    if !input.skipped.is_empty() {
        sections.push((
            "Skipped".to_string(),
            capped(input.skipped.iter().map(|s| format!("{}: {}", s.path, s.reason)).collect()),
        ));
    }
    if input.dry_run {
        sections.insert(0, ("Dry run".to_string(), vec!["planned changes; nothing was written".into()]));
    }
    sections
}

/// An edit computed and not yet written: the file's path, the bytes read and the new text.
struct Prepared {
    path: PathBuf,
    old: Vec<u8>,
    new: String,
}

/// Reads the file of an edit (it must be what the scan indexed) and computes its new text.
fn prepare_edit(root: &Path, edit: &FileEdit) -> Result<Prepared, String> {
    let path = root.join(&edit.relpath);
    let bytes = match read_optional(&path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("left alone: the file disappeared since the scan".into()),
        Err(err) => return Err(format!("left alone: cannot read it: {err}")),
    };
    if sha256_hex(&bytes) != edit.sha256 {
        return Err("left alone: the file changed since the scan (the next tick picks it up)".into());
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err("left alone: not valid UTF-8".into());
    };
    let mut new = text.to_string();
    if !edit.tombstones.is_empty() {
        let (doc, _) = parse(&edit.relpath, &bytes, usize::MAX);
        let mut spans: Vec<Range<usize>> = derived_items(&doc, &bytes)
            .0
            .into_iter()
            .filter_map(|derived| match derived {
                DerivedMarker::Item(item) if edit.tombstones.contains(&item.id) => {
                    Some(doc.markers[item.marker].span.clone())
                }
                _ => None,
            })
            .collect();
        spans.sort_by_key(|span| std::cmp::Reverse(span.start));
        let mut removed_from = usize::MAX;
        for span in spans {
            // Blocks nested in an already removed block went with it.
            if span.end > removed_from {
                continue;
            }
            removed_from = remove_block(&mut new, span);
        }
    }
    if let Some(heat) = edit.set_heat {
        new = set_frontmatter_scalar(&new, "heat", &heat.to_string())
            .ok_or("left alone: its `heat:` cannot be rewritten in place (not a single value)")?;
    }
    if edit.graduate {
        new = set_frontmatter_scalar(&new, "status", "graduated")
            .ok_or("left alone: its `status:` cannot be rewritten in place (not a single value)")?;
    }
    // A drained note without frontmatter (or with a `region:` that is not one value) moves
    // as it is: its folder says where it belongs.
    if let Some(region) = edit.set_region {
        new = set_frontmatter_scalar(&new, "region", region).unwrap_or(new);
    }
    if edit.set_active {
        new = set_frontmatter_scalar(&new, "status", "active").unwrap_or(new);
    }
    Ok(Prepared { path, old: bytes, new })
}

/// Bytes of one disk sector: a write within one is never torn by a crash.
const SECTOR: usize = 512;

/// The one range of bytes where `new` differs from `old` when both have the same length and
/// the range lies within one sector (a new `heat:` digit): such an edit is written in place,
/// and a crash leaves the file either as it was or as the tick made it.
fn in_place_range(old: &[u8], new: &[u8]) -> Option<Range<usize>> {
    if old.len() != new.len() {
        return None;
    }
    let start = old.iter().zip(new).position(|(a, b)| a != b)?;
    let end = old.len() - old.iter().rev().zip(new.iter().rev()).position(|(a, b)| a != b)?;
    (start / SECTOR == (end - 1) / SECTOR).then_some(start..end)
}

/// A write whose new bytes wait in a temp file beside their destination (not yet synced,
/// not yet in place), with the index entry they make.
struct Staged {
    temp: PathBuf,
    new_sha256: String,
    changed: ChangedFile,
}

/// An edit ready to be put in place: staged in a temp file, or (an edit of a few bytes of
/// one sector that leaves the length, no move) the new text, written in place at commit.
enum StagedEdit {
    Temp(Box<Staged>),
    InPlace { new: String, range: Range<usize> },
}

/// How the index entry of a written file is made: `(relpath, bytes, a path to stat)`.
type Reindex<'a> = &'a (dyn Fn(&str, &[u8], &Path) -> ChangedFile + Sync);

/// Computes an edit and stages its new bytes (beside the target of a move), or keeps the
/// new text of an edit written in place (see [`in_place_range`]; Unix).
fn stage_edit(root: &Path, edit: &FileEdit, reindex: Reindex<'_>) -> Result<StagedEdit, String> {
    let Prepared { path, old, new } = prepare_edit(root, edit)?;
    if cfg!(unix)
        && edit.move_to.is_none()
        && let Some(range) = in_place_range(&old, new.as_bytes())
    {
        return Ok(StagedEdit::InPlace { new, range });
    }
    drop(old);
    let relpath = edit.move_to.as_deref().unwrap_or(&edit.relpath);
    let temp = fsio::stage(&root.join(relpath), new.as_bytes(), Some(&path)).map_err(|err| match &edit.move_to {
        Some(target) => format!("not graduated: cannot write {target}: {err}"),
        None => format!("left alone: cannot write it: {err}"),
    })?;
    let changed = reindex(relpath, new.as_bytes(), &temp);
    Ok(StagedEdit::Temp(Box::new(Staged { temp, new_sha256: sha256_hex(new.as_bytes()), changed })))
}

/// Writes an edit of a few bytes in place if the file still holds what was read, then
/// makes its index entry (dated by the file as written).
fn commit_in_place(
    root: &Path,
    edit: &FileEdit,
    new: &str,
    range: Range<usize>,
    before_write: Option<&(dyn Fn(&Path) + Sync)>,
    reindex: Reindex<'_>,
) -> Result<ChangedFile, String> {
    let path = root.join(&edit.relpath);
    if let Some(hook) = before_write {
        hook(&path);
    }
    #[cfg(unix)]
    let written = fsio::patch_in_place(&path, &edit.sha256, range.start as u64, &new.as_bytes()[range]);
    #[cfg(not(unix))]
    let written: std::io::Result<bool> = {
        let _ = range;
        Err(std::io::Error::other("in-place writes need Unix"))
    };
    match written {
        Ok(true) => Ok(reindex(&edit.relpath, new.as_bytes(), &path)),
        Ok(false) => Err("left alone: the file changed while the tick was updating it".into()),
        Err(err) => Err(format!("left alone: cannot write it: {err}")),
    }
}

/// Puts a staged edit in place: renamed over the file if it still holds what was read, or,
/// for a graduation that moves the file, linked in at the target (never over an existing
/// file) and then the original removed if it still holds what was read. A move runs only
/// under the journal of [`super::moves`].
fn commit_edit(
    root: &Path,
    edit: &FileEdit,
    temp: &Path,
    new_sha256: &str,
    before_write: Option<&(dyn Fn(&Path) + Sync)>,
) -> Result<(), String> {
    let path = root.join(&edit.relpath);
    if let Some(hook) = before_write {
        hook(&path);
    }
    let changed = || "left alone: the file changed while the tick was updating it".to_string();
    match &edit.move_to {
        None => match fsio::replace_staged(&path, temp, &edit.sha256) {
            Ok(true) => Ok(()),
            Ok(false) => Err(changed()),
            Err(err) => Err(format!("left alone: cannot write it: {err}")),
        },
        Some(target_relpath) => {
            let target = root.join(target_relpath);
            match fsio::create_staged(&target, temp) {
                Ok(true) => {}
                Ok(false) => return Err(format!("not graduated: {target_relpath} already exists")),
                Err(err) => return Err(format!("not graduated: cannot write {target_relpath}: {err}")),
            }
            // The copy exists; the original goes only if nobody touched it meanwhile.
            match fsio::remove_if_hash(&path, &edit.sha256) {
                Ok(true) => Ok(()),
                Ok(false) => {
                    let _ = fsio::remove_if_hash(&target, new_sha256);
                    Err(changed())
                }
                Err(err) => {
                    let _ = fsio::remove_if_hash(&target, new_sha256);
                    Err(format!("not graduated: cannot remove the original: {err}"))
                }
            }
        }
    }
}

/// Stages a generated note to write (removals stage nothing).
fn stage_note(root: &Path, op: &NoteOp, reindex: Reindex<'_>) -> Result<Option<Staged>, (String, String)> {
    let NoteOp::Write { relpath, content, .. } = op else { return Ok(None) };
    let temp = fsio::stage(&root.join(relpath), content.as_bytes(), None)
        .map_err(|err| (relpath.clone(), format!("not written: {err}")))?;
    let changed = reindex(relpath, content.as_bytes(), &temp);
    Ok(Some(Staged { temp, new_sha256: sha256_hex(content.as_bytes()), changed }))
}

/// What [`commit_note`] did: the index entry of the note written (`None` for a removal), or
/// the relpath and why it was skipped.
type NoteOutcome = Result<Option<ChangedFile>, (String, String)>;

/// Puts a staged note in place, or removes a note, never over a file changed since the scan.
fn commit_note(root: &Path, op: &NoteOp, staged: Option<Staged>) -> NoteOutcome {
    match (op, staged) {
        (NoteOp::Write { relpath, existing_sha, .. }, Some(staged)) => {
            let path = root.join(relpath);
            let result = match existing_sha {
                None => fsio::create_staged(&path, &staged.temp)
                    .map(|created| created.then_some(()).ok_or("not written: the file appeared since the scan")),
                Some(sha) => fsio::replace_staged(&path, &staged.temp, sha)
                    .map(|replaced| replaced.then_some(()).ok_or("not written: the file changed since the scan")),
            };
            match result {
                Ok(Ok(())) => Ok(Some(staged.changed)),
                Ok(Err(reason)) => Err((relpath.clone(), reason.to_string())),
                Err(err) => Err((relpath.clone(), format!("not written: {err}"))),
            }
        }
        (NoteOp::Write { relpath, .. }, None) => Err((relpath.clone(), "not written: not staged".into())),
        (NoteOp::Remove { relpath, sha256 }, _) => match fsio::remove_if_hash(&root.join(relpath), sha256) {
            Ok(true) => Ok(None),
            Ok(false) => Err((relpath.clone(), "not removed: the file changed since the scan".into())),
            Err(err) => Err((relpath.clone(), format!("not removed: {err}"))),
        },
    }
}

/// Writes the edits of user files and the generated notes (results in their order) in three
/// steps: every new text is computed and staged in a temp file beside its destination (on
/// several threads); one sync makes all of them durable; then each is put in place, checked
/// against what was read just before. Graduations that move a file are journaled (see
/// [`super::moves`]) between the sync and the first move; the journal goes when they are
/// done, so a kill at any moment leaves moves the next tick, scan or doctor completes, and
/// never a file whose bytes were not on disk before it took another's place.
fn apply_writes(
    root: &Path,
    edits: &[&FileEdit],
    notes: &[NoteOp],
    before_write: Option<&(dyn Fn(&Path) + Sync)>,
    reindex: Reindex<'_>,
) -> (Vec<Result<ChangedFile, String>>, Vec<NoteOutcome>) {
    let staged_edits = parallel_map(edits, |edit| stage_edit(root, edit, reindex));
    let staged_notes = parallel_map(notes, |op| stage_note(root, op, reindex));
    let temps: Vec<&Path> = staged_edits
        .iter()
        .filter_map(|staged| match staged {
            Ok(StagedEdit::Temp(s)) => Some(s.temp.as_path()),
            _ => None,
        })
        .chain(staged_notes.iter().filter_map(|staged| staged.as_ref().ok()?.as_ref().map(|s| s.temp.as_path())))
        .collect();
    if let Err(err) = fsio::sync_staged(root, &temps) {
        for temp in temps {
            let _ = std::fs::remove_file(temp);
        }
        let reason = format!("not written: cannot sync the new files: {err}");
        return (
            edits.iter().map(|_| Err(reason.clone())).collect(),
            notes.iter().map(|op| Err((note_relpath(op).to_string(), reason.clone()))).collect(),
        );
    }
    let journal: Vec<moves::Move> = edits
        .iter()
        .zip(&staged_edits)
        .filter_map(|(edit, staged)| {
            Some(moves::Move {
                from: edit.relpath.clone(),
                to: edit.move_to.clone()?,
                from_sha256: edit.sha256.clone(),
                to_sha256: match staged.as_ref().ok()? {
                    StagedEdit::Temp(s) => s.new_sha256.clone(),
                    StagedEdit::InPlace { .. } => return None,
                },
            })
        })
        .collect();
    let journaled = if journal.is_empty() { Ok(()) } else { moves::begin(root, &journal) };
    let slots: Vec<(usize, Slot<Result<StagedEdit, String>>)> =
        staged_edits.into_iter().enumerate().map(|(i, staged)| (i, std::sync::Mutex::new(Some(staged)))).collect();
    let edited = parallel_map(&slots, |(i, slot)| {
        let edit = edits[*i];
        let staged = slot.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        let staged = match staged.unwrap_or_else(|| Err("not applied".to_string()))? {
            StagedEdit::Temp(staged) => *staged,
            StagedEdit::InPlace { new, range } => {
                return commit_in_place(root, edit, &new, range, before_write, reindex);
            }
        };
        if edit.move_to.is_some()
            && let Err(err) = &journaled
        {
            let _ = std::fs::remove_file(&staged.temp);
            return Err(format!("not graduated: cannot write the move journal: {err}"));
        }
        commit_edit(root, edit, &staged.temp, &staged.new_sha256, before_write).map(|()| staged.changed)
    });
    if !journal.is_empty() && journaled.is_ok() {
        // Every move is done (or undone): the journal goes. Should that fail, the next run
        // finds each move completed and removes it.
        let _ = moves::end(root);
    }
    let note_slots: Vec<(usize, Slot<StagedNote>)> =
        staged_notes.into_iter().enumerate().map(|(i, staged)| (i, std::sync::Mutex::new(Some(staged)))).collect();
    let written = parallel_map(&note_slots, |(i, slot)| {
        let staged = slot.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        match staged {
            Some(Ok(staged)) => commit_note(root, &notes[*i], staged),
            Some(Err(skipped)) => Err(skipped),
            None => Err((note_relpath(&notes[*i]).to_string(), "not applied".into())),
        }
    });
    (edited, written)
}

/// A value one worker of [`parallel_map`] takes out.
type Slot<T> = std::sync::Mutex<Option<T>>;

/// A staged note (`None`: a removal), or the relpath and why it was not staged.
type StagedNote = Result<Option<Staged>, (String, String)>;

fn note_relpath(op: &NoteOp) -> &str {
    match op {
        NoteOp::Write { relpath, .. } | NoteOp::Remove { relpath, .. } => relpath,
    }
}

/// Removes a marker block; when it stands on lines of its own, the lines go too. Returns
/// where the removal started.
pub(super) fn remove_block(text: &mut String, span: Range<usize>) -> usize {
    let line_start = text[..span.start].rfind('\n').map_or(0, |index| index + 1);
    let line_end = text[span.end..].find('\n').map_or(text.len(), |index| span.end + index);
    let (start, end) = if text[line_start..span.start].trim().is_empty() && text[span.end..line_end].trim().is_empty() {
        (line_start, (line_end + 1).min(text.len()))
    } else {
        (span.start, span.end)
    };
    text.replace_range(start..end, "");
    start
}

/// The items of an edited file when the edit left them as they were: an edit of `heat:` and
/// `status:` only (no item is made of them; `cluster_id`, `project:`, `created:` and the
/// blocks are untouched) that derives the very ids and date the index holds for the file.
fn kept_items(snapshot: &Snapshot, edit: &FileEdit, changed: &ChangedFile) -> Option<KeptItems> {
    if !edit.tombstones.is_empty() {
        return None;
    }
    let old = &snapshot.get(&edit.relpath)?.state;
    let new = &changed.analyzed.state;
    let same_ids = old.items == new.items && changed.analyzed.items.iter().map(|item| &item.id).eq(new.items.iter());
    // `created` may come from the file's time when the frontmatter has none: items are
    // dated by it, so it must not have moved either.
    // The arc item is made of the title and summary: they must not have moved either.
    let key =
        |arc: &super::state::ArcState| (arc.cluster_id.clone(), arc.created, arc.title.clone(), arc.summary.clone());
    let same_arc = old.arc.as_deref().map(key) == new.arc.as_deref().map(key);
    if !same_ids || !same_arc || old.project != new.project {
        return None;
    }
    let mut ids = new.items.clone();
    ids.extend(new.arc.as_ref().map(|arc| brain_core::vault::arc_id(&arc.cluster_id)));
    Some(KeptItems { from: edit.relpath.clone(), ids, was_owner: false })
}

/// The index entry of a file the tick just wrote (`stat`: the file whose time dates it, the
/// staged temp that becomes it). Its time is recent, so it is recorded as racy: the next
/// scan confirms the hash once (without parsing).
fn reindex(stat: &Path, relpath: &str, bytes: &[u8], max_bytes: usize, counter: TokenCounter) -> ChangedFile {
    let metadata = std::fs::metadata(stat).ok();
    let mtime_ns = metadata.as_ref().map_or(0, super::walk::mtime_ns);
    let analyzed = analyze(relpath, bytes, mtime_ns, max_bytes, counter);
    ChangedFile::new(relpath.to_string(), bytes.len() as u64, 0, sha256_hex(bytes), analyzed)
}

/// At most this many threads write files. Staging does not fsync (one `syncfs` makes the
/// batch durable), so the work is the kernel's file creation and renames: one thread a core.
const WRITE_THREADS: usize = 8;

/// Consecutive items a writing thread takes at a time: the items are in path order, so two
/// threads seldom create files in the same folder at once (creations in one folder queue on
/// its lock).
const WRITE_RUN: usize = 32;

/// `f` over `items` on up to [`WRITE_THREADS`] threads (one a core); results in input order.
/// Each result is written straight into its own slot of one vector allocated up front: no
/// per-thread vectors grown by doubling and merged afterwards (at a first tick's ~10k results
/// of a few hundred bytes, those held megabytes of slack at its peak of memory).
fn parallel_map<T: Sync, R: Send + Sync>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(WRITE_THREADS);
    if items.len() < 4 || threads == 1 {
        return items.iter().map(&f).collect();
    }
    let slots: Vec<std::sync::OnceLock<R>> = items.iter().map(|_| std::sync::OnceLock::new()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.min(items.len()))
            .map(|_| {
                scope.spawn(|| {
                    loop {
                        let start = next.fetch_add(WRITE_RUN, std::sync::atomic::Ordering::Relaxed);
                        if start >= items.len() {
                            break;
                        }
                        let end = (start + WRITE_RUN).min(items.len());
                        for (item, slot) in items[start..end].iter().zip(&slots[start..end]) {
                            // Each index is taken by one thread once: the slot is empty.
                            let _ = slot.set(f(item));
                        }
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
    slots.into_iter().map(|slot| slot.into_inner().expect("every index was taken by one thread")).collect()
}

/// Appends one line to `health.jsonl` (one `write` of the whole line, in append mode).
fn append_health(feed_dir: &Path, line: &HealthLine) -> BrainResult<()> {
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
