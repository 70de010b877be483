//! OpenCode: brain as an in-process plugin, `brain.js` in OpenCode's plugin folder
//! (`$XDG_CONFIG_HOME/opencode/plugins/`, `~/.config/…`; a project's `.opencode/plugins/`).
//!
//! OpenCode has no command hooks: its plugins are JavaScript modules it loads and calls. So
//! the plugin is a thin shim over `brain hook EVENT --agent opencode` (one JSON object on
//! stdin, `{"additionalContext": …}` or nothing on stdout, bounded and fail-open like every
//! hook), and a second entry point for another plugin API is a few lines:
//!
//! | OpenCode hook | brain hook | what it does |
//! |---|---|---|
//! | `experimental.chat.system.transform` | `session-start`, once a session (then kept) | the working memory, as a system message of every request |
//! | `chat.message` | `user-prompt-submit` | the task's recall (first prompt), refreshes and alerts, as a synthetic text part of the prompt |
//! | `session.idle` event | `stop` | writes the session's messages (from the plugin's client) to `$XDG_DATA_HOME/opencode/brain-transcripts/<directory>/<session>.jsonl`, then captures them |
//!
//! Install writes the file when it is missing or brain's (it carries [`MARKER`]); a file of
//! the same name that brain did not write is refused, never replaced, so there is nothing of
//! the user's to back up. Uninstall removes brain's file only. `--dry-run` shows the change as
//! a diff.

use std::path::{Path, PathBuf};

use super::hosts::{HookEvent, event_name, installed_events};
use super::install::{Change, InstallOutcome, InstallScope, hook_command, read_settings, unified_diff};
use brain_api::app::write_atomically;
use brain_api::error::{BrainError, BrainResult};
use brain_capture::Host;

/// Marks a plugin brain wrote (and may rewrite or remove).
pub const MARKER: &str = "brain:managed";

/// The plugin file of `scope`; `home` is the user's home folder.
pub fn plugin_path(scope: InstallScope, home: &Path, project_root: &Path) -> PathBuf {
    match scope {
        InstallScope::User => {
            let config = std::env::var_os("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from);
            config.unwrap_or_else(|| home.join(".config")).join("opencode/plugins/brain.js")
        }
        InstallScope::Project => project_root.join(".opencode/plugins/brain.js"),
    }
}

/// The plugin, running `prefix hook EVENT --agent opencode` through the shell (as the other
/// hosts run brain's hook commands).
pub fn render(prefix: &str) -> String {
    let command = |event: HookEvent| {
        serde_json::to_string(&hook_command(prefix, Host::OpenCode, event)).unwrap_or_else(|_| "\"\"".into())
    };
    PLUGIN
        .replace("@SESSION_START@", &command(HookEvent::SessionStart))
        .replace("@USER_PROMPT_SUBMIT@", &command(HookEvent::UserPromptSubmit))
        .replace("@STOP@", &command(HookEvent::Stop))
}

/// Writes (or removes) brain's plugin at `path`. With `dry_run`, nothing is written.
pub fn apply(path: &Path, prefix: &str, change: Change, dry_run: bool) -> BrainResult<InstallOutcome> {
    let current = read_settings(path)?;
    let mut outcome = InstallOutcome {
        agent: Host::OpenCode.as_str().to_string(),
        settings: path.display().to_string(),
        dry_run,
        ..InstallOutcome::default()
    };
    let ours = current.as_deref().is_some_and(|text| text.contains(MARKER));
    if current.is_some() && !ours {
        if change == Change::Uninstall {
            outcome.notes.push(format!("{} was not written by brain: left alone", path.display()));
            return Ok(outcome);
        }
        return Err(BrainError::user_with_hint(
            format!("{} exists and was not written by brain; refusing to replace it", path.display()),
            "move it away (or pass --settings with another file name), then install again",
        ));
    }
    let names = installed_events(Host::OpenCode).into_iter().filter_map(|event| event_name(Host::OpenCode, event));
    let before = current.unwrap_or_default();
    let after = match change {
        Change::Install => render(prefix),
        Change::Uninstall => String::new(),
    };
    if before == after {
        return Ok(outcome);
    }
    outcome.diff = unified_diff(&before, &after, path);
    match change {
        Change::Install if before.is_empty() => outcome.added = names.map(str::to_string).collect(),
        Change::Install => outcome.updated = names.map(str::to_string).collect(),
        Change::Uninstall => outcome.removed = names.map(str::to_string).collect(),
    }
    if dry_run {
        return Ok(outcome);
    }
    if change == Change::Uninstall {
        std::fs::remove_file(path)
            .map_err(|err| BrainError::user(format!("cannot remove {}: {err}", path.display())))?;
        return Ok(outcome);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", parent.display())))?;
    }
    write_atomically(path, after.as_bytes())?;
    Ok(outcome)
}

/// The plugin's text; `@…@` are the hook commands as JavaScript strings.
const PLUGIN: &str = r#"// brain's OpenCode plugin: the project's working memory in the system prompt, the task's
// recall with the first prompt, and each session captured when a turn ends.
// brain:managed: written by `brain hook install --agent opencode`, removed by
// `brain hook uninstall --agent opencode`; edits here are lost.
//
// A thin shim over `brain hook EVENT --agent opencode`: a hook reads one JSON object on stdin
// and prints {"additionalContext": ...} or nothing, ending itself at brain's [hooks]
// timeout_ms; a hook that fails adds nothing (brain logs why in <home>/logs/hooks.log).
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

const HOOKS = {
  "session-start": @SESSION_START@,
  "user-prompt-submit": @USER_PROMPT_SUBMIT@,
  stop: @STOP@,
};
// brain's hooks end themselves within a minute; this only guards against a stuck shell.
const TIMEOUT_MS = 65000;

function hook(event, input) {
  try {
    const run = spawnSync(HOOKS[event], {
      shell: true,
      input: JSON.stringify(input),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    });
    const out = (run.stdout || "").trim();
    return out ? JSON.parse(out).additionalContext || "" : "";
  } catch {
    return "";
  }
}

// OpenCode refuses a part without an id; ids ascend: "prt_", 12 hex digits of
// (milliseconds * 0x1000 + a counter), 14 base62 characters.
let counter = 0;
function partId() {
  const n = BigInt(Date.now()) * 0x1000n + BigInt(counter++ & 0xfff);
  const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let tail = "";
  for (let i = 0; i < 14; i++) tail += digits[Math.floor(Math.random() * 62)];
  return "prt_" + n.toString(16).padStart(12, "0").slice(-12) + tail;
}

// Where brain reads the session from (brain extract --agent opencode reads the same folder).
function transcriptPath(directory, sessionID) {
  const data = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share");
  const folder = directory.replace(/[^A-Za-z0-9]/g, "-");
  return join(data, "opencode", "brain-transcripts", folder, `${sessionID.replace(/[^A-Za-z0-9_-]/g, "-")}.jsonl`);
}

export const BrainPlugin = async ({ client, directory }) => {
  const workingMemory = new Map();
  const sessionStart = (sessionID) => {
    if (!workingMemory.has(sessionID)) {
      const input = { hook_event_name: "SessionStart", session_id: sessionID, cwd: directory };
      workingMemory.set(sessionID, hook("session-start", input));
    }
    return workingMemory.get(sessionID);
  };
  return {
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return;
      const text = sessionStart(input.sessionID);
      if (text) output.system.push(text);
    },
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      // The session start first: the task's recall then adds only what it did not give.
      sessionStart(sessionID);
      const prompt = output.parts
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      const text = hook("user-prompt-submit", { hook_event_name: "UserPromptSubmit", session_id: sessionID, cwd: directory, prompt });
      if (text) {
        output.parts.push({ id: partId(), sessionID, messageID: output.message.id, type: "text", text, synthetic: true });
      }
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const sessionID = event.properties.sessionID;
      let transcript;
      try {
        const answer = await client.session.messages({ path: { id: sessionID } });
        const messages = answer.data ?? answer;
        const path = transcriptPath(directory, sessionID);
        mkdirSync(dirname(path), { recursive: true });
        const lines = messages.map((message) => JSON.stringify({ info: message.info, parts: message.parts }) + "\n");
        writeFileSync(path + ".tmp", lines.join(""));
        renameSync(path + ".tmp", path);
        transcript = path;
      } catch {
        // No transcript: brain's stop hook logs that it had none to capture.
      }
      hook("stop", { hook_event_name: "Stop", session_id: sessionID, cwd: directory, transcript_path: transcript });
    },
  };
};
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_runs_brains_hooks_with_the_installed_command() {
        let text = render("'/opt/my tools/brain' --home '/h'");
        assert!(text.contains(MARKER));
        assert!(
            text.contains(
                r#""session-start": "'/opt/my tools/brain' --home '/h' hook session-start --agent opencode","#
            )
        );
        assert!(text.contains(r#"stop: "'/opt/my tools/brain' --home '/h' hook stop --agent opencode","#));
        assert!(!text.contains('@'), "every placeholder is filled");
    }

    #[test]
    fn install_refuses_a_file_brain_did_not_write_and_uninstall_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plugins/brain.js");
        let dry = apply(&path, "brain", Change::Install, true).unwrap();
        assert!(dry.diff.contains("+// brain's OpenCode plugin") && !path.exists(), "{}", dry.diff);
        let installed = apply(&path, "brain", Change::Install, false).unwrap();
        assert_eq!(installed.added, vec!["experimental.chat.system.transform", "chat.message", "session.idle"]);
        assert!(!apply(&path, "brain", Change::Install, false).unwrap().changed(), "idempotent");
        assert_eq!(apply(&path, "/new/brain", Change::Install, false).unwrap().updated.len(), 3);
        assert_eq!(apply(&path, "", Change::Uninstall, false).unwrap().removed.len(), 3);
        assert!(!path.exists());
        std::fs::write(&path, "export const Mine = async () => ({});\n").unwrap();
        let err = apply(&path, "brain", Change::Install, false).unwrap_err().to_string();
        assert!(err.contains("was not written by brain"), "{err}");
        assert!(!apply(&path, "", Change::Uninstall, false).unwrap().changed());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "export const Mine = async () => ({});\n");
    }
}
