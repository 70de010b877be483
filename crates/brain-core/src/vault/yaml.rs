//! A YAML-subset reader for frontmatter: what arcs are written with, with byte spans.
//!
//! Top-level `key: value` lines; plain, single- and double-quoted scalars; `|`/`>` block
//! scalars; flow collections (`[a, b]`, `{errors: 4}`, `[{type: parent, target: x}]`), also over
//! several lines; indented block lists and maps. Anchors, aliases, tags and multi-document
//! streams are not features an arc needs; they read as plain text. Nesting is bounded, so
//! hostile input cannot overflow the stack, and every line is visited a bounded number of times.

use std::ops::Range;

use super::Diagnostics;
use super::frontmatter::FrontmatterEntry;
/// Collections nested deeper than this are not read (protects the stack from hostile input).
const MAX_DEPTH: usize = 32;

/// A YAML value as read from the frontmatter. Scalars stay text; typed fields interpret them.
#[derive(Clone, Debug, PartialEq)]
pub enum FmValue {
    /// An empty value, `~` or `null`.
    Null,
    Scalar(String),
    List(Vec<FmValue>),
    /// Keys in the order written.
    Map(Vec<(String, FmValue)>),
}

impl FmValue {
    /// The text of a scalar.
    pub fn as_scalar(&self) -> Option<&str> {
        match self {
            FmValue::Scalar(text) => Some(text),
            _ => None,
        }
    }

    /// The last value of `key` in a map.
    pub fn get(&self, key: &str) -> Option<&FmValue> {
        match self {
            FmValue::Map(pairs) => pairs.iter().rev().find(|(name, _)| name == key).map(|(_, value)| value),
            _ => None,
        }
    }

    pub(super) fn shape(&self) -> &'static str {
        match self {
            FmValue::Null => "nothing",
            FmValue::Scalar(_) => "a single value",
            FmValue::List(_) => "a list",
            FmValue::Map(_) => "a mapping",
        }
    }
}

/// Reads the top-level entries of the frontmatter lines in `range` (the first is line
/// `first_line`).
pub(super) fn read_entries(
    text: &str,
    range: Range<usize>,
    first_line: u32,
    diagnostics: &mut Diagnostics<'_>,
) -> Vec<FrontmatterEntry> {
    let lines = split_lines(text, range, first_line);
    Reader { text, diagnostics }.entries(&lines, 0, 0)
}

/// One physical line of the frontmatter.
#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    number: u32,
    /// Leading spaces and tabs.
    indent: usize,
    /// Byte offset of `text`.
    start: usize,
    /// The line without its indentation and line break.
    text: &'a str,
}

impl Line<'_> {
    fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// Blank and comment-only lines carry no value.
    fn is_skippable(&self) -> bool {
        let trimmed = self.text.trim_start();
        trimmed.is_empty() || trimmed.starts_with('#')
    }
}

fn split_lines(text: &str, range: Range<usize>, first_number: u32) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut line_start = range.start;
    let mut number = first_number;
    while line_start < range.end {
        let line_end = text[line_start..range.end].find('\n').map_or(range.end, |offset| line_start + offset);
        let raw = &text[line_start..line_end];
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let indent = raw.len() - raw.trim_start_matches([' ', '\t']).len();
        lines.push(Line { number, indent, start: line_start + indent, text: &raw[indent..] });
        line_start = line_end + 1;
        number += 1;
    }
    lines
}

fn is_sequence_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ") || text.starts_with("-\t")
}

/// Splits `key: rest`; returns the key and the byte index just after the colon.
fn split_key(text: &str) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    let first = *bytes.first()?;
    if first == b'"' || first == b'\'' {
        let (key, after) = match first {
            b'"' => double_quoted(text, 0).ok()?,
            _ => single_quoted(text, 0).ok()?,
        };
        let colon = after + (text[after..].len() - text[after..].trim_start_matches([' ', '\t']).len());
        if bytes.get(colon) != Some(&b':') || !ends_token(bytes, colon + 1) {
            return None;
        }
        return Some((key, colon + 1));
    }
    if matches!(first, b'#' | b'[' | b'{' | b'-' | b'?' | b':' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`')
        && !(first == b'-' && bytes.get(1).is_some_and(|b| !b.is_ascii_whitespace()))
    {
        return None;
    }
    let mut search = 0;
    while let Some(offset) = text[search..].find(':') {
        let colon = search + offset;
        if ends_token(bytes, colon + 1) {
            let key = text[..colon].trim_end();
            if key.is_empty() || key.contains(" #") || key.contains("\t#") {
                return None;
            }
            return Some((key.to_string(), colon + 1));
        }
        search = colon + 1;
    }
    None
}

/// True when `at` is the end of the text or whitespace.
fn ends_token(bytes: &[u8], at: usize) -> bool {
    bytes.get(at).is_none_or(|&b| b == b' ' || b == b'\t')
}

/// The value part of `rest`: comment removed, whitespace trimmed.
fn strip_comment(rest: &str) -> &str {
    let bytes = rest.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        if byte == b'#' && (index == 0 || bytes[index - 1] == b' ' || bytes[index - 1] == b'\t') {
            return rest[..index].trim_end();
        }
    }
    rest.trim_end()
}

fn plain_scalar(text: &str) -> FmValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => FmValue::Null,
        _ => FmValue::Scalar(text.to_string()),
    }
}

/// The text after `key:` or `- ` on its line.
#[derive(Clone, Copy)]
struct Piece<'a> {
    /// Without leading whitespace; may carry a trailing comment.
    text: &'a str,
    start: usize,
    line: u32,
    /// Where an empty value sits: right after the colon or dash.
    empty_at: usize,
}

struct Reader<'a, 'd, 'f> {
    /// The whole input: continuation lines are slices of it.
    text: &'a str,
    diagnostics: &'d mut Diagnostics<'f>,
}

impl Reader<'_, '_, '_> {
    /// `key: value` entries at indentation `base`.
    fn entries(&mut self, lines: &[Line<'_>], base: usize, depth: usize) -> Vec<FrontmatterEntry> {
        let mut entries = Vec::new();
        let mut index = 0;
        while index < lines.len() {
            let line = lines[index];
            index += 1;
            if line.is_skippable() {
                continue;
            }
            if line.indent != base {
                let message = if line.indent > base {
                    "unexpected indentation in frontmatter; line ignored"
                } else {
                    "line is indented less than the mapping it belongs to; ignored"
                };
                self.diagnostics.warning(line.number, message);
                continue;
            }
            let Some((key, colon_end)) = split_key(line.text) else {
                let message = if is_sequence_item(line.text) {
                    "list item without a key in frontmatter; ignored"
                } else {
                    "expected `key: value` in frontmatter; line ignored"
                };
                self.diagnostics.warning(line.number, message);
                continue;
            };
            let after_colon = &line.text[colon_end..];
            let rest = after_colon.trim_start_matches([' ', '\t']);
            let piece = Piece {
                text: rest,
                start: line.start + colon_end + (after_colon.len() - rest.len()),
                line: line.number,
                empty_at: line.start + colon_end,
            };
            let value_is_empty = strip_comment(rest).is_empty();
            let mut children_end = children_end(lines, index, base, value_is_empty);
            // JSON-style flow collections often put their closing bracket back at the key's
            // indentation.
            if rest.starts_with(['[', '{'])
                && let Some(next) = lines.get(children_end)
                && next.indent == base
                && next.text.starts_with([']', '}'])
            {
                children_end += 1;
            }
            let children = &lines[index..children_end];
            index = children_end;
            let (value, value_span) = self.value(piece, children, depth + 1);
            let span_end = children.last().map_or(line.end(), Line::end).max(value_span.end);
            entries.push(FrontmatterEntry {
                key,
                value,
                line: line.number,
                span: line.start - line.indent..span_end,
                value_span,
            });
        }
        entries
    }

    /// The value that starts with `piece` and continues on the more-indented `children` lines.
    fn value(&mut self, piece: Piece<'_>, children: &[Line<'_>], depth: usize) -> (FmValue, Range<usize>) {
        let content = children.iter().rposition(|line| !line.is_skippable()).map(|last| &children[..=last]);
        let inline = strip_comment(piece.text);
        let content_end = content.and_then(|lines| lines.last()).map_or(piece.start + inline.len(), Line::end);
        if depth > MAX_DEPTH {
            self.diagnostics
                .warning(piece.line, format!("frontmatter nested more than {MAX_DEPTH} levels; value ignored"));
            return (FmValue::Null, piece.start..content_end);
        }
        match inline.as_bytes().first() {
            None => match content {
                None => (FmValue::Null, piece.empty_at..piece.empty_at),
                Some(lines) => {
                    let first = lines.iter().find(|line| !line.is_skippable()).map_or(content_end, |line| line.start);
                    (self.block(lines, depth + 1), first..content_end)
                }
            },
            Some(b'[' | b'{' | b'"' | b'\'') => {
                // A `#` inside quotes is not a comment: the delimited value runs to the end of
                // its line and over its continuation lines.
                let line_end = piece.start + piece.text.len();
                let end = content.and_then(|lines| lines.last()).map_or(line_end, Line::end);
                self.delimited(piece, end, depth)
            }
            Some(b'|' | b'>') => {
                let value = self.block_scalar(inline, piece.line, content.unwrap_or_default());
                (value, piece.start..content_end)
            }
            Some(_) => match content {
                None => (plain_scalar(inline), piece.start..piece.start + inline.len()),
                Some(lines) => {
                    let mut folded = inline.to_string();
                    let mut blank_lines = 0;
                    for line in lines {
                        let text = strip_comment(line.text);
                        if text.is_empty() {
                            blank_lines += 1;
                            continue;
                        }
                        if blank_lines > 0 {
                            folded.extend(std::iter::repeat_n('\n', blank_lines));
                        } else {
                            folded.push(' ');
                        }
                        blank_lines = 0;
                        folded.push_str(text);
                    }
                    (plain_scalar(&folded), piece.start..content_end)
                }
            },
        }
    }

    /// A flow collection or quoted scalar, possibly continued on following lines.
    fn delimited(&mut self, piece: Piece<'_>, content_end: usize, depth: usize) -> (FmValue, Range<usize>) {
        // The children lines follow the piece directly, so the whole value is one slice.
        let source = self.text.get(piece.start..content_end).unwrap_or(piece.text);
        let mut flow = Flow { text: source, pos: 0 };
        let parsed = flow.value(depth);
        let (value, end) = match parsed {
            Ok(value) => (value, flow.pos),
            Err(message) => {
                self.diagnostics.warning(piece.line, format!("malformed frontmatter value: {message}; value ignored"));
                return (FmValue::Null, piece.start..piece.start + source.len());
            }
        };
        flow.skip_space_and_comments();
        if flow.pos < source.len() {
            self.diagnostics.warning(
                piece.line,
                format!("unexpected text after a frontmatter value: {:?}; ignored", truncate(&source[flow.pos..], 40)),
            );
        }
        (value, piece.start..piece.start + end)
    }

    /// `|` and `>` block scalars.
    fn block_scalar(&mut self, header: &str, line: u32, lines: &[Line<'_>]) -> FmValue {
        let literal = header.starts_with('|');
        let mut chomp = '\0';
        let mut explicit_indent = None;
        for c in header[1..].chars() {
            match c {
                '-' | '+' if chomp == '\0' => chomp = c,
                '1'..='9' if explicit_indent.is_none() => explicit_indent = c.to_digit(10).map(|d| d as usize),
                _ => {
                    self.diagnostics.warning(line, format!("unknown block scalar header {header:?}; read as `|`"));
                    break;
                }
            }
        }
        let first_indent = lines.iter().find(|line| !line.text.trim().is_empty()).map_or(0, |line| line.indent);
        let block_indent = explicit_indent.map_or(first_indent, |indent| indent.min(first_indent));
        let mut out = String::new();
        let mut blank_lines = 0;
        let mut first = true;
        let mut previous_more_indented = false;
        for line in lines {
            if line.text.trim().is_empty() {
                blank_lines += 1;
                continue;
            }
            let more_indented = line.indent > block_indent;
            if first {
                if literal {
                    out.extend(std::iter::repeat_n('\n', blank_lines));
                }
            } else if literal || more_indented || previous_more_indented {
                out.extend(std::iter::repeat_n('\n', blank_lines + 1));
            } else if blank_lines == 0 {
                out.push(' ');
            } else {
                out.extend(std::iter::repeat_n('\n', blank_lines));
            }
            out.extend(std::iter::repeat_n(' ', line.indent.saturating_sub(block_indent)));
            out.push_str(line.text);
            blank_lines = 0;
            first = false;
            previous_more_indented = more_indented;
        }
        if chomp != '-' && !out.is_empty() {
            out.push('\n');
        }
        FmValue::Scalar(out)
    }

    /// An indented block: a list when it starts with `- `, else a mapping.
    fn block(&mut self, lines: &[Line<'_>], depth: usize) -> FmValue {
        let Some(first) = lines.iter().find(|line| !line.is_skippable()) else {
            return FmValue::Null;
        };
        if depth > MAX_DEPTH {
            self.diagnostics
                .warning(first.number, format!("frontmatter nested more than {MAX_DEPTH} levels; value ignored"));
            return FmValue::Null;
        }
        if is_sequence_item(first.text) {
            self.sequence(lines, first.indent, depth)
        } else {
            let entries = self.entries(lines, first.indent, depth);
            FmValue::Map(entries.into_iter().map(|entry| (entry.key, entry.value)).collect())
        }
    }

    fn sequence(&mut self, lines: &[Line<'_>], base: usize, depth: usize) -> FmValue {
        let mut items = Vec::new();
        let mut index = 0;
        while index < lines.len() {
            let line = lines[index];
            index += 1;
            if line.is_skippable() {
                continue;
            }
            if line.indent != base || !is_sequence_item(line.text) {
                self.diagnostics.warning(line.number, "unexpected line in a frontmatter list; ignored");
                continue;
            }
            let children_end = children_end(lines, index, base, false);
            let children = &lines[index..children_end];
            index = children_end;
            let after_dash = &line.text[1..];
            let item_text = after_dash.trim_start_matches([' ', '\t']);
            let item_start = line.start + 1 + (after_dash.len() - item_text.len());
            let starts_nested_block = !item_text.starts_with(['"', '\'', '[', '{'])
                && (is_sequence_item(item_text) || split_key(item_text).is_some());
            let value = if starts_nested_block {
                // `- key: value` opens a mapping (and `- - x` a list) whose first line is
                // the rest of the dash line, at the column where its text starts.
                let column = line.indent + (item_start - line.start);
                let mut nested = Vec::with_capacity(children.len() + 1);
                nested.push(Line { number: line.number, indent: column, start: item_start, text: item_text });
                nested.extend_from_slice(children);
                self.block(&nested, depth + 1)
            } else {
                let piece = Piece { text: item_text, start: item_start, line: line.number, empty_at: line.start + 1 };
                self.value(piece, children, depth + 1).0
            };
            items.push(value);
        }
        FmValue::List(items)
    }
}

/// Lines after `from` that belong to the value started on the line before: more indented, or,
/// for an empty value, `- ` items at the same indentation. Trailing blank and comment lines
/// are left to the caller.
fn children_end(lines: &[Line<'_>], from: usize, base: usize, allow_items_at_base: bool) -> usize {
    let mut end = from;
    let mut index = from;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        if line.is_skippable() {
            continue;
        }
        if line.indent > base || (allow_items_at_base && line.indent == base && is_sequence_item(line.text)) {
            end = index;
            continue;
        }
        break;
    }
    end
}

fn truncate(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((index, _)) => &text[..index],
        None => text,
    }
}

/// A cursor over a flow collection or quoted scalar.
struct Flow<'a> {
    text: &'a str,
    pos: usize,
}

impl Flow<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_space_and_comments(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.pos) {
            match byte {
                b' ' | b'\t' | b'\r' | b'\n' => self.pos += 1,
                b'#' if self.pos == 0 || matches!(bytes[self.pos - 1], b' ' | b'\t' | b'\r' | b'\n') => {
                    self.pos = self.text[self.pos..].find('\n').map_or(self.text.len(), |offset| self.pos + offset);
                }
                _ => break,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<FmValue, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} levels"));
        }
        match self.peek() {
            Some(b'[') => self.sequence(depth),
            Some(b'{') => self.mapping(depth),
            Some(b'"') => {
                let (text, end) = double_quoted(self.text, self.pos)?;
                self.pos = end;
                Ok(FmValue::Scalar(text))
            }
            Some(b'\'') => {
                let (text, end) = single_quoted(self.text, self.pos)?;
                self.pos = end;
                Ok(FmValue::Scalar(text))
            }
            Some(_) => self.plain(),
            None => Err("unexpected end of value".to_string()),
        }
    }

    fn plain(&mut self) -> Result<FmValue, String> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        while let Some(&byte) = bytes.get(self.pos) {
            match byte {
                b',' | b'[' | b']' | b'{' | b'}' | b'\n' => break,
                b':' if bytes.get(self.pos + 1).is_none_or(|next| b" \t\r\n,[]{}".contains(next)) => break,
                b'#' if self.pos > start && matches!(bytes[self.pos - 1], b' ' | b'\t') => break,
                // Stop bytes are ASCII, so stepping bytewise never stops inside a character.
                _ => self.pos += 1,
            }
        }
        let text = self.text[start..self.pos].trim();
        if text.is_empty() {
            let found = self.text[self.pos..].chars().next().map_or("end of value".to_string(), |c| format!("`{c}`"));
            return Err(format!("expected a value, found {found}"));
        }
        Ok(plain_scalar(text))
    }

    fn key(&mut self, depth: usize) -> Result<String, String> {
        let value = self.value(depth)?;
        key_text(value)
    }

    fn sequence(&mut self, depth: usize) -> Result<FmValue, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space_and_comments();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(FmValue::List(items));
                }
                None => return Err("`[` is never closed".to_string()),
                _ => {}
            }
            let item = self.value(depth + 1)?;
            self.skip_space_and_comments();
            // `[key: value]` is a list holding a one-entry mapping.
            let item = if self.peek() == Some(b':') {
                let key = key_text(item)?;
                self.pos += 1;
                self.skip_space_and_comments();
                let value =
                    if matches!(self.peek(), Some(b',' | b']')) { FmValue::Null } else { self.value(depth + 1)? };
                self.skip_space_and_comments();
                FmValue::Map(vec![(key, value)])
            } else {
                item
            };
            items.push(item);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                Some(_) => return Err(format!("expected `,` or `]` in a list, found {}", self.found())),
                None => return Err("`[` is never closed".to_string()),
            }
        }
    }

    fn mapping(&mut self, depth: usize) -> Result<FmValue, String> {
        self.pos += 1;
        let mut pairs = Vec::new();
        loop {
            self.skip_space_and_comments();
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(FmValue::Map(pairs));
                }
                None => return Err("`{` is never closed".to_string()),
                _ => {}
            }
            let key = self.key(depth + 1)?;
            self.skip_space_and_comments();
            let value = if self.peek() == Some(b':') {
                self.pos += 1;
                self.skip_space_and_comments();
                if matches!(self.peek(), Some(b',' | b'}')) { FmValue::Null } else { self.value(depth + 1)? }
            } else {
                FmValue::Null
            };
            pairs.push((key, value));
            self.skip_space_and_comments();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                Some(_) => return Err(format!("expected `,` or `}}` in a mapping, found {}", self.found())),
                None => return Err("`{` is never closed".to_string()),
            }
        }
    }

    fn found(&self) -> String {
        self.text[self.pos..].chars().next().map_or("the end".to_string(), |c| format!("`{c}`"))
    }
}

/// Appends a folded line break: one space, or one `\n` per blank line that follows.
/// Returns the position after the whitespace.
fn fold_line_break(text: &str, mut pos: usize, out: &mut String) -> usize {
    let bytes = text.as_bytes();
    let trimmed_len = out.trim_end_matches([' ', '\t']).len();
    out.truncate(trimmed_len);
    let mut breaks = 0;
    while let Some(&byte) = bytes.get(pos) {
        match byte {
            b'\n' => {
                breaks += 1;
                pos += 1;
            }
            b' ' | b'\t' | b'\r' => pos += 1,
            _ => break,
        }
    }
    if breaks > 1 {
        out.extend(std::iter::repeat_n('\n', breaks - 1));
    } else {
        out.push(' ');
    }
    pos
}

/// A `"…"` scalar starting at `start`; returns the text and the position after the quote.
fn double_quoted(text: &str, start: usize) -> Result<(String, usize), String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut pos = start + 1;
    let mut run_start = pos;
    loop {
        let Some(&byte) = bytes.get(pos) else {
            return Err("a double-quoted value is never closed".to_string());
        };
        match byte {
            b'"' => {
                out.push_str(&text[run_start..pos]);
                return Ok((out, pos + 1));
            }
            b'\n' => {
                out.push_str(&text[run_start..pos]);
                pos = fold_line_break(text, pos, &mut out);
                run_start = pos;
            }
            b'\\' => {
                out.push_str(&text[run_start..pos]);
                let escape = text[pos + 1..].chars().next().ok_or("a double-quoted value is never closed")?;
                pos += 1 + escape.len_utf8();
                let simple = match escape {
                    '0' => Some('\0'),
                    'a' => Some('\u{7}'),
                    'b' => Some('\u{8}'),
                    't' | '\t' => Some('\t'),
                    'n' => Some('\n'),
                    'v' => Some('\u{b}'),
                    'f' => Some('\u{c}'),
                    'r' => Some('\r'),
                    'e' => Some('\u{1b}'),
                    ' ' => Some(' '),
                    '"' => Some('"'),
                    '/' => Some('/'),
                    '\\' => Some('\\'),
                    'N' => Some('\u{85}'),
                    '_' => Some('\u{a0}'),
                    'L' => Some('\u{2028}'),
                    'P' => Some('\u{2029}'),
                    _ => None,
                };
                if let Some(c) = simple {
                    out.push(c);
                } else if escape == '\n' || escape == '\r' {
                    // An escaped line break joins the lines without a space.
                    while let Some(b' ' | b'\t' | b'\r' | b'\n') = bytes.get(pos) {
                        pos += 1;
                    }
                } else {
                    let digits = match escape {
                        'x' => 2,
                        'u' => 4,
                        'U' => 8,
                        other => return Err(format!("unknown escape `\\{other}` in a double-quoted value")),
                    };
                    let hex = text.get(pos..pos + digits).ok_or("truncated escape in a double-quoted value")?;
                    let c = u32::from_str_radix(hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("invalid escape `\\{escape}{hex}` in a double-quoted value"))?;
                    out.push(c);
                    pos += digits;
                }
                run_start = pos;
            }
            _ => pos += 1,
        }
    }
}

/// A `'…'` scalar starting at `start` (`''` is a quote).
fn single_quoted(text: &str, start: usize) -> Result<(String, usize), String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut pos = start + 1;
    let mut run_start = pos;
    loop {
        let Some(&byte) = bytes.get(pos) else {
            return Err("a single-quoted value is never closed".to_string());
        };
        match byte {
            b'\'' if bytes.get(pos + 1) == Some(&b'\'') => {
                out.push_str(&text[run_start..=pos]);
                pos += 2;
                run_start = pos;
            }
            b'\'' => {
                out.push_str(&text[run_start..pos]);
                return Ok((out, pos + 1));
            }
            b'\n' => {
                out.push_str(&text[run_start..pos]);
                pos = fold_line_break(text, pos, &mut out);
                run_start = pos;
            }
            _ => pos += 1,
        }
    }
}

/// A value used as a mapping key: a scalar's text, or empty for null.
fn key_text(value: FmValue) -> Result<String, String> {
    match value {
        FmValue::Scalar(text) => Ok(text),
        FmValue::Null => Ok(String::new()),
        _ => Err("collections cannot be mapping keys".to_string()),
    }
}
