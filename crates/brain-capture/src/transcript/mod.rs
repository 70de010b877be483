//! One session transcript → one [`SessionSummary`], read as a stream and resumable: a
//! [`SessionState`] remembers how far the file was read, so the next capture of a growing
//! transcript reads only the bytes appended since.
//!
//! One normalised session model for every host: each host's reader ([`claude`],
//! [`codex`], [`gemini`], [`qwen`], [`copilot`], [`opencode`], [`cline`]) turns its lines (Cline: its
//! session document, read whole) into the same few events on the
//! [`Accumulator`] — a prompt, assistant text, a tool call, a tool result, a touched file, a
//! compaction, the working directory and branch — and everything after (summaries, clusters,
//! arcs) is host-neutral. The summary records the [`Host`].
//!
//! What counts (SPEC §6.7): a *turn* is a prompt the user typed — tool results, meta records,
//! injected context, compaction summaries and `/compact` itself are not turns. The records of
//! one compaction count once. Joy and error markers are words in the assistant's text (at
//! most one of each per message, at most [`MARKER_CAP`] per session), as in the reference
//! engine.
//!
//! Bad input is never fatal: a line that is not JSON, a record of an unknown type or a last
//! line cut short by a writer still at work is skipped and counted; a line refused only for a
//! lone UTF-16 surrogate escape (a text cut inside an emoji) is read with U+FFFD in its
//! place. Every string that leaves this module has been through the redactor and is bounded
//! in length.
//!
//! Bounded whatever the file holds: only a regular file is opened (a FIFO, a device, a
//! directory — also through a symlink — is refused without blocking), a line longer than
//! [`MAX_LINE_BYTES`] is skipped as it streams by (never held whole), and a [`ReadBudget`]
//! (bytes, a deadline) stops reading at a line boundary; the saved state resumes there.

mod claude;
mod cline;
mod codex;
mod copilot;
mod gemini;
mod opencode;
mod qwen;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use brain_core::Timestamp;
use brain_core::redact::redact_str;
use brain_core::usage::{UseHit, Watch};
use regex::Regex;
use serde::{Deserialize, Serialize};

use super::Host;
use crate::lenient;

/// Joy and error markers count at most this many messages per session (the reference cap).
pub const MARKER_CAP: u32 = 50;
/// Prompts kept from the start and from the end of a session for the arc body.
pub const PROMPTS_KEPT: usize = 3;
/// Files touched kept per session.
pub const FILES_KEPT: usize = 100;
/// Length bounds, in characters, of the captured excerpts.
pub const PROMPT_CHARS: usize = 300;
pub const OUTCOME_CHARS: usize = 500;
/// A line longer than this is skipped (counted in [`LineStats::oversized`]), never held whole.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// A line that a host's typed reader refuses is read again leniently (as any JSON object)
/// only up to this size: the lenient form costs far more memory per byte.
pub(super) const LENIENT_MAX_BYTES: usize = 1024 * 1024;
/// Raw text kept in memory before redaction. Longer text is cut at a whitespace, so a cut
/// never leaves half a secret that the redactor could no longer recognise.
const RAW_CHARS: usize = 4096;

static JOY_MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i-u)\b(finally|beautiful|perfect|nice|awesome|excellent|eureka|this is it|shipped|works|clean|green)\b",
    )
    .expect("joy marker pattern is valid")
});
static ERROR_MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i-u)\b(broken|failed|error|exception|crash|down|urgent|incident|regression|rollback|revert|401|403|429|500|502|503|504)\b",
    )
    .expect("error marker pattern is valid")
});

/// Line bookkeeping of one transcript.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineStats {
    /// Records read (JSON objects).
    pub records: u64,
    /// Complete lines that are not a JSON object.
    pub bad_json: u64,
    /// Records whose `type` capture does not know.
    pub unknown_type: u64,
    /// Files whose last line is cut short (not counted in `bad_json`; re-read next time).
    pub truncated: u64,
    /// Lines longer than [`MAX_LINE_BYTES`], skipped.
    #[serde(default)]
    pub oversized: u64,
}

impl std::ops::AddAssign for LineStats {
    fn add_assign(&mut self, other: LineStats) {
        self.records += other.records;
        self.bad_json += other.bad_json;
        self.unknown_type += other.unknown_type;
        self.truncated += other.truncated;
        self.oversized += other.oversized;
    }
}

/// A tool and how often the session called it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCount {
    pub name: String,
    pub count: u32,
}

/// What one session did. Every string is redacted and bounded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub session_id: String,
    /// The agent host the session ran in (older saved summaries: Claude Code).
    #[serde(default)]
    pub host: Host,
    pub project: String,
    pub cwd: String,
    pub git_branch: String,
    pub transcript: String,
    #[serde(with = "brain_core::time::serde_rfc3339::option")]
    pub start: Option<Timestamp>,
    #[serde(with = "brain_core::time::serde_rfc3339::option")]
    pub end: Option<Timestamp>,
    pub duration_minutes: f64,
    /// Prompts typed by the user (tool results are not prompts).
    pub turns: u32,
    pub assistant_messages: u32,
    pub tool_calls: u32,
    pub tool_results: u32,
    /// The ten most used tools, most used first (ties by name).
    pub top_tools: Vec<ToolCount>,
    /// Every tool used, by name.
    pub tools: BTreeMap<String, u32>,
    pub first_prompt: String,
    pub last_prompt: String,
    /// The first prompts of the session.
    pub early_prompts: Vec<String>,
    /// The last prompts of the session (after the early ones), oldest first.
    pub late_prompts: Vec<String>,
    /// The assistant's last words: usually what was done and how it ended.
    pub outcome: String,
    pub compactions: u32,
    pub joy_markers: u32,
    pub error_markers: u32,
    /// Paths given to the edit tools, relative to `cwd` when inside it, first seen first.
    pub files_touched: Vec<String>,
    pub lines: LineStats,
}

impl SessionSummary {
    /// The summary with every string redacted and bounded and the id and project made safe:
    /// for summaries that come from outside (a bundle file). Summaries made here already are.
    pub fn redacted(self) -> SessionSummary {
        let clean = |text: String, max: usize| excerpt(&redact_str(&text), max);
        let list = |items: Vec<String>, max: usize| items.into_iter().map(|item| clean(item, max)).collect();
        let tools: BTreeMap<String, u32> =
            self.tools.into_iter().map(|(name, count)| (clean_identifier(&name), count)).collect();
        let top_tools = self
            .top_tools
            .into_iter()
            .map(|tool| ToolCount { name: clean_identifier(&tool.name), count: tool.count })
            .collect();
        SessionSummary {
            session_id: safe_id(&self.session_id),
            project: brain_api::config::sanitize_project_name(&redact_str(&self.project)),
            cwd: clean(self.cwd, 1000),
            git_branch: clean(self.git_branch, 300),
            transcript: clean(self.transcript, 1000),
            top_tools,
            tools,
            first_prompt: clean(self.first_prompt, PROMPT_CHARS),
            last_prompt: clean(self.last_prompt, PROMPT_CHARS),
            early_prompts: list(self.early_prompts, PROMPT_CHARS),
            late_prompts: list(self.late_prompts, PROMPT_CHARS),
            outcome: clean(self.outcome, OUTCOME_CHARS),
            files_touched: list(self.files_touched, 300),
            ..self
        }
    }
}

/// A session summary plus where reading stopped, so the next capture resumes there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    pub summary: SessionSummary,
    /// The transcript's path (redacted), size and modification time when it was read.
    pub path: String,
    pub size: u64,
    pub mtime_ns: i128,
    /// Bytes consumed: everything up to the last complete line.
    pub offset: u64,
    /// The records last read were part of a compaction (its other records must not count).
    #[serde(default)]
    pub in_compaction: bool,
    /// Reading stopped on its budget before the end of the file: the next scan goes on
    /// even when the file has not changed.
    #[serde(default)]
    pub pending: bool,
    /// Reading stopped inside an oversized line: the next scan skips to its end.
    #[serde(default)]
    pub skipping: bool,
    /// What a host's reader keeps between reads (records already counted).
    #[serde(default, skip_serializing_if = "HostState::is_empty")]
    pub host_state: HostState,
    /// Signs that the session used the items it was given (the first per item, redacted),
    /// found while reading with a [`Watch`]; kept across reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<UseHit>,
    /// The stems of the prompts typed so far, while watching (the agent repeating the user is
    /// not use); at most [`MAX_PROMPT_STEMS`].
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub prompt_stems: BTreeSet<String>,
}

/// Prompt stems remembered per transcript while watching for use.
pub const MAX_PROMPT_STEMS: usize = 2048;

/// A marker the redactor leaves (`[REDACTED:github-token]`): not words of the prompt.
static REDACTION_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[REDACTED[:-][A-Za-z-]*\]").expect("marker pattern is valid"));
/// Signs of use kept per transcript.
pub const MAX_USES: usize = 400;

/// What a host's reader remembers between reads of one transcript.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostState {
    /// Hashes of the record ids already counted (Gemini CLI appends a message again when it
    /// changes); at most [`MAX_SEEN`], the oldest dropped first.
    pub seen: VecDeque<u64>,
    /// Which of a host's two records of a prompt counts (Codex wrote `user_message` events,
    /// then `UserMessage` items): the first kind seen.
    pub prompt_source: Option<String>,
}

/// Record ids remembered per transcript.
pub const MAX_SEEN: usize = 4096;

impl HostState {
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty() && self.prompt_source.is_none()
    }

    /// True the first time `id` is seen.
    pub fn first_sight(&mut self, id: &str) -> bool {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut hasher);
        let hash = hasher.finish();
        if self.seen.contains(&hash) {
            return false;
        }
        if self.seen.len() >= MAX_SEEN {
            self.seen.pop_front();
        }
        self.seen.push_back(hash);
        true
    }

    /// Whether a prompt recorded as `kind` counts: the first kind seen is the one that does.
    pub fn prompt_counts(&mut self, kind: &str) -> bool {
        match &self.prompt_source {
            Some(source) => source == kind,
            None => {
                self.prompt_source = Some(kind.to_string());
                true
            }
        }
    }
}

/// How much one scan may read: bytes and a deadline, checked at line boundaries (and while
/// skipping an oversized line). The default is unbounded (batch capture).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadBudget {
    pub max_bytes: Option<u64>,
    pub deadline: Option<Instant>,
}

impl ReadBudget {
    fn spent(&self, consumed: u64) -> bool {
        self.max_bytes.is_some_and(|max| consumed >= max) || self.deadline.is_some_and(|end| Instant::now() >= end)
    }
}

/// [`brain_api::fsio::open_regular`], its refusal saying the transcript is skipped.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    brain_api::fsio::open_regular(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::InvalidInput => std::io::Error::new(err.kind(), format!("{err}; skipped")),
        _ => err,
    })
}

/// Reads `path`, a transcript of `host`, from `prior`'s offset when `prior` is a state of the
/// same, grown file, else from the start. `project_of` names the project of a working
/// directory.
/// With a `watch`, the read also looks for signs that the session used the watched items
/// (`brain_core::usage`), from the read's start on: use comes after being given.
pub fn scan(
    path: &Path,
    host: Host,
    session_id: &str,
    prior: Option<SessionState>,
    project_of: &mut dyn FnMut(&str) -> String,
    budget: &ReadBudget,
    watch: Option<Arc<Watch>>,
) -> std::io::Result<SessionState> {
    let mut file = open_regular(path)?;
    let metadata = file.metadata()?;
    let size = metadata.len();
    let mtime_ns = mtime_ns(&metadata);
    // Saved redacted, like everything capture writes (a folder name can hold a token).
    let path_text = redact_str(&path.to_string_lossy()).into_owned();
    if host == Host::Cline {
        // Cline rewrites its session document whole: it is read whole, each time it changed.
        let unchanged =
            prior.filter(|state| state.path == path_text && state.size == size && state.mtime_ns == mtime_ns);
        if let Some(state) = unchanged {
            return Ok(state);
        }
        let mut accumulator = Accumulator::new(session_id, host);
        accumulator.watch = watch.filter(|watch| !watch.is_empty());
        cline::read(&mut accumulator, file, path, size)?;
        return Ok(accumulator.finish(path_text, size, mtime_ns, size, project_of));
    }
    let resumable = prior.filter(|state| state.path == path_text && state.offset <= size && state.size <= size);
    let (mut accumulator, offset) = match resumable {
        // Unchanged since it was read: nothing to read.
        Some(state) if state.size == size && state.mtime_ns == mtime_ns && !state.pending => return Ok(state),
        Some(state) => {
            let offset = state.offset;
            (Accumulator::resume(state), offset)
        }
        None => (Accumulator::new(session_id, host), 0),
    };
    accumulator.watch = watch.filter(|watch| !watch.is_empty());
    file.seek(SeekFrom::Start(offset))?;
    let (consumed, pending) = accumulator.read_within(BufReader::with_capacity(256 * 1024, file), budget)?;
    if accumulator.cwd.is_empty() && host == Host::Gemini {
        // Gemini CLI's chats do not carry the working directory; their project folder does.
        accumulator.cwd = gemini::project_root_of(path).unwrap_or_default();
    }
    let mut state = accumulator.finish(path_text, size, mtime_ns, offset + consumed, project_of);
    state.pending = pending;
    Ok(state)
}

/// The summary of a whole transcript of `host` given as bytes (no file, no saved state): the
/// entry point for fuzzing and tests of the line readers. Bounded like [`scan`]; never panics.
pub fn summarize_bytes(host: Host, session_id: &str, bytes: &[u8]) -> SessionSummary {
    let mut accumulator = Accumulator::new(session_id, host);
    let consumed = if host == Host::Cline {
        if !cline::document(&mut accumulator, bytes) {
            accumulator.lines.bad_json += 1;
        }
        bytes.len() as u64
    } else {
        accumulator.read_within(bytes, &ReadBudget::default()).map_or(0, |(consumed, _)| consumed)
    };
    let last = |cwd: &str| brain_api::config::sanitize_project_name(&redact_str(cwd.rsplit('/').next().unwrap_or("")));
    accumulator.finish(String::new(), bytes.len() as u64, 0, consumed, &mut |cwd| last(cwd)).summary
}

/// Nanoseconds since the epoch of a file's modification time (0 when unknown).
pub fn mtime_ns(metadata: &std::fs::Metadata) -> i128 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |duration| duration.as_nanos() as i128)
}

/// The running totals of one transcript, with raw (not yet redacted) text: the normalised
/// session model every host's reader feeds.
pub(super) struct Accumulator {
    pub(super) host: Host,
    session_id: String,
    pub(super) cwd: String,
    git_branch: String,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
    turns: u32,
    assistant_messages: u32,
    tool_calls: u32,
    tool_results: u32,
    tools: BTreeMap<String, u32>,
    early_prompts: Vec<String>,
    late_prompts: VecDeque<String>,
    outcome: String,
    compactions: u32,
    joy_markers: u32,
    error_markers: u32,
    files_touched: Vec<String>,
    pub(super) lines: LineStats,
    in_compaction: bool,
    /// Inside a line longer than [`MAX_LINE_BYTES`]: bytes are dropped until its end.
    skipping: bool,
    pub(super) host_state: HostState,
    /// What to look for signs of use of, if anything.
    watch: Option<Arc<Watch>>,
    uses: Vec<UseHit>,
    prompt_stems: BTreeSet<String>,
}

impl Accumulator {
    pub(super) fn new(session_id: &str, host: Host) -> Accumulator {
        Accumulator {
            host,
            session_id: session_id.to_string(),
            cwd: String::new(),
            git_branch: String::new(),
            start: None,
            end: None,
            turns: 0,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            tools: BTreeMap::new(),
            early_prompts: Vec::new(),
            late_prompts: VecDeque::new(),
            outcome: String::new(),
            compactions: 0,
            joy_markers: 0,
            error_markers: 0,
            files_touched: Vec::new(),
            lines: LineStats::default(),
            in_compaction: false,
            skipping: false,
            host_state: HostState::default(),
            watch: None,
            uses: Vec::new(),
            prompt_stems: BTreeSet::new(),
        }
    }

    /// Continues from a saved state. Its text is already redacted; redacting again is a no-op.
    fn resume(state: SessionState) -> Accumulator {
        let summary = state.summary;
        Accumulator {
            host: summary.host,
            session_id: summary.session_id,
            cwd: summary.cwd,
            git_branch: summary.git_branch,
            start: summary.start,
            end: summary.end,
            turns: summary.turns,
            assistant_messages: summary.assistant_messages,
            tool_calls: summary.tool_calls,
            tool_results: summary.tool_results,
            tools: summary.tools,
            early_prompts: summary.early_prompts,
            late_prompts: summary.late_prompts.into(),
            outcome: summary.outcome,
            compactions: summary.compactions,
            joy_markers: summary.joy_markers,
            error_markers: summary.error_markers,
            files_touched: summary.files_touched,
            // A cut last line is re-read, so it is judged afresh.
            lines: LineStats { truncated: 0, ..summary.lines },
            in_compaction: state.in_compaction,
            skipping: state.skipping,
            host_state: state.host_state,
            watch: None,
            uses: state.uses,
            prompt_stems: state.prompt_stems,
        }
    }

    /// Reads complete lines to the end; returns the bytes consumed. A last line without a
    /// line break that does not parse is left unconsumed (a writer may still be at work) and
    /// counted as truncated. Lines are parsed where they sit in the reader's buffer; only a
    /// line that straddles two buffer fills is copied.
    #[cfg(test)]
    pub(super) fn read(&mut self, reader: impl BufRead) -> std::io::Result<u64> {
        self.read_within(reader, &ReadBudget::default()).map(|(consumed, _)| consumed)
    }

    /// [`Self::read`] within `budget`: also says whether reading stopped on the budget
    /// before the end. Memory stays bounded by [`MAX_LINE_BYTES`] whatever the input.
    fn read_within(&mut self, mut reader: impl BufRead, budget: &ReadBudget) -> std::io::Result<(u64, bool)> {
        let mut consumed = 0u64;
        let mut straddling: Vec<u8> = Vec::new();
        loop {
            if budget.spent(consumed) {
                let more = !reader.fill_buf()?.is_empty();
                return Ok((consumed, more));
            }
            let buffer = reader.fill_buf()?;
            if buffer.is_empty() {
                break;
            }
            if self.skipping {
                let length = match memchr::memchr(b'\n', buffer) {
                    Some(newline) => {
                        self.skipping = false;
                        newline + 1
                    }
                    None => buffer.len(),
                };
                reader.consume(length);
                consumed += length as u64;
                continue;
            }
            let Some(newline) = memchr::memchr(b'\n', buffer) else {
                // No line break in the buffer: gather the line (bounded), then finish it.
                straddling.clear();
                let complete = gather_line(&mut reader, &mut straddling)?;
                if straddling.len() > MAX_LINE_BYTES {
                    self.lines.oversized += 1;
                    self.skipping = !complete;
                    consumed += straddling.len() as u64;
                    continue;
                }
                if !self.line(&straddling, complete) {
                    break;
                }
                consumed += straddling.len() as u64;
                continue;
            };
            let length = newline + 1;
            if length > MAX_LINE_BYTES {
                self.lines.oversized += 1;
            } else {
                self.line(&buffer[..length], true);
            }
            reader.consume(length);
            consumed += length as u64;
        }
        Ok((consumed, false))
    }

    /// Handles one line with its host's reader; false when it is a cut last line that must
    /// not be consumed.
    fn line(&mut self, line: &[u8], complete: bool) -> bool {
        let text = line.trim_ascii();
        if text.is_empty() {
            return true;
        }
        // A line refused for a lone UTF-16 surrogate escape (a text cut inside an emoji) is
        // read again with it mended; the host readers feed nothing from a line they refuse.
        let parsed = self.host_line(text)
            || (self.host != Host::Cline
                && lenient::mend_lone_surrogates(text).is_some_and(|mended| self.host_line(&mended)));
        match parsed {
            true => self.lines.records += 1,
            false if !complete => {
                self.lines.truncated = 1;
                return false;
            }
            false => self.lines.bad_json += 1,
        }
        true
    }

    /// Feeds one line to its host's reader; false when the reader refuses it.
    fn host_line(&mut self, text: &[u8]) -> bool {
        match self.host {
            Host::ClaudeCode | Host::Cursor => claude::line(self, text),
            Host::Codex => codex::line(self, text),
            Host::Gemini => gemini::line(self, text),
            Host::Qwen => qwen::line(self, text),
            Host::Copilot => copilot::line(self, text),
            Host::OpenCode => opencode::line(self, text),
            // Read whole by `scan` (and mended there); a document on one line reads the same.
            Host::Cline => cline::document(self, text),
        }
    }

    // The events of the normalised session model, fed by the hosts' readers.

    /// A record's time, working directory and branch (the first ones seen are kept).
    pub(super) fn observe(&mut self, timestamp: Option<&str>, cwd: Option<&str>, branch: Option<&str>) {
        if self.cwd.is_empty()
            && let Some(cwd) = cwd.filter(|cwd| !cwd.is_empty())
        {
            self.cwd = cap_raw(cwd);
        }
        if self.git_branch.is_empty()
            && let Some(branch) = branch.filter(|branch| !branch.is_empty())
        {
            self.git_branch = cap_raw(branch);
        }
        if let Some(timestamp) = timestamp.and_then(|text| text.parse::<Timestamp>().ok()) {
            if self.start.is_none_or(|start| timestamp < start) {
                self.start = Some(timestamp);
            }
            if self.end.is_none_or(|end| timestamp > end) {
                self.end = Some(timestamp);
            }
        }
    }

    /// A record of a kind the reader does not know.
    pub(super) fn unknown(&mut self) {
        self.lines.unknown_type += 1;
    }

    /// A compaction (its records count once, until the next prompt or answer).
    pub(super) fn compaction(&mut self) {
        if !self.in_compaction {
            self.compactions += 1;
            self.in_compaction = true;
        }
    }

    /// A prompt the user typed: a turn.
    pub(super) fn prompt(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        self.in_compaction = false;
        self.turns += 1;
        let prompt = cap_raw(trimmed);
        if let Some(watch) = &self.watch {
            // The stems are saved with the session's state (a file of the home): they are
            // taken from the redacted prompt, its markers left out, so no secret is kept
            // as a "word".
            let redacted = redact_str(&prompt);
            let words = REDACTION_MARKER.replace_all(&redacted, " ");
            for stem in watch.prompt_stems(&words) {
                if self.prompt_stems.len() >= MAX_PROMPT_STEMS {
                    break;
                }
                self.prompt_stems.insert(stem);
            }
        }
        if self.early_prompts.len() < PROMPTS_KEPT {
            self.early_prompts.push(prompt);
        } else {
            if self.late_prompts.len() == PROMPTS_KEPT {
                self.late_prompts.pop_front();
            }
            self.late_prompts.push_back(prompt);
        }
    }

    /// An assistant message (its text may be empty: a message of tool calls only).
    pub(super) fn assistant_message(&mut self) {
        self.assistant_messages += 1;
        self.in_compaction = false;
    }

    /// The text of an assistant message: markers and the outcome.
    pub(super) fn assistant_text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        if self.joy_markers < MARKER_CAP && JOY_MARKERS.is_match(text) {
            self.joy_markers += 1;
        }
        if self.error_markers < MARKER_CAP && ERROR_MARKERS.is_match(text) {
            self.error_markers += 1;
        }
        if let Some(watch) = self.watch.clone() {
            let hits = watch.assistant_text(self.turns, &cap_raw(text), &self.prompt_stems);
            self.used(hits);
        }
        self.outcome = cap_raw(text.trim());
    }

    /// What a tool call was given: the file, the shell command and the text of an input
    /// that may name an item (an id); looked at only while watching for use.
    pub(super) fn tool_input(&mut self, name: &str, file: Option<&str>, command: Option<&str>, input: &str) {
        if let Some(watch) = self.watch.clone() {
            let hits = watch.tool_call(self.turns, name, file, command.map(cap_raw).as_deref(), input);
            self.used(hits);
        }
    }

    /// Keeps the first sign of use of each item, its evidence redacted.
    fn used(&mut self, hits: Vec<UseHit>) {
        for mut hit in hits {
            if self.uses.len() >= MAX_USES || self.uses.iter().any(|known| known.id == hit.id) {
                continue;
            }
            hit.evidence = redact_str(&hit.evidence).into_owned();
            self.uses.push(hit);
        }
    }

    /// A tool call.
    pub(super) fn tool_call(&mut self, name: &str) {
        self.tool_calls += 1;
        let name = if name.is_empty() { "unknown" } else { name };
        match self.tools.get_mut(name) {
            Some(count) => *count += 1,
            None => {
                self.tools.insert(cap_chars(name, 100).to_string(), 1);
            }
        }
    }

    /// Tool results coming back.
    pub(super) fn tool_results(&mut self, count: usize) {
        self.tool_results = self.tool_results.saturating_add(count as u32);
    }

    /// A file the session changed.
    pub(super) fn touched(&mut self, path: &str) {
        if path.is_empty() {
            return;
        }
        if self.files_touched.len() < FILES_KEPT && !self.files_touched.iter().any(|known| known == path) {
            self.files_touched.push(cap_chars(path, 300).to_string());
        }
    }

    /// The summary, with every string redacted and bounded.
    pub(super) fn finish(
        self,
        path: String,
        size: u64,
        mtime_ns: i128,
        offset: u64,
        project_of: &mut dyn FnMut(&str) -> String,
    ) -> SessionState {
        let clean = |text: &str, max: usize| excerpt(&redact_str(text), max);
        let early_prompts: Vec<String> = self.early_prompts.iter().map(|p| clean(p, PROMPT_CHARS)).collect();
        let late_prompts: Vec<String> = self.late_prompts.iter().map(|p| clean(p, PROMPT_CHARS)).collect();
        let first_prompt = early_prompts.first().cloned().unwrap_or_default();
        let last_prompt = late_prompts.last().or(early_prompts.last()).cloned().unwrap_or_default();
        let cwd = clean(&self.cwd, 1000);
        let files_touched = self.files_touched.iter().map(|file| clean(&relative_to(file, &self.cwd), 300)).collect();
        let tools: BTreeMap<String, u32> =
            self.tools.into_iter().map(|(name, count)| (clean_identifier(&name), count)).collect();
        let mut top_tools: Vec<ToolCount> =
            tools.iter().map(|(name, count)| ToolCount { name: name.clone(), count: *count }).collect();
        top_tools.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        top_tools.truncate(10);
        let duration_minutes = match (self.start, self.end) {
            (Some(start), Some(end)) => {
                let seconds = end.as_second() - start.as_second();
                (seconds as f64 / 6.0).round() / 10.0
            }
            _ => 0.0,
        };
        let project = if self.cwd.is_empty() { "unknown".to_string() } else { project_of(&self.cwd) };
        let summary = SessionSummary {
            session_id: self.session_id,
            host: self.host,
            project,
            cwd,
            git_branch: clean(&self.git_branch, 300),
            transcript: clean(&path, 1000),
            start: self.start,
            end: self.end,
            duration_minutes,
            turns: self.turns,
            assistant_messages: self.assistant_messages,
            tool_calls: self.tool_calls,
            tool_results: self.tool_results,
            top_tools,
            tools,
            first_prompt,
            last_prompt,
            early_prompts,
            late_prompts,
            outcome: clean(&self.outcome, OUTCOME_CHARS),
            compactions: self.compactions,
            joy_markers: self.joy_markers,
            error_markers: self.error_markers,
            files_touched,
            lines: self.lines,
        };
        SessionState {
            summary,
            path,
            size,
            mtime_ns,
            offset,
            in_compaction: self.in_compaction,
            pending: false,
            skipping: self.skipping,
            host_state: self.host_state,
            uses: self.uses,
            prompt_stems: self.prompt_stems,
        }
    }
}

/// An identifier (a tool name such as `mcp__server__tool`), redacted. The redactor finds a
/// token only at a word boundary, and `_` is a word character, so the parts between
/// separators are judged as words of their own; a name with a secret in it is replaced.
pub(super) fn clean_identifier(name: &str) -> String {
    let name = cap_chars(name, 100);
    let spaced = name.replace(['_', '.', '/', ':'], " ");
    if redact_str(&spaced) == spaced { redact_str(name).into_owned() } else { redact_str(&spaced).replace(' ', "_") }
}

/// `path` relative to `cwd` when it lies inside it.
pub(super) fn relative_to(path: &str, cwd: &str) -> String {
    let cwd = cwd.trim_end_matches('/');
    if !cwd.is_empty()
        && let Some(rest) = path.strip_prefix(cwd)
        && let Some(rest) = rest.strip_prefix('/')
        && !rest.is_empty()
    {
        return rest.to_string();
    }
    path.to_string()
}

/// Appends the rest of the current line to `line`, up to one byte past [`MAX_LINE_BYTES`]
/// (an oversized line is not held whole); true when its line break was reached.
fn gather_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(false);
        }
        let (length, complete) = match memchr::memchr(b'\n', buffer) {
            Some(newline) => (newline + 1, true),
            None => (buffer.len(), false),
        };
        let room = MAX_LINE_BYTES + 1 - line.len().min(MAX_LINE_BYTES + 1);
        let kept = length.min(room);
        line.extend_from_slice(&buffer[..kept]);
        reader.consume(kept);
        if complete && kept == length {
            return Ok(true);
        }
        if line.len() > MAX_LINE_BYTES {
            return Ok(false);
        }
    }
}

/// The first `max` characters of `text`, as a string slice.
pub(super) fn cap_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((index, _)) => &text[..index],
        None => text,
    }
}

/// Raw text bounded to [`RAW_CHARS`] before redaction, cut at the last whitespace so that no
/// secret is cut in half (a long run without whitespace is dropped whole).
fn cap_raw(text: &str) -> String {
    let capped = cap_chars(text, RAW_CHARS);
    if capped.len() == text.len() {
        return text.to_string();
    }
    match capped.rfind(char::is_whitespace) {
        Some(index) => capped[..index].to_string(),
        None => String::new(),
    }
}

/// Trimmed and bounded to `max` characters (an ellipsis marks a cut).
pub fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    let capped = cap_chars(text, max.saturating_sub(1));
    if capped.len() == text.len() || text.chars().count() <= max {
        return text.to_string();
    }
    format!("{}…", capped.trim_end())
}

/// `text` with every character outside `[A-Za-z0-9._-]` replaced by `-`, without leading
/// dots, at most 128 characters; `unnamed` when nothing is left.
pub fn safe_id(text: &str) -> String {
    let id: String = text
        .chars()
        .take(128)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .collect();
    let id = id.trim_start_matches('.');
    if id.is_empty() { "unnamed".to_string() } else { id.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summarize(jsonl: &str) -> SessionSummary {
        let mut accumulator = Accumulator::new("s1", Host::ClaudeCode);
        let consumed = accumulator.read(jsonl.as_bytes()).unwrap();
        accumulator.finish("t.jsonl".into(), jsonl.len() as u64, 0, consumed, &mut |_| "demo".into()).summary
    }

    #[test]
    fn prompts_are_turns_and_tool_results_are_not() {
        let summary = summarize(concat!(
            r#"{"type":"user","timestamp":"2026-11-21T08:00:00Z","cwd":"/w/demo","gitBranch":"main","message":{"role":"user","content":"Fix the login flow"}}"#,
            "\n",
            r#"{"type":"assistant","timestamp":"2026-11-21T08:01:00Z","message":{"content":[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/w/demo/src/app.rs"}}]}}"#,
            "\n",
            r#"{"type":"user","timestamp":"2026-11-21T08:02:00Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#,
            "\n",
            r#"{"type":"user","timestamp":"2026-11-21T08:03:00Z","message":{"content":[{"type":"text","text":"Now add tests"}]}}"#,
            "\n",
            r#"{"type":"assistant","timestamp":"2026-11-21T08:04:00Z","message":{"content":[{"type":"text","text":"Done, the tests are green."}]}}"#,
            "\n",
        ));
        assert_eq!((summary.turns, summary.tool_calls, summary.tool_results), (2, 1, 1));
        assert_eq!(summary.first_prompt, "Fix the login flow");
        assert_eq!(summary.last_prompt, "Now add tests");
        assert_eq!(summary.files_touched, vec!["src/app.rs"]);
        assert_eq!(summary.outcome, "Done, the tests are green.");
        assert_eq!((summary.joy_markers, summary.error_markers), (1, 0));
        assert_eq!(summary.duration_minutes, 4.0);
        assert_eq!((summary.cwd.as_str(), summary.git_branch.as_str()), ("/w/demo", "main"));
    }

    #[test]
    fn one_compaction_counts_once_and_is_not_a_turn() {
        let summary = summarize(concat!(
            r#"{"type":"user","message":{"content":"<command-name>/compact</command-name>"}}"#,
            "\n",
            r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted"}"#,
            "\n",
            r#"{"type":"user","isCompactSummary":true,"message":{"content":"This session is being continued from a previous conversation"}}"#,
            "\n",
            r#"{"type":"user","message":{"content":"/compact"}}"#,
            "\n",
        ));
        assert_eq!((summary.compactions, summary.turns), (1, 0));
    }

    #[test]
    fn bad_lines_are_counted_and_a_cut_last_line_is_left_for_later() {
        let text = "not json\n{\"type\":\"mystery\"}\n[1,2]\n{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n{\"type\":\"us";
        let mut accumulator = Accumulator::new("s1", Host::ClaudeCode);
        let consumed = accumulator.read(text.as_bytes()).unwrap();
        assert_eq!(consumed as usize, text.rfind('\n').unwrap() + 1);
        let lines = accumulator.lines;
        assert_eq!((lines.records, lines.bad_json, lines.unknown_type, lines.truncated), (2, 2, 1, 1));
    }

    #[test]
    fn lines_longer_than_the_read_buffer_are_read_whole() {
        let text = concat!(
            r#"{"type":"user","message":{"content":"a prompt longer than the buffer"}}"#,
            "\n\n",
            r#"{"type":"user","message":{"content":"second"}}"#,
            "\n",
            r#"{"type":"user","message":{"content":"cut"#,
        );
        let mut accumulator = Accumulator::new("s1", Host::ClaudeCode);
        let consumed = accumulator.read(std::io::BufReader::with_capacity(7, text.as_bytes())).unwrap();
        assert_eq!(consumed as usize, text.rfind('\n').unwrap() + 1);
        assert_eq!((accumulator.turns, accumulator.lines.truncated), (2, 1));
    }

    #[test]
    fn a_line_holding_a_lone_surrogate_escape_is_read_with_a_replacement_character() {
        // Node's JSON.stringify of a prompt cut after the first half of 😀, in every host's
        // format; the typed reader and the lenient one both refuse it as it is.
        let prompts = [
            (Host::ClaudeCode, r#"{"type":"user","message":{"content":"deploy now \ud83d","extra":[{"a":1}]}}"#),
            (Host::ClaudeCode, r#"{"type":"user","message":{"content":[{"type":"text","text":"deploy now \ud83d"}]}}"#),
            (Host::Codex, r#"{"type":"event_msg","payload":{"type":"user_message","message":"deploy now \ud83d"}}"#),
            (Host::Gemini, r#"{"id":"u1","type":"user","content":[{"text":"deploy now \ud83d"}]}"#),
            (Host::Qwen, r#"{"type":"user","message":{"role":"user","parts":[{"text":"deploy now \ud83d"}]}}"#),
            (Host::Copilot, r#"{"type":"user.message","data":{"content":"deploy now \ud83d"}}"#),
            (Host::OpenCode, r#"{"info":{"role":"user"},"parts":[{"type":"text","text":"deploy now \ud83d"}]}"#),
            (Host::Cline, r#"{"messages":[{"role":"user","content":"deploy now \ud83d"}]}"#),
        ];
        for (host, line) in prompts {
            let summary = summarize_bytes(host, "s1", format!("{line}\n").as_bytes());
            assert_eq!((summary.turns, summary.lines.bad_json), (1, 0), "{host:?}: {line}");
            assert_eq!(summary.first_prompt, "deploy now \u{fffd}", "{host:?}");
        }
        // A valid pair and an escaped backslash before `ud83d` are read as they are.
        let summary =
            summarize(concat!(r#"{"type":"user","message":{"content":"ship it \ud83d\ude00 \\ud83d \ud83d"}}"#, "\n"));
        assert_eq!(summary.first_prompt, "ship it \u{1f600} \\ud83d \u{fffd}");
    }

    #[test]
    fn odd_shapes_are_read_leniently() {
        let summary = summarize(concat!(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":"ls"},{"type":"text","text":42}]}}"#,
            "\n",
            r#"{"type":"user","message":{"content":null}}"#,
            "\n",
        ));
        assert_eq!((summary.tool_calls, summary.lines.bad_json), (1, 0));
    }

    #[test]
    fn captured_text_is_redacted_and_private_blocks_dropped() {
        let summary = summarize(concat!(
            r#"{"type":"user","message":{"content":"deploy with AKIAIOSFODNN7EXAMPLE <private>my diary</private> please"}}"#,
            "\n",
        ));
        assert!(!summary.first_prompt.contains("AKIAIOSFODNN7EXAMPLE"), "{}", summary.first_prompt);
        assert!(summary.first_prompt.contains("[REDACTED:aws-access-key]"));
        assert!(!summary.first_prompt.contains("diary"));
    }

    #[test]
    fn a_secret_inside_a_tool_name_is_redacted() {
        let name = clean_identifier("mcp__vault__sk-proj-Pl4ntedOpenAiKey9x8y7z6W5v4U3t2S1");
        assert!(!name.contains("Pl4nted") && name.contains("REDACTED"), "{name}");
        assert_eq!(clean_identifier("mcp__github__create_issue"), "mcp__github__create_issue");
    }

    #[test]
    fn long_text_is_cut_at_a_whitespace_before_redaction() {
        let secret = "sk-ant-api03-".to_string() + &"Ab1".repeat(40);
        let text = format!("{} {secret}", "word ".repeat(815));
        let capped = cap_raw(&text);
        assert!(!capped.contains("sk-ant"), "a secret crossing the cap is dropped whole");
        assert!(capped.len() < RAW_CHARS);
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("  short ", 10), "short");
        assert_eq!(excerpt("0123456789abc", 10), "012345678…");
        assert_eq!(excerpt("ééééé", 5), "ééééé");
    }
}
