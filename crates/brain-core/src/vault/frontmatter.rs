//! Arc frontmatter (SPEC §2.2): typed access to the known keys, every entry kept in order with
//! its byte spans, and in-place rewriting of one value ([`set_frontmatter_scalar`]). The YAML
//! itself is read by [`super::yaml`].

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use super::Diagnostics;
use super::yaml::{self, FmValue};
use crate::time::Timestamp;

/// The frontmatter keys with typed access; every other key is kept as an unknown entry.
pub const KNOWN_KEYS: &[&str] = &[
    "cluster_id",
    "title",
    "region",
    "status",
    "heat",
    "created",
    "summary",
    "source_sessions",
    "signals",
    "synthesized",
    "edges",
    "replayed_from",
];

macro_rules! vault_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The lowercase name written in vault files.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            fn allowed() -> String {
                Self::ALL.iter().map(|value| value.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                let lowered = text.trim().to_ascii_lowercase();
                match lowered.as_str() {
                    $($text $(| $alias)* => Ok($name::$variant),)+
                    _ => Err(format!("{} {:?} is not one of {}", $what, text, Self::allowed())),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

vault_enum!(
    /// Where an arc lives in the brain (SPEC §2.2). `left` and `right` are read as the hemispheres.
    Region, "region", {
    LeftHemisphere => "left-hemisphere" | "left",
    RightHemisphere => "right-hemisphere" | "right",
    Amygdala => "amygdala",
    Pineal => "pineal",
    FrontalLobe => "frontal-lobe",
    Bridge => "bridge",
});

vault_enum!(
    /// The life-cycle state of an arc (SPEC §2.2). `resolved` is accepted because vaults written
    /// by the reference engine use it; it means the same as `complete`.
    ArcStatus, "status", {
    Active => "active",
    Complete => "complete",
    Stalled => "stalled",
    Abandoned => "abandoned",
    Graduated => "graduated",
    Resolved => "resolved",
});

vault_enum!(
    /// How two arcs relate (SPEC §2.3).
    EdgeType, "edge type", {
    Parent => "parent",
    Child => "child",
    Sibling => "sibling",
    Unblocks => "unblocks",
    Supersedes => "supersedes",
    Related => "related",
});

/// One top-level `key: value` entry, with where it sits in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontmatterEntry {
    pub key: String,
    pub value: FmValue,
    /// 1-based line of the key.
    pub line: u32,
    /// From the start of the key line to the end of the value's last line (no line break).
    pub span: Range<usize>,
    /// The value as written (quotes included, trailing comment excluded); empty, right after
    /// the colon, when the value is empty.
    pub value_span: Range<usize>,
}

/// The `signals` counters of an arc. Missing counters are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArcSignals {
    pub errors: u32,
    pub joy: u32,
    pub tools: u32,
}

/// A typed link from one arc to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub edge_type: EdgeType,
    pub target: String,
}

/// When an arc was created: an instant, or only a date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Created {
    At(Timestamp),
    Date(jiff::civil::Date),
}

impl Created {
    /// The instant; a bare date is midnight UTC.
    pub fn timestamp(self) -> Timestamp {
        match self {
            Created::At(timestamp) => timestamp,
            Created::Date(date) => jiff::tz::TimeZone::UTC
                .to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
                .unwrap_or(Timestamp::MIN),
        }
    }
}

/// Parsed frontmatter: every entry in order, plus typed access to the known keys. When a key
/// appears twice, the last one wins (and a diagnostic says so).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frontmatter {
    /// From the opening `---` to the end of the closing delimiter line, line break included.
    pub span: Range<usize>,
    pub entries: Vec<FrontmatterEntry>,
    pub cluster_id: Option<String>,
    pub title: Option<String>,
    pub region: Option<Region>,
    pub status: Option<ArcStatus>,
    pub heat: Option<u8>,
    pub created: Option<Created>,
    pub summary: Option<String>,
    pub source_sessions: Vec<String>,
    pub signals: Option<ArcSignals>,
    pub synthesized: Option<bool>,
    pub edges: Vec<Edge>,
    pub replayed_from: Vec<String>,
}

impl Frontmatter {
    /// The entry of `key` (the last one when it is repeated).
    pub fn get(&self, key: &str) -> Option<&FrontmatterEntry> {
        self.entries.iter().rev().find(|entry| entry.key == key)
    }

    /// The byte span of `key`'s value, e.g. to rewrite `heat:` or `status:` in place.
    pub fn value_span(&self, key: &str) -> Option<Range<usize>> {
        self.get(key).map(|entry| entry.value_span.clone())
    }

    /// Entries whose key has no typed field, in file order.
    pub fn unknown_entries(&self) -> impl Iterator<Item = &FrontmatterEntry> {
        self.entries.iter().filter(|entry| !KNOWN_KEYS.contains(&entry.key.as_str()))
    }
}

/// Where the frontmatter block sits.
struct Location {
    /// The lines between the delimiters.
    inner: Range<usize>,
    /// Start of the closing delimiter line.
    closing_line: usize,
    /// First byte after the closing delimiter line.
    body_start: usize,
    /// Line number of the first body line.
    body_line: u32,
    /// The line break the opening delimiter ends with.
    line_break: &'static str,
}

enum Located {
    Absent,
    Unclosed,
    Found(Location),
}

fn locate(text: &str, start: usize) -> Located {
    let rest = &text[start..];
    let Some(first_break) = rest.find('\n') else {
        return if rest.trim_end() == "---" { Located::Unclosed } else { Located::Absent };
    };
    if rest[..first_break].trim_end() != "---" {
        return Located::Absent;
    }
    let line_break = if rest[..first_break].ends_with('\r') { "\r\n" } else { "\n" };
    let inner_start = start + first_break + 1;
    let mut line_start = inner_start;
    let mut line_number = 2;
    while line_start < text.len() {
        let line_end = text[line_start..].find('\n').map_or(text.len(), |offset| line_start + offset);
        let line = text[line_start..line_end].trim_end();
        if line == "---" || line == "..." {
            return Located::Found(Location {
                inner: inner_start..line_start,
                closing_line: line_start,
                body_start: (line_end + 1).min(text.len()),
                body_line: line_number + 1,
                line_break,
            });
        }
        line_start = line_end + 1;
        line_number += 1;
    }
    Located::Unclosed
}

/// Reads the frontmatter at `start` (after any byte-order mark). Returns it, where the body
/// starts and the body's first line number.
pub(crate) fn parse_frontmatter(
    text: &str,
    start: usize,
    diagnostics: &mut Diagnostics<'_>,
) -> (Option<Frontmatter>, usize, u32) {
    let location = match locate(text, start) {
        Located::Absent => return (None, start, 1),
        Located::Unclosed => {
            diagnostics.warning(1, "frontmatter opened on line 1 is never closed by a `---` line; read as body");
            return (None, start, 1);
        }
        Located::Found(location) => location,
    };
    let mut frontmatter = Frontmatter {
        span: start..location.body_start,
        entries: read_entries(text, location.inner.clone(), diagnostics),
        ..Frontmatter::default()
    };
    type_entries(&mut frontmatter, diagnostics);
    (Some(frontmatter), location.body_start, location.body_line)
}

fn read_entries(text: &str, inner: Range<usize>, diagnostics: &mut Diagnostics<'_>) -> Vec<FrontmatterEntry> {
    // The opening `---` is line 1.
    let entries = yaml::read_entries(text, inner, 2, diagnostics);
    let mut first_lines: HashMap<&str, u32> = HashMap::with_capacity(entries.len());
    for entry in &entries {
        match first_lines.get(entry.key.as_str()) {
            Some(first_line) => diagnostics.warning(
                entry.line,
                format!("duplicate frontmatter key `{}` (first on line {first_line}); the last value wins", entry.key),
            ),
            None => {
                first_lines.insert(&entry.key, entry.line);
            }
        }
    }
    entries
}

/// Rewrites the value of the top-level frontmatter key `key` to `value`, or inserts
/// `key: value` as the last frontmatter line, preserving every other byte (comments, quoting of
/// other keys, line endings). `value` is written as a plain scalar, or double-quoted when YAML
/// would read it differently. Returns `None` when the text has no closed frontmatter, when
/// `key` is not a plain key, or when its current value is a collection or spans several lines.
pub fn set_frontmatter_scalar(text: &str, key: &str, value: &str) -> Option<String> {
    if !is_plain_key(key) {
        return None;
    }
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let Located::Found(location) = locate(text, start) else {
        return None;
    };
    let mut scratch = Diagnostics::new("");
    let entries = read_entries(text, location.inner.clone(), &mut scratch);
    let rendered = render_scalar(value);
    let mut out = String::with_capacity(text.len() + key.len() + rendered.len() + 4);
    match entries.iter().rev().find(|entry| entry.key == key) {
        Some(entry) => {
            if !matches!(entry.value, FmValue::Scalar(_) | FmValue::Null) {
                return None;
            }
            let span = entry.value_span.clone();
            if text[span.clone()].contains('\n') {
                return None;
            }
            out.push_str(&text[..span.start]);
            if span.is_empty() && text[..span.start].ends_with(':') {
                out.push(' ');
            }
            out.push_str(&rendered);
            out.push_str(&text[span.end..]);
        }
        None => {
            out.push_str(&text[..location.closing_line]);
            out.push_str(key);
            out.push_str(": ");
            out.push_str(&rendered);
            out.push_str(location.line_break);
            out.push_str(&text[location.closing_line..]);
        }
    }
    Some(out)
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) && !key.starts_with('-')
}

/// A scalar as YAML text: plain when that reads back as the same string, else double-quoted.
fn render_scalar(value: &str) -> String {
    let needs_quotes = value.is_empty()
        || value != value.trim()
        || value.chars().any(char::is_control)
        || value.contains(": ")
        || value.contains(" #")
        || value.ends_with(':')
        || matches!(value, "~" | "null" | "Null" | "NULL")
        || value.starts_with(['?', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`'])
        || value == "-"
        || value.starts_with("- ")
        || value.starts_with(": ");
    if !needs_quotes {
        return value.to_string();
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn type_entries(frontmatter: &mut Frontmatter, diagnostics: &mut Diagnostics<'_>) {
    let entries = std::mem::take(&mut frontmatter.entries);
    for entry in &entries {
        let mut typer = Typer { entry, diagnostics };
        match entry.key.as_str() {
            "cluster_id" => frontmatter.cluster_id = typer.text(),
            "title" => frontmatter.title = typer.text(),
            "summary" => frontmatter.summary = typer.text(),
            "region" => frontmatter.region = typer.parsed(),
            "status" => frontmatter.status = typer.parsed(),
            "heat" => frontmatter.heat = typer.heat(),
            "created" => frontmatter.created = typer.created(),
            "source_sessions" => frontmatter.source_sessions = typer.text_list(),
            "replayed_from" => frontmatter.replayed_from = typer.text_list(),
            "signals" => frontmatter.signals = typer.signals(),
            "synthesized" => frontmatter.synthesized = typer.boolean(),
            "edges" => frontmatter.edges = typer.edges(),
            _ => {}
        }
    }
    frontmatter.entries = entries;
}

/// Reads one known entry into its typed field, reporting values of the wrong shape.
struct Typer<'e, 'd, 'f> {
    entry: &'e FrontmatterEntry,
    diagnostics: &'d mut Diagnostics<'f>,
}

impl Typer<'_, '_, '_> {
    fn warn(&mut self, message: String) {
        self.diagnostics.warning(self.entry.line, message);
    }

    fn text(&mut self) -> Option<String> {
        match &self.entry.value {
            FmValue::Scalar(text) => Some(text.clone()),
            FmValue::Null => None,
            other => {
                let message =
                    format!("`{}` should be a single value, found {}; ignored", self.entry.key, other.shape());
                self.warn(message);
                None
            }
        }
    }

    fn parsed<T: FromStr<Err = String>>(&mut self) -> Option<T> {
        let text = self.text()?;
        match text.parse() {
            Ok(value) => Some(value),
            Err(message) => {
                self.warn(format!("{message}; ignored"));
                None
            }
        }
    }

    fn heat(&mut self) -> Option<u8> {
        let text = self.text()?;
        match text.trim().parse::<i64>() {
            Ok(heat) if (0..=10).contains(&heat) => u8::try_from(heat).ok(),
            Ok(heat) => {
                self.warn(format!("heat {heat} is outside 0 to 10; clamped"));
                Some(if heat < 0 { 0 } else { 10 })
            }
            Err(_) => {
                self.warn(format!("heat {text:?} is not an integer from 0 to 10; ignored"));
                None
            }
        }
    }

    fn created(&mut self) -> Option<Created> {
        let text = self.text()?;
        let created = parse_created(text.trim());
        if created.is_none() {
            self.warn(format!("created {text:?} is not an RFC 3339 timestamp or a date like 2026-04-09; ignored"));
        }
        created
    }

    fn boolean(&mut self) -> Option<bool> {
        let text = self.text()?;
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" => Some(false),
            _ => {
                self.warn(format!("`{}` {text:?} is not true or false; ignored", self.entry.key));
                None
            }
        }
    }

    fn text_list(&mut self) -> Vec<String> {
        let items = match &self.entry.value {
            FmValue::Null => return Vec::new(),
            FmValue::Scalar(text) => return vec![text.clone()],
            FmValue::Map(_) => {
                self.warn(format!("`{}` should be a list, found a mapping; ignored", self.entry.key));
                return Vec::new();
            }
            FmValue::List(items) => items,
        };
        let mut texts = Vec::with_capacity(items.len());
        for item in items {
            match item {
                FmValue::Scalar(text) => texts.push(text.clone()),
                FmValue::Null => {}
                other => {
                    let message = format!(
                        "`{}` items should be single values, found {}; item ignored",
                        self.entry.key,
                        other.shape()
                    );
                    self.warn(message);
                }
            }
        }
        texts
    }

    fn signals(&mut self) -> Option<ArcSignals> {
        let pairs = match &self.entry.value {
            FmValue::Null => return None,
            FmValue::Map(pairs) => pairs,
            other => {
                self.warn(format!(
                    "`signals` should be a mapping like {{errors: 1, joy: 0, tools: 10}}, found {}; ignored",
                    other.shape()
                ));
                return None;
            }
        };
        let mut signals = ArcSignals::default();
        for (key, value) in pairs {
            let slot = match key.as_str() {
                "errors" => &mut signals.errors,
                "joy" => &mut signals.joy,
                "tools" => &mut signals.tools,
                _ => continue,
            };
            match value.as_scalar().map(|text| text.trim().parse::<u32>()) {
                Some(Ok(count)) => *slot = count,
                _ => self.warn(format!("signals.{key} is not a non-negative integer; read as 0")),
            }
        }
        Some(signals)
    }

    fn edges(&mut self) -> Vec<Edge> {
        let items = match &self.entry.value {
            FmValue::Null => return Vec::new(),
            FmValue::List(items) => items,
            other => {
                self.warn(format!(
                    "`edges` should be a list like [{{type: parent, target: ID}}], found {}; ignored",
                    other.shape()
                ));
                return Vec::new();
            }
        };
        let mut edges = Vec::with_capacity(items.len());
        for item in items {
            let edge_type = item.get("type").and_then(FmValue::as_scalar);
            let target = item.get("target").and_then(FmValue::as_scalar).map(str::trim).filter(|t| !t.is_empty());
            let (Some(edge_type), Some(target)) = (edge_type, target) else {
                self.warn("an edge needs `type` and `target`; edge ignored".to_string());
                continue;
            };
            match edge_type.parse::<EdgeType>() {
                Ok(edge_type) => edges.push(Edge { edge_type, target: target.to_string() }),
                Err(message) => self.warn(format!("{message}; edge ignored")),
            }
        }
        edges
    }
}

/// An RFC 3339 timestamp, a date (`2026-04-09`) or a date-time without offset (read as UTC).
pub(crate) fn parse_created(text: &str) -> Option<Created> {
    if let Ok(timestamp) = text.parse::<Timestamp>() {
        return Some(Created::At(timestamp));
    }
    if text.len() == 10 {
        return text.parse::<jiff::civil::Date>().ok().map(Created::Date);
    }
    let datetime = text.parse::<jiff::civil::DateTime>().ok()?;
    jiff::tz::TimeZone::UTC.to_timestamp(datetime).ok().map(Created::At)
}
