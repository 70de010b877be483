//! Cline (its 3.x CLI): hooks are files, one per event, named for the event, in a hooks
//! folder — `$CLINE_DIR/hooks/` (`~/.cline/hooks/`) for the user, `.cline/hooks/` in a project
//! (Cline 3.0.65 also reads `.clinerules/hooks/` and `~/Documents/Cline/Hooks/`). Cline runs a
//! file without an extension through the interpreter its `#!` line names (else `bash`), the
//! event's JSON on stdin.
//!
//! brain writes one small shell script per event it uses (`TaskStart`, `TaskComplete`,
//! `SessionShutdown`: see [`super::hosts`]), each running `brain hook EVENT --agent cline`.
//! Install writes a file when it is missing or brain's (it carries [`MARKER`]); a file of
//! that name brain did not write is refused, never replaced, before anything is written, so
//! there is nothing of the user's to back up. Uninstall removes brain's files only.
//! `--dry-run` shows the change as a diff.
//!
//! Cline's hook input names no transcript: the session is `sessionContext.rootSessionId`,
//! kept in `<sessions>/<session>/<session>.messages.json` ([`transcript_of`]).

use std::path::{Path, PathBuf};

use super::hosts::{event_name, installed_events};
use super::install::{Change, InstallOutcome, InstallScope, hook_command, read_settings, unified_diff};
use brain_api::app::write_atomically;
use brain_api::error::{BrainError, BrainResult};
use brain_capture::Host;

/// Marks a hook file brain wrote (and may rewrite or remove).
pub const MARKER: &str = "brain:managed";

/// The hooks folder of `scope`; `home` is the user's home folder.
pub fn hooks_dir(scope: InstallScope, home: &Path, project_root: &Path) -> PathBuf {
    match scope {
        InstallScope::User => brain_capture::extract::cline_home(home).join("hooks"),
        InstallScope::Project => project_root.join(".cline/hooks"),
    }
}

/// The hook file for Cline's event `name`, running `command`.
pub fn render(name: &str, command: &str) -> String {
    format!(
        "#!/bin/sh\n# {MARKER}: written by `brain hook install --agent cline`, removed by `brain hook uninstall \
         --agent cline`; edits here are lost.\n# Cline runs it at {name}, the event's JSON on stdin.\nexec {command}\n"
    )
}

/// Writes (or removes) brain's hook files in the folder `dir`. With `dry_run`, nothing is
/// written.
pub fn apply(dir: &Path, prefix: &str, change: Change, dry_run: bool) -> BrainResult<InstallOutcome> {
    let mut outcome = InstallOutcome {
        agent: Host::Cline.as_str().to_string(),
        settings: dir.display().to_string(),
        dry_run,
        ..InstallOutcome::default()
    };
    // Every file is judged before any is written, so a refusal leaves nothing half done.
    let mut writes = Vec::new();
    for event in installed_events(Host::Cline) {
        let Some(name) = event_name(Host::Cline, event) else { continue };
        let path = dir.join(name);
        let current = read_settings(&path)?;
        if current.as_deref().is_some_and(|text| !text.contains(MARKER)) {
            if change == Change::Uninstall {
                outcome.notes.push(format!("{} was not written by brain: left alone", path.display()));
                continue;
            }
            return Err(BrainError::user_with_hint(
                format!("{} exists and was not written by brain; refusing to replace it", path.display()),
                "Cline runs one file per event and folder: move it away (or install with --scope project), then \
                 install again",
            ));
        }
        let before = current.unwrap_or_default();
        let after = match change {
            Change::Install => render(name, &hook_command(prefix, Host::Cline, event)),
            Change::Uninstall => String::new(),
        };
        if before == after {
            continue;
        }
        outcome.diff.push_str(&unified_diff(&before, &after, &path));
        match change {
            Change::Install if before.is_empty() => outcome.added.push(name.to_string()),
            Change::Install => outcome.updated.push(name.to_string()),
            Change::Uninstall => outcome.removed.push(name.to_string()),
        }
        writes.push((path, after));
    }
    if dry_run {
        return Ok(outcome);
    }
    for (path, after) in writes {
        if after.is_empty() {
            std::fs::remove_file(&path)
                .map_err(|err| BrainError::user(format!("cannot remove {}: {err}", path.display())))?;
            continue;
        }
        std::fs::create_dir_all(dir)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", dir.display())))?;
        write_atomically(&path, after.as_bytes())?;
        make_executable(&path)?;
    }
    Ok(outcome)
}

/// Lets the file run by itself too (Cline runs it through its `#!` line either way).
fn make_executable(path: &Path) -> BrainResult<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|err| BrainError::user(format!("cannot make {} executable: {err}", path.display())))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The session document of Cline session `session` (`<sessions>/<session>/<session>.messages.json`,
/// see [`brain_capture::extract::cline_sessions`]); `None` for an id that is not one folder name.
pub fn transcript_of(session: &str) -> Option<PathBuf> {
    if !super::harness::is_folder_name(session) {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let sessions = brain_capture::extract::cline_sessions(&home);
    Some(sessions.join(session).join(format!("{session}.messages.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_writes_one_script_per_event_and_never_replaces_a_file_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join("hooks");
        let prefix = "'/opt/my brain/brain' --home '/h/b'";
        let dry = apply(&hooks, prefix, Change::Install, true).unwrap();
        assert_eq!(dry.added, vec!["TaskStart", "TaskComplete", "SessionShutdown"]);
        assert!(dry.diff.contains("+exec '/opt/my brain/brain' --home '/h/b' hook stop --agent cline"), "{}", dry.diff);
        assert!(!hooks.exists(), "a dry run writes nothing");
        apply(&hooks, prefix, Change::Install, false).unwrap();
        let start = std::fs::read_to_string(hooks.join("TaskStart")).unwrap();
        assert!(start.starts_with("#!/bin/sh\n") && start.ends_with("hook session-start --agent cline\n"), "{start}");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(hooks.join("TaskStart")).unwrap().permissions().mode() & 0o777, 0o755);
        assert!(!apply(&hooks, prefix, Change::Install, false).unwrap().changed(), "idempotent");
        let moved = apply(&hooks, "/usr/bin/brain", Change::Install, false).unwrap();
        assert_eq!(moved.updated.len(), 3);

        // The user's own TaskComplete: install refuses before writing anything.
        std::fs::write(hooks.join("TaskComplete"), "#!/bin/sh\necho mine\n").unwrap();
        let err = apply(&hooks, prefix, Change::Install, false).unwrap_err().to_string();
        assert!(err.contains("TaskComplete exists and was not written by brain"), "{err}");
        assert!(std::fs::read_to_string(hooks.join("TaskStart")).unwrap().contains("/usr/bin/brain"));
        let removed = apply(&hooks, "", Change::Uninstall, false).unwrap();
        assert_eq!(removed.removed, vec!["TaskStart", "SessionShutdown"]);
        assert!(removed.notes[0].contains("not written by brain: left alone"), "{removed:?}");
        assert_eq!(std::fs::read_to_string(hooks.join("TaskComplete")).unwrap(), "#!/bin/sh\necho mine\n");
        assert!(!hooks.join("TaskStart").exists());
    }
}
