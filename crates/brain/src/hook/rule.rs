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
//! is ever rewritten or removed, and the rule is added to `.git/info/exclude`: it holds
//! personal memory, not project files. Neither is ever written or removed through a symbolic
//! link in the repository ([`super::repo_files`]): a linked rules folder would send the memory
//! wherever it leads.
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

/// The local ignore list the rule is added to.
fn exclude_path(project_root: &Path) -> PathBuf {
    project_root.join(".git").join("info").join("exclude")
}

/// Refuses when the rule or the exclude list would be written through a link in the
/// repository (checked before anything is written, so nothing is half done).
pub fn refuse_links(host: Host, project_root: &Path) -> BrainResult<()> {
    repo_files::refuse_links(project_root, &rule_path(host, project_root))?;
    repo_files::refuse_links(project_root, &exclude_path(project_root))
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
    let path = rule_path(host, project_root);
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
    refuse_links(host, project_root)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", parent.display())))?;
    }
    write_atomically(&path, rendered.as_bytes())?;
    exclude_from_git(host, project_root);
    Ok(RuleOutcome::Written)
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

/// Adds the rule to `.git/info/exclude` (a local ignore list git never shares), once.
fn exclude_from_git(host: Host, project_root: &Path) {
    let git = project_root.join(".git");
    if !git.is_dir() {
        return;
    }
    let exclude = exclude_path(project_root);
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    let Some(relative) = relative_path(host) else { return };
    let line = format!("/{relative}");
    if current.lines().any(|existing| existing.trim() == line) {
        return;
    }
    let mut updated = current;
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    updated.push_str(&line);
    updated.push('\n');
    let _ = std::fs::create_dir_all(git.join("info"));
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
}
