//! `brain hook stop` and `brain hook session-end`: capture the session that just stopped or
//! ended, from the Claude Code hook JSON on stdin (`session_id`, `transcript_path`, `cwd`).
//!
//! Fail-open (SPEC §1.4): whatever happens, nothing is printed on stdout, the exit code is 0,
//! and a failure is appended to `<home>/logs/hooks.log`.

use std::io::Write;
use std::path::{Path, PathBuf};

use brain_core::redact::redact_str;
use brain_core::time::format_timestamp;
use serde::Deserialize;

use crate::app::{Brain, Context};
use crate::capture::{self, SessionCaptureOptions};
use crate::error::{BrainError, BrainResult};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub event: Event,
}

#[derive(Clone, Copy, Debug, clap::Subcommand)]
pub enum Event {
    /// Claude Code Stop hook: capture what the session did so far (incremental)
    Stop,
    /// Claude Code SessionEnd hook: capture the session that ended
    SessionEnd,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::Stop => "stop",
            Event::SessionEnd => "session-end",
        }
    }
}

/// The fields of the hook input capture needs; the rest is ignored.
#[derive(Debug, Deserialize)]
struct HookInput {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    transcript_path: Option<PathBuf>,
}

/// Never fails: errors are logged, not returned.
pub fn run(context: &Context, args: Args) -> BrainResult<()> {
    let event = args.event;
    let mut session = None;
    if let Err(err) = capture(context, &mut session) {
        log_failure(context, event.name(), session.as_deref(), &err);
    }
    Ok(())
}

fn capture(context: &Context, session: &mut Option<String>) -> BrainResult<()> {
    if !super::stdin_is_piped() {
        return Err(BrainError::user("no hook input: stdin is a terminal"));
    }
    let text = super::read_stdin()?;
    let input: HookInput =
        serde_json::from_str(&text).map_err(|err| BrainError::user(format!("hook input is not JSON: {err}")))?;
    session.clone_from(&input.session_id);
    let path = input.transcript_path.ok_or_else(|| BrainError::user("hook input has no transcript_path"))?;
    let path = expand_home(&path);
    let brain = Brain::open(context)?;
    capture::capture_session(&brain, &path, &SessionCaptureOptions::default())?;
    Ok(())
}

/// `~/x` as Claude Code may write it.
fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

/// Appends one line to `<home>/logs/hooks.log`; a log that cannot be written is given up on.
fn log_failure(context: &Context, event: &str, session: Option<&str>, err: &BrainError) {
    let session = session.map_or_else(|| "?".to_string(), capture::store::safe_id);
    if !context.home.is_dir() {
        // No brain here: creating a home from a hook would be a surprise; stderr must do.
        eprintln!("brain hook {event}: {err}");
        return;
    }
    let dir = context.home.join("logs");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let line = format!(
        "{} hook {event} session={session} {}: {}\n",
        format_timestamp(context.now),
        err.code(),
        redact_str(&err.to_string()).replace('\n', " ")
    );
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("hooks.log")) {
        let _ = file.write_all(line.as_bytes());
    }
}
