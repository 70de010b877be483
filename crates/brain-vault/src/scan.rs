//! The incremental scan: walk the vault, compare each file with the index, read and parse
//! only what changed, and write the changes in one store transaction.
//!
//! The "unchanged" key is `(size, mtime_ns)` as recorded by the last scan: a file whose stat
//! matches is neither read nor parsed. When the stat differs the file is read and hashed;
//! same SHA-256 means a touch (only the stat is updated), else it is parsed again and its
//! items are diffed against the ids the index holds for it (new ids inserted, vanished ids
//! deleted, changed fields updated). A file whose modification time is within
//! [`RACY_WINDOW_NS`] of the scan is recorded with `mtime_ns = 0`, so the next scan hashes it
//! again: an edit landing in the same timestamp tick as the read cannot hide (git's "racy
//! clean" problem).
//!
//! Cost: the walk (a `statx` per file) runs beside the read of the index. On a first scan
//! the items of new files are inserted while the rest is still being parsed, in a
//! transaction of their own that spans the parse (batches of 900 rows: one row per
//! statement makes FTS5 flush at every statement savepoint); the rest follows in the main
//! transaction. Should the process die between the two, the next scan finds those files
//! new again and their ids taken: it compares and keeps the items (tested).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use brain_core::vault::{Diagnostic, DiagnosticSeverity, arc_id};
use brain_core::{Item, Kind};
use brain_store::{ItemFilter, StoreError, VaultFileRecord, WriteTx};
use serde::Serialize;

use super::fsio::sha256_hex;
use super::state::{
    Analyzed, FileState, SOURCE_PREFIX, analyze, arc_item, diagnostics_to_json, moved_only, oversized,
    same_indexed_fields, with_indexed_fields,
};
use super::walk::{WalkedFile, walk};
use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};

/// Files modified this close (2 s) to the scan are hashed again by the next scan.
pub(crate) const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// The version of what the index derives from a file (ids, bounds, state shape). An index
/// written under another version is re-read whole by the next scan (every file parsed
/// again, its items diffed by id), so a change of the id scheme never leaves stale ids.
/// 2: ids of an arc's blocks from its `cluster_id`, signals keyed by source and severity,
/// bounded nesting and derived content. 3: an arc's `mitigates:`. 4: date folders'
/// `_dashboard.md` as generated notes. 5: states stored in postcard's encoding (fields by
/// position: any change of [`FileState`]'s shape needs a new version).
pub(crate) const INDEX_FORMAT: &str = "5";

/// Message prefix of the diagnostic on a second file with the same `cluster_id`.
const DUPLICATE_PREFIX: &str = "duplicate cluster_id";

pub(crate) use brain_api::feed_index::{indexed_file, load_snapshot};
pub use brain_core::keeper::snapshot::{IndexedFile, Snapshot};

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
    /// Graduations a killed tick left half done, finished before the scan (see
    /// [`super::moves`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<super::moves::Recovered>,
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
        DiagnosticOut {
            file: d.file.clone(),
            line: d.line,
            severity: d.severity.as_str().into(),
            message: d.message.clone(),
        }
    }
}

/// A file whose content was (re)parsed.
#[derive(Debug)]
pub struct ChangedFile {
    pub relpath: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub sha256: String,
    pub analyzed: Analyzed,
    /// `analyzed.state` as stored, made where the file was parsed (off the writing thread)
    /// assuming the file owns its arc; redone when ownership settles otherwise.
    pub state_bytes: Vec<u8>,
    /// Set by the tick for a file it edited only in `heat:`/`status:` (values no item is
    /// made of): its items are the ones the index holds under this relpath (the file's old
    /// path when it moved), so they are not compared one by one; a move gives them the new
    /// source.
    pub kept_items: Option<KeptItems>,
}

/// The items a tick's edit left as they were (see [`ChangedFile::kept_items`]).
#[derive(Debug)]
pub struct KeptItems {
    /// The relpath they are indexed under.
    pub from: String,
    /// Their ids, the file's arc item included.
    pub ids: Vec<String>,
    /// The file owned its arc before the edit (set when the change is laid over the index).
    pub was_owner: bool,
}

impl ChangedFile {
    pub fn new(relpath: String, size: u64, mtime_ns: i64, sha256: String, mut analyzed: Analyzed) -> ChangedFile {
        analyzed.state.arc_owner = analyzed.state.arc.is_some();
        let state_bytes = analyzed.state.to_bytes();
        ChangedFile { relpath, size, mtime_ns, sha256, analyzed, state_bytes, kept_items: None }
    }
}

/// Everything one transaction writes to the index.
#[derive(Debug, Default)]
pub struct IndexChanges {
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
    /// Old states of changed files, by relpath (for the item diff); none for a file whose
    /// items were kept ([`ChangedFile::kept_items`]: whether it owned its arc is kept there).
    pub old_states: HashMap<String, FileState>,
    pub root: Option<String>,
    /// Record [`INDEX_FORMAT`] (the index was written under another one, or none).
    pub format: bool,
    pub feed: Option<String>,
    /// `{"items": n, "arcs": m}` of the index after the change (what `vault scan` reports
    /// without counting rows).
    pub counts: Option<String>,
    /// The digest of the feed's inputs and the hashes of the files it made (feed hashing).
    pub feed_cache: Option<String>,
    /// Items of new files whose id the store already held when they were streamed in: they
    /// are compared and updated like known items.
    pub taken: Vec<Item>,
    /// Arc items streamed in during the parse: arc id → the file they were made from.
    pub streamed_arcs: HashMap<String, String>,
    /// Ids a removed or changed file no longer lists that another file still does (the
    /// blocks of an arc are identified by its `cluster_id`, so a moved arc, or a copy, lists
    /// the same ids): not deleted.
    pub still_listed: HashSet<String>,
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
pub struct Applied {
    pub inserted: usize,
    pub updated: usize,
    pub deleted: usize,
}

/// The outcome of [`scan`]: the report, the index after the scan (when asked for), the
/// changes (applied unless it was a dry run).
pub(crate) struct ScanRun {
    pub report: ScanReport,
    pub snapshot: Option<Snapshot>,
    /// Temp files of ours the walk passed (see [`super::fsio::remove_stale_temps`]).
    pub temps: Vec<PathBuf>,
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
    Changed(Box<ChangedFile>),
    Failed(Diagnostic),
}

/// The index as the last scan left it: the stored root, whether this scan indexes another
/// vault (`reset`), whether it was written under [`INDEX_FORMAT`], every file by path with,
/// when asked for, its state, and the files whose stored state does not read back.
struct StoredIndex {
    root: Option<String>,
    reset: bool,
    current_format: bool,
    files: Snapshot,
    unreadable: HashSet<String>,
}

fn read_index(brain: &Brain, root_text: &str, with_states: bool) -> BrainResult<StoredIndex> {
    let store = brain.store();
    let root = store.vault_value("root")?;
    let reset = root.as_deref().is_some_and(|stored| stored != root_text);
    let current_format = store.vault_value("format")?.as_deref() == Some(INDEX_FORMAT);
    // Each state is decoded from the row in place. The tree is built here, beside the walk,
    // not after it (rows come in table order: ~11k inserts cost less than a sort and a build
    // on the thread everything else waits for).
    let mut files = Snapshot::new();
    let mut unreadable = HashSet::new();
    if !reset {
        store.vault_files_each(with_states, &mut |row| {
            let state = if with_states { FileState::from_bytes(row.state) } else { Some(FileState::default()) };
            if state.is_none() {
                unreadable.insert(row.relpath.to_string());
            }
            files.insert(row.relpath.to_string(), indexed_file(&row, state.unwrap_or_default()));
        })?;
    }
    Ok(StoredIndex { root, reset, current_format, files, unreadable })
}

/// Streaming starts at this many new files (below it, one transaction does it all).
const STREAM_MIN_FILES: usize = 64;

/// Items streamed per `insert_many` call.
const STREAM_BATCH: usize = 900;

/// Items inserted while files were being parsed.
#[derive(Debug, Default)]
struct Streamed {
    inserted: usize,
    /// Marker items whose id was taken (compared and updated later, with the other changes).
    taken: Vec<Item>,
    /// Arc items stored: arc id → the file they were made from. Which file owns an arc is
    /// settled after the parse; the owner's item is rewritten then if it came from another
    /// file (a copy with the same `cluster_id`) or was already in the store.
    arcs: HashMap<String, String>,
}

impl Streamed {
    fn flush(&mut self, tx: &mut WriteTx<'_>, batch: &mut Vec<Item>) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let refs: Vec<&Item> = batch.iter().collect();
        let skipped = tx.insert_many(&refs)?;
        self.inserted += batch.len() - skipped.len();
        // Skipped rows are the later ones of a repeated id: mark them from the end.
        let mut skipped_rows: HashMap<String, usize> = HashMap::new();
        for id in skipped {
            *skipped_rows.entry(id).or_default() += 1;
        }
        let mut rows: Vec<(Item, bool)> = Vec::with_capacity(batch.len());
        for item in batch.drain(..).rev() {
            let taken = match skipped_rows.get_mut(&item.id) {
                Some(left) if *left > 0 => {
                    *left -= 1;
                    true
                }
                _ => false,
            };
            rows.push((item, taken));
        }
        for (item, taken) in rows.into_iter().rev() {
            match (item.kind == Kind::Arc, taken) {
                (true, false) => {
                    let relpath = item.source.strip_prefix(SOURCE_PREFIX).unwrap_or(&item.source).to_string();
                    self.arcs.insert(item.id, relpath);
                }
                // The owner's arc item is settled with the other changes.
                (true, true) => {}
                (false, true) => self.taken.push(item),
                (false, false) => {}
            }
        }
        Ok(())
    }
}

/// What the index knew of a file that is read again.
struct Known {
    sha256: String,
    diagnostics: Vec<Diagnostic>,
}

/// Scans the vault at `root` (canonical) into the index of `brain`. `skip` are vault-relative
/// folders the walk does not enter.
pub(crate) fn scan(brain: &Brain, root: &Path, skip: &[String], mode: &ScanMode<'_>) -> BrainResult<ScanRun> {
    let started = Instant::now();
    let racy_cutoff = wall_clock_ns() - RACY_WINDOW_NS;
    let config = &brain.config().vault;
    let store = brain.store();
    let root_text = root.display().to_string();
    // The walk (stat calls) runs beside the read of the index (SQLite, the stored states):
    // they are independent, and together they are most of a scan that finds nothing new.
    let (walked, index) = std::thread::scope(|scope| {
        let walker = scope.spawn(|| walk(root, skip));
        let index = read_index(brain, &root_text, mode.want_snapshot);
        (walker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), index)
    });
    let StoredIndex { root: stored_root, reset, current_format, files: stored, unreadable } = index?;

    let mut report =
        ScanReport { vault: root_text.clone(), files: walked.files.len(), reindexed: reset, ..ScanReport::default() };
    let mut diagnostics: Vec<Diagnostic> = walked.diagnostics;
    let temps = walked.temps;
    let mut to_read: Vec<(&WalkedFile, Option<Known>)> = Vec::new();
    let mut removed_paths: Vec<String> = Vec::new();
    // The walked files and the index, both in path order, merged: a file of the index that
    // the walk did not pass is gone, a walked file the index does not hold is new.
    let mut indexed = stored.iter().peekable();
    for file in &walked.files {
        while let Some((relpath, _)) = indexed.next_if(|(relpath, _)| relpath.as_str() < file.relpath.as_str()) {
            removed_paths.push(relpath.clone());
        }
        let Some((relpath, record)) = indexed.next_if(|(relpath, _)| **relpath == file.relpath) else {
            to_read.push((file, None));
            continue;
        };
        // A state that no longer reads back (a format change, damage) forces a re-parse, and
        // so does an index of another format.
        let readable = !unreadable.contains(relpath);
        let trusted = current_format
            && record.mtime_ns != 0
            && record.mtime_ns == file.mtime_ns
            && record.size == file.size
            && readable;
        if trusted {
            report.unchanged += 1;
            diagnostics.extend(record.diagnostics.iter().cloned());
        } else {
            let sha256 = if current_format && readable { record.sha256.clone() } else { String::new() };
            to_read.push((file, Some(Known { sha256, diagnostics: record.diagnostics.clone() })));
        }
    }
    removed_paths.extend(indexed.map(|(relpath, _)| relpath.clone()));

    // Many new files (a first scan): their items go into the store while the rest are still
    // being parsed, in a transaction of their own that spans the parse (the store is written
    // on this thread while the other cores parse). Ids already taken are settled with the
    // other changes below. Not on a dry run, nor when the index is rebuilt for another vault.
    let new_files = to_read.iter().filter(|(_, known)| known.is_none()).count();
    let mut streamed = Streamed::default();
    let reads = if !mode.dry_run && !reset && new_files >= STREAM_MIN_FILES {
        let mut reads = Vec::new();
        let counter = *brain.counter();
        brain.store().write(|tx| {
            // About three items a file; the indexes are built once at commit when the new
            // items outnumber the stored ones (a first scan).
            tx.defer_item_indexes(new_files.saturating_mul(3))?;
            let mut batch: Vec<Item> = Vec::new();
            let mut failure = None;
            reads = read_files(
                root,
                &to_read,
                config.max_file_bytes,
                *brain.counter(),
                mode.progress,
                &mut |index, read| {
                    if failure.is_some() || to_read[index].1.is_some() {
                        return;
                    }
                    if let Read::Changed(changed) = read {
                        // Taken, not appended: `append` would leave every file its empty
                        // buffer until the tick ends (16 MB at 10k arcs, heaptrack).
                        batch.extend(std::mem::take(&mut changed.analyzed.items));
                        if let Some(Ok(arc)) = arc_item(&changed.relpath, &changed.analyzed.state, counter) {
                            batch.push(arc);
                        }
                        if batch.len() >= STREAM_BATCH
                            && let Err(err) = streamed.flush(tx, &mut batch)
                        {
                            failure = Some(err);
                        }
                    }
                },
            );
            if let Some(err) = failure {
                return Err(err);
            }
            streamed.flush(tx, &mut batch)
        })?;
        reads
    } else {
        read_files(root, &to_read, config.max_file_bytes, *brain.counter(), mode.progress, &mut |_, _| {})
    };
    let mut changes = IndexChanges { reset, ..IndexChanges::default() };
    // Exactly once: doubling a vector of ~10k parsed files would hold both buffers at once.
    changes.changed.reserve_exact(reads.iter().filter(|read| matches!(read, Read::Changed(_))).count());
    for ((file, known), read) in to_read.iter().zip(reads) {
        let recorded_mtime = if file.mtime_ns >= racy_cutoff { 0 } else { file.mtime_ns };
        match read {
            Read::Touched => {
                report.touched += 1;
                if let Some(known) = known {
                    diagnostics.extend(known.diagnostics.iter().cloned());
                }
                changes.touched.push((file.relpath.clone(), file.size, recorded_mtime));
            }
            Read::Changed(mut changed) => {
                report.parsed += 1;
                if known.is_some() {
                    report.modified += 1;
                } else {
                    report.added += 1;
                }
                changed.mtime_ns = recorded_mtime;
                changes.changed.push(*changed);
            }
            Read::Failed(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    report.removed = removed_paths.len();
    changes.format = !current_format;
    if stored_root.as_deref() != Some(root_text.as_str()) {
        changes.root = Some(root_text);
    }

    // Content changed: the changes are laid over the stored states and arc ownership is
    // settled again. Only stats changed (or nothing): no re-settling.
    let content_changed = reset || !changes.changed.is_empty() || !removed_paths.is_empty();
    if !content_changed && !mode.want_snapshot {
        let nothing_to_write = changes.touched.is_empty() && changes.root.is_none() && !changes.format;
        if !mode.dry_run && !nothing_to_write {
            apply(brain, &changes, &mut diagnostics)?;
        }
        let stored: Option<serde_json::Value> =
            store.vault_value("counts")?.and_then(|text| serde_json::from_str(&text).ok());
        let (items, arcs) = match stored {
            Some(counts) => (counts["items"].as_u64().unwrap_or(0), counts["arcs"].as_u64().unwrap_or(0)),
            None => indexed_counts(brain)?,
        };
        report.indexed_items = Some(items);
        report.indexed_arcs = Some(arcs);
        finish(&mut report, diagnostics, started);
        return Ok(ScanRun { report, snapshot: None, temps });
    }
    // The tree read beside the walk is the snapshot (gone files included: the overlay
    // below takes them out again).
    let mut snapshot: Snapshot = if mode.want_snapshot { stored } else { load_snapshot(brain)? };
    if content_changed {
        overlay(&mut snapshot, &mut changes, &removed_paths);
        for (relpath, file) in &changes.restated {
            diagnostics.retain(|d| d.file != *relpath);
            diagnostics.extend(file.diagnostics.iter().cloned());
        }
        for changed in &changes.changed {
            diagnostics.extend(changed.analyzed.diagnostics.iter().cloned());
        }
    } else {
        for (relpath, size, mtime_ns) in &changes.touched {
            if let Some(file) = snapshot.get_mut(relpath) {
                file.size = *size;
                file.mtime_ns = *mtime_ns;
            }
        }
    }
    let nothing_to_write = changes.is_empty() && changes.root.is_none() && !changes.format;
    if !mode.dry_run && !nothing_to_write {
        changes.taken = std::mem::take(&mut streamed.taken);
        changes.streamed_arcs = std::mem::take(&mut streamed.arcs);
        // The session feed is computed on another core while the changes are written; the
        // transaction stores it last.
        let with_feed = mode.write_feed && content_changed;
        let applied = std::thread::scope(|scope| {
            let feed = with_feed.then(|| {
                scope.spawn(|| {
                    let feed = super::feed::FeedState::compute(&snapshot, brain.now(), config);
                    serde_json::to_string(&feed).unwrap_or_default()
                })
            });
            let feed = move || feed.and_then(|job| job.join().ok()).filter(|json| !json.is_empty());
            apply_with_feed(brain, &changes, &mut diagnostics, feed)
        })?;
        report.items_inserted = applied.inserted + streamed.inserted;
        report.items_updated = applied.updated;
        report.items_deleted = applied.deleted;
    }
    let (items, arcs) = snapshot_counts(&snapshot);
    report.indexed_items = Some(items);
    report.indexed_arcs = Some(arcs);
    finish(&mut report, diagnostics, started);
    Ok(ScanRun { report, snapshot: mode.want_snapshot.then_some(snapshot), temps })
}

/// Lays `changes` (plus the removal of `removed`) over `snapshot`: removed files leave it
/// (their states move into `changes.removed`), touched files take their new stat, changed
/// files their new state (the old one kept in `changes.old_states`); then arc ownership is
/// settled again.
pub fn overlay(snapshot: &mut Snapshot, changes: &mut IndexChanges, removed: &[String]) {
    let old_owners = owners(snapshot);
    for relpath in removed {
        if let Some(file) = snapshot.remove(relpath) {
            changes.removed.push((relpath.clone(), file.state));
        }
    }
    for (relpath, size, mtime_ns) in &changes.touched {
        if let Some(file) = snapshot.get_mut(relpath) {
            file.size = *size;
            file.mtime_ns = *mtime_ns;
        }
    }
    for changed in &mut changes.changed {
        // The state moves into the index (its stored form is already made).
        let previous = snapshot.insert(
            changed.relpath.clone(),
            IndexedFile {
                size: changed.size,
                mtime_ns: changed.mtime_ns,
                sha256: changed.sha256.clone(),
                state: std::mem::take(&mut changed.analyzed.state),
                diagnostics: changed.analyzed.diagnostics.clone(),
            },
        );
        if let Some(previous) = previous {
            // A file whose items were kept lists the same ids as before: of its old state
            // only whether it owned its arc is read again, kept beside the ids (the rest is
            // freed here; an old state per file in the map was ~4 MB at a first tick of 10k
            // arcs).
            match &mut changed.kept_items {
                Some(kept) => kept.was_owner = previous.state.arc_owner,
                None => {
                    changes.old_states.insert(changed.relpath.clone(), previous.state);
                }
            }
        }
    }
    let changed_paths: HashSet<String> = changes.changed.iter().map(|c| c.relpath.clone()).collect();
    settle_ownership(snapshot, &old_owners, &changed_paths, changes);
    changes.still_listed = still_listed(snapshot, changes);
    for changed in &mut changes.changed {
        if let Some(file) = snapshot.get(&changed.relpath) {
            if file.state.arc_owner != file.state.arc.is_some() {
                changed.state_bytes = file.state.to_bytes();
            }
            changed.analyzed.diagnostics = file.diagnostics.clone();
        }
    }
    let (items, arcs) = snapshot_counts(snapshot);
    changes.counts = Some(serde_json::json!({"items": items, "arcs": arcs}).to_string());
}

/// The ids the changes would delete (those of removed files, and those changed files no
/// longer list) that a file of `snapshot` (after the changes) still lists.
fn still_listed(snapshot: &Snapshot, changes: &IndexChanges) -> HashSet<String> {
    let mut candidates: HashSet<&str> = HashSet::new();
    for (_, state) in &changes.removed {
        candidates.extend(state.items.iter().map(String::as_str));
    }
    for changed in &changes.changed {
        let Some(old) = changes.old_states.get(&changed.relpath) else { continue };
        let new: HashSet<&str> = snapshot
            .get(&changed.relpath)
            .map(|file| file.state.items.iter().map(String::as_str).collect())
            .unwrap_or_default();
        candidates.extend(old.items.iter().map(String::as_str).filter(|id| !new.contains(id)));
    }
    if candidates.is_empty() {
        return HashSet::new();
    }
    snapshot
        .values()
        .flat_map(|file| file.state.items.iter())
        .filter(|id| candidates.contains(id.as_str()))
        .cloned()
        .collect()
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

/// Parsed files a reading thread hands over at once (one wake-up of the caller per batch,
/// not per file).
const READ_BATCH: usize = 16;

/// Batches a reading thread may have waiting for the caller's sink.
const READ_AHEAD: usize = 4;

/// Reads, hashes and parses files on all cores; returns the results in input order. Each
/// file comes with what the index knew of it. `sink` sees every result on the calling
/// thread in input order, each as soon as it and those before it are ready, so the caller
/// works on results while the rest are still being parsed, and what it does with them does
/// not depend on which thread finished first (a first scan streams the items of two copies
/// of one arc in path order: the first by path, which owns the arc, is stored, never the
/// other one first and then re-sourced).
fn read_files(
    root: &Path,
    files: &[(&WalkedFile, Option<Known>)],
    max_bytes: usize,
    counter: brain_core::tokens::TokenCounter,
    progress: Progress<'_>,
    sink: &mut dyn FnMut(usize, &mut Read),
) -> Vec<Read> {
    let total = files.len();
    if total == 0 {
        return Vec::new();
    }
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8).min(total.div_ceil(16)).max(1);
    let read_next = || -> Option<(usize, Read)> {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let (file, known) = files.get(index)?;
        let known = known.as_ref().map(|k| k.sha256.as_str()).filter(|sha| !sha.is_empty());
        let read = read_one(root, file, known, max_bytes, counter);
        let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
        if finished.is_multiple_of(64) || finished == total {
            progress(finished, total);
        }
        Some((index, read))
    };
    let mut results: Vec<Option<Read>> = (0..total).map(|_| None).collect();
    if threads == 1 {
        while let Some((index, mut read)) = read_next() {
            sink(index, &mut read);
            results[index] = Some(read);
        }
    } else {
        std::thread::scope(|scope| {
            // Bounded: when the caller's sink is slower than the parse (a first scan inserting
            // every item), the parsers wait instead of queueing the whole vault's items
            // (unbounded, 14 MB more at 10k arcs). In batches: with one file a message, a
            // parser waiting on the full channel and the caller woke each other once a file.
            let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<(usize, Read)>>(threads * READ_AHEAD);
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let sender = sender.clone();
                    scope.spawn(move || {
                        let mut batch = Vec::with_capacity(READ_BATCH);
                        while let Some(result) = read_next() {
                            batch.push(result);
                            if batch.len() == READ_BATCH
                                && sender.send(std::mem::replace(&mut batch, Vec::with_capacity(READ_BATCH))).is_err()
                            {
                                return;
                            }
                        }
                        if !batch.is_empty() {
                            let _ = sender.send(batch);
                        }
                    })
                })
                .collect();
            drop(sender);
            let mut delivered = 0;
            for batch in receiver {
                for (index, read) in batch {
                    results[index] = Some(read);
                }
                while let Some(Some(read)) = results.get_mut(delivered) {
                    sink(delivered, read);
                    delivered += 1;
                }
            }
            for handle in handles {
                handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
        });
    }
    results
        .into_iter()
        .map(|read| {
            read.unwrap_or_else(|| {
                Read::Failed(Diagnostic {
                    file: String::new(),
                    line: 0,
                    severity: DiagnosticSeverity::Warning,
                    message: "file not read".into(),
                })
            })
        })
        .collect()
}

fn read_one(
    root: &Path,
    file: &WalkedFile,
    known_sha: Option<&str>,
    max_bytes: usize,
    counter: brain_core::tokens::TokenCounter,
) -> Read {
    if file.size > max_bytes as u64 {
        // Not read at all; the stat stands in for the hash.
        let sha256 = format!("oversized:{}", file.size);
        if known_sha == Some(sha256.as_str()) {
            return Read::Touched;
        }
        let analyzed = oversized(&file.relpath, file.size, max_bytes);
        return Read::Changed(Box::new(ChangedFile::new(
            file.relpath.clone(),
            file.size,
            file.mtime_ns,
            sha256,
            analyzed,
        )));
    }
    let bytes = match std::fs::read(root.join(&file.relpath)) {
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
    let analyzed = analyze(&file.relpath, &bytes, file.mtime_ns, max_bytes, counter);
    Read::Changed(Box::new(ChangedFile::new(file.relpath.clone(), file.size, file.mtime_ns, sha256, analyzed)))
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
    // A file the tick edited in `heat:`/`status:` only keeps its items, its arc item
    // included (same title, summary, date and project; a move re-sources it): when it owned
    // its arc before (under its old path for a move), the arc item is neither rebuilt nor
    // compared.
    let kept_from: HashMap<&str, &str> = changes
        .changed
        .iter()
        .filter_map(|changed| Some((changed.relpath.as_str(), changed.kept_items.as_ref()?.from.as_str())))
        .collect();
    let mut upserts: Vec<(String, FileState)> = Vec::with_capacity(owners.len());
    for (cluster_id, relpath) in &owners {
        let kept = kept_from
            .get(relpath.as_str())
            .is_some_and(|from| old_owners.get(cluster_id).is_some_and(|old| old.as_str() == *from));
        if kept {
            continue;
        }
        if old_owners.get(cluster_id) != Some(relpath) || changed.contains(relpath) {
            let state = &snapshot[relpath].state;
            // Only what the arc item is made of (not the signals, inject blocks, item ids).
            let arc_part = FileState { arc: state.arc.clone(), project: state.project.clone(), ..FileState::default() };
            upserts.push((relpath.clone(), arc_part));
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
pub fn apply(brain: &Brain, changes: &IndexChanges, diagnostics: &mut Vec<Diagnostic>) -> BrainResult<Applied> {
    apply_with_feed(brain, changes, diagnostics, || None)
}

/// [`apply`], storing the feed `feed` yields (asked for at the end of the transaction, so
/// it can be computed meanwhile) when `changes.feed` holds none.
fn apply_with_feed(
    brain: &Brain,
    changes: &IndexChanges,
    diagnostics: &mut Vec<Diagnostic>,
    feed: impl FnOnce() -> Option<String>,
) -> BrainResult<Applied> {
    let counter = *brain.counter();
    let mut applied = Applied::default();
    let mut arc_items: Vec<(Item, bool)> = Vec::new();
    let changed_by_path: HashMap<&str, &ChangedFile> =
        changes.changed.iter().map(|c| (c.relpath.as_str(), c)).collect();
    for (relpath, state) in &changes.arc_upserts {
        match arc_item(relpath, state, counter) {
            // Streamed in during the parse, from this very file: already stored as is.
            Some(Ok(item)) if changes.streamed_arcs.get(&item.id) == Some(relpath) => {}
            Some(Ok(item)) => {
                // Stored before this change: the file was unchanged, or owned the arc then.
                let known = match (changes.old_states.get(relpath), changed_by_path.get(relpath.as_str())) {
                    (Some(old), _) => old.arc_owner,
                    (None, Some(changed)) => changed.kept_items.as_ref().is_some_and(|kept| kept.was_owner),
                    (None, None) => true,
                };
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
            tx.put_vault_file(&VaultFileRecord {
                relpath: changed.relpath.clone(),
                size: changed.size,
                mtime_ns: changed.mtime_ns,
                sha256: changed.sha256.clone(),
                state: changed.state_bytes.clone(),
                diagnostics: diagnostics_to_json(&changed.analyzed.diagnostics),
            })?;
            if let Some(kept) = &changed.kept_items {
                if kept.from != changed.relpath {
                    let from = format!("{SOURCE_PREFIX}{}", kept.from);
                    let to = format!("{SOURCE_PREFIX}{}", changed.relpath);
                    applied.updated += tx.move_source(&kept.ids, &from, &to)?;
                }
                continue;
            }
            let old = changes.old_states.get(&changed.relpath);
            let old_ids: HashSet<&str> = old.map(|s| s.items.iter().map(String::as_str).collect()).unwrap_or_default();
            let new_ids: HashSet<&str> = changed.analyzed.items.iter().map(|i| i.id.as_str()).collect();
            deletes.extend(old_ids.difference(&new_ids).map(|id| id.to_string()));
            for item in &changed.analyzed.items {
                if old_ids.contains(item.id.as_str()) { known.push(item) } else { fresh.push(item) }
            }
        }
        known.extend(changes.taken.iter());
        for (item, is_known) in &arc_items {
            if *is_known { known.push(item) } else { fresh.push(item) }
        }
        if !changes.still_listed.is_empty() {
            deletes.retain(|id| !changes.still_listed.contains(id));
        }
        applied.deleted += tx.delete_many(&deletes)?;
        let skipped = tx.insert_many(&fresh)?;
        applied.inserted += fresh.len() - skipped.len();
        let taken: HashSet<String> = skipped.into_iter().collect();
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
                state: file.state.to_bytes(),
                diagnostics: diagnostics_to_json(&file.diagnostics),
            })?;
        }
        if let Some(root) = &changes.root {
            tx.set_vault_value("root", root)?;
        }
        if changes.format {
            tx.set_vault_value("format", INDEX_FORMAT)?;
        }
        if let Some(cache) = &changes.feed_cache {
            tx.set_vault_value("feed_cache", cache)?;
        }
        if let Some(counts) = &changes.counts {
            tx.set_vault_value("counts", counts)?;
        }
        if let Some(feed) = changes.feed.clone().or_else(feed) {
            tx.set_vault_value("feed", &feed)?;
        }
        Ok(())
    })?;
    Ok(applied)
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
        Some(stored) if moved_only(&stored, item) => {
            applied.updated += tx.move_source(std::slice::from_ref(&item.id), &stored.source, &item.source)?;
        }
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
