//! Agent hooks (SPEC §7.4): `session-start` and `user-prompt-submit` for Claude Code, and
//! `install`, which merges brain's hook entries into an agent's settings file.
//!
//! Fail-open (SPEC §1.4): a hook never breaks an agent session. Whatever goes wrong (no
//! home, a corrupt database, unreadable config, garbage on stdin, a store locked by a long
//! writer, a slow disk), it prints a valid payload, possibly with empty context, exits 0
//! within `hooks.timeout_ms`, and appends the reason to `<home>/logs/hooks.log`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::{Brain, Context, SessionRequest, write_atomically};
use crate::config::HooksConfig;
use crate::error::{BrainError, BrainResult};
use crate::remote::{REMOTE_COMMANDS, RemoteBrain, RemoteTarget};

/// The hook input fields brain uses; everything else is ignored.
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
}

/// Parses hook input; empty input is an empty object.
pub fn parse_input(bytes: &[u8]) -> BrainResult<HookInput> {
    let text = std::str::from_utf8(bytes).map_err(|_| BrainError::user("hook input is not UTF-8"))?;
    if text.trim().is_empty() {
        return Ok(HookInput::default());
    }
    serde_json::from_str(text).map_err(|err| BrainError::user(format!("hook input is not hook JSON: {err}")))
}

/// The hook payload carrying `context` for `event`.
pub fn payload(event: &str, context: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}).to_string()
}

/// The context with the hook's working directory (from its input) when that exists.
fn hook_context(context: &Context, input: &HookInput) -> Context {
    let mut context = context.clone();
    if let Some(cwd) = input.cwd.as_ref().filter(|cwd| cwd.is_dir()) {
        context.cwd = cwd.clone();
    }
    context
}

/// Hook settings, read without failing: a broken config gives the defaults.
fn hooks_config(context: &Context) -> HooksConfig {
    crate::config::load(&context.home, &context.cwd, &context.env).map(|loaded| loaded.config.hooks).unwrap_or_default()
}

/// Runs `work` on a thread and waits at most `timeout`. Errors, panics and time-outs are
/// logged and turned into `fallback`.
fn fail_open(
    context: &Context,
    event: &str,
    timeout: Duration,
    fallback: String,
    work: impl FnOnce() -> BrainResult<String> + Send + 'static,
) -> String {
    match within(timeout, work) {
        Ok(output) => output,
        Err(reason) => {
            log(&context.home, event, &reason);
            fallback
        }
    }
}

/// Runs `work` on a thread and waits at most `timeout`: its output, or why there is none
/// (its error, a panic, the time-out). A worker still running is abandoned; the process
/// exits without it.
fn within(timeout: Duration, work: impl FnOnce() -> BrainResult<String> + Send + 'static) -> Result<String, String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        let _ = sender.send(outcome);
    });
    match receiver.recv_timeout(timeout) {
        Ok(Ok(Ok(output))) => Ok(output),
        Ok(Ok(Err(err))) => Err(err.to_string()),
        Ok(Err(_)) => Err("internal error (panic)".to_string()),
        Err(_) => Err(format!("timed out after {} ms", timeout.as_millis())),
    }
}

/// `brain hook session-start`: the working memory as SessionStart context.
pub fn session_start(context: &Context, stdin: &[u8]) -> String {
    let fallback = payload("SessionStart", "");
    let input = match parse_input(stdin) {
        Ok(input) => input,
        Err(err) => {
            log(&context.home, "session-start", &err.to_string());
            return fallback;
        }
    };
    let context = hook_context(context, &input);
    let config = hooks_config(&context);
    let worker_context = context.clone();
    fail_open(&context, "session-start", Duration::from_millis(config.timeout_ms), fallback, move || {
        let brain = Brain::open(&worker_context)?;
        let request = SessionRequest { top: 5, max_chars: Some(config.max_chars), ..SessionRequest::default() };
        let generation = brain.store().generation()?;
        let start = brain.session_start(&request)?;
        if let Some(session) = input.session_id.as_deref() {
            // The next refresh compares against the store this session was given.
            let mut state = SessionState::load(&brain.home, session);
            state.generation = Some(generation);
            state.save(&brain.home, session);
        }
        Ok(payload("SessionStart", &start.text))
    })
}

/// `brain hook session-start` in remote mode (`--remote URL` / `BRAIN_URL`): the same
/// payload from a `brain serve`, rendered from the text it sends. Fail-open as the local
/// hook, within `hooks.timeout_ms` (the request's time-out too): a bad URL, a server that
/// is down, slow, failing or sending garbage gives the empty payload and a line in
/// `<home>/logs/hooks.log` (the home's `logs` folder is created for it: a machine that
/// only talks to a server may have no home yet). The token is never logged.
pub fn session_start_remote(context: &Context, stdin: &[u8], url: &str, fixed_clock: bool) -> String {
    let fallback = payload("SessionStart", "");
    let input = match parse_input(stdin) {
        Ok(input) => input,
        Err(err) => {
            log_creating_logs(&context.home, "session-start", &err.to_string());
            return fallback;
        }
    };
    let context = hook_context(context, &input);
    let config = hooks_config(&context);
    let timeout = Duration::from_millis(config.timeout_ms);
    let worker_context = context.clone();
    let url = url.to_string();
    // The request gives up a little before the hook does, so the log names the server.
    let request_timeout = timeout * 9 / 10;
    let outcome = within(timeout, move || {
        let target = RemoteTarget::from_env(&url)?;
        let remote = RemoteBrain::new(&worker_context, target, fixed_clock, Some(request_timeout))?;
        let request = SessionRequest { top: 5, max_chars: Some(config.max_chars), ..SessionRequest::default() };
        let start = remote.session_start(&request)?;
        Ok(payload("SessionStart", &start.text))
    });
    match outcome {
        Ok(output) => output,
        Err(reason) => {
            log_creating_logs(&context.home, "session-start", &format!("remote: {reason}"));
            fallback
        }
    }
}

/// The hooks remote mode does not cover (user-prompt-submit, stop, session-end) do
/// nothing with `--remote` / `BRAIN_URL` set, print nothing and exit 0 (hooks never fail);
/// the log says why.
pub fn skip_remote(context: &Context, event: &str) {
    log_creating_logs(
        &context.home,
        event,
        &format!("skipped: not supported with --remote / BRAIN_URL (remote mode covers {REMOTE_COMMANDS})"),
    );
}

/// `brain hook user-prompt-submit`: counts turns; every `refresh_interval` turns, when the
/// brain changed since this session's last injection, injects the update. Otherwise prints
/// nothing (an empty string). "Changed" means the store's write generation moved (a write
/// through any process, vault scans included), not that recall scores drifted with time.
pub fn user_prompt_submit(context: &Context, stdin: &[u8]) -> String {
    let input = match parse_input(stdin) {
        Ok(input) => input,
        Err(err) => {
            log(&context.home, "user-prompt-submit", &err.to_string());
            return String::new();
        }
    };
    let Some(session) = input.session_id.clone() else {
        log(&context.home, "user-prompt-submit", "hook input has no session_id");
        return String::new();
    };
    let context = hook_context(context, &input);
    let config = hooks_config(&context);
    let worker_context = context.clone();
    fail_open(&context, "user-prompt-submit", Duration::from_millis(config.timeout_ms), String::new(), move || {
        if !worker_context.home.is_dir() {
            return Err(BrainError::user(format!("brain home {} does not exist", worker_context.home.display())));
        }
        let mut state = SessionState::load(&worker_context.home, &session);
        state.turns = state.turns.saturating_add(1);
        let due = config.refresh_interval > 0 && state.turns.is_multiple_of(config.refresh_interval);
        let mut output = String::new();
        if due {
            let brain = Brain::open(&worker_context)?;
            let generation = brain.store().generation()?;
            if state.generation != Some(generation) {
                const NOTE: &str = "Project memory changed since it was last given to this session.\n\n";
                let budget = config.max_chars.saturating_sub(NOTE.chars().count());
                let request = SessionRequest { top: 5, max_chars: Some(budget), ..SessionRequest::default() };
                let start = brain.session_start(&request)?;
                output = payload("UserPromptSubmit", &format!("{NOTE}{}", start.text));
                state.generation = Some(generation);
            }
        }
        state.save(&worker_context.home, &session);
        Ok(output)
    })
}

/// Per-session hook state: turns seen and the store generation last injected.
#[derive(Debug, Default, serde::Serialize, Deserialize)]
struct SessionState {
    turns: u32,
    generation: Option<u64>,
}

impl SessionState {
    fn path(home: &Path, session: &str) -> PathBuf {
        // Session ids come from outside: keep them to a safe file name.
        let safe: String =
            session.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')).take(100).collect();
        let name = if safe.is_empty() { "unknown".to_string() } else { safe };
        home.join("hooks").join("sessions").join(format!("{name}.json"))
    }

    fn load(home: &Path, session: &str) -> SessionState {
        std::fs::read(Self::path(home, session))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn save(&self, home: &Path, session: &str) {
        let path = Self::path(home, session);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(BrainError::from)
            .and_then(|()| write_atomically(&path, serde_json::to_string(self).unwrap_or_default().as_bytes()));
        if let Err(err) = written {
            log(home, "hook-state", &format!("cannot save session state: {err}"));
        }
    }
}

/// Appends one line to `<home>/logs/hooks.log`; never fails (a missing home logs nowhere).
pub fn log(home: &Path, event: &str, message: &str) {
    if !home.is_dir() {
        return;
    }
    let dir = home.join("logs");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("hooks.log")) {
        let stamp = brain_core::time::format_timestamp(jiff::Timestamp::now());
        let _ = writeln!(file, "{stamp} {event}: {}", message.replace('\n', " "));
    }
}

/// [`log`], creating `<home>/logs` first (remote hooks may run without a home).
fn log_creating_logs(home: &Path, event: &str, message: &str) {
    let _ = std::fs::create_dir_all(home.join("logs"));
    log(home, event, message);
}

/// Where `install` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallScope {
    /// `~/.claude/settings.json`
    User,
    /// `<project root>/.claude/settings.json`
    Project,
}

/// What `install` did.
#[derive(Debug, serde::Serialize)]
pub struct InstallOutcome {
    pub settings: String,
    /// Hook events that got a new entry (empty when everything was already installed).
    pub added: Vec<String>,
    pub backup: Option<String>,
}

/// Claude Code hook events brain installs, with the `brain hook` subcommand each runs.
const CLAUDE_CODE_HOOKS: &[(&str, &str)] = &[
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "user-prompt-submit"),
    ("Stop", "stop"),
    ("SessionEnd", "session-end"),
];

/// Merges brain's hook entries into a Claude Code settings file, idempotently: entries
/// already running the same command are left alone, every other key is preserved (in its
/// order), and the previous file is kept as `settings.json.brain-backup`.
pub fn install_claude_code(settings_path: &Path, brain_command: &str) -> BrainResult<InstallOutcome> {
    let existing = match std::fs::read(settings_path) {
        Ok(bytes) => Some(bytes),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(BrainError::user(format!("cannot read {}: {err}", settings_path.display()))),
    };
    let mut settings: Value = match &existing {
        Some(bytes) if !bytes.iter().all(u8::is_ascii_whitespace) => serde_json::from_slice(bytes).map_err(|err| {
            BrainError::user_with_hint(
                format!("{} is not valid JSON ({err}); refusing to rewrite it", settings_path.display()),
                "fix the file or move it away, then install again",
            )
        })?,
        _ => json!({}),
    };
    let Some(root) = settings.as_object_mut() else {
        return Err(BrainError::user(format!("{} is not a JSON object", settings_path.display())));
    };
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(BrainError::user(format!("\"hooks\" in {} is not an object", settings_path.display())));
    };
    let mut added = Vec::new();
    for (event, subcommand) in CLAUDE_CODE_HOOKS {
        let command = format!("{brain_command} hook {subcommand}");
        let entries = hooks.entry(event.to_string()).or_insert_with(|| json!([]));
        let Some(entries) = entries.as_array_mut() else {
            return Err(BrainError::user(format!("hooks.{event} in {} is not a list", settings_path.display())));
        };
        let present = entries.iter().any(|entry| {
            entry["hooks"].as_array().is_some_and(|list| list.iter().any(|hook| hook["command"] == command.as_str()))
        });
        if !present {
            entries.push(json!({"hooks": [{"type": "command", "command": command}]}));
            added.push(event.to_string());
        }
    }
    let mut outcome = InstallOutcome { settings: settings_path.display().to_string(), added, backup: None };
    if outcome.added.is_empty() {
        return Ok(outcome);
    }
    if let Some(parent) = settings_path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", parent.display())))?;
    }
    if let Some(bytes) = &existing {
        let backup = settings_path.with_file_name(format!(
            "{}.brain-backup",
            settings_path.file_name().and_then(|n| n.to_str()).unwrap_or("settings.json")
        ));
        write_atomically(&backup, bytes)?;
        outcome.backup = Some(backup.display().to_string());
    }
    let text = serde_json::to_string_pretty(&settings).map_err(|err| BrainError::internal(err.to_string()))? + "\n";
    write_atomically(settings_path, text.as_bytes())?;
    Ok(outcome)
}
