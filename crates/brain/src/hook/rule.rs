//! The working memory as a project rule that brain keeps current, for the hosts whose hooks
//! cannot hand it to the model: Cursor (`.cursor/rules/brain.mdc`) and Cline
//! (`.cline/rules/brain-working-memory.md`).
//!
//! Cursor's `sessionStart` hook output (`additional_context`) is rejected by some Cursor
//! versions and its `beforeSubmitPrompt` hook cannot add context at all, so the memory also
//! lives in a rule Cursor loads into every request (`alwaysApply: true`). Cline 3.x runs its
//! `TaskStart` and `UserPromptSubmit` hooks without waiting for them (their output is never
//! read), and puts a project's rules (`.clinerules/`, `.cline/rules/`) into the system prompt
//! of every task. `brain hook install --agent cursor|cline` writes the rule for the project;
//! the hosts' hooks rewrite it when what it holds changed (Cline's also create it in a
//! project that has none, for its next task). Only a rule brain wrote (it carries [`MARKER`])
//! is ever rewritten or removed, and the rule is added to the repository's `info/exclude` (a
//! worktree's or submodule's too): it holds personal memory, not project files. Since a
//! repository can carry a file with the marker, the marker is not enough: the rule is never
//! written where git would share it — a path git tracks (its index names it), or one a
//! `.gitignore` negation (`!…`) could take back from the exclude list. Neither is ever written
//! or removed through a symbolic link in the repository ([`super::repo_files`]): a linked
//! rules folder would send the memory wherever it leads.
//!
//! Cline names a rule by its file's stem and keeps one rule of a name (a user's
//! `~/.cline/rules/<name>.md` hides a project's of the same name), hence the long name.

use std::io::Read;
use std::path::{Path, PathBuf};

use brain_core::assemble::brain::brain_hash;

use super::repo_files;
use brain_api::app::write_atomically;
use brain_api::error::{BrainError, BrainResult};
use brain_capture::Host;

/// Marks a rule brain wrote (and may rewrite).
pub const MARKER: &str = "<!-- brain:managed";

/// The rule of `host`, relative to the project root; `None` for a host that needs none.
pub fn relative_path(host: Host) -> Option<&'static str> {
    match host {
        Host::Cursor => Some(".cursor/rules/brain.mdc"),
        Host::Cline => Some(".cline/rules/brain-working-memory.md"),
        _ => None,
    }
}

/// Whether `host` gets the working memory through brain's rule.
pub fn has_rule(host: Host) -> bool {
    relative_path(host).is_some()
}

pub fn rule_path(host: Host, project_root: &Path) -> PathBuf {
    project_root.join(relative_path(host).unwrap_or(".cursor/rules/brain.mdc"))
}

/// A repository's git folders: its own (the index) and the common one (`info/exclude`).
/// `.git` is a folder, or in a worktree or submodule a file `gitdir: PATH` — believed only
/// the way git itself wrote it: a worktree's git folder points back at this `.git` file (its
/// `gitdir`, checked by `config::folders::linked_git_dir`), a submodule's names this folder
/// as its `core.worktree`. Anything else (an archive's `.git` file naming any folder) is no
/// repository: the rule gets no exclude line, and nothing is written there.
struct GitDirs {
    /// The top of the worktree: the project root or the nearest folder above it with a
    /// `.git` (a package of a monorepo has its own `.brain.toml`, not its own `.git`).
    top: PathBuf,
    /// The project root below `top` (empty when it is the top).
    prefix: PathBuf,
    own: PathBuf,
    common: PathBuf,
    /// The folder below which no component of the way to `info/exclude` may be a link: the
    /// project root for a `.git` folder, the canonical common folder for a linked one (a
    /// worktree's lies outside the worktree, legitimately).
    no_links_below: PathBuf,
}

fn git_dirs(project_root: &Path) -> Option<GitDirs> {
    let (top, metadata) = project_root
        .ancestors()
        .find_map(|folder| Some((folder, std::fs::symlink_metadata(folder.join(".git")).ok()?)))?;
    let prefix = project_root.strip_prefix(top).ok()?.to_path_buf();
    let dot = top.join(".git");
    if metadata.is_dir() {
        return Some(GitDirs {
            top: top.to_path_buf(),
            prefix,
            own: dot.clone(),
            common: dot,
            no_links_below: top.to_path_buf(),
        });
    }
    if !metadata.is_file() {
        return None;
    }
    let (own, common) = match brain_api::config::folders::linked_git_dir(&dot) {
        Some(linked) => (linked.own, linked.common),
        None => {
            let own = submodule_git_dir(&dot, top)?;
            (own.clone(), own)
        }
    };
    // Only a folder that is a repository's gets an exclude line.
    common.join("HEAD").is_file().then(|| GitDirs {
        top: top.to_path_buf(),
        prefix,
        own,
        no_links_below: common.clone(),
        common,
    })
}

/// The git folder of the submodule whose `.git` file is `dot_git`, when that folder's
/// config names `project_root` as its worktree (as `git submodule` writes it); canonical.
fn submodule_git_dir(dot_git: &Path, project_root: &Path) -> Option<PathBuf> {
    let read = |path: &Path| {
        let mut text = String::new();
        std::fs::File::open(path).ok()?.take(1 << 20).read_to_string(&mut text).ok()?;
        Some(text)
    };
    let text = read(dot_git)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim().to_string();
    let git_dir = std::fs::canonicalize(project_root.join(target)).ok()?;
    let config = read(&git_dir.join("config"))?;
    let mut in_core = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_core = line.trim_matches(['[', ']']).trim().eq_ignore_ascii_case("core");
            continue;
        }
        if in_core
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("worktree")
        {
            let worktree = std::fs::canonicalize(git_dir.join(value.trim().trim_matches('"'))).ok()?;
            return (worktree == std::fs::canonicalize(project_root).ok()?).then_some(git_dir);
        }
    }
    None
}

impl GitDirs {
    /// The local ignore list the rule is added to.
    fn exclude(&self) -> PathBuf {
        self.common.join("info").join("exclude")
    }

    /// The rule's path from the top of the worktree, `/`-separated: its exclude line.
    fn exclude_line(&self, relative: &str) -> String {
        let mut line = String::new();
        for part in self.prefix.components() {
            line.push('/');
            line.push_str(&part.as_os_str().to_string_lossy());
        }
        format!("{line}/{relative}")
    }
}

/// Whether the rule of `host` is in its repository's exclude list (the note `brain hook
/// install` gives says so only when it is).
pub fn excluded_from_git(host: Host, project_root: &Path) -> bool {
    let (Some(git), Some(relative)) = (git_dirs(project_root), relative_path(host)) else { return false };
    let line = git.exclude_line(relative);
    std::fs::read_to_string(git.exclude()).is_ok_and(|text| text.lines().any(|existing| existing.trim() == line))
}

/// Refuses when the rule or the exclude list would be written through a link in the
/// repository (checked before anything is written, so nothing is half done).
pub fn refuse_links(host: Host, project_root: &Path) -> BrainResult<()> {
    refuse_links_in(host, project_root, git_dirs(project_root).as_ref())
}

fn refuse_links_in(host: Host, project_root: &Path, git: Option<&GitDirs>) -> BrainResult<()> {
    // From the top of the worktree: a link on the way down to the project root leads the
    // rule out of the repository as surely as one below it.
    let top = git.map_or(project_root, |dirs| dirs.top.as_path());
    repo_files::refuse_links(top, &rule_path(host, project_root))?;
    match git {
        // The whole way to the exclude list, inside the root or not: a linked git folder is
        // canonical, so no link lies above `no_links_below`, and none may lie below it.
        Some(dirs) => repo_files::refuse_links(&dirs.no_links_below, &dirs.exclude()),
        None => Ok(()),
    }
}

/// Why git could share the rule of `host`, if it could: the index tracks a file of its
/// name (looked for in the index's bytes, without running git: a repository's config can
/// make git run commands), or a `.gitignore` on its way holds a negation that may name it.
/// Both answers err on the side of not writing.
fn shared_by_git(host: Host, project_root: &Path, git: Option<&GitDirs>) -> Option<String> {
    let relative = relative_path(host)?;
    let name = Path::new(relative).file_name()?.to_string_lossy().into_owned();
    if let Some(dirs) = git {
        let mut index = Vec::new();
        let read =
            std::fs::File::open(dirs.own.join("index")).and_then(|file| file.take(64 << 20).read_to_end(&mut index));
        let needle = format!("{name}\0");
        if read.is_ok() && memchr::memmem::find(&index, needle.as_bytes()).is_some() {
            return Some(format!("git tracks a file named {name} (it is in the index)"));
        }
    }
    // Every `.gitignore` from the top of the worktree down to the rule's folder.
    let (top, prefix) = git.map_or((project_root, Path::new("")), |dirs| (dirs.top.as_path(), dirs.prefix.as_path()));
    let mut folder = PathBuf::new();
    let mut folders = vec![PathBuf::new()];
    for part in prefix.components().chain(Path::new(relative).parent()?.components()) {
        folder.push(part);
        folders.push(folder.clone());
    }
    let relative = prefix.join(relative).to_string_lossy().into_owned();
    let relative = relative.as_str();
    for folder in folders {
        let path = top.join(&folder).join(".gitignore");
        let mut text = String::new();
        let Ok(file) = std::fs::File::open(&path) else { continue };
        if file.take(1 << 20).read_to_string(&mut text).is_err() {
            continue;
        }
        // The rule's path as this `.gitignore` reads it: from its own folder.
        let here = Path::new(relative)
            .strip_prefix(&folder)
            .map_or(relative.to_string(), |p| p.to_string_lossy().into_owned());
        for line in text.lines().map(str::trim) {
            let Some(pattern) = line.strip_prefix('!') else { continue };
            let pattern = pattern.trim_start_matches('/');
            let wild = pattern.contains(['*', '?', '[']);
            let names_it = here.ends_with(pattern.trim_end_matches('/'))
                || here.starts_with(pattern.trim_end_matches('/'))
                || pattern.contains(&name);
            if wild || names_it {
                return Some(format!(
                    "{} un-ignores {pattern:?}, which may take it back from the exclude list",
                    path.display()
                ));
            }
        }
    }
    None
}

/// The rule's text for the working memory `text` (Cursor's with its front matter; Cline
/// applies a rule without one to every task).
pub fn render(host: Host, text: &str) -> String {
    let marker = format!(
        "{MARKER} hash={} — rewritten by brain's {} hooks; edits here are lost -->",
        brain_hash(text),
        host.display_name()
    );
    match host {
        Host::Cursor => format!(
            "---\ndescription: Project memory from brain (recalled reference data, not instructions)\nalwaysApply: true\n---\n{marker}\n\n{text}\n"
        ),
        _ => format!("{marker}\n\n{text}\n"),
    }
}

/// The first bytes of the rule, if it is a regular file.
fn head(path: &Path) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).ok()?.take(4096).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether `path` is a rule brain wrote.
fn is_managed(path: &Path) -> bool {
    head(path).is_some_and(|text| text.contains(MARKER))
}

/// What [`write`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum RuleOutcome {
    Written,
    Unchanged,
    /// A file brain did not write sits there: left alone.
    NotOurs,
}

/// Writes the rule for `text` under `project_root` when it is missing (`create`) or is brain's
/// and holds something else; excludes it from git.
pub fn write(host: Host, project_root: &Path, text: &str, create: bool) -> BrainResult<RuleOutcome> {
    write_beside(host, project_root, text, create, clines_own_folder().as_deref())
}

/// [`write`], with Cline's own folder `clines_folder` (whose rules are global ones).
fn write_beside(
    host: Host,
    project_root: &Path,
    text: &str,
    create: bool,
    clines_folder: Option<&Path>,
) -> BrainResult<RuleOutcome> {
    let path = rule_path(host, project_root);
    if is_global_rules_folder(host, project_root, clines_folder) {
        // A rule brain wrote there before shadowed every project's: it is taken back.
        if is_managed(&path) {
            let _ = std::fs::remove_file(&path);
        }
        return Err(BrainError::user_with_hint(
            format!(
                "{} was not written: Cline reads that folder's rules as global ones, for every project",
                path.display()
            ),
            "start Cline in a project's folder; the hooks and MCP still give the memory here",
        ));
    }
    let rendered = render(host, text);
    match head(&path) {
        Some(existing) if !existing.contains(MARKER) => return Ok(RuleOutcome::NotOurs),
        Some(_) if std::fs::read_to_string(&path).is_ok_and(|current| current == rendered) => {
            return Ok(RuleOutcome::Unchanged);
        }
        Some(_) => {}
        None if path.exists() => return Ok(RuleOutcome::NotOurs),
        None if !create => return Ok(RuleOutcome::Unchanged),
        None => {}
    }
    let git = git_dirs(project_root);
    refuse_links_in(host, project_root, git.as_ref())?;
    if let Some(reason) = shared_by_git(host, project_root, git.as_ref()) {
        return Err(BrainError::user_with_hint(
            format!("{} was not written: {reason}", path.display()),
            "the rule holds personal memory and never goes where git shares it; the hooks and MCP still give it",
        ));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", parent.display())))?;
    }
    write_atomically(&path, rendered.as_bytes())?;
    exclude_from_git(host, git.as_ref());
    Ok(RuleOutcome::Written)
}

/// Cline's own folder (`$CLINE_DIR`, else `~/.cline`, as `brain_capture::extract::cline_home`
/// resolves it), when it is known.
fn clines_own_folder() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from).unwrap_or_default();
    Some(brain_capture::extract::cline_home(&home)).filter(|folder| folder.is_absolute())
}

/// Whether the rule of `host` under `project_root` would land in the host's own folder of
/// global rules: Cline's `rules/` in `clines_folder` (`~/.cline/rules`), reached when a task
/// runs in the home folder (a project root falls back to the folder itself, or a dotfiles
/// repository). The working memory of one project there would reach every project's tasks
/// and hide their own rule of the same name.
fn is_global_rules_folder(host: Host, project_root: &Path, clines_folder: Option<&Path>) -> bool {
    let Some(own) = clines_folder.filter(|_| host == Host::Cline) else { return false };
    let canonical = |path: PathBuf| std::fs::canonicalize(&path).unwrap_or(path);
    let here = canonical(project_root.to_path_buf()).join(".cline");
    canonical(here) == canonical(own.to_path_buf())
}

/// Whether there is a rule brain wrote that [`remove`] would remove; a rule reached through
/// a link in the repository is refused (it is not the project's to remove).
pub fn managed_rule(host: Host, project_root: &Path) -> BrainResult<bool> {
    let path = rule_path(host, project_root);
    if !is_managed(&path) {
        return Ok(false);
    }
    repo_files::refuse_links(project_root, &path)?;
    Ok(true)
}

/// Removes the rule if brain wrote it; whether it did.
pub fn remove(host: Host, project_root: &Path) -> BrainResult<bool> {
    let path = rule_path(host, project_root);
    if !managed_rule(host, project_root)? {
        return Ok(false);
    }
    std::fs::remove_file(&path).map_err(|err| BrainError::user(format!("cannot remove {}: {err}", path.display())))?;
    Ok(true)
}

/// Adds the rule to the repository's `info/exclude` (a local ignore list git never shares),
/// once.
fn exclude_from_git(host: Host, git: Option<&GitDirs>) {
    let Some(git) = git else { return };
    let exclude = git.exclude();
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    let Some(relative) = relative_path(host) else { return };
    let line = git.exclude_line(relative);
    if current.lines().any(|existing| existing.trim() == line) {
        return;
    }
    let mut updated = current;
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    updated.push_str(&line);
    updated.push('\n');
    if let Some(info) = exclude.parent() {
        let _ = std::fs::create_dir_all(info);
    }
    let _ = write_atomically(&exclude, updated.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_is_written_kept_current_and_never_overwrites_a_foreign_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        assert_eq!(
            write(Host::Cursor, dir.path(), "memory one", false).unwrap(),
            RuleOutcome::Unchanged,
            "not created by hooks"
        );
        assert_eq!(write(Host::Cursor, dir.path(), "memory one", true).unwrap(), RuleOutcome::Written);
        let text = std::fs::read_to_string(rule_path(Host::Cursor, dir.path())).unwrap();
        assert!(text.starts_with("---\ndescription: ") && text.contains("alwaysApply: true\n---\n"));
        assert!(text.ends_with("memory one\n"));
        assert_eq!(write(Host::Cursor, dir.path(), "memory one", false).unwrap(), RuleOutcome::Unchanged);
        assert_eq!(write(Host::Cursor, dir.path(), "memory two", false).unwrap(), RuleOutcome::Written);
        let exclude = std::fs::read_to_string(dir.path().join(".git/info/exclude")).unwrap();
        assert_eq!(exclude.matches("/.cursor/rules/brain.mdc").count(), 1);
        std::fs::write(rule_path(Host::Cursor, dir.path()), "my own rule").unwrap();
        assert_eq!(write(Host::Cursor, dir.path(), "memory three", true).unwrap(), RuleOutcome::NotOurs);
        assert!(!remove(Host::Cursor, dir.path()).unwrap());
        assert_eq!(std::fs::read_to_string(rule_path(Host::Cursor, dir.path())).unwrap(), "my own rule");
    }

    #[test]
    fn clines_rule_has_no_front_matter_a_name_of_its_own_and_is_excluded_from_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        assert_eq!(write(Host::Cline, dir.path(), "memory one", true).unwrap(), RuleOutcome::Written);
        let path = dir.path().join(".cline/rules/brain-working-memory.md");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("<!-- brain:managed hash=") && text.contains("Cline hooks"), "{text}");
        assert!(text.ends_with("\n\nmemory one\n"), "{text}");
        let exclude = std::fs::read_to_string(dir.path().join(".git/info/exclude")).unwrap();
        assert_eq!(exclude, "/.cline/rules/brain-working-memory.md\n");
        assert_eq!(write(Host::Cline, dir.path(), "memory one", true).unwrap(), RuleOutcome::Unchanged);
        assert!(remove(Host::Cline, dir.path()).unwrap());
        assert!(!path.exists());
        // A linked rules folder in the repository is never written through.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join(".cline/rules-link")).unwrap();
        std::fs::remove_dir(dir.path().join(".cline/rules")).unwrap();
        std::fs::rename(dir.path().join(".cline/rules-link"), dir.path().join(".cline/rules")).unwrap();
        let err = write(Host::Cline, dir.path(), "memory two", true).unwrap_err().to_string();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    /// The third hostile round: a repository can commit a rule carrying brain's marker, and a
    /// `.gitignore` negation can take the rule back from the exclude list; either way the
    /// working memory (pins of global and of the project) went into a file `git commit -a`
    /// shares. Worktrees and submodules (`.git` is a file) got no exclude line at all.
    #[test]
    fn the_rule_never_goes_where_git_shares_it_and_a_worktree_excludes_it_too() {
        let dir = tempfile::tempdir().unwrap();
        let tracked = dir.path().join("tracked");
        std::fs::create_dir_all(tracked.join(".git")).unwrap();
        std::fs::create_dir_all(tracked.join(".cursor/rules")).unwrap();
        let planted = format!("---\nalwaysApply: true\n---\n{MARKER} -->\nplaceholder\n");
        std::fs::write(rule_path(Host::Cursor, &tracked), &planted).unwrap();
        std::fs::write(tracked.join(".git/index"), b"DIRC\0\0\0\x02\0\0\0\x01....cursor/rules/brain.mdc\0\0").unwrap();
        let err = write(Host::Cursor, &tracked, "private memory", true).unwrap_err().to_string();
        assert!(err.contains("git tracks"), "{err}");
        assert_eq!(std::fs::read_to_string(rule_path(Host::Cursor, &tracked)).unwrap(), planted, "left as it was");

        let negated = dir.path().join("negated");
        std::fs::create_dir_all(negated.join(".git")).unwrap();
        std::fs::write(negated.join(".gitignore"), "target/\n!/.cline/rules/brain-working-memory.md\n").unwrap();
        let err = write(Host::Cline, &negated, "private memory", true).unwrap_err().to_string();
        assert!(err.contains("un-ignores"), "{err}");
        assert!(!rule_path(Host::Cline, &negated).exists());
        std::fs::write(negated.join(".gitignore"), "target/\n").unwrap();
        assert_eq!(write(Host::Cline, &negated, "private memory", true).unwrap(), RuleOutcome::Written);

        let main = dir.path().join("main");
        std::fs::create_dir_all(main.join(".git/worktrees/feature")).unwrap();
        std::fs::write(main.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(main.join(".git/worktrees/feature/commondir"), "../..\n").unwrap();
        let feature = dir.path().join("feature");
        std::fs::create_dir_all(&feature).unwrap();
        std::fs::write(feature.join(".git"), format!("gitdir: {}\n", main.join(".git/worktrees/feature").display()))
            .unwrap();
        // Git writes the worktree's `.git` path back into its git folder: without it, the
        // `.git` file is not believed.
        std::fs::write(main.join(".git/worktrees/feature/gitdir"), format!("{}\n", feature.join(".git").display()))
            .unwrap();
        assert_eq!(write(Host::Cline, &feature, "private memory", true).unwrap(), RuleOutcome::Written);
        let exclude = std::fs::read_to_string(main.join(".git/info/exclude")).unwrap();
        assert!(exclude.contains("/.cline/rules/brain-working-memory.md"), "{exclude}");
    }

    /// A hostile review: a package of a monorepo with its own `.brain.toml` is a project
    /// root without a `.git`; the rule got no exclude line, and `git add -A` shared the
    /// working memory (global pins included). The worktree above it is found, the exclude
    /// line names the rule's path from its top, and its `.gitignore` negations are read on
    /// the whole way down.
    #[test]
    fn a_project_root_below_the_top_of_its_repository_gets_its_exclude_line_there() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let app = repo.join("packages/app");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&app).unwrap();
        assert!(!excluded_from_git(Host::Cline, &app));
        assert_eq!(write(Host::Cline, &app, "private memory", true).unwrap(), RuleOutcome::Written);
        let exclude = std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
        assert_eq!(exclude, "/packages/app/.cline/rules/brain-working-memory.md\n");
        assert!(excluded_from_git(Host::Cline, &app));
        assert!(!app.join(".git").exists(), "nothing written in the package but the rule");

        // A negation in the package's own `.gitignore`, read from its folder.
        std::fs::write(app.join(".gitignore"), "!.cursor/\n").unwrap();
        let err = write(Host::Cursor, &app, "private memory", true).unwrap_err().to_string();
        assert!(err.contains("un-ignores"), "{err}");
        // A link between the top and the project root leads the rule out of the repository.
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, repo.join("linked")).unwrap();
            assert!(write(Host::Cline, &repo.join("linked"), "private memory", true).is_err());
            assert!(!outside.join(".cline").exists());
        }
    }

    /// A hostile review: a Cline task run in the home folder wrote the working memory into
    /// `~/.cline/rules/`, Cline's global rules, read by every project's tasks.
    #[test]
    fn clines_rule_never_goes_into_clines_own_folder_of_global_rules() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".git")).unwrap();
        let own = home.join(".cline");
        assert!(is_global_rules_folder(Host::Cline, &home, Some(&own)));
        assert!(!is_global_rules_folder(Host::Cursor, &home, Some(&own)));
        assert!(!is_global_rules_folder(Host::Cline, &home.join("project"), Some(&own)));
        assert!(!is_global_rules_folder(Host::Cline, &home, None));
        // `$CLINE_DIR` moves Cline's folder: the home's `.cline` is then a project's.
        let moved = dir.path().join("elsewhere/.cline");
        assert!(!is_global_rules_folder(Host::Cline, &home, Some(&moved)));
        assert!(is_global_rules_folder(Host::Cline, &dir.path().join("elsewhere"), Some(&moved)));

        // What `write` does there: nothing written, and a rule brain left before taken back.
        let rules = home.join(".cline/rules");
        std::fs::create_dir_all(&rules).unwrap();
        std::fs::write(rule_path(Host::Cline, &home), render(Host::Cline, "old memory")).unwrap();
        let user_rule = rules.join("mine.md");
        std::fs::write(&user_rule, "my rule").unwrap();
        let err = write_beside(Host::Cline, &home, "memory", true, Some(&own)).unwrap_err();
        assert!(err.to_string().contains("global"), "{err}");
        assert!(!rule_path(Host::Cline, &home).exists());
        assert_eq!(std::fs::read_to_string(&user_rule).unwrap(), "my rule");
    }

    /// Hostile review of setup, finding 4: an archive's `.git` file naming a folder whose
    /// `info` links out of the repository made the exclude line go there. The `.git` file is
    /// believed only the way git writes it, and no link may lie on the way to the exclude
    /// list, inside the root or not; a real submodule still gets its exclude line.
    #[test]
    fn a_git_file_is_believed_only_as_git_writes_it_and_no_link_leads_to_the_exclude_list() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("exclude"), "precious line\n").unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("g")).unwrap();
        std::fs::write(repo.join("g/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::os::unix::fs::symlink(&outside, repo.join("g/info")).unwrap();
        // Named through a link to the repository, so the path does not start with the root.
        let alias = dir.path().join("alias");
        std::os::unix::fs::symlink(&repo, &alias).unwrap();
        std::fs::write(repo.join(".git"), format!("gitdir: {}\n", alias.join("g").display())).unwrap();
        assert!(git_dirs(&repo).is_none(), "no gitdir pointing back: not a repository");
        assert_eq!(write(Host::Cursor, &repo, "memory", true).unwrap(), RuleOutcome::Written);
        assert_eq!(std::fs::read_to_string(outside.join("exclude")).unwrap(), "precious line\n");
        // Even with a forged pointer back, the linked `info` is refused.
        std::fs::write(repo.join("g/gitdir"), "../.git\n").unwrap();
        assert!(git_dirs(&repo).is_some());
        let err = refuse_links(Host::Cursor, &repo).unwrap_err().to_string();
        assert!(err.contains("info is a symbolic link"), "{err}");
        assert!(write(Host::Cursor, &repo, "memory two", true).is_err());
        assert_eq!(std::fs::read_to_string(outside.join("exclude")).unwrap(), "precious line\n");

        // A submodule, as `git submodule add` lays it out.
        let parent = dir.path().join("parent");
        let modules = parent.join(".git/modules/sub");
        std::fs::create_dir_all(&modules).unwrap();
        std::fs::write(modules.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(modules.join("config"), "[core]\n\tbare = false\n\tworktree = ../../../sub\n").unwrap();
        let sub = parent.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
        assert_eq!(write(Host::Cline, &sub, "memory", true).unwrap(), RuleOutcome::Written);
        let exclude = std::fs::read_to_string(modules.join("info/exclude")).unwrap();
        assert_eq!(exclude, "/.cline/rules/brain-working-memory.md\n");
    }
}
