//! Capture's own files under the home: one state per session (`capture/sessions/<id>.json`,
//! the summary plus how far its transcript was read), the last extract
//! (`capture/last-extract.json`, what `brain cluster` reads by default) and the lock that
//! serializes captures (`capture/lock`). Everything here is derived from transcripts and
//! already redacted; deleting the folder only costs a re-read.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use brain_core::redact::redact_str;

use super::Host;
use super::transcript::{SessionState, safe_id};
use brain_api::error::{BrainError, BrainResult};

/// `<home>/capture`.
pub fn capture_dir(home: &Path) -> PathBuf {
    home.join("capture")
}

/// `<home>/capture/sessions`.
pub fn sessions_dir(home: &Path) -> PathBuf {
    capture_dir(home).join("sessions")
}

/// `<home>/capture/last-extract.json`.
pub fn last_extract_path(home: &Path) -> PathBuf {
    capture_dir(home).join("last-extract.json")
}

/// The session-state shard a transcript of `host` belongs to (redacted: a folder name is
/// captured text too): Claude Code's project folder; `codex-YYYY-MM` for a Codex rollout
/// (its folders are dates); `gemini-<project>` for a Gemini CLI chat, `qwen-<project>` for a
/// Qwen Code chat; `copilot-<two first characters of the session id>` for Copilot CLI's
/// events; `opencode-<directory>` for an OpenCode session; `cline-<two last characters of
/// the session id>` for a Cline session.
pub fn shard_of(host: Host, transcript: &Path) -> String {
    let component = |up: usize| {
        transcript.ancestors().nth(up).and_then(Path::file_name).map(|name| name.to_string_lossy()).unwrap_or_default()
    };
    let name = match host {
        Host::ClaudeCode | Host::Cursor => component(1).into_owned(),
        Host::OpenCode => format!("opencode-{}", component(1)),
        Host::Codex => format!("codex-{}-{}", component(3), component(2)),
        Host::Gemini => format!("gemini-{}", component(2)),
        Host::Qwen => format!("qwen-{}", component(2)),
        // One folder per session: sessions are spread over 256 shards by their id.
        Host::Copilot => format!("copilot-{}", component(1).chars().take(2).collect::<String>()),
        // Cline's ids start with the time in milliseconds and end in five random characters.
        Host::Cline => {
            let folder = component(1);
            let tail: String = folder.chars().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect();
            format!("cline-{tail}")
        }
    };
    safe_id(&redact_str(&name))
}

/// A session id usable as a file name and a YAML list item, from the transcript's file
/// stem (for a Codex rollout, `rollout-<time>-<id>`, the trailing session id; for Copilot
/// CLI's `<session>/events.jsonl`, the folder's name), redacted, with
/// every character outside `[A-Za-z0-9._-]` replaced by `-`.
pub fn session_id_of(host: Host, path: &Path) -> String {
    let stem = match host {
        // `<session>/events.jsonl`, `<session>/<session>.messages.json`: the folder names the session.
        Host::Copilot | Host::Cline => path.parent().and_then(Path::file_name),
        _ => path.file_stem(),
    };
    let stem = stem.map(|stem| stem.to_string_lossy()).unwrap_or_default();
    let stem = match host {
        Host::Codex => codex_session_id(&stem).unwrap_or(&stem),
        _ => &stem,
    };
    safe_id(&redact_str(stem))
}

/// The UUID that ends a Codex rollout's file stem.
fn codex_session_id(stem: &str) -> Option<&str> {
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    let shape = id.char_indices().all(|(index, c)| match index {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    });
    shape.then_some(id)
}

/// The saved states of one project folder's sessions: `capture/sessions/<folder>.jsonl`, one
/// state per line, appended as sessions are read; the last line of a session wins. A shard
/// is rewritten whole when stale lines outnumber live ones. One file per project folder, not
/// per session: creating a file per session costs more than reading the transcripts on
/// some file systems.
///
/// It is a cache: a line that cannot be parsed (a crash mid-append) is ignored, which only
/// costs a full read of that transcript.
#[derive(Debug, Default)]
pub struct Shard {
    name: String,
    states: HashMap<String, SessionState>,
    lines: usize,
    /// The file does not end with a line break (a torn append).
    torn: bool,
}

impl Shard {
    /// Loads a shard; a missing or unreadable one is empty.
    pub fn load(home: &Path, name: &str) -> Shard {
        let mut shard = Shard { name: name.to_string(), ..Shard::default() };
        let Ok(bytes) = std::fs::read(shard.path(home)) else {
            return shard;
        };
        shard.torn = bytes.last().is_some_and(|&byte| byte != b'\n');
        for line in bytes.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()) {
            shard.lines += 1;
            if let Ok(state) = serde_json::from_slice::<SessionState>(line) {
                shard.states.insert(state.summary.session_id.clone(), state);
            }
        }
        shard
    }

    fn path(&self, home: &Path) -> PathBuf {
        sessions_dir(home).join(format!("{}.jsonl", self.name))
    }

    pub fn get(&self, session_id: &str) -> Option<&SessionState> {
        self.states.get(session_id)
    }

    pub fn states(&self) -> impl Iterator<Item = &SessionState> {
        self.states.values()
    }

    /// Records new states and writes them: appended, or the whole shard rewritten (atomically)
    /// when that keeps it from growing past twice its live size.
    pub fn save(&mut self, home: &Path, changed: Vec<SessionState>) -> std::io::Result<()> {
        if changed.is_empty() {
            return Ok(());
        }
        let mut appended = Vec::new();
        if self.torn {
            appended.push(b'\n');
        }
        for state in &changed {
            serde_json::to_writer(&mut appended, state).map_err(std::io::Error::other)?;
            appended.push(b'\n');
        }
        let appended_lines = changed.len();
        for state in changed {
            self.states.insert(state.summary.session_id.clone(), state);
        }
        let path = self.path(home);
        std::fs::create_dir_all(sessions_dir(home))?;
        if self.lines + appended_lines > 2 * self.states.len() + 16 {
            let mut whole = Vec::with_capacity(self.states.len() * 2048);
            let mut ids: Vec<&String> = self.states.keys().collect();
            ids.sort();
            for id in ids {
                serde_json::to_writer(&mut whole, &self.states[id]).map_err(std::io::Error::other)?;
                whole.push(b'\n');
            }
            write_atomic(&path, &whole, false)?;
            self.lines = self.states.len();
        } else {
            let mut file = File::options().create(true).append(true).open(&path)?;
            file.write_all(&appended)?;
            self.lines += appended_lines;
        }
        self.torn = false;
        Ok(())
    }
}

/// Summaries by session id alone: looks in the given shards first, then, for an id not
/// found there, in every shard of the home (each loaded once).
pub struct SessionLookup<'h> {
    home: &'h Path,
    shards: HashMap<String, Shard>,
    all_loaded: bool,
}

impl<'h> SessionLookup<'h> {
    pub fn new(home: &'h Path) -> SessionLookup<'h> {
        SessionLookup { home, shards: HashMap::new(), all_loaded: false }
    }

    pub fn get(&mut self, session_id: &str, likely_shards: &[String]) -> Option<SessionState> {
        for name in likely_shards {
            let home = self.home;
            let shard = self.shards.entry(name.clone()).or_insert_with(|| Shard::load(home, name));
            if let Some(state) = shard.get(session_id) {
                return Some(state.clone());
            }
        }
        if !self.all_loaded {
            self.all_loaded = true;
            for name in shard_names(self.home) {
                let home = self.home;
                self.shards.entry(name.clone()).or_insert_with(|| Shard::load(home, &name));
            }
        }
        self.shards.values().find_map(|shard| shard.get(session_id).cloned())
    }
}

fn shard_names(home: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(sessions_dir(home)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().strip_suffix(".jsonl").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// reader sees the old content or the new, never a mix. `durable` also fsyncs the data
/// before the rename (for files that may hold a user's text).
pub fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let temp = brain_api::fsio::temp_path(path);
    let result = (|| {
        let mut file = File::create(&temp)?;
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// An exclusive lock on `<home>/capture/lock`, released when dropped.
pub struct CaptureLock {
    _file: File,
}

impl CaptureLock {
    /// The lock just taken: first the temp files a killed capture left in the capture
    /// folder go (only a lock holder writes there).
    fn held(file: File, dir: &Path) -> CaptureLock {
        brain_api::fsio::sweep_stale_temps(dir);
        CaptureLock { _file: file }
    }

    /// Waits for the lock; with a `timeout`, gives up after it (hooks must not hang).
    pub fn acquire(home: &Path, timeout: Option<Duration>) -> BrainResult<CaptureLock> {
        let dir = capture_dir(home);
        std::fs::create_dir_all(&dir)
            .map_err(|err| BrainError::internal(format!("cannot create {}: {err}", dir.display())))?;
        let path = dir.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|err| BrainError::internal(format!("cannot open {}: {err}", path.display())))?;
        let Some(timeout) = timeout else {
            file.lock().map_err(|err| BrainError::internal(format!("cannot lock {}: {err}", path.display())))?;
            return Ok(CaptureLock::held(file, &dir));
        };
        let deadline = Instant::now() + timeout;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(CaptureLock::held(file, &dir)),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(BrainError::user_with_hint(
                        format!("another capture holds {} (waited {} ms)", path.display(), timeout.as_millis()),
                        "retry when it has finished",
                    ));
                }
                Err(std::fs::TryLockError::Error(err)) => {
                    return Err(BrainError::internal(format!("cannot lock {}: {err}", path.display())));
                }
            }
        }
    }
}
