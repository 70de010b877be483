//! GitHub Copilot CLI's particulars: it also runs the hooks of a repository's
//! `.claude/settings.json` (Claude Code's, brain's among them) next to its own, setting
//! `COPILOT_CLI=1` in every hook's environment; its `sessionEnd` input names no transcript;
//! and it writes a session's events after its hooks ran.
//!
//! Copilot CLI 1.0.102 keeps a session's events in memory and writes `events.jsonl` when the
//! session shuts down, after its `sessionEnd` hook returned (a `-p` run: the file does not
//! exist yet while `agentStop` and `sessionEnd` run; measured on the real CLI). So its
//! `sessionEnd` hook captures only a transcript that already holds the session's end (its
//! `session.shutdown` record); otherwise it hands the capture to a detached brain
//! ([`capture_after_exit`]) that waits for that record — at most [`WAIT_FOR_END`] — and
//! captures then, as the hook would have.
//!
//! So a session in a repository with brain's Claude Code hooks would get the working memory
//! twice (Copilot joins every session-start context into one message): brain's Claude Code
//! hooks stay quiet inside Copilot ([`quiet_inside_copilot`]) and its Copilot hooks serve the
//! session, once. Without brain's Copilot hooks, a Copilot session gets nothing from the
//! Claude Code ones: `brain hook install --agent copilot` is what serves Copilot.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use brain_capture::Host;

use super::harness::LogPolicy;
use super::{HookEvent, HookRun, quiet_payload, read_input};
use brain_api::app::Context;
use brain_api::error::{BrainError, BrainResult};

/// How long the detached capture waits for Copilot CLI to write the session's end.
pub const WAIT_FOR_END: Duration = Duration::from_secs(60);
/// The record Copilot CLI ends a session's events with.
const SESSION_END_RECORD: &[u8] = b"\"type\":\"session.shutdown\"";
/// How much of the events' end is searched for it (the record names the files changed).
const END_SEARCH_BYTES: u64 = 1024 * 1024;

/// Whether this hook runs inside a Copilot CLI session (and not as one of its own hooks).
pub fn claude_hook_inside_copilot(host: Host) -> bool {
    host == Host::ClaudeCode && std::env::var_os("COPILOT_CLI").is_some_and(|value| value == "1")
}

/// A Claude Code hook that Copilot CLI runs: reads its input (so Copilot's write never meets
/// a closed pipe) and prints the quiet payload, within the deadline.
pub fn quiet_inside_copilot(run: HookRun, event: HookEvent) -> String {
    run.fail_open(event, LogPolicy::ExistingHome, move |_, host, _, stdin| {
        read_input(stdin)?;
        Ok(quiet_payload(host, event))
    })
}

/// The events file of Copilot CLI session `session`: `$COPILOT_HOME/session-state/<session>/
/// events.jsonl` (`~/.copilot`); `None` for an id that is not one folder name.
pub fn transcript_of(session: &str) -> Option<PathBuf> {
    if !super::harness::is_folder_name(session) {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let state = brain_capture::extract::copilot_home(&home).join("session-state");
    Some(state.join(session).join("events.jsonl"))
}

/// Whether the events at `path` hold the session's end (its last [`END_SEARCH_BYTES`] hold a
/// `session.shutdown` record); false when there is no such regular file.
pub fn holds_session_end(path: &Path) -> bool {
    let Ok(mut file) = brain_capture::transcript::open_regular(path) else { return false };
    let size = file.metadata().map_or(0, |metadata| metadata.len());
    if file.seek(SeekFrom::Start(size.saturating_sub(END_SEARCH_BYTES))).is_err() {
        return false;
    }
    let mut tail = Vec::new();
    if file.take(END_SEARCH_BYTES).read_to_end(&mut tail).is_err() {
        return false;
    }
    memchr::memmem::find(&tail, SESSION_END_RECORD).is_some()
}

/// Whether `path` is the events file of a session Copilot CLI is running: its folder is a
/// session's (Copilot writes `workspace.yaml` there when the session starts).
pub fn is_session_events(path: &Path) -> bool {
    path.parent().is_some_and(|folder| folder.join("workspace.yaml").is_file())
}

/// Starts a detached `brain hook session-end --agent copilot --after-host-exit` that waits
/// for the events at `transcript` to hold the session's end, then captures them; the session
/// and working directory go to it on stdin. Never waited for.
pub fn capture_after_exit(context: &Context, session: Option<&str>, transcript: &Path) -> BrainResult<()> {
    let exe = std::env::current_exe().map_err(|err| BrainError::internal(format!("cannot find brain: {err}")))?;
    let input = serde_json::json!({
        "session_id": session,
        "cwd": context.cwd,
        "transcript_path": transcript,
    });
    let mut command = std::process::Command::new(exe);
    command
        .arg("--home")
        .arg(&context.home)
        // The hook's clock (`--now` or the time the session ended) and project, so the
        // capture decides as the hook would have.
        .arg("--now")
        .arg(context.now.to_string());
    if let Some(project) = &context.project {
        command.arg("--project").arg(project);
    }
    command
        .args(["hook", "session-end", "--agent", Host::Copilot.as_str(), "--after-host-exit"])
        .current_dir(&context.cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        // Its own process group: what ends Copilot's hooks does not end it.
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|err| BrainError::internal(format!("cannot start the capture after Copilot CLI exits: {err}")))?;
    // A few hundred bytes: the pipe takes them without waiting for the reader.
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.to_string().as_bytes())
            .map_err(|err| BrainError::internal(format!("cannot hand the session to the capture: {err}")))?;
    }
    Ok(())
}

/// The detached capture's wait: until the events at `path` hold the session's end, or
/// `limit` passed (then what is there is captured). Whether the end was seen.
pub fn wait_for_session_end(path: &Path, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        if holds_session_end(path) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
