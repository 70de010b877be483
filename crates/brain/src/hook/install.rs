//! `brain hook install|uninstall --agent HOST`: brain's entries merged into (or taken out of)
//! a host's hook settings, keeping everything else.
//!
//! | host | user scope | project scope | shape |
//! |---|---|---|---|
//! | Claude Code | `~/.claude/settings.json` | `.claude/settings.json` | `hooks.<Event>: [{hooks: [{type, command}]}]` |
//! | Codex | `$CODEX_HOME/hooks.json` (`~/.codex`) | `.codex/hooks.json` | the same |
//! | Gemini CLI | `~/.gemini/settings.json` | `.gemini/settings.json` | the same, plus `name` |
//! | Cursor | `~/.cursor/hooks.json` | `.cursor/hooks.json` | `{version: 1, hooks: {<event>: [{command}]}}` |
//! | Qwen Code | `~/.qwen/settings.json` | `.qwen/settings.json` | Claude Code's, plus `matcher` |
//! | Copilot CLI | `$COPILOT_HOME/settings.json` (`~/.copilot`) | `.github/hooks/brain.json` | `{hooks: {<event>: [{type, bash, timeoutSec}]}}`, `version: 1` in `.github/hooks/` |
//! | OpenCode | `$XDG_CONFIG_HOME/opencode/plugins/brain.js` (`~/.config`) | `.opencode/plugins/brain.js` | brain's plugin ([`super::opencode`]) |
//! | Cline | `$CLINE_DIR/hooks/` (`~/.cline`) | `.cline/hooks/` | one script per event ([`super::cline`]) |
//!
//! Idempotent: an entry already running the same command is left alone; a brain entry with an
//! older command (another binary path, no `--home`) is replaced in place; entries of other
//! tools and every other key keep their place and order. The previous file is kept as
//! `<file>.brain-backup` (then `.brain-backup.1`, … : a backup is never overwritten), with
//! the file's permissions, and a settings file that is a symbolic link is written through to
//! its target ([`super::user_files`]); `--dry-run` writes nothing and shows the change as a
//! unified diff.
//! The command is the binary's absolute path, quoted for the shell when it needs to be (a
//! path with a space), followed by `--home DIR` when the home is not the default one.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::hosts::{HookEvent, event_name, installed_events};
use super::user_files;
use brain_api::error::{BrainError, BrainResult};
use brain_capture::Host;

/// A settings file larger than this is not a settings file: it is refused, not parsed.
const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// Where `install` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallScope {
    /// The host's settings in the user's home.
    User,
    /// The host's settings at the project root.
    Project,
}

/// The settings file of `host` for `scope`; `home` is the user's home folder, `project_root`
/// the project's, `codex_home` `$CODEX_HOME` when set (Copilot CLI's `$COPILOT_HOME` is read
/// here).
pub fn settings_path(
    host: Host,
    scope: InstallScope,
    home: &Path,
    project_root: &Path,
    codex_home: Option<&Path>,
) -> PathBuf {
    match (host, scope) {
        (Host::ClaudeCode, InstallScope::User) => home.join(".claude/settings.json"),
        (Host::ClaudeCode, InstallScope::Project) => project_root.join(".claude/settings.json"),
        (Host::Codex, InstallScope::User) => {
            codex_home.map_or_else(|| home.join(".codex"), Path::to_path_buf).join("hooks.json")
        }
        (Host::Codex, InstallScope::Project) => project_root.join(".codex/hooks.json"),
        (Host::Gemini, InstallScope::User) => home.join(".gemini/settings.json"),
        (Host::Gemini, InstallScope::Project) => project_root.join(".gemini/settings.json"),
        (Host::Cursor, InstallScope::User) => home.join(".cursor/hooks.json"),
        (Host::Cursor, InstallScope::Project) => project_root.join(".cursor/hooks.json"),
        (Host::Qwen, InstallScope::User) => home.join(".qwen/settings.json"),
        (Host::Qwen, InstallScope::Project) => project_root.join(".qwen/settings.json"),
        (Host::Copilot, InstallScope::User) => brain_capture::extract::copilot_home(home).join("settings.json"),
        (Host::Copilot, InstallScope::Project) => project_root.join(COPILOT_PROJECT_HOOKS),
        (Host::OpenCode, scope) => super::opencode::plugin_path(scope, home, project_root),
        (Host::Cline, scope) => super::cline::hooks_dir(scope, home, project_root),
    }
}

/// Copilot CLI's hook file for a repository (it reads every `.github/hooks/*.json`).
pub const COPILOT_PROJECT_HOOKS: &str = ".github/hooks/brain.json";

/// How long Copilot CLI lets a hook run, in seconds: brain's own deadline (`[hooks]
/// timeout_ms`, at most a minute) ends it sooner.
const COPILOT_TIMEOUT_SECS: u64 = super::harness::MAX_TIMEOUT_MS / 1000;

/// The key of an entry's command for hosts whose entries are flat (no inner `hooks` list).
fn flat_command_key(host: Host) -> Option<&'static str> {
    match host {
        Host::Cursor => Some("command"),
        Host::Copilot => Some("bash"),
        _ => None,
    }
}

/// What `install` or `uninstall` did (or, with `--dry-run`, would do).
#[derive(Debug, Default, Serialize)]
pub struct InstallOutcome {
    pub agent: String,
    pub settings: String,
    /// Host events that got a brain entry.
    pub added: Vec<String>,
    /// Host events whose brain entry got a new command.
    pub updated: Vec<String>,
    /// Host events whose brain entry was taken out.
    pub removed: Vec<String>,
    pub backup: Option<String>,
    /// The file is a symbolic link (the user's dotfiles): it was (or would be) written
    /// through to this target, the link kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes_through: Option<String>,
    pub dry_run: bool,
    /// The change as a unified diff (empty when nothing changes).
    pub diff: String,
    /// What the user should know (host-side steps, files written besides the settings).
    pub notes: Vec<String>,
}

impl InstallOutcome {
    pub fn changed(&self) -> bool {
        !self.diff.is_empty()
    }
}

/// Quotes `word` for a POSIX shell when it holds anything but plain path characters.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ':' | '=' | '@' | ',' | '%')
        });
    if plain {
        return word.to_string();
    }
    if cfg!(windows) {
        return format!("\"{}\"", word.replace('"', "\\\""));
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The command a host runs for `event`: `prefix hook <event>`, plus `--agent HOST` for every
/// host but Claude Code (the default).
pub fn hook_command(prefix: &str, host: Host, event: HookEvent) -> String {
    let mut command = format!("{prefix} hook {}", event.subcommand());
    if host != Host::ClaudeCode {
        command.push_str(" --agent ");
        command.push_str(host.as_str());
    }
    command
}

/// Whether `command` is a brain hook command for `host` and `event`, whatever binary path,
/// quoting or global flags it was installed with: it ends with `hook <event>` (and, for every
/// host but Claude Code, `--agent HOST`) and what comes before names `brain`.
pub fn is_brain_command(command: &str, host: Host, event: HookEvent) -> bool {
    let command = command.trim();
    let rest = match command.strip_suffix(&format!(" --agent {}", host.as_str())) {
        Some(rest) => rest,
        None if host == Host::ClaudeCode && !command.contains(" --agent ") => command,
        None => return false,
    };
    let Some(prefix) = rest.strip_suffix(&format!(" hook {}", event.subcommand())) else {
        return false;
    };
    prefix.to_ascii_lowercase().contains("brain")
}

/// What to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Install,
    Uninstall,
}

/// Merges brain's entries for `host` into (or out of) the settings file at `path`, running
/// `prefix hook …` commands. With `dry_run`, nothing is written.
pub fn apply(path: &Path, host: Host, prefix: &str, change: Change, dry_run: bool) -> BrainResult<InstallOutcome> {
    if host == Host::OpenCode {
        // OpenCode has no hook settings: brain is a plugin file.
        return super::opencode::apply(path, prefix, change, dry_run);
    }
    if host == Host::Cline {
        // Cline's hooks are files in a folder, one per event.
        return super::cline::apply(path, prefix, change, dry_run);
    }
    let before = read_settings(path)?;
    let mut settings: Value = match &before {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text).map_err(|err| {
            BrainError::user_with_hint(
                format!("{} is not valid JSON ({err}); refusing to rewrite it", path.display()),
                "fix the file or move it away, then install again",
            )
        })?,
        _ => json!({}),
    };
    refuse_lossy(path, before.as_deref().unwrap_or_default(), &settings)?;
    let mut outcome = InstallOutcome {
        agent: host.as_str().to_string(),
        settings: path.display().to_string(),
        dry_run,
        ..InstallOutcome::default()
    };
    let shape_error = |what: &str| {
        BrainError::user(format!("{what} in {} is not what {} expects", path.display(), host.display_name()))
    };
    let Some(root) = settings.as_object_mut() else {
        return Err(shape_error("the top level"));
    };
    // Cursor's hooks file is versioned, and so are Copilot CLI's in `.github/hooks/` (not its
    // settings.json); the version leads the file.
    let versioned =
        host == Host::Cursor || (host == Host::Copilot && path.file_name().is_some_and(|name| name != "settings.json"));
    if change == Change::Install && versioned && !root.contains_key("version") {
        let rest = std::mem::take(root);
        root.insert("version".into(), json!(1));
        root.extend(rest);
    }
    if change == Change::Uninstall && !root.contains_key("hooks") {
        return Ok(outcome);
    }
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(shape_error("\"hooks\""));
    };
    for event in installed_events(host) {
        let Some(name) = event_name(host, event) else { continue };
        let command = hook_command(prefix, host, event);
        match change {
            Change::Install => install_event(hooks, host, event, name, &command, &mut outcome)
                .map_err(|()| shape_error(&format!("hooks.{name}")))?,
            Change::Uninstall => uninstall_event(hooks, host, event, name, &mut outcome),
        }
    }
    let after = serde_json::to_string_pretty(&settings).map_err(|err| BrainError::internal(err.to_string()))? + "\n";
    let before_text = before.unwrap_or_default();
    if after == before_text || (change == Change::Uninstall && outcome.removed.is_empty()) {
        return Ok(outcome);
    }
    outcome.diff = unified_diff(&before_text, &after, path);
    write_settings(path, &before_text, &after, dry_run, true, &mut outcome)?;
    Ok(outcome)
}

/// Writes `after` over the settings at `path` (which held `before`), keeping `before` in a
/// new backup when `backup` ([`user_files`]); a link is written through, and the outcome says
/// where. With `dry_run`, only checks that the write could be made (a backup name is free).
pub(super) fn write_settings(
    path: &Path,
    before: &str,
    after: &str,
    dry_run: bool,
    backup: bool,
    outcome: &mut InstallOutcome,
) -> BrainResult<()> {
    if let Some(target) = user_files::link_target(path)? {
        outcome.writes_through = Some(target.display().to_string());
    }
    let backup = backup && !before.is_empty();
    if dry_run {
        if backup {
            user_files::next_backup(path)?;
        }
        return Ok(());
    }
    if backup {
        outcome.backup = Some(user_files::write_backup(path, before.as_bytes())?.display().to_string());
    }
    user_files::replace(path, after.as_bytes())?;
    Ok(())
}

/// Refuses to rewrite a JSON file whose text `parsed` could not write back as it was: a
/// number serde_json would change (an integer beyond 64 bits becomes `1.2e29`) or a key given
/// twice (the parse keeps one). Floats written another way (`1e5`, `100000.0`) are the same
/// number and pass.
pub(super) fn refuse_lossy(path: &Path, text: &str, parsed: &Value) -> BrainResult<()> {
    if text.trim().is_empty() {
        return Ok(());
    }
    let rewritten = serde_json::to_string(parsed).map_err(|err| BrainError::internal(err.to_string()))?;
    let (before_numbers, before_keys) = json_tokens(text);
    let (after_numbers, after_keys) = json_tokens(&rewritten);
    let refuse = |why: String| {
        BrainError::user_with_hint(
            format!("{} {why}; refusing to rewrite it", path.display()),
            "edit the file by hand (add brain's entries as `--dry-run` shows them), or fix what is named",
        )
    };
    if before_keys != after_keys {
        return Err(refuse(format!("gives a key twice ({before_keys} keys, {after_keys} once rewritten)")));
    }
    if before_numbers.len() != after_numbers.len() {
        return Err(refuse("holds numbers brain cannot write back as they are".into()));
    }
    for (before, after) in before_numbers.iter().zip(&after_numbers) {
        let is_integer = |token: &str| !token.contains(['.', 'e', 'E']);
        let same = if is_integer(before) {
            before == after
        } else {
            matches!((before.parse::<f64>(), after.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
        };
        if !same {
            return Err(refuse(format!("holds the number {before}, which would be written back as {after}")));
        }
    }
    Ok(())
}

/// The number tokens of a JSON text, in order, and how many keys it gives (strings followed
/// by `:`); strings are skipped whole.
fn json_tokens(text: &str) -> (Vec<&str>, usize) {
    let bytes = text.as_bytes();
    let (mut numbers, mut keys, mut i) = (Vec::new(), 0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
                let rest = bytes.get(i..).unwrap_or_default();
                if rest.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b':') {
                    keys += 1;
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    i += 1;
                }
                numbers.push(&text[start..i]);
            }
            _ => i += 1,
        }
    }
    (numbers, keys)
}

/// The file's text; `None` when it does not exist.
pub(super) fn read_settings(path: &Path) -> BrainResult<Option<String>> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(BrainError::user(format!("cannot read {}: {err}", path.display()))),
    };
    if !metadata.is_file() {
        return Err(BrainError::user(format!("{} is not a regular file", path.display())));
    }
    if metadata.len() > MAX_SETTINGS_BYTES {
        return Err(BrainError::user(format!("{} is larger than 16 MiB; refusing to rewrite it", path.display())));
    }
    let bytes =
        std::fs::read(path).map_err(|err| BrainError::user(format!("cannot read {}: {err}", path.display())))?;
    String::from_utf8(bytes).map(Some).map_err(|_| BrainError::user(format!("{} is not UTF-8", path.display())))
}

/// A brain entry of the host's shape.
fn entry(host: Host, event: HookEvent, command: &str) -> Value {
    match host {
        Host::Cursor => json!({"command": command}),
        Host::Copilot => json!({"type": "command", "bash": command, "timeoutSec": COPILOT_TIMEOUT_SECS}),
        Host::Qwen => json!({"matcher": "", "hooks": [{"type": "command", "command": command}]}),
        Host::Gemini => {
            json!({"hooks": [{"type": "command", "command": command, "name": format!("brain-{}", event.subcommand())}]})
        }
        Host::ClaudeCode | Host::Codex | Host::OpenCode | Host::Cline => {
            json!({"hooks": [{"type": "command", "command": command}]})
        }
    }
}

/// The commands of one entry, with a way to tell which inner hook each is.
fn entry_commands(host: Host, entry: &Value) -> Vec<(Option<usize>, String)> {
    if let Some(key) = flat_command_key(host) {
        return entry[key].as_str().map(|command| vec![(None, command.to_string())]).unwrap_or_default();
    }
    entry["hooks"]
        .as_array()
        .map(|hooks| {
            hooks
                .iter()
                .enumerate()
                .filter_map(|(index, hook)| hook["command"].as_str().map(|command| (Some(index), command.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn install_event(
    hooks: &mut Map<String, Value>,
    host: Host,
    event: HookEvent,
    name: &str,
    command: &str,
    outcome: &mut InstallOutcome,
) -> Result<(), ()> {
    let entries = hooks.entry(name.to_string()).or_insert_with(|| json!([]));
    let entries = entries.as_array_mut().ok_or(())?;
    let mut brain_entries = 0;
    let mut exact = false;
    for entry in entries.iter() {
        for (_, existing) in entry_commands(host, entry) {
            if is_brain_command(&existing, host, event) {
                brain_entries += 1;
                exact |= existing == command;
            }
        }
    }
    if exact && brain_entries == 1 {
        return Ok(());
    }
    if brain_entries == 0 {
        entries.push(entry(host, event, command));
        outcome.added.push(name.to_string());
        return Ok(());
    }
    // Replace the first brain entry where it stands; drop any others.
    let mut replaced = false;
    let mut extra: Vec<(usize, Option<usize>)> = Vec::new();
    for (position, entry) in entries.iter_mut().enumerate() {
        for (inner, existing) in entry_commands(host, entry) {
            if !is_brain_command(&existing, host, event) {
                continue;
            }
            if replaced {
                extra.push((position, inner));
                continue;
            }
            match (inner, flat_command_key(host)) {
                (Some(index), _) => entry["hooks"][index]["command"] = json!(command),
                (None, key) => entry[key.unwrap_or("command")] = json!(command),
            }
            replaced = true;
        }
    }
    for (position, inner) in extra.into_iter().rev() {
        match inner {
            Some(index) => {
                if let Some(list) = entries[position]["hooks"].as_array_mut() {
                    list.remove(index);
                }
            }
            None => {
                entries[position] = Value::Null;
            }
        }
    }
    entries.retain(|entry| !entry.is_null() && entry["hooks"].as_array().is_none_or(|list| !list.is_empty()));
    outcome.updated.push(name.to_string());
    Ok(())
}

fn uninstall_event(
    hooks: &mut Map<String, Value>,
    host: Host,
    event: HookEvent,
    name: &str,
    outcome: &mut InstallOutcome,
) {
    let Some(entries) = hooks.get_mut(name).and_then(Value::as_array_mut) else {
        return;
    };
    let before = entries.len();
    let mut removed = false;
    entries.retain_mut(|entry| {
        if let Some(key) = flat_command_key(host) {
            let ours = entry[key].as_str().is_some_and(|command| is_brain_command(command, host, event));
            removed |= ours;
            return !ours;
        }
        let Some(inner) = entry["hooks"].as_array_mut() else { return true };
        let count = inner.len();
        inner.retain(|hook| !hook["command"].as_str().is_some_and(|command| is_brain_command(command, host, event)));
        removed |= inner.len() != count;
        !inner.is_empty()
    });
    if removed {
        outcome.removed.push(name.to_string());
        if entries.is_empty() && before > 0 {
            hooks.remove(name);
        }
    }
}

/// A unified diff of the settings change, labelled with the file.
pub(super) fn unified_diff(before: &str, after: &str, path: &Path) -> String {
    let label = brain_api::output::escape_name(&path.display().to_string()).into_owned();
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{label} (before)"), &format!("{label} (after)"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("/usr/local/bin/brain"), "/usr/local/bin/brain");
        assert_eq!(shell_quote("/Users/me/My Apps/brain"), "'/Users/me/My Apps/brain'");
        assert_eq!(shell_quote("/tmp/it's/brain"), "'/tmp/it'\\''s/brain'");
        assert_eq!(hook_command("brain", Host::Codex, HookEvent::Stop), "brain hook stop --agent codex");
        assert_eq!(hook_command("brain", Host::ClaudeCode, HookEvent::Stop), "brain hook stop");
    }

    #[test]
    fn brain_commands_are_recognised_however_they_were_installed() {
        let stop = HookEvent::Stop;
        assert!(is_brain_command("/usr/bin/brain hook stop", Host::ClaudeCode, stop));
        assert!(is_brain_command("/Users/me/My Apps/brain hook stop", Host::ClaudeCode, stop), "the unquoted bug");
        assert!(is_brain_command("'/a b/brain' --home '/h' hook stop --agent codex", Host::Codex, stop));
        assert!(!is_brain_command("'/a b/brain' hook stop --agent codex", Host::ClaudeCode, stop));
        assert!(!is_brain_command("/usr/bin/brain hook stop", Host::Codex, stop));
        assert!(!is_brain_command("notify-send hook stop", Host::ClaudeCode, stop));
        assert!(!is_brain_command("/usr/bin/brain hook session-end", Host::ClaudeCode, stop));
    }

    #[test]
    fn install_replaces_an_old_brain_entry_in_place_and_uninstall_leaves_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}, {"type": "command", "command": "/old/brain hook stop"}]}]}}"#,
        )
        .unwrap();
        let outcome = apply(&path, Host::ClaudeCode, "'/new dir/brain'", Change::Install, false).unwrap();
        assert_eq!(outcome.updated, vec!["Stop"]);
        assert_eq!(outcome.added, vec!["SessionStart", "UserPromptSubmit", "SessionEnd"]);
        let settings: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let stop = &settings["hooks"]["Stop"][0]["hooks"];
        assert_eq!(stop[0]["command"], "notify-send done");
        assert_eq!(stop[1]["command"], "'/new dir/brain' hook stop");
        let again = apply(&path, Host::ClaudeCode, "'/new dir/brain'", Change::Install, false).unwrap();
        assert!(!again.changed() && again.added.is_empty() && again.updated.is_empty());
        let removed = apply(&path, Host::ClaudeCode, "ignored", Change::Uninstall, false).unwrap();
        assert_eq!(removed.removed.len(), 4);
        let settings: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            settings["hooks"],
            json!({"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]})
        );
    }

    /// Hostile review of setup: re-serialising turned `123456789012345678901234567890` into
    /// `1.2345678901234568e29` and dropped a key given twice; such a file is refused now.
    #[test]
    fn a_file_whose_numbers_or_keys_would_change_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        for (text, why) in [
            ("{\"id\": 123456789012345678901234567890}", "holds the number 123456789012345678901234567890"),
            ("{\"a\": 1, \"a\": 2}", "gives a key twice"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = apply(&path, Host::ClaudeCode, "brain", Change::Install, true).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
        // Numbers written back the same (or as the same float), strings that look like them.
        std::fs::write(
            &path,
            "{\"n\": -12, \"f\": 1e5, \"g\": 0.5, \"s\": \"1e400 \\\" : 9\", \"big\": 18446744073709551615}",
        )
        .unwrap();
        apply(&path, Host::ClaudeCode, "brain", Change::Install, false).unwrap();
    }

    #[test]
    fn cursor_files_are_versioned_and_flat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.json");
        let outcome = apply(&path, Host::Cursor, "brain", Change::Install, true).unwrap();
        assert!(outcome.diff.contains("+  \"version\": 1,"), "{}", outcome.diff);
        assert!(!path.exists(), "a dry run writes nothing");
        apply(&path, Host::Cursor, "brain", Change::Install, false).unwrap();
        let settings: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(settings["version"], 1);
        assert_eq!(settings["hooks"]["sessionStart"], json!([{"command": "brain hook session-start --agent cursor"}]));
        assert_eq!(
            settings["hooks"]["beforeSubmitPrompt"][0]["command"],
            "brain hook user-prompt-submit --agent cursor"
        );
    }
}
