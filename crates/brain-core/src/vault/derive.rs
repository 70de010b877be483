//! Vault-derived items (SPEC §2.3): what each block marker becomes, with content-stable ids.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use super::VaultDoc;
use super::markers::{Marker, MarkerType};
use crate::item::{Kind, Severity};

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
    /// The marker content, trimmed, as written.
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

/// The items a document's block markers become, in file order. Inline markers (no content),
/// `@edge` and unknown types derive nothing; a block identical to an earlier one (same type and
/// normalized content, hence the same id) is skipped.
pub fn derived_items(doc: &VaultDoc) -> Vec<DerivedMarker> {
    let mut seen = HashSet::new();
    let mut derived = Vec::new();
    for (index, marker) in doc.markers.iter().enumerate() {
        if !marker.closed || marker.content.is_empty() {
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
        let id = vault_id(&doc.relpath, marker.marker_type.as_str(), &marker.content);
        if !seen.insert(id.clone()) {
            continue;
        }
        let Some(kind) = kind else {
            derived.push(DerivedMarker::Inject(DerivedInject {
                id,
                marker: index,
                target: marker.attr("target").map(str::trim).filter(|target| !target.is_empty()).map(str::to_string),
                ttl_days: marker.attr("ttl_days").and_then(|ttl| ttl.trim().parse().ok()),
                content: marker.content.clone(),
                line: marker.line,
            }));
            continue;
        };
        let is_signal = marker.marker_type == MarkerType::Signal;
        derived.push(DerivedMarker::Item(DerivedItem {
            id,
            marker: index,
            kind,
            title: title_of(&marker.content),
            content: marker.content.clone(),
            importance: importance_of(marker),
            severity: is_signal.then(|| marker.attr("severity").and_then(|s| s.parse().ok()).unwrap_or(Severity::Info)),
            signal_source: if is_signal { marker.attr("source").map(str::to_string) } else { None },
            heat: match marker.marker_type {
                MarkerType::Hot => {
                    marker.attr("heat").and_then(|heat| heat.trim().parse().ok()).filter(|&heat| heat <= 10)
                }
                _ => None,
            },
            line: marker.line,
        }));
    }
    derived
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
/// sha256(relpath NUL type NUL normalized content).
pub fn vault_id(relpath: &str, marker_type: &str, content: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(relpath.as_bytes());
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
