//! The fail-open harness every hook runs in (SPEC §1.4, §7.4).
//!
//! The whole hook — reading stdin, loading the configuration, opening the store, the work
//! itself — runs on a worker thread; the main thread waits at most `[hooks] timeout_ms`,
//! counted from the moment the hook started, then prints the fallback payload and lets the
//! process exit without the worker. So stdin that never closes, a FIFO, a slow disk or a
//! locked store cost the session at most the deadline. Until the worker has read the
//! configuration the deadline is the default one ([`DEFAULT_TIMEOUT_MS`]).
//!
//! Errors, panics and time-outs become the fallback and one line in `<home>/logs/hooks.log`:
//! redacted, control characters escaped, at most [`MAX_LOG_CHARS`] characters, the session
//! id reduced to a safe token.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use brain_core::redact::redact_str;
use sha2::{Digest, Sha256};

use brain_api::config::HooksConfig;
use brain_api::error::BrainResult;

/// The deadline until the configuration is read.
pub const DEFAULT_TIMEOUT_MS: u64 = 3000;
/// The longest deadline a configuration may set (hosts kill hooks around a minute).
pub const MAX_TIMEOUT_MS: u64 = 60_000;
/// The most characters of one message in `hooks.log`.
pub const MAX_LOG_CHARS: usize = 1000;
/// Session ids kept as they are in logs and file names when they are at most this long.
const MAX_SAFE_ID_CHARS: usize = 64;

/// The deadline a hook's configuration sets, counted from `started`.
pub fn deadline_of(config: &HooksConfig, started: Instant) -> Instant {
    started + Duration::from_millis(config.timeout_ms.clamp(1, MAX_TIMEOUT_MS))
}

/// What a hook's worker reports to the harness while it works.
pub struct Progress {
    sender: mpsc::Sender<Message>,
    started: Instant,
}

enum Message {
    Deadline(Instant),
    Session(String),
    Done(Result<String, String>),
}

impl Progress {
    /// When the hook started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Sets the deadline from the configuration; returns it.
    pub fn configure(&self, config: &HooksConfig) -> Instant {
        let deadline = deadline_of(config, self.started);
        let _ = self.sender.send(Message::Deadline(deadline));
        deadline
    }

    /// Names the session in the log line, should the hook fail.
    pub fn session(&self, id: &str) {
        let _ = self.sender.send(Message::Session(safe_session_token(id)));
    }
}

/// Where a failure is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogPolicy {
    /// Only into an existing home (a hook must not create a brain home).
    ExistingHome,
    /// Creating `<home>/logs` (remote hooks may run on a machine without a home).
    CreateLogs,
}

/// Runs `work` on a worker thread and waits for it until the deadline: its output, or
/// `fallback` with the reason logged under `label` (an error, a panic, the time-out).
pub fn fail_open(
    home: &Path,
    label: &str,
    policy: LogPolicy,
    started: Instant,
    fallback: String,
    work: impl FnOnce(&Progress) -> BrainResult<String> + Send + 'static,
) -> String {
    let (sender, receiver) = mpsc::channel();
    let progress = Progress { sender: sender.clone(), started };
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&progress)));
        let result = match outcome {
            Ok(Ok(output)) => Ok(output),
            Ok(Err(err)) => Err(err.to_string()),
            Err(panic) => Err(format!("internal error (panic): {}", panic_message(&panic))),
        };
        let _ = sender.send(Message::Done(result));
    });
    let mut deadline = started + Duration::from_millis(DEFAULT_TIMEOUT_MS);
    let mut session = None;
    let reason = loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(wait) {
            Ok(Message::Deadline(configured)) => deadline = configured,
            Ok(Message::Session(token)) => session = Some(token),
            Ok(Message::Done(Ok(output))) => return output,
            Ok(Message::Done(Err(reason))) => break reason,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                break format!("timed out after {} ms", deadline.saturating_duration_since(started).as_millis());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break "internal error (the worker vanished)".to_string(),
        }
    };
    write_log(home, label, session.as_deref(), &reason, policy);
    fallback
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Appends `<stamp> session=<token> <label>: <message>` to `<home>/logs/hooks.log`; never
/// fails and never blocks (a log that is not a regular file is given up on).
pub fn write_log(home: &Path, label: &str, session: Option<&str>, message: &str, policy: LogPolicy) {
    if !home.is_dir() && policy == LogPolicy::ExistingHome {
        return;
    }
    let dir = home.join("logs");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Some(mut file) = open_log(&dir.join("hooks.log")) else {
        return;
    };
    let stamp = brain_core::time::format_timestamp(jiff::Timestamp::now());
    let session = session.map(|token| format!(" session={token}")).unwrap_or_default();
    let line = format!("{stamp}{session} {label}: {}\n", log_text(message));
    let _ = file.write_all(line.as_bytes());
}

/// The log file for appending, if it is a regular file (or new). Opened without blocking, so
/// a FIFO planted at its path cannot hold the hook.
fn open_log(path: &Path) -> Option<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path).ok()?;
    file.metadata().ok().filter(std::fs::Metadata::is_file).map(|_| file)
}

/// A message as one bounded, printable, redacted log line: control characters (ESC, NUL,
/// line breaks) escaped, at most [`MAX_LOG_CHARS`] characters.
pub fn log_text(message: &str) -> String {
    // Bounded before redaction (the redactor's cost grows with its input), at a whitespace
    // so that no secret is cut in half.
    let mut bounded = message;
    if let Some((cut, _)) = message.char_indices().nth(MAX_LOG_CHARS * 4) {
        bounded = &message[..cut];
    }
    let redacted = redact_str(bounded);
    let mut out = String::with_capacity(redacted.len().min(MAX_LOG_CHARS + 16));
    for (count, c) in redacted.chars().enumerate() {
        if count >= MAX_LOG_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202e}') => {
                out.extend(c.escape_unicode());
            }
            c => out.push(c),
        }
    }
    out
}

/// A session id as it may appear in a log line or a file name: itself when it is a safe
/// token (ASCII letters, digits, `-`, `_`; at most 64 characters; untouched by the redactor),
/// else `h-` and the first 32 hex digits of its SHA-256 (stable, so a session keeps its state
/// file, and reveals nothing of the id).
///
/// A canonical UUID (what Claude Code, Codex and Gemini CLI send) skips the redactor: it
/// leaves UUIDs alone (a test holds it to that), and compiling its patterns cost ~10 ms of
/// every session-start hook.
pub fn safe_session_token(id: &str) -> String {
    let safe = is_uuid(id) || (is_plain(id, MAX_SAFE_ID_CHARS) && redact_str(id) == id);
    if safe {
        return id.to_string();
    }
    let digest = Sha256::digest(id.as_bytes());
    format!("h-{}", &hex::encode(digest)[..32])
}

/// Whether a host's session id can name one folder of its own (letters, digits, `-`, `_`;
/// at most 128 bytes): what Copilot CLI and Cline keep a session's files under.
pub fn is_folder_name(session: &str) -> bool {
    is_plain(session, 128)
}

/// 1 to `max` bytes, each an ASCII letter, digit, `-` or `_`.
fn is_plain(id: &str, max: usize) -> bool {
    !id.is_empty() && id.len() <= max && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// `8-4-4-4-12` hex digits.
fn is_uuid(id: &str) -> bool {
    id.len() == 36
        && id.bytes().enumerate().all(|(at, b)| match at {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redactor_leaves_uuids_alone_so_session_ids_may_skip_it() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2_000 {
            let mut hex = String::new();
            for _ in 0..2 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                hex.push_str(&format!("{state:016x}"));
            }
            let upper = state.is_multiple_of(2);
            let hex = if upper { hex.to_uppercase() } else { hex };
            let uuid = format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]);
            assert!(is_uuid(&uuid), "{uuid}");
            assert_eq!(redact_str(&uuid), uuid.as_str(), "the redactor changed a UUID: the fast path would be wrong");
        }
        assert!(!is_uuid("3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6"));
        assert!(!is_uuid("3f2a9c1e_7b4d-4e0a-9f6b-1c2d3e4f5a6b"));
        assert!(!is_uuid("3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6g"));
    }

    #[test]
    fn session_ids_are_kept_only_when_safe() {
        assert_eq!(safe_session_token("3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6b"), "3f2a9c1e-7b4d-4e0a-9f6b-1c2d3e4f5a6b");
        for hostile in ["../../etc/passwd", "a b", "", "x\u{1b}[31m", &"a".repeat(65), "AKIAIOSFODNN7EXAMPLE"] {
            let token = safe_session_token(hostile);
            assert!(token.starts_with("h-") && token.len() == 34, "{hostile:?} → {token}");
        }
        assert_eq!(safe_session_token("../x"), safe_session_token("../x"), "stable");
    }

    #[test]
    fn log_text_is_bounded_printable_and_redacted() {
        let text = log_text(&format!("path {}\u{1b}]0;title\u{7}\0 AKIAIOSFODNN7EXAMPLE\nnext", "/a".repeat(100_000)));
        assert!(text.chars().count() <= MAX_LOG_CHARS + 1, "{}", text.len());
        assert!(!text.contains('\n') && !text.contains('\u{1b}') && !text.contains('\0'));
        let short = log_text("esc \u{1b}[2J nul \0 key AKIAIOSFODNN7EXAMPLE\r\nend");
        assert_eq!(short, "esc \\u{1b}[2J nul \\u{0} key [REDACTED:aws-access-key]  end");
    }

    #[test]
    fn the_harness_gives_the_fallback_after_the_deadline_or_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let output = fail_open(dir.path(), "test", LogPolicy::ExistingHome, started, "fallback".into(), |progress| {
            progress.configure(&HooksConfig { timeout_ms: 200, ..HooksConfig::default() });
            progress.session("s/1");
            std::thread::sleep(Duration::from_secs(30));
            Ok("late".into())
        });
        assert_eq!(output, "fallback");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        let log = std::fs::read_to_string(dir.path().join("logs/hooks.log")).unwrap();
        assert!(log.contains(" session=h-") && log.contains(" test: timed out after 200 ms"), "{log}");
        // A deadline far off: a panic (whose backtrace may take seconds to capture on a loaded
        // machine) must be what is logged, not a time-out.
        let output = fail_open(dir.path(), "test", LogPolicy::ExistingHome, Instant::now(), "fb".into(), |progress| {
            progress.configure(&HooksConfig { timeout_ms: 60_000, ..HooksConfig::default() });
            panic!("boom")
        });
        assert_eq!(output, "fb");
        assert!(std::fs::read_to_string(dir.path().join("logs/hooks.log")).unwrap().contains("panic): boom"));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_log_path_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("logs")).unwrap();
        let fifo = dir.path().join("logs/hooks.log");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let started = Instant::now();
        write_log(dir.path(), "test", None, "message", LogPolicy::ExistingHome);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
