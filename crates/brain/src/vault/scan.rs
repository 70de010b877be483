//! The incremental scan: walk the vault, compare each file with the index, read and parse
//! only what changed, and write every change in one store transaction.
//!
//! The "unchanged" key is `(size, mtime_ns)` as recorded by the last scan: a file whose stat
//! matches is neither read nor parsed. When the stat differs the file is read and hashed;
//! same SHA-256 means a touch (only the stat is updated), else it is parsed again and its
//! items are diffed against the ids the index holds for it (new ids inserted, vanished ids
//! deleted, changed fields updated). A file whose modification time is within
//! [`RACY_WINDOW_NS`] of the scan is recorded with `mtime_ns = 0`, so the next scan hashes it
//! again: an edit landing in the same timestamp tick as the read cannot hide (git's "racy
//! clean" problem).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use brain_core::vault::{Diagnostic, DiagnosticSeverity, arc_id};
use brain_core::{Item, Kind};
use brain_store::{ItemFilter, StoreError, VaultFileRecord, WriteTx};
use serde::Serialize;

use super::fsio::sha256_hex;
use super::state::{
    Analyzed, FileState, SOURCE_PREFIX, analyze, arc_item, diagnostics_from_json, diagnostics_to_json, oversized,
    same_indexed_fields, with_indexed_fields,
};
use super::walk::{WalkedFile, walk};
use crate::app::Brain;
use crate::error::{BrainError, BrainResult};

/// Files modified this close (2 s) to the scan are hashed again by the next scan.
pub(crate) const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// Message prefix of the diagnostic on a second file with the same `cluster_id`.
const DUPLICATE_PREFIX: &str = "duplicate cluster_id";

/// One indexed file.
#[derive(Clone, Debug, Default)]
pub(crate) struct IndexedFile {
    pub size: u64,
    pub mtime_ns: i64,
    pub sha256: String,
    pub state: FileState,
    pub diagnostics: Vec<Diagnostic>,
}

/// The whole index in memory, by relpath.
pub(crate) type Snapshot = BTreeMap<String, IndexedFile>;

/// A progress callback: `(done, total)` files read.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// What a scan did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScanReport {
    pub vault: String,
    /// Markdown files in the vault.
    pub files: usize,
    /// Files parsed (new or changed content).
    pub parsed: usize,
    /// Files skipped by the (size, mtime) check.
    pub unchanged: usize,
    /// Files whose stat changed but whose bytes did not.
    pub touched: usize,
    pub added: usize,
    pub modified: usize,
    pub removed: usize,
    pub items_inserted: usize,
    pub items_updated: usize,
    pub items_deleted: usize,
    /// True when the index held another vault and was rebuilt for this one.
    pub reindexed: bool,
    /// Vault-derived items in the index after the scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_items: Option<u64>,
    /// Arcs in the index after the scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_arcs: Option<u64>,
    pub diagnostics: Vec<DiagnosticOut>,
    pub ms: f64,
}

/// A diagnostic on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiagnosticOut {
    pub file: String,
    pub line: u32,
    pub severity: String,
    pub message: String,
}

impl From<&Diagnostic> for DiagnosticOut {
    fn from(d: &Diagnostic) -> Self {
        DiagnosticOut { file: d.file.clone(), line: d.line, severity: d.severity.as_str().into(), message: d.message.clone() }
    }
}

/// A file whose content was (re)parsed.
#[derive(Debug)]
pub(crate) struct ChangedFile {
    pub relpath: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub sha256: String,
    pub analyzed: Analyzed,
}

/// Everything one transaction writes to the index.
#[derive(Debug, Default)]
pub(crate) struct IndexChanges {
    /// Drop the whole vault index first (another vault was indexed).
    pub reset: bool,
    /// Removed files with the state they had.
    pub removed: Vec<(String, FileState)>,
    pub changed: Vec<ChangedFile>,
    /// Same bytes, new stat: `(relpath, size, mtime_ns)`.
    pub touched: Vec<(String, u64, i64)>,
    /// Unchanged bytes whose state changed (arc ownership, duplicate diagnostics).
    pub restated: Vec<(String, IndexedFile)>,
    /// Arcs whose item must be (re)written: the owning relpath and its state.
    pub arc_upserts: Vec<(String, FileState)>,
    /// Arc item ids no file owns any more.
    pub arc_deletes: Vec<String>,
    /// Old states of changed files, by relpath (for the item diff).
    pub old_states: HashMap<String, FileState>,
    pub root: Option<String>,
    pub feed: Option<String>,
    /// `{"items": n, "arcs": m}` of the index after the change (what `vault scan` reports
    /// without counting rows).
    pub counts: Option<String>,
}

impl IndexChanges {
    pub fn is_empty(&self) -> bool {
        !self.reset
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.touched.is_empty()
            && self.restated.is_empty()
            && self.arc_upserts.is_empty()
            && self.arc_deletes.is_empty()
    }
}

/// Counts of an applied change set.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Applied {
    pub inserted: usize,
    pub updated: usize,
    pub deleted: usize,
}

/// The outcome of [`scan`]: the report, the index after the scan (when asked for), the
/// changes (applied unless it was a dry run).
pub(crate) struct ScanRun {
    pub report: ScanReport,
    pub snapshot: Option<Snapshot>,
}

/// How to scan.
pub(crate) struct ScanMode<'a> {
    /// Compute everything, write nothing.
    pub dry_run: bool,
    /// Return the whole index (the tick needs it; `vault scan` only when something changed).
    pub want_snapshot: bool,
    /// Recompute the session feed when something changed (the tick writes its own).
    pub write_feed: bool,
    pub progress: Progress<'a>,
}

enum Read {
    Touched,
    Changed { sha256: String, analyzed: Analyzed },
    Failed(Diagnostic),
}

/// Scans the vault at `root` (canonical) into the index of `brain`. `skip` are vault-relative
/// folders the walk does not enter.
pub(crate) fn scan(brain: &Brain, root: &Path, skip: &[String], mode: &ScanMode<'_>) -> BrainResult<ScanRun> {
    let started = Instant::now();
    let racy_cutoff = wall_clock_ns() - RACY_WINDOW_NS;
    let config = &brain.config.vault;
    let store = brain.store();
    let walked = walk(root, skip);
    let root_text = root.display().to_string();
    let stored_root = store.vault_value("root")?;
    let reset = stored_root.as_deref().is_some_and(|stored| stored != root_text);
    let records: Vec<VaultFileRecord> = if reset { Vec::new() } else { store.vault_files(false)? };
    let by_relpath: HashMap<&str, &VaultFileRecord> = records.iter().map(|r| (r.relpath.as_str(), r)).collect();

    let mut report = ScanReport { vault: root_text.clone(), files: walked.files.len(), reindexed: reset, ..ScanReport::default() };
    let mut diagnostics: Vec<Diagnostic> = walked.diagnostics;
    let mut to_read: Vec<&WalkedFile> = Vec::new();
    for file in &walked.files {
        match by_relpath.get(file.relpath.as_str()) {
            Some(record) if record.mtime_ns != 0 && record.mtime_ns == file.mtime_ns && record.size == file.size => {
                report.unchanged += 1;
                diagnostics.extend(diagnostics_from_json(&record.relpath, &record.diagnostics));
            }
            _ => to_read.push(file),
        }
    }
    let on_disk: HashSet<&str> = walked.files.iter().map(|f| f.relpath.as_str()).collect();
    let removed_paths: Vec<&str> =
        records.iter().map(|r| r.relpath.as_str()).filter(|relpath| !on_disk.contains(relpath)).collect();

    let reads = read_files(&to_read, &by_relpath, config.max_file_bytes, *brain.counter(), mode.progress);
    let mut changes = IndexChanges { reset, ..IndexChanges::default() };
    for (file, read) in to_read.iter().zip(reads) {
        let recorded_mtime = if file.mtime_ns >= racy_cutoff { 0 } else { file.mtime_ns };
        match read {
            Read::Touched => {
                report.touched += 1;
                if let Some(record) = by_relpath.get(file.relpath.as_str()) {
                    diagnostics.extend(diagnostics_from_json(&record.relpath, &record.diagnostics));
                }
                changes.touched.push((file.relpath.clone(), file.size, recorded_mtime));
            }
            Read::Changed { sha256, analyzed } => {
                report.parsed += 1;
                if by_relpath.contains_key(file.relpath.as_str()) {
                    report.modified += 1;
                } else {
                    report.added += 1;
                }
                changes.changed.push(ChangedFile {
                    relpath: file.relpath.clone(),
                    size: file.size,
                    mtime_ns: recorded_mtime,
                    sha256,
                    analyzed,
                });
            }
            Read::Failed(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    report.removed = removed_paths.len();

    let nothing_changed = !reset && changes.changed.is_empty() && changes.touched.is_empty() && removed_paths.is_empty();
    if nothing_changed && !mode.want_snapshot {
        let stored: Option<serde_json::Value> =
            store.vault_value("counts")?.and_then(|text| serde_json::from_str(&text).ok());
        let (items, arcs) = match stored {
            Some(counts) => (counts["items"].as_u64().unwrap_or(0), counts["arcs"].as_u64().unwrap_or(0)),
            None => indexed_counts(brain)?,
        };
        report.indexed_items = Some(items);
        report.indexed_arcs = Some(arcs);
        finish(&mut report, diagnostics, started);
        return Ok(ScanRun { report, snapshot: None });
    }

    // Something changed (or the caller needs the index): load the stored states and lay the
    // changes over them.
    let mut snapshot = if reset { Snapshot::new() } else { load_snapshot(brain)? };
    overlay(&mut snapshot, &mut changes, &removed_paths);
    for (relpath, file) in &changes.restated {
        diagnostics.retain(|d| d.file != *relpath);
        diagnostics.extend(file.diagnostics.iter().cloned());
    }
    for changed in &changes.changed {
        diagnostics.extend(changed.analyzed.diagnostics.iter().cloned());
    }
    changes.root = Some(root_text);
    if mode.write_feed && !changes.is_empty() {
        let feed = super::feed::FeedState::compute(&snapshot, brain.now, config);
        changes.feed = Some(serde_json::to_string(&feed).map_err(|err| BrainError::internal(err.to_string()))?);
    }
    if !mode.dry_run && !(changes.is_empty() && stored_root.is_some()) {
        let applied = apply(brain, &changes, &mut diagnostics)?;
        report.items_inserted = applied.inserted;
        report.items_updated = applied.updated;
        report.items_deleted = applied.deleted;
    }
    let (items, arcs) = snapshot_counts(&snapshot);
    report.indexed_items = Some(items);
    report.indexed_arcs = Some(arcs);
    finish(&mut report, diagnostics, started);
    Ok(ScanRun { report, snapshot: mode.want_snapshot.then_some(snapshot) })
}

/// Lays `changes` (plus the removal of `removed`) over `snapshot`: removed files leave it
/// (their states move into `changes.removed`), touched files take their new stat, changed
/// files their new state (the old one kept in `changes.old_states`); then arc ownership is
/// settled again.
pub(crate) fn overlay(snapshot: &mut Snapshot, changes: &mut IndexChanges, removed: &[&str]) {
    let old_owners = owners(snapshot);
    for relpath in removed {
        if let Some(file) = snapshot.remove(*relpath) {
            changes.removed.push((relpath.to_string(), file.state));
        }
    }
    for (relpath, size, mtime_ns) in &changes.touched {
        if let Some(file) = snapshot.get_mut(relpath) {
            file.size = *size;
            file.mtime_ns = *mtime_ns;
        }
    }
    for changed in &changes.changed {
        let previous = snapshot.insert(
            changed.relpath.clone(),
            IndexedFile {
                size: changed.size,
                mtime_ns: changed.mtime_ns,
                sha256: changed.sha256.clone(),
                state: changed.analyzed.state.clone(),
                diagnostics: changed.analyzed.diagnostics.clone(),
            },
        );
        if let Some(previous) = previous {
            changes.old_states.insert(changed.relpath.clone(), previous.state);
        }
    }
    let changed_paths: HashSet<String> = changes.changed.iter().map(|c| c.relpath.clone()).collect();
    settle_ownership(snapshot, &old_owners, &changed_paths, changes);
    for changed in &mut changes.changed {
        if let Some(file) = snapshot.get(&changed.relpath) {
            changed.analyzed.state.arc_owner = file.state.arc_owner;
            changed.analyzed.diagnostics = file.diagnostics.clone();
        }
    }
    let (items, arcs) = snapshot_counts(snapshot);
    changes.counts = Some(serde_json::json!({"items": items, "arcs": arcs}).to_string());
}

/// Items and arcs the index holds for `snapshot`.
fn snapshot_counts(snapshot: &Snapshot) -> (u64, u64) {
    let arcs = snapshot.values().filter(|file| file.state.arc_owner).count() as u64;
    let items = snapshot.values().map(|file| file.state.items.len() as u64).sum::<u64>() + arcs;
    (items, arcs)
}

fn finish(report: &mut ScanReport, mut diagnostics: Vec<Diagnostic>, started: Instant) {
    diagnostics.sort_by(|a, b| a.file.cmp(&b.file).then(a.line.cmp(&b.line)));
    diagnostics.dedup();
    report.diagnostics = diagnostics.iter().map(DiagnosticOut::from).collect();
    report.ms = started.elapsed().as_secs_f64() * 1000.0;
}

/// Wall-clock nanoseconds (file times are wall-clock; `--now` plays no part here).
fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

/// Reads, hashes and parses files on all cores, in input order.
fn read_files(
    files: &[&WalkedFile],
    records: &HashMap<&str, &VaultFileRecord>,
    max_bytes: usize,
    counter: brain_core::tokens::TokenCounter,
    progress: Progress<'_>,
) -> Vec<Read> {
    let total = files.len();
    if total == 0 {
        return Vec::new();
    }
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8).min(total.div_ceil(16)).max(1);
    let work = || {
        let mut out = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= total {
                break;
            }
            let file = files[index];
            let known = records.get(file.relpath.as_str()).map(|r| r.sha256.as_str());
            out.push((index, read_one(file, known, max_bytes, counter)));
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if finished.is_multiple_of(64) || finished == total {
                progress(finished, total);
            }
        }
        out
    };
    let mut results: Vec<(usize, Read)> = if threads == 1 {
        work()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles.into_iter().flat_map(|handle| handle.join().unwrap_or_default()).collect()
        })
    };
    results.sort_unstable_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, read)| read).collect()
}

fn read_one(file: &WalkedFile, known_sha: Option<&str>, max_bytes: usize, counter: brain_core::tokens::TokenCounter) -> Read {
    if file.size > max_bytes as u64 {
        // Not read at all; the stat stands in for the hash.
        let sha256 = format!("oversized:{}", file.size);
        if known_sha == Some(sha256.as_str()) {
            return Read::Touched;
        }
        return Read::Changed { analyzed: oversized(&file.relpath, file.size, max_bytes, file.mtime_ns), sha256 };
    }
    let bytes = match std::fs::read(&file.path) {
        Ok(bytes) => bytes,
        Err(err) => {
            return Read::Failed(Diagnostic {
                file: file.relpath.clone(),
                line: 0,
                severity: DiagnosticSeverity::Warning,
                message: format!("cannot read: {err}; skipped"),
            });
        }
    };
    let sha256 = sha256_hex(&bytes);
    if known_sha == Some(sha256.as_str()) {
        return Read::Touched;
    }
    Read::Changed { analyzed: analyze(&file.relpath, &bytes, file.mtime_ns, max_bytes, counter), sha256 }
}

/// The whole stored index.
pub(crate) fn load_snapshot(brain: &Brain) -> BrainResult<Snapshot> {
    let records = brain.store().vault_files(true)?;
    let mut snapshot = Snapshot::new();
    for record in records {
        let state: FileState = serde_json::from_str(&record.state).unwrap_or_else(|_| FileState {
            // An unreadable state forces a re-parse: the recorded stat no longer matches.
            ..FileState::default()
        });
        let diagnostics = diagnostics_from_json(&record.relpath, &record.diagnostics);
        snapshot.insert(
            record.relpath,
            IndexedFile { size: record.size, mtime_ns: record.mtime_ns, sha256: record.sha256, state, diagnostics },
        );
    }
    Ok(snapshot)
}

/// `cluster_id` → owning relpath.
fn owners(snapshot: &Snapshot) -> HashMap<String, String> {
    snapshot
        .iter()
        .filter(|(_, file)| file.state.arc_owner)
        .filter_map(|(relpath, file)| Some((file.state.arc.as_ref()?.cluster_id.clone(), relpath.clone())))
        .collect()
}

/// Decides which file owns each `cluster_id` (the first by path), marks duplicates with a
/// diagnostic, and records the arc items and states that change because of it.
fn settle_ownership(
    snapshot: &mut Snapshot,
    old_owners: &HashMap<String, String>,
    changed: &HashSet<String>,
    changes: &mut IndexChanges,
) {
    let mut owners: HashMap<String, String> = HashMap::new();
    for (relpath, file) in snapshot.iter_mut() {
        let was_owner = file.state.arc_owner;
        let before = file.diagnostics.clone();
        file.diagnostics.retain(|d| !d.message.starts_with(DUPLICATE_PREFIX));
        match &file.state.arc {
            Some(arc) => match owners.get(&arc.cluster_id) {
                Some(owner) => {
                    file.state.arc_owner = false;
                    file.diagnostics.push(Diagnostic {
                        file: relpath.clone(),
                        line: 0,
                        severity: DiagnosticSeverity::Warning,
                        message: format!(
                            "{DUPLICATE_PREFIX} {} (also in {owner}); this file is not indexed as an arc",
                            arc.cluster_id
                        ),
                    });
                }
                None => {
                    file.state.arc_owner = true;
                    owners.insert(arc.cluster_id.clone(), relpath.clone());
                }
            },
            None => file.state.arc_owner = false,
        }
        if !changed.contains(relpath) && (was_owner != file.state.arc_owner || before != file.diagnostics) {
            changes.restated.push((relpath.clone(), file.clone()));
        }
    }
    let mut upserts: Vec<(String, FileState)> = Vec::new();
    for (cluster_id, relpath) in &owners {
        if old_owners.get(cluster_id) != Some(relpath) || changed.contains(relpath) {
            upserts.push((relpath.clone(), snapshot[relpath].state.clone()));
        }
    }
    upserts.sort_by(|a, b| a.0.cmp(&b.0));
    changes.arc_upserts = upserts;
    let mut deletes: Vec<String> =
        old_owners.keys().filter(|cluster_id| !owners.contains_key(*cluster_id)).map(|id| arc_id(id)).collect();
    deletes.sort();
    changes.arc_deletes = deletes;
}

/// Writes a change set in one transaction. Store diagnostics (an id taken by a non-vault
/// item) are added to `diagnostics`. New items go in by batches (see
/// `WriteTx::insert_many`); items the index already knew are compared and updated only when
/// a field changed.
pub(crate) fn apply(brain: &Brain, changes: &IndexChanges, diagnostics: &mut Vec<Diagnostic>) -> BrainResult<Applied> {
    let counter = *brain.counter();
    let mut applied = Applied::default();
    let mut arc_items: Vec<(Item, bool)> = Vec::new();
    for (relpath, state) in &changes.arc_upserts {
        match arc_item(relpath, state, counter) {
            Some(Ok(item)) => {
                let known = changes.old_states.get(relpath).is_some_and(|old| old.arc_owner)
                    || !changes.changed.iter().any(|c| c.relpath == *relpath);
                arc_items.push((item, known));
            }
            Some(Err(err)) => diagnostics.push(Diagnostic {
                file: relpath.clone(),
                line: 0,
                severity: DiagnosticSeverity::Warning,
                message: format!("arc not indexed: {err}"),
            }),
            None => {}
        }
    }
    brain.store().write(|tx| {
        if changes.reset {
            tx.clear_vault_files()?;
            applied.deleted += tx.delete_items_by_source_prefix(SOURCE_PREFIX)?;
        }
        let mut deletes: Vec<String> = changes.arc_deletes.clone();
        let mut fresh: Vec<&Item> = Vec::new();
        let mut known: Vec<&Item> = Vec::new();
        for (relpath, state) in &changes.removed {
            deletes.extend(state.items.iter().cloned());
            tx.delete_vault_file(relpath)?;
        }
        for changed in &changes.changed {
            let old = changes.old_states.get(&changed.relpath);
            let old_ids: HashSet<&str> = old.map(|s| s.items.iter().map(String::as_str).collect()).unwrap_or_default();
            let new_ids: HashSet<&str> = changed.analyzed.items.iter().map(|i| i.id.as_str()).collect();
            deletes.extend(old_ids.difference(&new_ids).map(|id| id.to_string()));
            for item in &changed.analyzed.items {
                if old_ids.contains(item.id.as_str()) { known.push(item) } else { fresh.push(item) }
            }
            tx.put_vault_file(&VaultFileRecord {
                relpath: changed.relpath.clone(),
                size: changed.size,
                mtime_ns: changed.mtime_ns,
                sha256: changed.sha256.clone(),
                state: state_json(&changed.analyzed.state),
                diagnostics: diagnostics_to_json(&changed.analyzed.diagnostics),
            })?;
        }
        for (item, is_known) in &arc_items {
            if *is_known { known.push(item) } else { fresh.push(item) }
        }
        applied.deleted += tx.delete_many(&deletes)?;
        let fresh_items: Vec<Item> = fresh.iter().map(|item| (*item).clone()).collect();
        let taken: HashSet<String> = tx.insert_many(&fresh_items)?.into_iter().collect();
        applied.inserted += fresh_items.len() - taken.len();
        for item in fresh.iter().filter(|item| taken.contains(&item.id)).chain(known.iter()) {
            upsert(tx, item, &mut applied, diagnostics)?;
        }
        for (relpath, size, mtime_ns) in &changes.touched {
            tx.touch_vault_file(relpath, *size, *mtime_ns)?;
        }
        for (relpath, file) in &changes.restated {
            tx.put_vault_file(&VaultFileRecord {
                relpath: relpath.clone(),
                size: file.size,
                mtime_ns: file.mtime_ns,
                sha256: file.sha256.clone(),
                state: state_json(&file.state),
                diagnostics: diagnostics_to_json(&file.diagnostics),
            })?;
        }
        if let Some(root) = &changes.root {
            tx.set_vault_value("root", root)?;
        }
        if let Some(counts) = &changes.counts {
            tx.set_vault_value("counts", counts)?;
        }
        if let Some(feed) = &changes.feed {
            tx.set_vault_value("feed", feed)?;
        }
        Ok(())
    })?;
    Ok(applied)
}

pub(crate) fn state_json(state: &FileState) -> String {
    serde_json::to_string(state).unwrap_or_else(|_| "{}".into())
}

/// Writes `item` over the stored one when the index's fields differ (inserting it when it is
/// gone); an id held by an item that does not come from the vault is left alone.
fn upsert(
    tx: &mut WriteTx<'_>,
    item: &Item,
    applied: &mut Applied,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(), StoreError> {
    match tx.get(&item.id)? {
        None => {
            tx.insert(item)?;
            applied.inserted += 1;
        }
        Some(stored) if !stored.source.starts_with(SOURCE_PREFIX) => diagnostics.push(Diagnostic {
            file: item.source.trim_start_matches(SOURCE_PREFIX).to_string(),
            line: 0,
            severity: DiagnosticSeverity::Warning,
            message: format!("id {} is taken by an item that does not come from the vault; not indexed", item.id),
        }),
        Some(stored) if same_indexed_fields(&stored, item) => {}
        Some(stored) => {
            tx.update(&with_indexed_fields(&stored, item), None)?;
            applied.updated += 1;
        }
    }
    Ok(())
}

/// Counts of what the index holds: vault items and arcs.
pub(crate) fn indexed_counts(brain: &Brain) -> BrainResult<(u64, u64)> {
    let items = brain.count(&ItemFilter { source_prefix: Some(SOURCE_PREFIX.into()), ..ItemFilter::default() })?;
    let arcs = brain.count(&ItemFilter {
        source_prefix: Some(SOURCE_PREFIX.into()),
        kinds: vec![Kind::Arc],
        ..ItemFilter::default()
    })?;
    Ok((items, arcs))
}

/// The canonical vault root, or a user error naming the path.
pub(crate) fn canonical_root(path: &Path) -> BrainResult<PathBuf> {
    let missing = || {
        BrainError::user_with_hint(
            format!("vault {} does not exist", path.display()),
            "create it with `brain vault init` (or pass --vault DIR / set [vault] path in config.toml)",
        )
    };
    let root = std::fs::canonicalize(path).map_err(|_| missing())?;
    if !root.is_dir() {
        return Err(BrainError::user(format!("vault {} is not a folder", path.display())));
    }
    Ok(root)
}
