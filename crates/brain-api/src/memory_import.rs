//! The memory a project already keeps, imported as drafts (`brain import-memory`, and the
//! import step of `brain setup`): its memory files found ([`discover`], or [`named`] by the
//! user), read within bounds ([`read`]), split into facts (`brain_core::memory_files`),
//! redacted, deduplicated against the store and against each other ([`plan`]), and written in
//! one transaction ([`Brain::import_memory`]).
//!
//! Nothing is written unless every file could be read: an unreadable, binary or oversized
//! file, or a link leading out of the folder the file was found in (a cloned repository's
//! `CLAUDE.md -> ~/.ssh/id_ed25519`), is a problem naming the file, and the caller stops.
//! Every imported fact carries the dedup hint of its words' fingerprint, so a second run, or
//! the same fact in `CLAUDE.md` and `AGENTS.md`, adds nothing; a fact whose words are an
//! existing item's title or content is not imported either. Files brain writes itself (the
//! managed block of `brain inject`, Cursor's `brain.mdc` rule) are never imported back.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use brain_core::memory_files::{self, MemoryFile};
use brain_core::redact::redact_str;
use brain_core::{Item, ItemDraft, Kind, Status};

use crate::app::{Brain, next_review};
use crate::error::{BrainError, BrainResult};

/// A memory file larger than this is not one: refused, not read.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many files are read from one folder (`memory-bank/`, `.cursor/rules/`).
pub const MAX_FILES_PER_FOLDER: usize = 200;
/// At most this many drafts in one import.
pub const MAX_DRAFTS: usize = 5_000;
/// At most this many bytes of memory files in one import, all files together: more is
/// refused before any is read (reading, splitting and redacting 200 files of 1 MiB took a
/// minute and 1.7 GB, only to be refused for too many drafts).
pub const MAX_TOTAL_BYTES: u64 = 8 * 1024 * 1024;
/// The first bytes of a file brain wrote and keeps (Cursor's `brain.mdc` rule carries it).
pub const MANAGED_FILE_MARKER: &str = "<!-- brain:managed";
/// How deep a folder is searched for memory files.
const MAX_DEPTH: usize = 3;

/// A memory file to read: where it is, the folder it must stay inside once links are
/// followed, and how evidence names it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MemorySource {
    pub path: PathBuf,
    #[serde(skip)]
    pub root: PathBuf,
    /// The path relative to the project (or `~/…` outside it): what evidence shows.
    pub label: String,
    pub family: MemoryFile,
}

/// The Claude Code auto-memory folders of a project: `<claude dir>/projects/<dir>/memory`,
/// where `<dir>` is the folder's absolute path with every character but ASCII letters and
/// digits turned into `-` (Claude Code's own naming), for the project root and the working
/// directory. `claude_dir` is `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_memory_dirs(claude_dir: &Path, project_root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for folder in [project_root, cwd] {
        let name: String =
            folder.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let dir = claude_dir.join("projects").join(name).join("memory");
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// The project's memory files that exist, in a fixed order: `CLAUDE.md`, `.claude/CLAUDE.md`,
/// `CLAUDE.local.md`, `AGENTS.md`, `GEMINI.md`, `.cursorrules`, `.claude/rules/**/*.md`,
/// `.cursor/rules/**/*.mdc`, `.clinerules` (a file, or a folder of markdown),
/// `memory-bank/**/*.md`, then Claude Code's auto-memory in
/// `claude_memory` (see [`claude_memory_dirs`]). A folder that cannot be listed is a problem.
pub fn discover(project_root: &Path, claude_memory: &[PathBuf], user_home: Option<&Path>) -> Found {
    let mut found = Found::default();
    let in_project = |relative: &str| project_root.join(relative);
    for name in ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".cursorrules"] {
        let path = in_project(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            found.sources.push(source(&path, project_root, project_root, user_home, None));
        }
    }
    let folders: [(&str, &[&str]); 4] = [
        (".claude/rules", &["md"]),
        (".cursor/rules", &["mdc"]),
        (".clinerules", &["md", "txt"]),
        ("memory-bank", &["md"]),
    ];
    for (folder, extensions) in folders {
        let path = in_project(folder);
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_dir() || (metadata.file_type().is_symlink() && path.is_dir()) => {
                walk(&path, project_root, project_root, extensions, user_home, None, &mut found);
            }
            Ok(_) => found.sources.push(source(&path, project_root, project_root, user_home, None)),
            Err(_) => {}
        }
    }
    for dir in claude_memory {
        if dir.is_dir() {
            walk(dir, dir, project_root, &["md"], user_home, Some(MemoryFile::ClaudeMemory), &mut found);
        }
    }
    found
}

/// What [`discover`] and [`named`] found: the files, and what stopped a folder or a path.
#[derive(Debug, Default)]
pub struct Found {
    pub sources: Vec<MemorySource>,
    pub problems: Vec<String>,
}

/// The files the user named (`brain import-memory PATH…`), relative to `cwd`: a file is
/// itself, a folder its markdown files (`.md`, `.mdc`, `.cursorrules`, `.clinerules`). A path
/// inside the project must stay inside it once links are followed; one outside it must stay
/// inside the folder it names (or, for a file, its parent).
pub fn named(paths: &[PathBuf], cwd: &Path, project_root: &Path, user_home: Option<&Path>) -> Found {
    let mut found = Found::default();
    let project_real = project_root.canonicalize().unwrap_or_else(|_| project_root.to_path_buf());
    for given in paths {
        let path = cwd.join(given);
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            found.problems.push(format!("{}: no such file or folder", given.display()));
            continue;
        };
        let inside_project = lexical_parent(&path).canonicalize().is_ok_and(|parent| parent.starts_with(&project_real));
        let family = is_claude_memory(&path).then_some(MemoryFile::ClaudeMemory);
        if metadata.is_dir() {
            let root = if inside_project { project_root.to_path_buf() } else { path.clone() };
            walk(&path, &root, project_root, &["md", "mdc", "txt"], user_home, family, &mut found);
        } else {
            let root = if inside_project { project_root.to_path_buf() } else { lexical_parent(&path) };
            found.sources.push(source(&path, &root, project_root, user_home, family));
        }
    }
    found
}

fn lexical_parent(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"))
}

fn is_claude_memory(path: &Path) -> bool {
    let text = path.to_string_lossy();
    text.contains("/.claude/projects/") && (text.contains("/memory/") || text.ends_with("/memory"))
}

fn source(
    path: &Path,
    root: &Path,
    project_root: &Path,
    user_home: Option<&Path>,
    family: Option<MemoryFile>,
) -> MemorySource {
    let label = label(path, project_root, user_home);
    let family = family.unwrap_or_else(|| MemoryFile::of(&label));
    MemorySource { path: path.to_path_buf(), root: root.to_path_buf(), label, family }
}

/// `CLAUDE.md` for a file of the project, `~/…` for one in the user's home, else the path.
fn label(path: &Path, project_root: &Path, user_home: Option<&Path>) -> String {
    if let Ok(relative) = path.strip_prefix(project_root) {
        return relative.to_string_lossy().replace('\\', "/");
    }
    if let Some(home) = user_home
        && let Ok(relative) = path.strip_prefix(home)
    {
        return format!("~/{}", relative.to_string_lossy());
    }
    path.to_string_lossy().into_owned()
}

/// The files below `folder` (at most [`MAX_DEPTH`] deep) whose extension is one of
/// `extensions`, in name order; links to folders are not followed, and a folder holding
/// more than [`MAX_FILES_PER_FOLDER`] of them is a problem.
fn walk(
    folder: &Path,
    root: &Path,
    project_root: &Path,
    extensions: &[&str],
    user_home: Option<&Path>,
    family: Option<MemoryFile>,
    found: &mut Found,
) {
    let mut files = Vec::new();
    let mut stack = vec![(folder.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) => {
                let dir = dir.display().to_string();
                found.problems.push(format!("cannot list {}: {err}", crate::output::escape_name(&dir)));
                return;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
                continue;
            }
            let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
            let wanted = extensions.iter().any(|extension| name.ends_with(&format!(".{extension}")));
            if wanted {
                files.push(path);
            }
        }
    }
    if files.len() > MAX_FILES_PER_FOLDER {
        found.problems.push(format!(
            "{} holds {} memory files; at most {MAX_FILES_PER_FOLDER} are read from one folder",
            crate::output::escape_name(&folder.display().to_string()),
            files.len()
        ));
        return;
    }
    files.sort();
    for path in files {
        found.sources.push(source(&path, root, project_root, user_home, family));
    }
}

/// The text of a memory file, or why it cannot be imported: a link out of its folder, not a
/// regular file, larger than [`MAX_FILE_BYTES`], unreadable, binary or not UTF-8. `None`
/// (with no problem) for a file brain wrote itself.
pub fn read(source: &MemorySource) -> Result<Option<String>, String> {
    let shown = &crate::output::escape_name(&source.label);
    let real = source.path.canonicalize().map_err(|err| format!("cannot read {shown}: {err}"))?;
    let root = source.root.canonicalize().unwrap_or_else(|_| source.root.clone());
    if !real.starts_with(&root) {
        return Err(format!(
            "{shown} is a symbolic link leading out of {} (to {}); not read",
            crate::output::escape_name(&source.root.display().to_string()),
            crate::output::escape_name(&real.display().to_string())
        ));
    }
    let metadata = std::fs::metadata(&real).map_err(|err| format!("cannot read {shown}: {err}"))?;
    if !metadata.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{shown} is {:.1} MiB; a memory file may be at most {} MiB",
            metadata.len() as f64 / (1024.0 * 1024.0),
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&real)
        .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|err| format!("cannot read {shown}: {err}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("{shown} grew past {} MiB while it was read", MAX_FILE_BYTES / (1024 * 1024)));
    }
    if let Some(offset) = bytes.iter().position(|&byte| byte == 0) {
        return Err(format!("{shown} is a binary file (a NUL byte at offset {offset}), not text"));
    }
    let text = String::from_utf8(bytes).map_err(|err| {
        format!("{shown} is not UTF-8 text (invalid byte at offset {})", err.utf8_error().valid_up_to())
    })?;
    if text.trim_start().starts_with("---") && text.contains(MANAGED_FILE_MARKER) {
        return Ok(None);
    }
    Ok(Some(text))
}

/// What the store already holds, for deduplication: the dedup hints of every item of the
/// project and global scopes, and the fingerprints of their titles and contents.
#[derive(Debug, Default)]
pub struct Known {
    hints: HashSet<String>,
    fingerprints: HashSet<String>,
}

impl Known {
    /// Every item of the scopes a session of this project sees, whatever its status (an
    /// archived or deprecated import is not imported again), read a page at a time.
    pub fn of(brain: &Brain) -> BrainResult<Known> {
        let scopes = brain.visible_scopes();
        let mut known = Known::default();
        brain.store().read(|tx| {
            let mut after = String::new();
            loop {
                let page = tx.items_after(&after, 1000)?;
                let Some(last) = page.last() else { break };
                after = last.id.clone();
                for item in page.iter().filter(|item| scopes.contains(&item.scope)) {
                    known.add(item);
                }
            }
            Ok(())
        })?;
        Ok(known)
    }

    fn add(&mut self, item: &Item) {
        if let Some(hint) = &item.dedup_hint {
            self.hints.insert(hint.clone());
        }
        self.fingerprints.insert(memory_files::fingerprint(&item.title));
        self.fingerprints.insert(memory_files::fingerprint(&item.content));
    }
}

/// What an import will write (and with `--dry-run`, all it does).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ImportPlan {
    pub files: Vec<FilePlan>,
    /// The drafts to write, in file and line order.
    pub drafts: Vec<PlannedDraft>,
    /// Drafts whose text held a secret (stored redacted).
    pub redacted: usize,
}

/// One file's share of the plan.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FilePlan {
    pub file: String,
    pub kind: MemoryFile,
    /// Facts found in it.
    pub facts: usize,
    /// Of those, new drafts.
    pub new: usize,
    /// Of those, already in the store or earlier in this import.
    pub known: usize,
    /// Why the file was left out (a file brain wrote).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// One draft to write.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PlannedDraft {
    pub kind: Kind,
    pub title: String,
    pub content: String,
    /// `FILE:LINE`.
    pub evidence: String,
    pub tags: Vec<String>,
    pub dedup_hint: String,
    pub source: String,
}

/// The memory files read: each file's text (or `None` for one brain wrote), or every
/// problem found. Nothing is imported when one file cannot be read.
pub fn read_all(sources: &[MemorySource]) -> Result<Vec<(MemorySource, Option<String>)>, Vec<String>> {
    // The sizes first: too much in all is refused before anything is read (a file over
    // its own limit counts as that limit: `read` names it).
    let sizes = sources.iter().filter_map(|source| std::fs::metadata(&source.path).ok());
    let total: u64 = sizes.map(|metadata| metadata.len().min(MAX_FILE_BYTES)).sum();
    if total > MAX_TOTAL_BYTES {
        return Err(vec![too_much(total, sources.len())]);
    }
    let mut read_files = Vec::new();
    let mut problems = Vec::new();
    let mut read_bytes = 0u64;
    for source in sources {
        match read(source) {
            Ok(text) => {
                read_bytes += text.as_ref().map_or(0, |text| text.len() as u64);
                if read_bytes > MAX_TOTAL_BYTES {
                    // Files grew while they were read.
                    return Err(vec![too_much(read_bytes, sources.len())]);
                }
                read_files.push((source.clone(), text))
            }
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() { Ok(read_files) } else { Err(problems) }
}

/// Why memory files of `total` bytes in all are not imported.
fn too_much(total: u64, files: usize) -> String {
    format!(
        "the {files} memory files hold {:.1} MiB in all; one import reads at most {} MiB (import them a few at a \
         time with `brain import-memory PATH…`, or leave them out with `brain setup --no-import`)",
        total as f64 / (1024.0 * 1024.0),
        MAX_TOTAL_BYTES / (1024 * 1024)
    )
}

/// The import of `files` against what the store already holds: facts split, redacted,
/// fingerprinted, and those already known (in the store or earlier in the import) left out.
pub fn plan(files: &[(MemorySource, Option<String>)], known: &Known) -> BrainResult<ImportPlan> {
    plan_with_progress(files, known, &mut |_, _| {})
}

/// [`plan`], calling `progress(files done, files)` after each file; stops as soon as the
/// drafts pass [`MAX_DRAFTS`].
pub fn plan_with_progress(
    files: &[(MemorySource, Option<String>)],
    known: &Known,
    progress: &mut dyn FnMut(usize, usize),
) -> BrainResult<ImportPlan> {
    let mut plan = ImportPlan::default();
    let mut seen: HashSet<String> = HashSet::new();
    for (done, (source, text)) in files.iter().enumerate() {
        progress(done, files.len());
        let mut file_plan =
            FilePlan { file: source.label.clone(), kind: source.family, facts: 0, new: 0, known: 0, skipped: None };
        let Some(text) = text else {
            file_plan.skipped = Some("written by brain".into());
            plan.files.push(file_plan);
            continue;
        };
        for fact in memory_files::split(text, source.family, &source.label) {
            file_plan.facts += 1;
            let content = redact_str(&fact.content).into_owned();
            let title = redact_str(&fact.title).into_owned();
            let fingerprint = memory_files::fingerprint(&content);
            let hint = memory_files::dedup_hint(&fingerprint);
            let already = known.hints.contains(&hint) || known.fingerprints.contains(&fingerprint);
            if already || !seen.insert(fingerprint) {
                file_plan.known += 1;
                continue;
            }
            if content != fact.content || title != fact.title {
                plan.redacted += 1;
            }
            file_plan.new += 1;
            let mut tags = vec!["imported".to_string(), source.family.tag().to_string()];
            if let Some(tag) = fact.heading.as_deref().and_then(|heading| heading.rsplit(" › ").next()).and_then(slug)
            {
                tags.push(tag);
            }
            plan.drafts.push(PlannedDraft {
                kind: fact.kind,
                title,
                content,
                evidence: format!("{}:{}", source.label, fact.line),
                tags,
                dedup_hint: hint,
                source: format!("import:{}", source.label),
            });
            if plan.drafts.len() > MAX_DRAFTS {
                // Counting on would only take time: the import is refused either way.
                return Err(BrainError::user_with_hint(
                    format!(
                        "the memory files hold more than {MAX_DRAFTS} new facts (counted up to {}); one import \
                         takes at most {MAX_DRAFTS}",
                        crate::output::escape_name(&source.label)
                    ),
                    "import fewer files at a time (brain import-memory PATH…), or leave them out (brain setup --no-import)",
                ));
            }
        }
        plan.files.push(file_plan);
    }
    progress(files.len(), files.len());
    Ok(plan)
}

/// A heading as a tag (`Code Style` → `code-style`), when it makes one.
fn slug(heading: &str) -> Option<String> {
    let mut slug = String::new();
    for c in heading.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let mut slug = slug.trim_end_matches('-').to_string();
    if slug.chars().count() > brain_core::item::MAX_TAG_CHARS {
        slug = slug.chars().take(brain_core::item::MAX_TAG_CHARS).collect::<String>().trim_end_matches('-').to_string();
    }
    (!slug.is_empty() && slug != "imported").then_some(slug)
}

/// What [`Brain::import_memory`] wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MemoryImportReport {
    pub imported: usize,
    /// Fields the redactor changed on the way in.
    pub redacted_fields: usize,
    pub ids: Vec<String>,
}

impl Brain {
    /// Writes the plan's drafts in the project's scope, all or none, each through
    /// [`Brain::prepare`]. `progress(done, total)` follows the insert.
    pub fn import_memory(
        &self,
        plan: &ImportPlan,
        progress: &mut dyn FnMut(usize, usize),
    ) -> BrainResult<MemoryImportReport> {
        self.fold_access_log();
        let review_due = brain_core::time::format_timestamp(next_review(self.now, 1));
        let mut items = Vec::with_capacity(plan.drafts.len());
        let mut redacted_fields = 0;
        for planned in &plan.drafts {
            let draft = ItemDraft {
                kind: Some(planned.kind.to_string()),
                title: Some(planned.title.clone()),
                content: Some(planned.content.clone()),
                status: Some(Status::Draft.to_string()),
                tags: Some(planned.tags.clone()),
                evidence: Some(vec![planned.evidence.clone()]),
                dedup_hint: Some(planned.dedup_hint.clone()),
                source: Some(planned.source.clone()),
                review_due_at: Some(review_due.clone()),
                ..ItemDraft::default()
            };
            let context = brain_core::item::NewItemContext {
                id: brain_core::item::new_id(ulid::Ulid::from_datetime(std::time::SystemTime::from(self.now))),
                now: self.now,
                default_scope: self.project_scope(),
                default_source: planned.source.clone(),
                default_status: Status::Draft,
            };
            let mut item = draft.into_new_item(context).map_err(|err| {
                BrainError::internal(format!("the fact at {} makes no valid item: {err}", planned.evidence))
            })?;
            redacted_fields += self.prepare(&mut item)?;
            items.push(item);
        }
        let total = items.len();
        self.store().insert_all(&items, &mut |done| progress(done, total))?;
        Ok(MemoryImportReport {
            imported: total,
            redacted_fields,
            ids: items.into_iter().map(|item| item.id).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(dir: &Path, name: &str) -> MemorySource {
        let path = dir.join(name);
        MemorySource { path, root: dir.to_path_buf(), label: name.to_string(), family: MemoryFile::of(name) }
    }

    /// Hostile review of setup, finding 5: 199 files of 1 MiB were all read, split and
    /// redacted (a minute, 1.7 GB) before the draft limit refused them.
    #[test]
    fn memory_import_refuses_too_many_bytes_before_reading_and_stops_at_the_draft_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut sources = Vec::new();
        for n in 0..9 {
            let name = format!("rules/{n}.mdc");
            std::fs::create_dir_all(dir.path().join("rules")).unwrap();
            std::fs::write(dir.path().join(&name), "x".repeat(1_000_000)).unwrap();
            sources.push(source(dir.path(), &name));
        }
        let Err(problems) = read_all(&sources) else { panic!("9 MB of memory files in all must be refused") };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("at most 8 MiB") && problems[0].contains("--no-import"), "{problems:?}");
        assert!(read_all(&sources[..8]).is_ok(), "8 MB is within 8 MiB");

        let many: String = (0..MAX_DRAFTS + 500).map(|n| format!("- fact number {n} is distinct {n}\n")).collect();
        std::fs::write(dir.path().join("AGENTS.md"), many).unwrap();
        let files = read_all(&[source(dir.path(), "AGENTS.md")]).unwrap();
        let err = plan(&files, &Known::default()).unwrap_err().to_string();
        assert!(err.contains(&format!("more than {MAX_DRAFTS} new facts")), "{err}");
    }
}
