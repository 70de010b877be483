//! The vault: arc frontmatter and HTML-comment markers (SPEC §2.2, §2.3).
//!
//! [`parse`] turns the bytes of one vault file into a [`VaultDoc`] plus a list of
//! [`Diagnostic`]s. It never fails and never panics: invalid UTF-8, binary or oversized files,
//! malformed frontmatter and broken markers all become diagnostics, and whatever could be read
//! is still returned.
//!
//! Parsing is linear in the size of the file. The frontmatter is read line by line by a small
//! YAML-subset reader (flat keys, flow and block collections, quoted and block scalars). The
//! body is walked once, line by line: each line is checked for a code fence, and each `<!--`
//! outside a fence is classified in place as an opener, a closer or neither. A closer is matched
//! to the innermost open marker of its type through a per-type stack, so no marker ever
//! re-scans the rest of the file. Every byte span in the result indexes the input bytes and
//! falls on a UTF-8 character boundary, so the tick can rewrite values and remove blocks in
//! place.

mod derive;
mod frontmatter;
mod markers;
#[cfg(test)]
mod tests;
mod yaml;

use std::fmt;
use std::ops::Range;

pub use derive::{
    DerivedInject, DerivedItem, DerivedMarker, MAX_DERIVED_CONTENT_BYTES, MAX_DERIVED_PER_FILE, arc_id, derived_items,
    marker_id, normalize_content, vault_id,
};
pub use frontmatter::{
    ArcSignals, ArcStatus, Created, Edge, EdgeType, Frontmatter, FrontmatterEntry, KNOWN_KEYS, Region,
    set_frontmatter_scalar,
};
pub use markers::{MAX_MARKER_TAG_BYTES, MAX_MARKERS_PER_FILE, MAX_NESTING_DEPTH, Marker, MarkerType};
pub use yaml::FmValue;

/// Files larger than this are not parsed (SPEC §2.3: 2 MiB by default).
pub const DEFAULT_MAX_BYTES: usize = 2 * 1024 * 1024;

/// At most this many diagnostics are kept per file; a hostile file cannot flood memory.
pub const MAX_DIAGNOSTICS_PER_FILE: usize = 200;

/// A NUL byte within this many leading bytes marks a file as binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// How serious a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiagnosticSeverity {
    /// Worth knowing, nothing was lost (an unknown marker type, an unterminated code fence).
    Info,
    /// Something the user wrote was ignored or read with a fallback.
    Warning,
    /// The file could not be read completely (invalid UTF-8).
    Error,
}

impl DiagnosticSeverity {
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticSeverity::Info => "info",
            DiagnosticSeverity::Warning => "warning",
            DiagnosticSeverity::Error => "error",
        }
    }
}

impl fmt::Display for DiagnosticSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding about one file. `line` is 1-based; 0 means the file as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: u32,
    pub severity: DiagnosticSeverity,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}: {}", self.file, self.line, self.severity, self.message)
    }
}

/// A parsed vault file. Spans are byte ranges into the bytes given to [`parse`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VaultDoc {
    /// The vault-relative path the file was parsed as (part of every derived id).
    pub relpath: String,
    /// The frontmatter, when the file starts with a closed `---` block.
    pub frontmatter: Option<Frontmatter>,
    /// Where the markdown body starts and ends (after the frontmatter); its end is the end of
    /// the parsed text.
    pub body_span: Range<usize>,
    /// Every marker outside fenced code, in the order of their openers.
    pub markers: Vec<Marker>,
}

impl VaultDoc {
    /// The text the spans index: the part of `bytes` (the bytes given to [`parse`]) that was
    /// parsed, i.e. all of it unless it holds invalid UTF-8.
    pub fn text<'b>(&self, bytes: &'b [u8]) -> &'b str {
        let parsed = bytes.get(..self.body_span.end).unwrap_or_default();
        std::str::from_utf8(parsed).unwrap_or_default()
    }

    /// What the ids of this file's derived items are made from besides type and content:
    /// `arc:<cluster_id>` when it has a `cluster_id` (moving the arc keeps them), else its
    /// relpath.
    pub fn identity(&self) -> std::borrow::Cow<'_, str> {
        derive::identity(self)
    }

    /// The id of the arc this file describes, derived from its `cluster_id` (SPEC §2.2).
    pub fn arc_id(&self) -> Option<String> {
        let cluster_id = self.frontmatter.as_ref()?.cluster_id.as_deref()?;
        Some(arc_id(cluster_id))
    }

    /// The arc's edges: the frontmatter `edges` list followed by the `@edge` markers.
    pub fn edges(&self) -> Vec<Edge> {
        let mut edges: Vec<Edge> = self.frontmatter.as_ref().map(|fm| fm.edges.clone()).unwrap_or_default();
        edges.extend(self.markers.iter().filter_map(Marker::edge));
        edges
    }
}

/// Collects diagnostics for one file.
pub(crate) struct Diagnostics<'a> {
    file: &'a str,
    list: Vec<Diagnostic>,
    suppressed: usize,
}

impl<'a> Diagnostics<'a> {
    pub(crate) fn new(file: &'a str) -> Diagnostics<'a> {
        Diagnostics { file, list: Vec::new(), suppressed: 0 }
    }

    pub(crate) fn push(&mut self, line: u32, severity: DiagnosticSeverity, message: impl Into<String>) {
        if self.list.len() >= MAX_DIAGNOSTICS_PER_FILE {
            self.suppressed += 1;
            return;
        }
        self.list.push(Diagnostic { file: self.file.to_string(), line, severity, message: message.into() });
    }

    /// Like [`Diagnostics::push`] with a warning, but builds the message only when it is kept.
    pub(crate) fn warning_with(&mut self, line: u32, message: impl FnOnce() -> String) {
        if self.list.len() >= MAX_DIAGNOSTICS_PER_FILE {
            self.suppressed += 1;
            return;
        }
        self.push(line, DiagnosticSeverity::Warning, message());
    }

    pub(crate) fn info(&mut self, line: u32, message: impl Into<String>) {
        self.push(line, DiagnosticSeverity::Info, message);
    }

    pub(crate) fn warning(&mut self, line: u32, message: impl Into<String>) {
        self.push(line, DiagnosticSeverity::Warning, message);
    }

    pub(crate) fn error(&mut self, line: u32, message: impl Into<String>) {
        self.push(line, DiagnosticSeverity::Error, message);
    }

    fn finish(mut self) -> Vec<Diagnostic> {
        // A stable sort keeps same-line findings in the order they were made.
        self.list.sort_by_key(|diagnostic| diagnostic.line);
        if self.suppressed > 0 {
            let message =
                format!("{} more diagnostics not shown (at most {MAX_DIAGNOSTICS_PER_FILE} per file)", self.suppressed);
            self.list.push(Diagnostic {
                file: self.file.to_string(),
                line: 0,
                severity: DiagnosticSeverity::Warning,
                message,
            });
        }
        self.list
    }
}

/// Parses one vault file. Never fails: problems are reported as diagnostics and whatever could
/// be read is returned. Files over `max_bytes` ([`DEFAULT_MAX_BYTES`] by default) and binary
/// files yield an empty document; a file with invalid UTF-8 is parsed up to the first invalid
/// byte.
pub fn parse(relpath: &str, bytes: &[u8], max_bytes: usize) -> (VaultDoc, Vec<Diagnostic>) {
    let mut diagnostics = Diagnostics::new(relpath);
    let mut doc = VaultDoc { relpath: relpath.to_string(), ..VaultDoc::default() };
    if bytes.len() > max_bytes {
        diagnostics.warning(0, format!("file is {} bytes, over the {max_bytes}-byte limit; not parsed", bytes.len()));
        return (doc, diagnostics.finish());
    }
    let sniffed = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    // `contains` on bytes is a memchr; the position is only looked up for binary files.
    if sniffed.contains(&0)
        && let Some(offset) = sniffed.iter().position(|&byte| byte == 0)
    {
        diagnostics.warning(0, format!("binary file (NUL byte at offset {offset}); not parsed"));
        return (doc, diagnostics.finish());
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = err.valid_up_to();
            let line = line_of(&bytes[..valid]);
            diagnostics
                .error(line, format!("invalid UTF-8 at byte {valid}; only the {valid} bytes before it were parsed"));
            // `valid_up_to` is a character boundary by definition, so this cannot fail.
            std::str::from_utf8(&bytes[..valid]).unwrap_or_default()
        }
    };
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let (frontmatter, body_start, body_line) = frontmatter::parse_frontmatter(text, start, &mut diagnostics);
    doc.frontmatter = frontmatter;
    doc.body_span = body_start..text.len();
    doc.markers = markers::scan(text, body_start, body_line, &mut diagnostics);
    (doc, diagnostics.finish())
}

/// The 1-based line number of the end of `prefix`.
fn line_of(prefix: &[u8]) -> u32 {
    let newlines = prefix.iter().filter(|&&byte| byte == b'\n').count();
    u32::try_from(newlines).unwrap_or(u32::MAX - 1) + 1
}
