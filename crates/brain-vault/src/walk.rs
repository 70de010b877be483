//! Walking the vault: every markdown file with its size and modification time, never
//! following a symlink (so nothing outside the vault is read) and skipping hidden entries
//! and the generated `brain-feed/` folder.

use std::path::{Path, PathBuf};

use brain_core::vault::{Diagnostic, DiagnosticSeverity};

use super::fsio;

/// Folders deeper than this are not entered (a guard against pathological trees).
const MAX_DEPTH: usize = 64;

/// One markdown file of the vault.
#[derive(Clone, Debug)]
pub(crate) struct WalkedFile {
    /// Vault-relative, `/`-separated.
    pub relpath: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Sorted by relpath.
    pub files: Vec<WalkedFile>,
    pub diagnostics: Vec<Diagnostic>,
    /// Files named like our temp files ([`fsio::temp_path`]), whoever wrote them.
    pub temps: Vec<PathBuf>,
}

fn diagnostic(relpath: &str, severity: DiagnosticSeverity, message: String) -> Diagnostic {
    Diagnostic { file: relpath.to_string(), line: 0, severity, message }
}

/// A folder waiting to be read: its path, vault-relative path and depth.
type Pending = (PathBuf, String, usize);

/// Folders are shared out between threads once at least this many are pending.
const PARALLEL_FOLDERS: usize = 32;

/// Walks `root` (an absolute, canonical folder). `skip` lists vault-relative folders not to
/// enter (the feed folder). The top of the tree is read breadth-first until there are enough
/// folders to share out; then every core walks its share depth-first (a stat per file is
/// most of the cost, and it parallelizes).
pub(crate) fn walk(root: &Path, skip: &[String]) -> Walk {
    let mut walk = Walk::default();
    let mut frontier: Vec<Pending> = vec![(root.to_path_buf(), String::new(), 0)];
    while !frontier.is_empty() && frontier.len() < PARALLEL_FOLDERS {
        let mut next = Vec::new();
        for folder in frontier {
            read_folder(root, skip, folder, &mut walk, &mut next);
        }
        frontier = next;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if threads > 1 && !frontier.is_empty() {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let frontier = &frontier;
        let parts: Vec<Walk> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut part = Walk::default();
                        loop {
                            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(folder) = frontier.get(index) else { break };
                            walk_depth_first(root, skip, folder.clone(), &mut part);
                        }
                        part
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        });
        for part in parts {
            walk.files.extend(part.files);
            walk.diagnostics.extend(part.diagnostics);
            walk.temps.extend(part.temps);
        }
    } else {
        for folder in frontier {
            walk_depth_first(root, skip, folder, &mut walk);
        }
    }
    walk.files.sort_unstable_by(|a, b| a.relpath.cmp(&b.relpath));
    walk
}

fn walk_depth_first(root: &Path, skip: &[String], start: Pending, walk: &mut Walk) {
    let mut stack = vec![start];
    while let Some(folder) = stack.pop() {
        read_folder(root, skip, folder, walk, &mut stack);
    }
}

/// Reads one folder: markdown files go to `walk`, subfolders to `pending`.
fn read_folder(
    root: &Path,
    skip: &[String],
    (dir, rel_dir, depth): Pending,
    walk: &mut Walk,
    pending: &mut Vec<Pending>,
) {
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) => {
            let shown = if rel_dir.is_empty() { "." } else { rel_dir.as_str() };
            walk.diagnostics.push(diagnostic(
                shown,
                DiagnosticSeverity::Warning,
                format!("cannot read folder: {err}; skipped"),
            ));
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            let lossy = name.to_string_lossy().into_owned();
            walk.diagnostics.push(diagnostic(
                &join(&rel_dir, &lossy),
                DiagnosticSeverity::Warning,
                "file name is not valid UTF-8; skipped".into(),
            ));
            continue;
        };
        // Hidden entries: .obsidian, .git, .trash, editor swap files, our own temp files (kept
        // aside for the tick's sweep).
        if name.starts_with('.') {
            if fsio::is_temp_name(name) && entry.file_type().is_ok_and(|kind| kind.is_file()) {
                walk.temps.push(entry.path());
            }
            continue;
        }
        let relpath = join(&rel_dir, name);
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_symlink() {
            if let Some(message) = symlink_problem(root, &entry.path()) {
                walk.diagnostics.push(diagnostic(&relpath, DiagnosticSeverity::Warning, message));
            }
            continue;
        }
        if file_type.is_dir() {
            if skip.contains(&relpath) {
                continue;
            }
            if depth + 1 > MAX_DEPTH {
                walk.diagnostics.push(diagnostic(
                    &relpath,
                    DiagnosticSeverity::Warning,
                    format!("folder nested deeper than {MAX_DEPTH} levels; not entered"),
                ));
                continue;
            }
            pending.push((entry.path(), relpath, depth + 1));
            continue;
        }
        if !file_type.is_file() || !is_markdown(name) {
            continue;
        }
        let Ok(metadata) = entry.metadata() else { continue };
        walk.files.push(WalkedFile { relpath, size: metadata.len(), mtime_ns: mtime_ns(&metadata) });
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
}

fn is_markdown(name: &str) -> bool {
    name.len() > 3 && name[name.len() - 3..].eq_ignore_ascii_case(".md")
}

/// Symlinks are never followed. One that leads outside the vault (or nowhere) is reported;
/// one inside is silent, since its target is scanned where it really is.
fn symlink_problem(root: &Path, path: &Path) -> Option<String> {
    match std::fs::canonicalize(path) {
        Ok(target) if target.starts_with(root) => None,
        Ok(target) => Some(format!("symlink to {} outside the vault; not followed", target.display())),
        Err(_) => Some("broken symlink; skipped".into()),
    }
}

/// Modification time in nanoseconds since the epoch (0 when unknown: forces a hash check).
pub fn mtime_ns(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|duration| i64::try_from(duration.as_nanos()).ok())
        .unwrap_or(0)
}
