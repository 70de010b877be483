//! GitHub Copilot CLI's particulars: it also runs the hooks of a repository's
//! `.claude/settings.json` (Claude Code's, brain's among them) next to its own, setting
//! `COPILOT_CLI=1` in every hook's environment; and its `sessionEnd` input names no
//! transcript.
//!
//! So a session in a repository with brain's Claude Code hooks would get the working memory
//! twice (Copilot joins every session-start context into one message): brain's Claude Code
//! hooks stay quiet inside Copilot ([`quiet_inside_copilot`]) and its Copilot hooks serve the
//! session, once. Without brain's Copilot hooks, a Copilot session gets nothing from the
//! Claude Code ones: `brain hook install --agent copilot` is what serves Copilot.

use std::path::PathBuf;

use brain_capture::Host;

use super::harness::LogPolicy;
use super::{HookEvent, HookRun, quiet_payload, read_input};

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
    let plain = !session.is_empty()
        && session.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && session.len() <= 128;
    if !plain {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let state = brain_capture::extract::copilot_home(&home).join("session-state");
    Some(state.join(session).join("events.jsonl"))
}
