//! `brain hook stop` and `brain hook session-end`: capture the session that just stopped or
//! ended, from the hook input (`session_id`, `transcript_path`, `cwd`), into its arc. The
//! transcript is read in its host's format (Claude Code transcript, Codex rollout, Gemini CLI
//! chat); Cursor's transcripts are not captured: its stop hook keeps the Cursor rule current.
//! Copilot CLI writes a session's events after its `sessionEnd` hook: that capture waits for
//! them in a detached brain ([`after_host_exit`], see [`super::copilot`]).
//!
//! Inside the hook's deadline: the transcript is read from where the last capture stopped
//! until a little before the deadline or [`HOOK_READ_BYTES`], whichever comes first, and the
//! state saved, so a huge transcript is captured over several hooks instead of never. Only a
//! regular file is read; a transcript that does not exist yet (a session that has written
//! nothing, `claude -p`, `claude mcp list`) is nothing to capture, not an error.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::harness::{LogPolicy, safe_session_token, write_log};
use super::hosts::HookEvent;
use super::state::SessionState;
use super::{HookRun, SessionRequest, Started, refresh_rule, start};
use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};
use brain_api::usage::SessionUse;
use brain_capture::transcript::MAX_LINE_BYTES;
use brain_capture::{self as capture, Host, ReadBudget, SessionCaptureOptions, SessionCaptureOutcome};
use brain_core::Item;
use brain_core::usage::Watch;

/// The most transcript bytes one hook reads (the rest waits for the next hook).
pub const HOOK_READ_BYTES: u64 = 256 * 1024 * 1024;

/// Which capture hook runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureEvent {
    /// The agent stopped answering: capture what the session did so far (incremental).
    Stop,
    /// The session ended.
    SessionEnd,
    /// The session ended and its host has since written it (Copilot CLI's detached capture).
    HostExited,
}

impl CaptureEvent {
    fn hook_event(self) -> HookEvent {
        match self {
            CaptureEvent::Stop => HookEvent::Stop,
            CaptureEvent::SessionEnd | CaptureEvent::HostExited => HookEvent::SessionEnd,
        }
    }
}

/// The detached capture Copilot CLI's `sessionEnd` hook starts: reads the session from stdin
/// (the hook wrote it and closed the pipe), waits until the host has written the session's
/// end (at most [`super::copilot::WAIT_FOR_END`]), then captures as the hook would have, within
/// the hook's deadline counted from then.
pub fn after_host_exit(run: HookRun) -> String {
    let HookRun { host, context, stdin, .. } = run;
    let mut bytes = Vec::new();
    // Bounded like any hook input; a read error leaves what came, which the capture judges.
    let _ = stdin.take(super::MAX_INPUT_BYTES + 1).read_to_end(&mut bytes);
    let input = super::parse_input(&bytes).unwrap_or_default();
    if let Some(path) = input.transcript_path.as_deref() {
        super::copilot::wait_for_session_end(&expand_home(Path::new(path)), super::copilot::WAIT_FOR_END);
    }
    let stdin = Box::new(std::io::Cursor::new(bytes));
    self::run(HookRun { host, context, started: Instant::now(), stdin }, CaptureEvent::HostExited)
}

pub fn run(run: HookRun, event: CaptureEvent) -> String {
    let hook_event = event.hook_event();
    run.fail_open(hook_event, LogPolicy::ExistingHome, move |progress, host, context, stdin| {
        let quiet = super::quiet_payload(host, hook_event);
        let mut started = start(progress, context, stdin)?;
        // A background `brain sync` when one is due; never waited for, never failing the hook.
        let sync = started.loaded.as_ref().map_err(BrainError::to_string).and_then(|loaded| {
            brain_remote::sync::trigger_background(&started.context, &loaded.config.sync).map_err(|err| err.to_string())
        });
        if let Err(err) = sync {
            write_log(&started.context.home, "sync", None, &err, LogPolicy::ExistingHome);
        }
        if host == Host::Cursor {
            let cap = super::hosts::size_cap(host, &started.config);
            let request = SessionRequest { top: super::RECALL_TOP, ..SessionRequest::default() };
            let text = started.working_memory(request, cap)?.text;
            refresh_rule(host, &started.context, &text);
            return Ok(quiet);
        }
        let input = std::mem::take(&mut started.input);
        let path = match (input.transcript_path.as_deref(), host) {
            (Some(path), _) => Some(expand_home(Path::new(path))),
            // Copilot CLI's sessionEnd names the session only, and so does every Cline hook.
            (None, Host::Copilot) => input.session().and_then(super::copilot::transcript_of),
            (None, Host::Cline) => input.session().and_then(super::cline::transcript_of),
            (None, _) => None,
        }
        .ok_or_else(|| BrainError::user("hook input has no transcript_path"))?;
        if host == Host::Copilot
            && event == CaptureEvent::SessionEnd
            && super::copilot::is_session_events(&path)
            && !super::copilot::holds_session_end(&path)
        {
            // Copilot CLI writes the session's last events once this hook has returned.
            super::copilot::capture_after_exit(&started.context, input.session(), &path)?;
            return Ok(quiet);
        }
        // What the session was given, to find the signs of its use while reading.
        let given = input.session().map(|session| SessionState::load(&started.context.home, session).given);
        let captured = capture(&mut started, host, &path, given.as_deref().unwrap_or_default())?;
        if let (Some(session), Some(given), Some((outcome, watched))) =
            (input.session(), given.as_deref(), captured.as_ref())
        {
            record_use(started.brain()?, host, session, given, watched, outcome);
        }
        if host == Host::Cline {
            // The rule the project's next Cline task starts with.
            let cap = super::hosts::size_cap(host, &started.config);
            let request = SessionRequest { top: super::RECALL_TOP, ..SessionRequest::default() };
            let text = started.working_memory(request, cap)?.text;
            refresh_rule(host, &started.context, &text);
        }
        let Some((outcome, _)) = captured else {
            return Ok(quiet);
        };
        let context = &started.context;
        // What was left for later or skipped is worth a line: the arc is not complete yet.
        let mut notes = Vec::new();
        if outcome.pending {
            notes.push(format!(
                "read {} bytes of {} within the deadline; the next capture reads on",
                outcome.bytes_read,
                path.display()
            ));
        }
        if outcome.oversized_lines > 0 {
            notes.push(format!(
                "skipped {} line(s) longer than {} MiB in {}",
                outcome.oversized_lines,
                MAX_LINE_BYTES / (1024 * 1024),
                path.display()
            ));
        }
        if !notes.is_empty() {
            let session = input.session().map(safe_session_token);
            let label = match host {
                Host::ClaudeCode => hook_event.subcommand().to_string(),
                host => format!("{host} {}", hook_event.subcommand()),
            };
            write_log(&context.home, &label, session.as_deref(), &notes.join("; "), LogPolicy::ExistingHome);
        }
        Ok(quiet)
    })
}

/// Records what the session did with what it was given (`brain_api::usage`; `watched`: the
/// given items as capture read them): a failure is logged, never the hook's.
fn record_use(
    brain: &Brain,
    host: Host,
    session: &str,
    given: &[String],
    watched: &[Item],
    outcome: &SessionCaptureOutcome,
) {
    if given.is_empty() && outcome.uses.is_empty() {
        return;
    }
    let token = safe_session_token(session);
    let recorded = brain.record_session_use(&SessionUse {
        host: host.as_str(),
        session: &token,
        project: &outcome.project,
        task: &outcome.task,
        given,
        read: watched,
        hits: &outcome.uses,
    });
    if let Err(err) = recorded {
        write_log(brain.home(), &format!("{host} use"), Some(&token), &err.to_string(), LogPolicy::ExistingHome);
    }
}

/// The items a session was given (but pins, never learned from): what capture watches for
/// signs of use.
fn watched_items(brain: &Brain, given: &[String]) -> Vec<Item> {
    given.iter().filter_map(|id| brain.item_as_stored(id).ok().flatten()).filter(|item| !item.pinned).collect()
}

/// Captures `path`, watching for use of the `given` items (returned as read); `None` when
/// there is nothing to capture yet (no transcript).
fn capture(
    started: &mut Started,
    host: Host,
    path: &Path,
    given: &[String],
) -> BrainResult<Option<(SessionCaptureOutcome, Vec<Item>)>> {
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    started.refuse_writes_on_invalid_config("the session was not captured")?;
    let deadline = started.deadline;
    let brain = started.brain()?;
    let watched = watched_items(brain, given);
    let watch = (!given.is_empty()).then(|| Arc::new(Watch::new(&watched)));
    let left = deadline.saturating_duration_since(Instant::now());
    // Reading stops early enough to leave time for the arc to be written and the state saved.
    let reserve = (left / 4).clamp(Duration::from_millis(50), Duration::from_millis(1000));
    let options = SessionCaptureOptions {
        host,
        lock_timeout: (left / 3).min(Duration::from_secs(2)),
        budget: ReadBudget {
            max_bytes: Some(HOOK_READ_BYTES),
            deadline: Some(Instant::now() + left.saturating_sub(reserve)),
        },
        watch,
        ..SessionCaptureOptions::default()
    };
    Ok(Some((capture::capture_session(brain, path, &options)?, watched)))
}

/// `~/x` as a host may write it.
fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}
