//! One Claude Code transcript (`<session>.jsonl`) → one [`SessionSummary`], read as a stream
//! and resumable: a [`SessionState`] remembers how far the file was read, so the next capture
//! of a growing transcript reads only the bytes appended since.
//!
//! What counts (SPEC §6.7): a *turn* is a prompt the user typed — tool results, meta records,
//! local-command output, compaction summaries and `/compact` itself are not turns. Tool
//! calls are `tool_use` blocks of assistant messages; files touched are the paths given to the
//! edit tools. A *compaction* is a `compact_boundary` system record, a `/compact` command or a
//! "continued from a previous conversation" summary; the records of one compaction count
//! once. Joy and error markers are words in the assistant's text (at most one of each per
//! message, at most [`MARKER_CAP`] per session), as in the reference engine.
//!
//! Bad input is never fatal: a line that is not JSON, a record of an unknown type or a last
//! line cut short by a writer still at work is skipped and counted. Every string that leaves
//! this module has been through the redactor and is bounded in length.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::LazyLock;

use brain_core::Timestamp;
use brain_core::redact::redact_str;
use regex::Regex;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Joy and error markers count at most this many messages per session (the reference cap).
pub const MARKER_CAP: u32 = 50;
/// Prompts kept from the start and from the end of a session for the arc body.
pub const PROMPTS_KEPT: usize = 3;
/// Files touched kept per session.
pub const FILES_KEPT: usize = 100;
/// Length bounds, in characters, of the captured excerpts.
pub const PROMPT_CHARS: usize = 300;
pub const OUTCOME_CHARS: usize = 500;
/// Raw text kept in memory before redaction. Longer text is cut at a whitespace, so a cut
/// never leaves half a secret that the redactor could no longer recognise.
const RAW_CHARS: usize = 4096;

/// Record types Claude Code writes that carry nothing capture needs.
const KNOWN_QUIET_TYPES: &[&str] =
    &["system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "custom-title"];
/// Tools whose `file_path` (or `notebook_path`) names a file the session changed.
const EDIT_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

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
}

impl std::ops::AddAssign for LineStats {
    fn add_assign(&mut self, other: LineStats) {
        self.records += other.records;
        self.bad_json += other.bad_json;
        self.unknown_type += other.unknown_type;
        self.truncated += other.truncated;
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
            session_id: super::store::safe_id(&self.session_id),
            project: crate::config::sanitize_project_name(&redact_str(&self.project)),
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
}

/// Reads `path` from `prior`'s offset when `prior` is a state of the same, grown file, else
/// from the start. `project_of` names the project of a working directory.
pub fn scan(
    path: &Path,
    session_id: &str,
    prior: Option<SessionState>,
    project_of: &mut dyn FnMut(&str) -> String,
) -> std::io::Result<SessionState> {
    let mut file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    let size = metadata.len();
    let mtime_ns = mtime_ns(&metadata);
    // Saved redacted, like everything capture writes (a folder name can hold a token).
    let path_text = redact_str(&path.to_string_lossy()).into_owned();
    let resumable = prior.filter(|state| state.path == path_text && state.offset <= size && state.size <= size);
    let (mut accumulator, offset) = match resumable {
        // Unchanged since it was read: nothing to read.
        Some(state) if state.size == size && state.mtime_ns == mtime_ns => return Ok(state),
        Some(state) => {
            let offset = state.offset;
            (Accumulator::resume(state), offset)
        }
        None => (Accumulator::new(session_id), 0),
    };
    file.seek(SeekFrom::Start(offset))?;
    let consumed = accumulator.read(BufReader::with_capacity(256 * 1024, file))?;
    Ok(accumulator.finish(path_text, size, mtime_ns, offset + consumed, project_of))
}

/// Nanoseconds since the epoch of a file's modification time (0 when unknown).
pub fn mtime_ns(metadata: &std::fs::Metadata) -> i128 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |duration| duration.as_nanos() as i128)
}

/// The running totals of one transcript, with raw (not yet redacted) text.
struct Accumulator {
    session_id: String,
    cwd: String,
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
    lines: LineStats,
    in_compaction: bool,
}

impl Accumulator {
    fn new(session_id: &str) -> Accumulator {
        Accumulator {
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
        }
    }

    /// Continues from a saved state. Its text is already redacted; redacting again is a no-op.
    fn resume(state: SessionState) -> Accumulator {
        let summary = state.summary;
        Accumulator {
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
        }
    }

    /// Reads complete lines to the end; returns the bytes consumed. A last line without a
    /// line break that does not parse is left unconsumed (a writer may still be at work) and
    /// counted as truncated. Lines are parsed where they sit in the reader's buffer; only a
    /// line that straddles two buffer fills is copied.
    fn read(&mut self, mut reader: impl BufRead) -> std::io::Result<u64> {
        let mut consumed = 0u64;
        let mut straddling: Vec<u8> = Vec::new();
        loop {
            let buffer = reader.fill_buf()?;
            if buffer.is_empty() {
                break;
            }
            let Some(newline) = memchr::memchr(b'\n', buffer) else {
                // No line break in the buffer: gather the line, then finish it below.
                let length = buffer.len();
                straddling.clear();
                straddling.extend_from_slice(buffer);
                reader.consume(length);
                reader.read_until(b'\n', &mut straddling)?;
                let complete = straddling.last() == Some(&b'\n');
                if !self.line(&straddling, complete) {
                    break;
                }
                consumed += straddling.len() as u64;
                continue;
            };
            let length = newline + 1;
            self.line(&buffer[..length], true);
            reader.consume(length);
            consumed += length as u64;
        }
        Ok(consumed)
    }

    /// Handles one line; false when it is a cut last line that must not be consumed.
    fn line(&mut self, line: &[u8], complete: bool) -> bool {
        let text = line.trim_ascii();
        if text.is_empty() {
            return true;
        }
        match parse_record(text) {
            Some(Parsed::Record(record)) => self.record(record),
            Some(Parsed::Value(value)) => self.record(record_from_value(&value)),
            None if !complete => {
                self.lines.truncated = 1;
                return false;
            }
            None => self.lines.bad_json += 1,
        }
        true
    }

    fn record(&mut self, record: Record<'_>) {
        self.lines.records += 1;
        if self.cwd.is_empty()
            && let Some(cwd) = &record.cwd
        {
            self.cwd = cap_raw(cwd);
        }
        if self.git_branch.is_empty()
            && let Some(branch) = &record.git_branch
        {
            self.git_branch = cap_raw(branch);
        }
        if let Some(timestamp) = record.timestamp.as_deref().and_then(|text| text.parse::<Timestamp>().ok()) {
            if self.start.is_none_or(|start| timestamp < start) {
                self.start = Some(timestamp);
            }
            if self.end.is_none_or(|end| timestamp > end) {
                self.end = Some(timestamp);
            }
        }
        match record.kind.as_deref() {
            Some("user") => self.user(&record),
            Some("assistant") => self.assistant(&record),
            Some("system") if record.subtype.as_deref() == Some("compact_boundary") => self.compaction(),
            Some(kind) if KNOWN_QUIET_TYPES.contains(&kind) => {}
            _ => self.lines.unknown_type += 1,
        }
    }

    fn compaction(&mut self) {
        if !self.in_compaction {
            self.compactions += 1;
            self.in_compaction = true;
        }
    }

    fn user(&mut self, record: &Record<'_>) {
        if record.is_compact_summary {
            self.compaction();
            return;
        }
        let text = match &record.content {
            Content::None => return,
            Content::Text(text) => Cow::Borrowed(text.as_ref()),
            Content::Blocks(blocks) => {
                let results = blocks.iter().filter(|block| block.kind == "tool_result").count();
                if results > 0 {
                    self.tool_results += results as u32;
                    return;
                }
                let mut joined = String::new();
                let mut images = 0;
                for block in blocks {
                    match (block.kind.as_ref(), &block.text) {
                        ("text", Some(text)) => {
                            if !joined.is_empty() {
                                joined.push('\n');
                            }
                            joined.push_str(text);
                        }
                        ("image", _) => images += 1,
                        _ => {}
                    }
                }
                if joined.trim().is_empty() && images > 0 {
                    joined = format!("[{images} image(s)]");
                }
                Cow::Owned(joined)
            }
        };
        if record.is_meta || record.is_sidechain {
            return;
        }
        let trimmed = text.trim_start();
        if trimmed.is_empty()
            || trimmed.starts_with("<local-command-stdout>")
            || trimmed.starts_with("<local-command-stderr>")
            || trimmed.starts_with("<local-command-caveat>")
        {
            return;
        }
        if is_compact_command(trimmed)
            || trimmed.starts_with("This session is being continued from a previous conversation")
        {
            self.compaction();
            return;
        }
        self.in_compaction = false;
        self.turns += 1;
        let prompt = cap_raw(&command_as_prompt(trimmed));
        if self.early_prompts.len() < PROMPTS_KEPT {
            self.early_prompts.push(prompt);
        } else {
            if self.late_prompts.len() == PROMPTS_KEPT {
                self.late_prompts.pop_front();
            }
            self.late_prompts.push_back(prompt);
        }
    }

    fn assistant(&mut self, record: &Record<'_>) {
        self.assistant_messages += 1;
        self.in_compaction = false;
        let mut text = String::new();
        match &record.content {
            Content::None => {}
            Content::Text(content) => text.push_str(content),
            Content::Blocks(blocks) => {
                for block in blocks {
                    match block.kind.as_ref() {
                        "text" => {
                            if let Some(content) = &block.text {
                                if !text.is_empty() {
                                    text.push('\n');
                                }
                                text.push_str(content);
                            }
                        }
                        "tool_use" => self.tool_use(block),
                        _ => {}
                    }
                }
            }
        }
        if text.trim().is_empty() || record.is_sidechain {
            return;
        }
        if self.joy_markers < MARKER_CAP && JOY_MARKERS.is_match(&text) {
            self.joy_markers += 1;
        }
        if self.error_markers < MARKER_CAP && ERROR_MARKERS.is_match(&text) {
            self.error_markers += 1;
        }
        self.outcome = cap_raw(text.trim());
    }

    fn tool_use(&mut self, block: &Block<'_>) {
        self.tool_calls += 1;
        let name = block.name.as_deref().filter(|name| !name.is_empty()).unwrap_or("unknown");
        match self.tools.get_mut(name) {
            Some(count) => *count += 1,
            None => {
                self.tools.insert(cap_chars(name, 100).to_string(), 1);
            }
        }
        if !EDIT_TOOLS.contains(&name) {
            return;
        }
        let Some(path) = block.file_path.as_deref().filter(|path| !path.is_empty()) else {
            return;
        };
        if self.files_touched.len() < FILES_KEPT && !self.files_touched.iter().any(|known| known == path) {
            self.files_touched.push(cap_chars(path, 300).to_string());
        }
    }

    /// The summary, with every string redacted and bounded.
    fn finish(
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
        SessionState { summary, path, size, mtime_ns, offset, in_compaction: self.in_compaction }
    }
}

/// An identifier (a tool name such as `mcp__server__tool`), redacted. The redactor finds a
/// token only at a word boundary, and `_` is a word character, so the parts between
/// separators are judged as words of their own; a name with a secret in it is replaced.
fn clean_identifier(name: &str) -> String {
    let name = cap_chars(name, 100);
    let spaced = name.replace(['_', '.', '/', ':'], " ");
    if redact_str(&spaced) == spaced { redact_str(name).into_owned() } else { redact_str(&spaced).replace(' ', "_") }
}

/// `/compact` typed as a prompt, or the command record Claude Code writes for it.
fn is_compact_command(text: &str) -> bool {
    let bare =
        text.strip_prefix("/compact").is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace));
    bare || text.contains("<command-name>/compact</command-name>")
}

/// A slash command record (`<command-name>/init</command-name><command-args>x</command-args>`)
/// reads as `/init x`; any other text is kept as it is.
fn command_as_prompt(text: &str) -> Cow<'_, str> {
    let Some(name) = between(text, "<command-name>", "</command-name>") else {
        return Cow::Borrowed(text);
    };
    let args = between(text, "<command-args>", "</command-args>").unwrap_or("").trim();
    if args.is_empty() { Cow::Owned(name.trim().to_string()) } else { Cow::Owned(format!("{} {args}", name.trim())) }
}

fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// `path` relative to `cwd` when it lies inside it.
fn relative_to(path: &str, cwd: &str) -> String {
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

/// The first `max` characters of `text`, as a string slice.
fn cap_chars(text: &str, max: usize) -> &str {
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

// ---------------------------------------------------------------------------------------
// Records

/// The parts of a record capture reads, borrowed from the line where possible.
struct Record<'a> {
    kind: Option<Cow<'a, str>>,
    subtype: Option<Cow<'a, str>>,
    timestamp: Option<Cow<'a, str>>,
    cwd: Option<Cow<'a, str>>,
    git_branch: Option<Cow<'a, str>>,
    is_sidechain: bool,
    is_meta: bool,
    is_compact_summary: bool,
    content: Content<'a>,
}

enum Content<'a> {
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

struct Block<'a> {
    kind: Cow<'a, str>,
    text: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    file_path: Option<Cow<'a, str>>,
}

enum Parsed<'a> {
    Record(Record<'a>),
    /// A record whose shape the fast path did not expect, read leniently.
    Value(serde_json::Value),
}

/// Parses one line: the fast typed path, else a lenient read of any JSON object (also with
/// invalid UTF-8, replaced). `None` when the line is not a JSON object.
fn parse_record(line: &[u8]) -> Option<Parsed<'_>> {
    if let Ok(wire) = serde_json::from_slice::<WireRecord<'_>>(line) {
        return Some(Parsed::Record(wire.into_record()));
    }
    let text = String::from_utf8_lossy(line);
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) if value.is_object() => Some(Parsed::Value(value)),
        _ => None,
    }
}

fn record_from_value(value: &serde_json::Value) -> Record<'_> {
    let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(Cow::Borrowed);
    let flag = |key: &str| value.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
    let content = match value.get("message").and_then(|message| message.get("content")) {
        Some(serde_json::Value::String(text)) => Content::Text(Cow::Borrowed(text)),
        Some(serde_json::Value::Array(items)) => Content::Blocks(
            items
                .iter()
                .map(|item| {
                    let field = |key: &str| item.get(key).and_then(|v| v.as_str()).map(Cow::Borrowed);
                    let input = item.get("input");
                    let path = |key: &str| input.and_then(|i| i.get(key)).and_then(|v| v.as_str()).map(Cow::Borrowed);
                    Block {
                        kind: field("type").unwrap_or(Cow::Borrowed("")),
                        text: field("text"),
                        name: field("name"),
                        file_path: path("file_path").or_else(|| path("notebook_path")),
                    }
                })
                .collect(),
        ),
        _ => Content::None,
    };
    Record {
        kind: text("type"),
        subtype: text("subtype"),
        timestamp: text("timestamp"),
        cwd: text("cwd"),
        git_branch: text("gitBranch"),
        is_sidechain: flag("isSidechain"),
        is_meta: flag("isMeta"),
        is_compact_summary: flag("isCompactSummary"),
        content,
    }
}

/// A string borrowed from the input when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(value)))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(value.to_string())))
            }
            fn visit_string<E: de::Error>(self, value: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(value)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

#[derive(Deserialize)]
struct WireRecord<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Text<'a>>,
    #[serde(borrow, default)]
    subtype: Option<Text<'a>>,
    #[serde(borrow, default)]
    timestamp: Option<Text<'a>>,
    #[serde(borrow, default)]
    cwd: Option<Text<'a>>,
    #[serde(rename = "gitBranch", borrow, default)]
    git_branch: Option<Text<'a>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isMeta", default)]
    is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default)]
    message: Option<WireMessage<'a>>,
}

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(borrow, default)]
    content: Option<WireContent<'a>>,
}

enum WireContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<WireBlock<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for WireContent<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = WireContent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<WireContent<'de>, E> {
                Ok(WireContent::Text(Cow::Borrowed(value)))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<WireContent<'de>, E> {
                Ok(WireContent::Text(Cow::Owned(value.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireContent<'de>, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(2));
                while let Some(block) = seq.next_element::<WireBlock<'de>>()? {
                    blocks.push(block);
                }
                Ok(WireContent::Blocks(blocks))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

#[derive(Deserialize)]
struct WireBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Text<'a>>,
    #[serde(borrow, default)]
    text: Option<Text<'a>>,
    #[serde(borrow, default)]
    name: Option<Text<'a>>,
    #[serde(borrow, default)]
    input: Option<WireInput<'a>>,
}

#[derive(Deserialize)]
struct WireInput<'a> {
    #[serde(borrow, default)]
    file_path: Option<Text<'a>>,
    #[serde(borrow, default)]
    notebook_path: Option<Text<'a>>,
}

impl<'a> WireRecord<'a> {
    fn into_record(self) -> Record<'a> {
        let content = match self.message.and_then(|message| message.content) {
            None => Content::None,
            Some(WireContent::Text(text)) => Content::Text(text),
            Some(WireContent::Blocks(blocks)) => Content::Blocks(
                blocks
                    .into_iter()
                    .map(|block| {
                        let (file_path, notebook_path) =
                            block.input.map_or((None, None), |input| (input.file_path, input.notebook_path));
                        Block {
                            kind: block.kind.map_or(Cow::Borrowed(""), |t| t.0),
                            text: block.text.map(|t| t.0),
                            name: block.name.map(|t| t.0),
                            file_path: file_path.or(notebook_path).map(|t| t.0),
                        }
                    })
                    .collect(),
            ),
        };
        Record {
            kind: self.kind.map(|t| t.0),
            subtype: self.subtype.map(|t| t.0),
            timestamp: self.timestamp.map(|t| t.0),
            cwd: self.cwd.map(|t| t.0),
            git_branch: self.git_branch.map(|t| t.0),
            is_sidechain: self.is_sidechain.unwrap_or(false),
            is_meta: self.is_meta.unwrap_or(false),
            is_compact_summary: self.is_compact_summary.unwrap_or(false),
            content,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summarize(jsonl: &str) -> SessionSummary {
        let mut accumulator = Accumulator::new("s1");
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
        let mut accumulator = Accumulator::new("s1");
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
        let mut accumulator = Accumulator::new("s1");
        let consumed = accumulator.read(std::io::BufReader::with_capacity(7, text.as_bytes())).unwrap();
        assert_eq!(consumed as usize, text.rfind('\n').unwrap() + 1);
        assert_eq!((accumulator.turns, accumulator.lines.truncated), (2, 1));
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
