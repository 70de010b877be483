//! Vault-derived items (SPEC §2.3): what each block marker becomes, with content-stable ids.
//!
//! Identity: `mem_v` + 24 hex of sha256(identity, type, [source, severity,] normalized
//! content). The identity is `arc:<cluster_id>` in a file with a `cluster_id` (so an arc that
//! graduates — moves — keeps the ids of its blocks) and the relpath elsewhere. A signal's id
//! includes its `source=` and severity: two signals with the same text from different
//! sources are two signals (the reference engine keys them by source + content).
//!
//! Bounds: the blocks of one file derive at most [`MAX_DERIVED_PER_FILE`] items holding at
//! most [`MAX_DERIVED_CONTENT_BYTES`] of content between them, checked before anything is
//! copied, hashed or redacted, and blocks nested deeper than
//! [`super::markers::MAX_NESTING_DEPTH`] derive nothing: a file of thousands of nested blocks
//! (each level a copy of the rest of the file) costs time and memory linear in its size.

use std::borrow::Cow;
use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::markers::{MAX_NESTING_DEPTH, Marker, MarkerType};
use super::{DEFAULT_MAX_BYTES, Diagnostic, Diagnostics, VaultDoc};
use crate::item::{Kind, Severity};

/// At most this many items (inject blocks included) are derived from one file.
pub const MAX_DERIVED_PER_FILE: usize = 10_000;

/// At most this many bytes of block content are derived from one file: twice the largest
/// file parsed by default, so a file whose every block sits inside one other block (a
/// milestone holding lessons) is derived whole.
pub const MAX_DERIVED_CONTENT_BYTES: usize = 2 * DEFAULT_MAX_BYTES;

/// Longest derived title, in characters (before the ellipsis).
const MAX_DERIVED_TITLE_CHARS: usize = 100;

/// A block marker turned into an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedItem {
    /// `mem_v` + 24 hex: stable while the file path, type and normalized content stay.
    pub id: String,
    /// Index of the source marker in [`VaultDoc::markers`] (its attributes and spans).
    pub marker: usize,
    pub kind: Kind,
    /// The first line of the content, shortened to 100 characters.
    pub title: String,
    /// The marker content, trimmed, redacted (secrets marked, `<private>` blocks dropped).
    pub content: String,
    /// 1 to 5: todos map `priority=1/2/3` to 5/4/3 (else 2); everything else is 3.
    pub importance: u8,
    /// Signals only: `severity=`, `info` when absent or invalid.
    pub severity: Option<Severity>,
    /// Signals only: `source=`.
    pub signal_source: Option<String>,
    /// `@hot` only: `heat=` (0 to 10).
    pub heat: Option<u8>,
    pub line: u32,
}

/// An `@inject` block: text meant for a target file such as `claude.md`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedInject {
    pub id: String,
    pub marker: usize,
    pub target: Option<String>,
    pub ttl_days: Option<u32>,
    pub content: String,
    pub line: u32,
}

/// What a block marker becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DerivedMarker {
    Item(DerivedItem),
    Inject(DerivedInject),
}

impl DerivedMarker {
    pub fn id(&self) -> &str {
        match self {
            DerivedMarker::Item(item) => &item.id,
            DerivedMarker::Inject(inject) => &inject.id,
        }
    }
}

/// The items a document's block markers become, in file order, and the diagnostics of the
/// bounds (see the module documentation). `bytes` are the bytes `doc` was parsed from.
/// Inline markers (no content), `@edge` and unknown types derive nothing; a block identical
/// to an earlier one (same id) is skipped with an info diagnostic.
pub fn derived_items(doc: &VaultDoc, bytes: &[u8]) -> (Vec<DerivedMarker>, Vec<Diagnostic>) {
    let text = doc.text(bytes);
    let identity = doc.identity();
    let mut diagnostics = Diagnostics::new(&doc.relpath);
    let mut seen = HashSet::new();
    let mut derived = Vec::new();
    let mut content_bytes = 0usize;
    let (mut over_count, mut over_bytes) = (0usize, 0usize);
    for (index, marker) in doc.markers.iter().enumerate() {
        let raw_content = marker.content(text);
        if !marker.closed || raw_content.is_empty() || marker.depth >= MAX_NESTING_DEPTH {
            continue;
        }
        let kind = match marker.marker_type {
            MarkerType::Lesson => Some(Kind::Lesson),
            MarkerType::Decision => Some(Kind::Decision),
            MarkerType::Todo => Some(Kind::Todo),
            MarkerType::Signal => Some(Kind::Signal),
            MarkerType::Milestone | MarkerType::Hot => Some(Kind::Note),
            MarkerType::Inject => None,
            MarkerType::Edge | MarkerType::Other(_) => continue,
        };
        // The bounds are checked before the content is hashed, copied or redacted.
        if derived.len() >= MAX_DERIVED_PER_FILE {
            over_count += 1;
            continue;
        }
        if content_bytes + raw_content.len() > MAX_DERIVED_CONTENT_BYTES {
            over_bytes += 1;
            continue;
        }
        let id = marker_id(&identity, marker, raw_content);
        if !seen.insert(id.clone()) {
            let name = marker.marker_type.as_str();
            diagnostics
                .info(marker.line, format!("the same @{name} block is written earlier in the file; indexed once"));
            continue;
        }
        content_bytes += raw_content.len();
        // Redacted here, once, so the store, the brain document, session start and the
        // HTTP answers carry what the feed files carry (SPEC §9); the id stays that of the
        // text as written. A source attribute is free text too.
        let content = crate::redact::redact_str(raw_content).into_owned();
        let Some(kind) = kind else {
            derived.push(DerivedMarker::Inject(DerivedInject {
                id,
                marker: index,
                target: marker.attr("target").map(str::trim).filter(|target| !target.is_empty()).map(str::to_string),
                ttl_days: marker.attr("ttl_days").and_then(|ttl| ttl.trim().parse().ok()),
                content,
                line: marker.line,
            }));
            continue;
        };
        let is_signal = marker.marker_type == MarkerType::Signal;
        derived.push(DerivedMarker::Item(DerivedItem {
            id,
            marker: index,
            kind,
            title: title_of(&content),
            content,
            importance: importance_of(marker),
            severity: is_signal.then(|| marker.attr("severity").and_then(|s| s.parse().ok()).unwrap_or(Severity::Info)),
            signal_source: if is_signal {
                marker.attr("source").map(|source| crate::redact::redact_str(source).into_owned())
            } else {
                None
            },
            heat: match marker.marker_type {
                MarkerType::Hot => {
                    marker.attr("heat").and_then(|heat| heat.trim().parse().ok()).filter(|&heat| heat <= 10)
                }
                _ => None,
            },
            line: marker.line,
        }));
    }
    if over_count > 0 {
        diagnostics.warning(
            0,
            format!("{over_count} more blocks not indexed: at most {MAX_DERIVED_PER_FILE} items are derived per file"),
        );
    }
    if over_bytes > 0 {
        diagnostics.warning(
            0,
            format!(
                "{over_bytes} blocks not indexed: the blocks of one file derive at most {MAX_DERIVED_CONTENT_BYTES} bytes of content"
            ),
        );
    }
    (derived, diagnostics.finish())
}

/// The id of the item a block marker derives (see the module documentation).
pub fn marker_id(identity: &str, marker: &Marker, content: &str) -> String {
    let marker_type = marker.marker_type.as_str();
    if marker.marker_type != MarkerType::Signal {
        return vault_id(identity, marker_type, content);
    }
    let source = marker.attr("source").map(str::trim).unwrap_or_default();
    let severity = marker.attr("severity").and_then(|s| s.parse::<Severity>().ok()).unwrap_or(Severity::Info);
    let mut hasher = Sha256::new();
    for part in [identity, marker_type, source, severity.as_str()] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.update(normalize_content(content).as_bytes());
    hash_id(hasher)
}

/// What the ids of a document's items are made from besides type and content: the arc it
/// describes when it has a `cluster_id`, else its path.
pub(crate) fn identity(doc: &VaultDoc) -> Cow<'_, str> {
    match doc.frontmatter.as_ref().and_then(|fm| fm.cluster_id.as_deref()).map(str::trim) {
        Some(cluster_id) if !cluster_id.is_empty() => Cow::Owned(format!("arc:{cluster_id}")),
        _ => Cow::Borrowed(doc.relpath.as_str()),
    }
}

fn importance_of(marker: &Marker) -> u8 {
    if marker.marker_type != MarkerType::Todo {
        return 3;
    }
    match marker.attr("priority").and_then(|priority| priority.trim().parse::<i64>().ok()) {
        Some(1) => 5,
        Some(2) => 4,
        Some(3) => 3,
        _ => 2,
    }
}

/// The first non-blank line, shortened to [`MAX_DERIVED_TITLE_CHARS`] characters.
fn title_of(content: &str) -> String {
    let line = content.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
    match line.char_indices().nth(MAX_DERIVED_TITLE_CHARS) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_string(),
    }
}

/// Trimmed, with every run of whitespace collapsed to one space: reflowing a paragraph keeps
/// its id.
pub fn normalize_content(content: &str) -> String {
    let mut normalized = String::with_capacity(content.len());
    for word in content.split_whitespace() {
        if !normalized.is_empty() {
            normalized.push(' ');
        }
        normalized.push_str(word);
    }
    normalized
}

/// The id of a vault-derived item: `mem_v` + the first 24 hex digits of
/// sha256(identity NUL type NUL normalized content); the identity is `arc:<cluster_id>` or a
/// relpath (see [`VaultDoc::identity`]). Signals add their source and severity
/// ([`marker_id`]).
pub fn vault_id(identity: &str, marker_type: &str, content: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(identity.as_bytes());
    hasher.update([0]);
    hasher.update(marker_type.as_bytes());
    hasher.update([0]);
    hasher.update(normalize_content(content).as_bytes());
    hash_id(hasher)
}

/// The id of an arc: `mem_v` + the first 24 hex digits of sha256("arc" NUL cluster_id). It does
/// not depend on the file's path, so moving an arc (graduation) keeps its id.
pub fn arc_id(cluster_id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"arc\0");
    hasher.update(cluster_id.as_bytes());
    hash_id(hasher)
}

fn hash_id(hasher: Sha256) -> String {
    let digest = hasher.finalize();
    format!("mem_v{}", hex::encode(&digest[..12]))
}
