//! Claude Code transcripts (`~/.claude/projects/<dir>/<session>.jsonl`): one JSON record per
//! line, `{type, timestamp, cwd, gitBranch, isSidechain, isMeta, message: {content}}`.
//!
//! A *turn* is a `user` record the user typed: not a tool result, a meta record, local-command
//! output, a compaction summary or `/compact` itself. Tool calls are `tool_use` blocks of
//! assistant messages; files touched are the paths given to the edit tools. A *compaction* is
//! a `compact_boundary` system record, a `/compact` command or a "continued from a previous
//! conversation" summary. Lines are parsed where they sit, borrowing their strings; a record
//! of an unexpected shape is read again leniently.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use super::{Accumulator, LENIENT_MAX_BYTES};

/// Record types Claude Code writes that carry nothing capture needs.
const KNOWN_QUIET_TYPES: &[&str] =
    &["system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "custom-title"];
/// Tools whose `file_path` (or `notebook_path`) names a file the session changed.
const EDIT_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// Feeds one line (trimmed, not empty) to `accumulator`; false when it is not a JSON object.
pub(super) fn line(accumulator: &mut Accumulator, line: &[u8]) -> bool {
    match parse_record(line) {
        Some(Parsed::Record(record)) => feed(accumulator, &record),
        Some(Parsed::Value(value)) => feed(accumulator, &record_from_value(&value)),
        None => return false,
    }
    true
}

fn feed(accumulator: &mut Accumulator, record: &Record<'_>) {
    accumulator.observe(record.timestamp.as_deref(), record.cwd.as_deref(), record.git_branch.as_deref());
    match record.kind.as_deref() {
        Some("user") => user(accumulator, record),
        Some("assistant") => assistant(accumulator, record),
        Some("system") if record.subtype.as_deref() == Some("compact_boundary") => accumulator.compaction(),
        Some(kind) if KNOWN_QUIET_TYPES.contains(&kind) => {}
        _ => accumulator.unknown(),
    }
}

fn user(accumulator: &mut Accumulator, record: &Record<'_>) {
    if record.is_compact_summary {
        accumulator.compaction();
        return;
    }
    let text = match &record.content {
        Content::None => return,
        Content::Text(text) => Cow::Borrowed(text.as_ref()),
        Content::Blocks(blocks) => {
            let results = blocks.iter().filter(|block| block.kind == "tool_result").count();
            if results > 0 {
                accumulator.tool_results(results);
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
        accumulator.compaction();
        return;
    }
    accumulator.prompt(&command_as_prompt(trimmed));
}

fn assistant(accumulator: &mut Accumulator, record: &Record<'_>) {
    accumulator.assistant_message();
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
                    "tool_use" => {
                        let name = block.name.as_deref().unwrap_or("");
                        accumulator.tool_call(name);
                        if EDIT_TOOLS.contains(&name)
                            && let Some(path) = block.file_path.as_deref()
                        {
                            accumulator.touched(path);
                        }
                        accumulator.tool_input(
                            name,
                            block.file_path.as_deref(),
                            block.command.as_deref(),
                            block.id.as_deref().unwrap_or(""),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    if !record.is_sidechain {
        accumulator.assistant_text(&text);
    }
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
    /// A shell tool's command.
    command: Option<Cow<'a, str>>,
    /// An `id` argument (brain's `brain_get_memory` takes one).
    id: Option<Cow<'a, str>>,
}

enum Parsed<'a> {
    Record(Record<'a>),
    /// A record whose shape the fast path did not expect, read leniently.
    Value(serde_json::Value),
}

/// Parses one line: the fast typed path, else a lenient read of any JSON object (also with
/// invalid UTF-8, replaced) when the line is small enough. `None` when the line is not a
/// JSON object.
fn parse_record(line: &[u8]) -> Option<Parsed<'_>> {
    if let Ok(wire) = serde_json::from_slice::<WireRecord<'_>>(line) {
        return Some(Parsed::Record(wire.into_record()));
    }
    if line.len() > LENIENT_MAX_BYTES {
        return None;
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
                        command: path("command"),
                        id: path("id"),
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
    #[serde(borrow, default)]
    command: Option<Text<'a>>,
    #[serde(borrow, default)]
    id: Option<Text<'a>>,
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
                        let (file_path, command, id) = match block.input {
                            Some(input) => (input.file_path.or(input.notebook_path), input.command, input.id),
                            None => (None, None, None),
                        };
                        Block {
                            kind: block.kind.map_or(Cow::Borrowed(""), |t| t.0),
                            text: block.text.map(|t| t.0),
                            name: block.name.map(|t| t.0),
                            file_path: file_path.map(|t| t.0),
                            command: command.map(|t| t.0),
                            id: id.map(|t| t.0),
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
