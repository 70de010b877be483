//! HTML-comment markers (SPEC §2.3): a single linear pass over the body.
//!
//! The body is walked line by line. A line that opens or closes a fenced code block (CommonMark:
//! up to three spaces of indentation, three or more backticks or tildes, closed by a fence of
//! the same character at least as long) toggles the fence state; inside a fence nothing is read.
//! Outside, every `<!--` is classified where it stands as an opener
//! (`<!--\s*@(\w+)((?:\s+\w+=(?:"[^"]*"|[^\s>]+))*)\s*-->`), a closer (`<!--\s*@/TYPE\s*-->`)
//! or neither. An opener is recorded at once and pushed on the stack of its type; a closer pops
//! the innermost open marker of its type, which then gets its content. Each byte is looked at a
//! bounded number of times, so the pass is linear in the size of the file.
//!
//! Nothing is copied per marker but its type name and attributes (both inside its opener, so
//! their total is bounded by the file): a marker's content is a span into the text
//! ([`Marker::content`]). Nested blocks therefore cost nothing here, however deep; what they
//! would cost later (every level deriving an item holding a copy of its inner text) is
//! bounded by [`MAX_NESTING_DEPTH`] and by the budgets of `derived_items`. At most
//! [`MAX_MARKERS_PER_FILE`] markers are kept; the rest are counted in one diagnostic.
//!
//! Fences inside block quotes or deeply indented list items are not recognised (their
//! container prefixes are not tracked), and inline code spans are not code fences.

use std::collections::HashMap;
use std::ops::Range;

use super::Diagnostics;
use super::frontmatter::{Edge, EdgeType};
use crate::item::Severity;

/// A marker tag (`<!-- … -->`) longer than this is not read as a marker. Real tags are a few
/// dozen bytes; the bound keeps hostile input (many `<!-- @a k=` without an end) linear.
pub const MAX_MARKER_TAG_BYTES: usize = 2048;

/// A block nested inside this many other blocks is kept as a marker (its spans stay exact)
/// but derives no item: each level would hold another copy of the innermost text. Real notes
/// nest two or three deep (a milestone holding lessons).
pub const MAX_NESTING_DEPTH: u32 = 8;

/// At most this many markers are kept per file (SPEC §10 asks for 10,000 in one file to
/// parse in milliseconds); later ones are ignored with one diagnostic.
pub const MAX_MARKERS_PER_FILE: usize = 20_000;

/// The type of a marker (`@lesson` → `Lesson`). Unknown types are kept as `Other`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MarkerType {
    Hot,
    Lesson,
    Signal,
    Decision,
    Inject,
    Todo,
    Milestone,
    /// Inline only: `<!-- @edge type=parent target=ID -->`.
    Edge,
    Other(String),
}

/// The known types with their names, in stack-index order.
const KNOWN_TYPES: [(&str, MarkerType); 8] = [
    ("hot", MarkerType::Hot),
    ("lesson", MarkerType::Lesson),
    ("signal", MarkerType::Signal),
    ("decision", MarkerType::Decision),
    ("inject", MarkerType::Inject),
    ("todo", MarkerType::Todo),
    ("milestone", MarkerType::Milestone),
    ("edge", MarkerType::Edge),
];

impl MarkerType {
    /// The type named in a tag (case-sensitive, like the reference engine).
    pub fn from_name(name: &str) -> MarkerType {
        match KNOWN_TYPES.iter().find(|(known, _)| *known == name) {
            Some((_, marker_type)) => marker_type.clone(),
            None => MarkerType::Other(name.to_string()),
        }
    }

    /// The name as written after `@`.
    pub fn as_str(&self) -> &str {
        match self {
            MarkerType::Hot => "hot",
            MarkerType::Lesson => "lesson",
            MarkerType::Signal => "signal",
            MarkerType::Decision => "decision",
            MarkerType::Inject => "inject",
            MarkerType::Todo => "todo",
            MarkerType::Milestone => "milestone",
            MarkerType::Edge => "edge",
            MarkerType::Other(name) => name,
        }
    }

    /// True for the types SPEC §2.3 defines.
    pub fn is_known(&self) -> bool {
        !matches!(self, MarkerType::Other(_))
    }

    fn known_index(&self) -> Option<usize> {
        KNOWN_TYPES.iter().position(|(_, known)| known == self)
    }
}

/// One marker. Spans are byte ranges into the parsed input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub marker_type: MarkerType,
    /// Attributes in the order written; quotes removed.
    pub attrs: Vec<(String, String)>,
    /// 1-based line of the opener.
    pub line: u32,
    /// How many closed blocks enclose this marker (0 at the top level), counted up to
    /// [`MAX_NESTING_DEPTH`] (deeper ones read as that).
    pub depth: u32,
    /// From the start of the opener to the end of the closer (of the opener when inline).
    pub span: Range<usize>,
    /// The opener tag.
    pub opener_span: Range<usize>,
    /// Where the content sits: the text between opener and closer, trimmed (an empty range
    /// after the opener when inline).
    pub content_span: Range<usize>,
    /// True for a block (opener … closer), false for an inline marker.
    pub closed: bool,
}

impl Marker {
    /// The content (the text between opener and closer, trimmed; empty for inline markers)
    /// in `text`, the text the marker was parsed from (see [`super::VaultDoc::text`]).
    pub fn content<'t>(&self, text: &'t str) -> &'t str {
        if !self.closed {
            return "";
        }
        text.get(self.content_span.clone()).unwrap_or_default()
    }

    /// The value of attribute `key` (the last one when repeated).
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().rev().find(|(name, _)| name == key).map(|(_, value)| value.as_str())
    }

    /// The edge an `@edge` marker declares, when its `type` and `target` are valid.
    pub fn edge(&self) -> Option<Edge> {
        if self.marker_type != MarkerType::Edge {
            return None;
        }
        let edge_type = self.attr("type")?.parse::<EdgeType>().ok()?;
        let target = self.attr("target").map(str::trim).filter(|target| !target.is_empty())?;
        Some(Edge { edge_type, target: target.to_string() })
    }
}

/// An open code fence.
struct Fence {
    byte: u8,
    len: usize,
    line: u32,
}

/// What a `<!--` turned out to be.
enum Tag {
    Opener {
        name: Range<usize>,
        end: usize,
    },
    Closer {
        name: Range<usize>,
        end: usize,
    },
    /// Starts like a marker (`<!-- @name`, `<!-- @/`) but does not follow the grammar.
    Malformed(&'static str),
    /// An ordinary comment.
    Comment,
}

struct Scanner<'t, 'd, 'f> {
    text: &'t str,
    diagnostics: &'d mut Diagnostics<'f>,
    markers: Vec<Marker>,
    /// Indices of open markers, per known type; `None` for an opener past
    /// [`MAX_MARKERS_PER_FILE`], which was not kept but still pairs with its closer.
    open_known: [Vec<Option<usize>>; KNOWN_TYPES.len()],
    /// Indices of open markers of unknown types.
    open_other: HashMap<String, Vec<Option<usize>>>,
    /// Markers not kept because the file already had [`MAX_MARKERS_PER_FILE`].
    dropped: usize,
    /// Attribute (key, value) ranges of the tag being read.
    attrs: Vec<(Range<usize>, Range<usize>)>,
    /// Positions where the tag being read ended its name or an attribute.
    boundaries: Vec<usize>,
    /// Such positions of tags that failed, with the reason. From a given position the rest of
    /// a tag reads the same whichever `<!--` it started at, so a later tag reaching a dead
    /// boundary fails at once: hostile chains of attributes holding `<!--` stay linear.
    dead_boundaries: HashMap<usize, &'static str>,
    /// No `<` lies in `lt_from..lt_at`, and `lt_at` is a `<` or the end of the text.
    lt_from: usize,
    lt_at: usize,
}

/// Finds the markers of the body starting at `start` (line `first_line`).
pub(crate) fn scan(text: &str, start: usize, first_line: u32, diagnostics: &mut Diagnostics<'_>) -> Vec<Marker> {
    let mut scanner = Scanner {
        text,
        diagnostics,
        markers: Vec::new(),
        open_known: Default::default(),
        open_other: HashMap::new(),
        dropped: 0,
        attrs: Vec::new(),
        boundaries: Vec::new(),
        dead_boundaries: HashMap::new(),
        lt_from: usize::MAX,
        lt_at: 0,
    };
    scanner.run(start, first_line);
    scanner.finish()
}

impl Scanner<'_, '_, '_> {
    fn run(&mut self, start: usize, first_line: u32) {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut fence: Option<Fence> = None;
        let mut line_start = start;
        let mut line_number = first_line;
        while line_start < text.len() {
            let mut line_end = find_byte(text, line_start, b'\n');
            let line = &bytes[line_start..line_end];
            if let Some(open) = &fence {
                if closes_fence(line, open) {
                    fence = None;
                }
            } else if let Some((byte, len)) = opens_fence(line) {
                fence = Some(Fence { byte, len, line: line_number });
            } else {
                let mut pos = line_start;
                loop {
                    let lt = self.next_lt(pos);
                    if lt >= line_end {
                        break;
                    }
                    if !bytes[lt..].starts_with(b"<!--") {
                        pos = lt + 1;
                        continue;
                    }
                    let tag_end = match self.read_tag(lt) {
                        Tag::Opener { name, end } => {
                            self.open(lt, end, name, line_number);
                            end
                        }
                        Tag::Closer { name, end } => {
                            self.close(lt, end, name, line_number);
                            end
                        }
                        Tag::Malformed(reason) => {
                            self.diagnostics.warning_with(line_number, || {
                                format!("malformed marker {:?} ({reason}); ignored", shown_tag(text, lt))
                            });
                            lt + 4
                        }
                        Tag::Comment => lt + 4,
                    };
                    if tag_end > line_end {
                        // The tag ran over line breaks: keep counting lines from its end.
                        line_number += count_byte(&bytes[line_end..tag_end], b'\n');
                        line_end = find_byte(text, tag_end, b'\n');
                    }
                    pos = tag_end;
                }
            }
            line_start = line_end + 1;
            line_number += 1;
        }
        if let Some(open) = fence {
            self.diagnostics
                .info(open.line, "code fence is never closed; markers after it are ignored as code".to_string());
        }
    }

    /// The next `<` at or after `from` (or the end of the text). Positions only grow, so each
    /// byte is searched once.
    fn next_lt(&mut self, from: usize) -> usize {
        if self.lt_from <= from && from <= self.lt_at {
            return self.lt_at;
        }
        self.lt_from = from;
        self.lt_at = find_byte(self.text, from, b'<');
        self.lt_at
    }

    /// Classifies the `<!--` at `lt`. Matches the SPEC's opener regex, including its
    /// backtracking corner cases: an unquoted last value gives back a trailing `--` to `-->`,
    /// and a quoted value not followed by whitespace or `-->` is re-read unquoted.
    fn read_tag(&mut self, lt: usize) -> Tag {
        let text = self.text;
        let bytes = text.as_bytes();
        let limit = floor_boundary(text, lt + MAX_MARKER_TAG_BYTES);
        let mut pos = skip_space(text, lt + 4, limit);
        if bytes.get(pos) != Some(&b'@') || pos >= limit {
            return Tag::Comment;
        }
        pos += 1;
        let is_closer = pos < limit && bytes[pos] == b'/';
        if is_closer {
            pos += 1;
        }
        let name_end = skip_word(text, pos, limit);
        if name_end == pos {
            return if is_closer {
                Tag::Malformed("a closer needs a type, like <!-- @/lesson -->")
            } else {
                Tag::Comment
            };
        }
        let name = pos..name_end;
        pos = name_end;
        if is_closer {
            let end = skip_space(text, pos, limit);
            return if text[end..limit].starts_with("-->") {
                Tag::Closer { name, end: end + 3 }
            } else {
                Tag::Malformed("a closer is <!-- @/TYPE -->")
            };
        }
        self.attrs.clear();
        self.boundaries.clear();
        loop {
            if !self.dead_boundaries.is_empty()
                && let Some(&reason) = self.dead_boundaries.get(&pos)
            {
                return self.fail(reason);
            }
            self.boundaries.push(pos);
            let after_space = skip_space(text, pos, limit);
            if after_space > pos
                && let Some((key, value, end)) = read_attr(text, after_space, limit)
            {
                self.attrs.push((key, value));
                pos = end;
                continue;
            }
            if text[after_space..limit].starts_with("-->") {
                return Tag::Opener { name, end: after_space + 3 };
            }
            // A failure caused by the length limit also marks the chain dead: a tag joining it
            // would run past the limit as well, or end within a few bytes of it.
            return self.fail(if limit < text.len() && limit + 4 > lt + MAX_MARKER_TAG_BYTES {
                "longer than the 2048-byte limit for a marker tag"
            } else {
                "attributes are key=value or key=\"value\", and the tag ends with -->"
            });
        }
    }

    fn fail(&mut self, reason: &'static str) -> Tag {
        for &boundary in &self.boundaries {
            self.dead_boundaries.insert(boundary, reason);
        }
        Tag::Malformed(reason)
    }

    fn open(&mut self, start: usize, end: usize, name: Range<usize>, line: u32) {
        let text = self.text;
        if self.markers.len() >= MAX_MARKERS_PER_FILE {
            // Not kept, but its closer must still pair with it rather than with a kept one.
            self.dropped += 1;
            match MarkerType::from_name(&text[name]) {
                MarkerType::Edge => {}
                MarkerType::Other(name) => self.open_other.entry(name).or_default().push(None),
                known => {
                    if let Some(index) = known.known_index() {
                        self.open_known[index].push(None);
                    }
                }
            }
            return;
        }
        let marker_type = MarkerType::from_name(&text[name]);
        let attrs =
            self.attrs.iter().map(|(key, value)| (text[key.clone()].to_string(), text[value.clone()].to_string()));
        let marker = Marker {
            marker_type,
            attrs: attrs.collect(),
            line,
            depth: 0,
            span: start..end,
            opener_span: start..end,
            content_span: end..end,
            closed: false,
        };
        self.check_attributes(&marker);
        let index = self.markers.len();
        match marker.marker_type.known_index() {
            Some(_) if marker.marker_type == MarkerType::Edge => {}
            Some(known) => self.open_known[known].push(Some(index)),
            None => {
                let name = marker.marker_type.as_str();
                let hint = match MarkerType::from_name(&name.to_ascii_lowercase()) {
                    MarkerType::Other(_) => String::new(),
                    known => format!(" (did you mean `@{}`?)", known.as_str()),
                };
                self.diagnostics.info(line, format!("unknown marker type `@{name}` kept as a generic marker{hint}"));
                self.open_other.entry(name.to_string()).or_default().push(Some(index));
            }
        }
        self.markers.push(marker);
    }

    fn close(&mut self, start: usize, end: usize, name: Range<usize>, line: u32) {
        let name = &self.text[name];
        let marker_type = MarkerType::from_name(name);
        let open = match marker_type.known_index() {
            Some(known) => self.open_known[known].pop(),
            None => self.open_other.get_mut(name).and_then(Vec::pop),
        };
        let Some(open) = open else {
            self.diagnostics.warning_with(line, || {
                if marker_type == MarkerType::Edge {
                    "`@edge` markers are inline only; closer `<!-- @/edge -->` ignored".to_string()
                } else {
                    format!("closer `<!-- @/{name} -->` has no open `@{name}` marker; ignored")
                }
            });
            return;
        };
        // The closer of an opener that was not kept (past the per-file bound).
        let Some(index) = open else { return };
        let marker = &mut self.markers[index];
        let inner_start = marker.opener_span.end;
        let raw = &self.text[inner_start..start];
        let content_start = inner_start + (raw.len() - raw.trim_start().len());
        let content = raw.trim();
        marker.content_span = content_start..content_start + content.len();
        marker.span.end = end;
        marker.closed = true;
    }

    /// Warns about attribute values the derived items cannot use.
    fn check_attributes(&mut self, marker: &Marker) {
        let line = marker.line;
        match marker.marker_type {
            MarkerType::Signal => {
                if let Some(severity) = marker.attr("severity")
                    && let Err(message) = severity.parse::<Severity>()
                {
                    self.diagnostics.warning(line, format!("{message}; the signal is read as info"));
                }
            }
            MarkerType::Todo => {
                if let Some(priority) = marker.attr("priority")
                    && priority.trim().parse::<i64>().is_err()
                {
                    self.diagnostics
                        .warning(line, format!("todo priority {priority:?} is not an integer; read as none"));
                }
            }
            MarkerType::Hot => {
                if let Some(heat) = marker.attr("heat")
                    && !heat.trim().parse::<u8>().is_ok_and(|heat| heat <= 10)
                {
                    self.diagnostics
                        .warning(line, format!("hot heat {heat:?} is not an integer from 0 to 10; ignored"));
                }
            }
            MarkerType::Inject => {
                if let Some(ttl) = marker.attr("ttl_days")
                    && ttl.trim().parse::<u32>().is_err()
                {
                    self.diagnostics
                        .warning(line, format!("inject ttl_days {ttl:?} is not a whole number of days; ignored"));
                }
            }
            MarkerType::Edge => match (marker.attr("type"), marker.attr("target")) {
                (Some(edge_type), Some(target)) if !target.trim().is_empty() => {
                    if let Err(message) = edge_type.parse::<EdgeType>() {
                        self.diagnostics.warning(line, format!("{message}; edge ignored"));
                    }
                }
                _ => self.diagnostics.warning(line, "an `@edge` marker needs `type` and `target`; edge ignored"),
            },
            _ => {}
        }
    }

    fn finish(self) -> Vec<Marker> {
        let Scanner { mut markers, open_known, diagnostics, dropped, .. } = self;
        // Unknown types may well be inline; only known block types are expected to close.
        let mut unclosed: Vec<usize> = open_known.into_iter().flatten().flatten().collect();
        unclosed.sort_unstable();
        for index in unclosed {
            let marker = &mut markers[index];
            let name = marker.marker_type.as_str();
            diagnostics.warning_with(marker.line, || {
                format!("`@{name}` is never closed by `<!-- @/{name} -->`; read as an inline marker with no content")
            });
        }
        set_depths(&mut markers, diagnostics);
        if dropped > 0 {
            diagnostics.warning(
                0,
                format!("{dropped} more markers ignored: at most {MAX_MARKERS_PER_FILE} markers are read per file"),
            );
        }
        markers
    }
}

/// Sets each marker's nesting depth: how many closed blocks contain its opener. Markers come
/// in opener order; a min-heap holds the ends of the blocks opened so far, so blocks of
/// different types that overlap without nesting are counted right too. A block too deep to
/// derive an item is not pushed (what it encloses is too deep as well), so the heap holds at
/// most [`MAX_NESTING_DEPTH`] ends and the pass is linear.
fn set_depths(markers: &mut [Marker], diagnostics: &mut Diagnostics<'_>) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut enclosing: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    let mut too_deep = 0usize;
    let mut first_line = 0;
    for marker in markers.iter_mut() {
        while enclosing.peek().is_some_and(|Reverse(end)| *end <= marker.span.start) {
            enclosing.pop();
        }
        marker.depth = u32::try_from(enclosing.len()).unwrap_or(u32::MAX);
        if !marker.closed {
            continue;
        }
        if marker.depth >= MAX_NESTING_DEPTH {
            if too_deep == 0 {
                first_line = marker.line;
            }
            too_deep += 1;
            continue;
        }
        enclosing.push(Reverse(marker.span.end));
    }
    if too_deep > 0 {
        diagnostics.warning(
            first_line,
            format!(
                "{too_deep} blocks nested inside {MAX_NESTING_DEPTH} or more other blocks derive no item (the first on this line)"
            ),
        );
    }
}

/// The first `byte` (ASCII) at or after `from`, or the end of the text.
fn find_byte(text: &str, from: usize, byte: u8) -> usize {
    // `str::find` with an ASCII char runs a word-at-a-time memchr.
    match text.get(from..).and_then(|rest| rest.find(char::from(byte))) {
        Some(offset) => from + offset,
        None => text.len(),
    }
}

fn count_byte(bytes: &[u8], byte: u8) -> u32 {
    let count = bytes.iter().filter(|&&b| b == byte).count();
    u32::try_from(count).unwrap_or(u32::MAX / 2)
}

/// The char at `pos`, when it lies before `limit`.
fn char_at(text: &str, pos: usize, limit: usize) -> Option<char> {
    if pos >= limit {
        return None;
    }
    let byte = *text.as_bytes().get(pos)?;
    if byte.is_ascii() {
        return Some(char::from(byte));
    }
    text.get(pos..)?.chars().next()
}

/// Skips `\s*` (Unicode whitespace).
fn skip_space(text: &str, mut pos: usize, limit: usize) -> usize {
    while let Some(c) = char_at(text, pos, limit) {
        if !c.is_whitespace() {
            break;
        }
        pos += c.len_utf8();
    }
    pos
}

/// Skips `\w*` (Unicode letters and digits, and `_`).
fn skip_word(text: &str, mut pos: usize, limit: usize) -> usize {
    while let Some(c) = char_at(text, pos, limit) {
        if !(c.is_alphanumeric() || c == '_') {
            break;
        }
        pos += c.len_utf8();
    }
    pos
}

/// Reads `\w+=(?:"[^"]*"|[^\s>]+)` at `pos`; returns the key, the value without quotes and the
/// end of the attribute.
fn read_attr(text: &str, pos: usize, limit: usize) -> Option<(Range<usize>, Range<usize>, usize)> {
    let bytes = text.as_bytes();
    let key_end = skip_word(text, pos, limit);
    if key_end == pos || key_end >= limit || bytes[key_end] != b'=' {
        return None;
    }
    let key = pos..key_end;
    let value_start = key_end + 1;
    if value_start < limit && bytes[value_start] == b'"' {
        let quote = find_byte(&text[..limit], value_start + 1, b'"');
        if quote < limit {
            let end = quote + 1;
            // After an attribute comes whitespace or `-->`; otherwise the regex's unquoted
            // alternative applies.
            let continues =
                char_at(text, end, limit).is_some_and(char::is_whitespace) || text[end..limit].starts_with("-->");
            if continues {
                return Some((key, value_start + 1..quote, end));
            }
        }
    }
    let mut end = value_start;
    while let Some(c) = char_at(text, end, limit) {
        if c.is_whitespace() || c == '>' {
            break;
        }
        end += c.len_utf8();
    }
    if end == value_start {
        return None;
    }
    if end < limit && bytes[end] == b'>' {
        // Only `-->` may follow a value, so the value gives its trailing `--` back.
        if end - value_start >= 3 && bytes[end - 2..end] == *b"--" {
            return Some((key, value_start..end - 2, end - 2));
        }
        return None;
    }
    Some((key, value_start..end, end))
}

/// An opening fence line: up to three spaces, then three or more backticks (with no backtick
/// in the info string) or tildes.
fn opens_fence(line: &[u8]) -> Option<(u8, usize)> {
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let byte = *rest.first()?;
    if byte != b'`' && byte != b'~' {
        return None;
    }
    let len = rest.iter().take_while(|&&b| b == byte).count();
    if len < 3 || (byte == b'`' && rest[len..].contains(&b'`')) {
        return None;
    }
    Some((byte, len))
}

/// A closing fence line: up to three spaces, at least as many fence characters as the opener,
/// then only spaces and tabs.
fn closes_fence(line: &[u8], fence: &Fence) -> bool {
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let len = rest.iter().take_while(|&&b| b == fence.byte).count();
    len >= fence.len && rest[len..].iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// The largest character boundary at or below `pos` (and at most the text length).
fn floor_boundary(text: &str, pos: usize) -> usize {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    pos
}

/// The start of a tag for a diagnostic: up to its `-->` or line break, at most 60 chars.
fn shown_tag(text: &str, start: usize) -> &str {
    // Looking at a bounded prefix keeps many malformed tags on one long line linear.
    let rest = &text[start..floor_boundary(text, start + 256)];
    let mut end = rest.find('\n').unwrap_or(rest.len());
    if let Some(close) = rest[..end].find("-->") {
        end = close + 3;
    }
    match rest[..end].char_indices().nth(60) {
        Some((index, _)) => &rest[..index],
        None => &rest[..end],
    }
}
