//! What one vault file contributes, as stored in the index (`vault_files.state`): its arc,
//! the ids of the items its markers became, its signals and inject blocks. [`analyze`] turns
//! the bytes of a file into that state plus the items to index; it never fails.

use crate::item::{MAX_CONTENT_CHARS, MAX_TITLE_CHARS};
use crate::tokens::TokenCounter;
use crate::vault::{
    Created, DerivedMarker, Diagnostic, DiagnosticSeverity, Frontmatter, FrontmatterEntry, Marker, derived_items, parse,
};
use crate::{Item, Kind, Scope, Severity, Status, Timestamp, ValidationError};
use serde::{Deserialize, Serialize};

use super::text::{one_line, redacted, without_private};

/// Frontmatter value `generated_by:` of the notes the tick writes (pointer notes, amygdala
/// signal files). Only files carrying it are ever rewritten or removed by the tick.
pub const GENERATED_BY: &str = "brain-tick";

/// The parser's binary test: a NUL byte within the first 8 KiB.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Source prefix of vault-derived items: `vault:<relpath>`.
pub const SOURCE_PREFIX: &str = "vault:";

/// A file's entry in the index, stored in postcard's encoding (see [`FileState::to_bytes`]):
/// fields are written in order and not named, so a field added, removed or moved makes a
/// new [`super::scan::INDEX_FORMAT`] (every file is then parsed again once).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileState {
    /// Oversized or binary: nothing was read from it.
    pub skipped: bool,
    /// A `*.merged.md` tombstone of an arc merged into another: not indexed.
    pub merged: bool,
    /// A note the tick generated (frontmatter `generated_by: brain-tick`).
    pub generated: Option<GeneratedNote>,
    /// Binary, oversized or not valid UTF-8: the tick never edits it (heat, status,
    /// tombstones need the whole text).
    pub readonly: bool,
    /// `project:` of the frontmatter; items are scoped `project/<it>`, else `global`.
    pub project: String,
    /// Boxed: most entries of an index are arcs, but the states kept beside others (a
    /// tick's old states, the snapshot's tree nodes, vectors grown by doubling) are sized by
    /// the inline part.
    pub arc: Option<Box<ArcState>>,
    /// This file is the one indexed for its `cluster_id` (the first by path when several
    /// files share one).
    pub arc_owner: bool,
    /// Ids of the items the file's block markers became (the arc item not included).
    pub items: Vec<String>,
    pub signals: Vec<SignalState>,
    pub injects: Vec<InjectState>,
    pub lessons: u32,
}

/// A generated note: `brain_note:` (`pointer` or `signal`) and what it points at.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratedNote {
    pub note: String,
    pub key: String,
}

/// The frontmatter of an arc, reduced to what the tick needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArcState {
    pub cluster_id: String,
    pub title: String,
    pub region: Option<String>,
    pub status: Option<String>,
    /// `heat:` as written in the file (`None` when absent or unreadable).
    pub heat: Option<u8>,
    /// Seconds since the epoch.
    pub created: i64,
    pub summary: Option<String>,
    pub synthesized: bool,
    pub sessions: u32,
    pub tools: u32,
    pub joy: u32,
    pub replayed_from: Vec<String>,
    /// Targets of the frontmatter `edges` and the `@edge` markers.
    pub edges: Vec<String>,
    /// `mitigates:` (a name or a list): the sources or ids of signals this arc resolves; the
    /// signals it names leave the feed wherever they are written.
    pub mitigates: Vec<String>,
    /// The agent hosts of the arc's sessions (`hosts:`, written by capture).
    pub hosts: Vec<String>,
}

impl FileState {
    /// The stored form: postcard (varint lengths and numbers, no field names). Decoding ~11k
    /// states at every tick is why it is not JSON (a third of a steady tick at 10k arcs).
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serializing owned strings, vectors and integers into a vector cannot fail.
        postcard::to_allocvec(self).unwrap_or_default()
    }

    /// A stored state back; `None` when the bytes are not one (empty, damaged, or written
    /// under another [`super::scan::INDEX_FORMAT`]): the file is parsed again.
    pub fn from_bytes(bytes: &[u8]) -> Option<FileState> {
        match postcard::take_from_bytes::<FileState>(bytes) {
            Ok((state, [])) => Some(state),
            _ => None,
        }
    }
}

impl ArcState {
    pub fn is_graduated(&self) -> bool {
        self.status.as_deref() == Some("graduated")
    }
}

/// An `@signal` block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignalState {
    pub id: String,
    pub severity: String,
    pub source: Option<String>,
    pub text: String,
    /// Seconds: `date=` of the marker, else the file's `created`.
    pub since: i64,
    /// Resolved and `(CLEARED:` in the text: hidden, and removed from the file by the tick.
    pub tombstone: bool,
    /// `scope=global` on the marker: shown to every project, not only the arc's.
    pub global: bool,
    pub verify: Option<String>,
    pub line: u32,
}

impl SignalState {
    pub fn severity(&self) -> Severity {
        self.severity.parse().unwrap_or(Severity::Info)
    }
}

/// An `@inject` block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InjectState {
    pub id: String,
    pub target: String,
    pub content: String,
    pub since: i64,
    pub ttl_days: Option<u32>,
}

/// A diagnostic as stored in `vault_files.diagnostics` (the file is the row's relpath).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredDiagnostic {
    pub line: u32,
    pub severity: String,
    pub message: String,
}

/// Diagnostics to the stored JSON form (empty text when there are none).
pub fn diagnostics_to_json(diagnostics: &[Diagnostic]) -> String {
    if diagnostics.is_empty() {
        return String::new();
    }
    let stored: Vec<StoredDiagnostic> = diagnostics
        .iter()
        .map(|d| StoredDiagnostic { line: d.line, severity: d.severity.as_str().into(), message: d.message.clone() })
        .collect();
    serde_json::to_string(&stored).unwrap_or_default()
}

/// The stored JSON form back to diagnostics of `relpath`.
pub fn diagnostics_from_json(relpath: &str, text: &str) -> Vec<Diagnostic> {
    if text.is_empty() {
        return Vec::new();
    }
    let stored: Vec<StoredDiagnostic> = serde_json::from_str(text).unwrap_or_default();
    stored
        .into_iter()
        .map(|d| Diagnostic {
            file: relpath.to_string(),
            line: d.line,
            severity: match d.severity.as_str() {
                "error" => DiagnosticSeverity::Error,
                "warning" => DiagnosticSeverity::Warning,
                _ => DiagnosticSeverity::Info,
            },
            message: d.message,
        })
        .collect()
}

/// A file turned into index state, the items its markers became, and its diagnostics.
#[derive(Clone, Debug, Default)]
pub struct Analyzed {
    pub state: FileState,
    pub items: Vec<Item>,
    pub diagnostics: Vec<Diagnostic>,
}

fn seconds(timestamp: Timestamp) -> i64 {
    timestamp.as_second()
}

pub fn timestamp(seconds: i64) -> Timestamp {
    Timestamp::from_second(seconds).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn mtime_timestamp(mtime_ns: i64) -> Timestamp {
    timestamp(mtime_ns.div_euclid(1_000_000_000))
}

/// A file too large to read: indexed as skipped, with a diagnostic.
pub fn oversized(relpath: &str, size: u64, max_bytes: usize) -> Analyzed {
    Analyzed {
        state: FileState { skipped: true, readonly: true, ..FileState::default() },
        items: Vec::new(),
        diagnostics: vec![Diagnostic {
            file: relpath.to_string(),
            line: 0,
            severity: DiagnosticSeverity::Warning,
            message: format!("file is {size} bytes, over the {max_bytes}-byte limit; not parsed"),
        }],
    }
}

/// Parses one file and derives its index state and items. Never fails: whatever cannot be
/// indexed becomes a diagnostic.
pub fn analyze(relpath: &str, bytes: &[u8], mtime_ns: i64, max_bytes: usize, counter: TokenCounter) -> Analyzed {
    let (doc, mut diagnostics) = parse(relpath, bytes, max_bytes);
    let (derived_markers, derive_diagnostics) = derived_items(&doc, bytes);
    diagnostics.extend(derive_diagnostics);
    let mut state = FileState::default();
    // The parser reads nothing of these (its diagnostics say why).
    let binary_or_oversized = bytes.len() > max_bytes || bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0);
    state.skipped = binary_or_oversized;
    state.readonly = binary_or_oversized || std::str::from_utf8(bytes).is_err();
    let mut note = |severity: DiagnosticSeverity, line: u32, message: String| {
        diagnostics.push(Diagnostic { file: relpath.to_string(), line, severity, message });
    };
    let frontmatter = doc.frontmatter.as_ref();
    let mtime = mtime_timestamp(mtime_ns);
    let cluster_id = frontmatter.and_then(|fm| fm.cluster_id.as_deref()).map(str::trim).filter(|id| !id.is_empty());
    let created = frontmatter
        .and_then(|fm| fm.created)
        .map(Created::timestamp)
        .or_else(|| cluster_id.and_then(date_prefix))
        .unwrap_or(mtime);
    if let Some(fm) = frontmatter
        && scalar(fm.get("generated_by")) == Some(GENERATED_BY)
    {
        state.generated = Some(GeneratedNote {
            note: scalar(fm.get("brain_note")).unwrap_or_default().to_string(),
            key: scalar(fm.get("brain_key")).unwrap_or_default().to_string(),
        });
        return Analyzed { state, items: Vec::new(), diagnostics };
    }
    if let Some(folder) = adopted_dashboard(relpath, bytes) {
        state.generated = Some(GeneratedNote { note: "dashboard".into(), key: folder.to_string() });
        return Analyzed { state, items: Vec::new(), diagnostics };
    }
    if relpath.ends_with(".merged.md") {
        state.merged = true;
        return Analyzed { state, items: Vec::new(), diagnostics };
    }
    if let Some(entry) = frontmatter.and_then(|fm| fm.get("project"))
        && let Some(project) = entry.value.as_scalar().map(str::trim).filter(|p| !p.is_empty())
    {
        match crate::scope::validate_scope_name(project) {
            Ok(()) => state.project = project.to_string(),
            Err(why) => note(
                DiagnosticSeverity::Warning,
                entry.line,
                format!("project {project:?} is not a valid project name ({why}); items are global"),
            ),
        }
    }
    if let (Some(fm), Some(cluster_id)) = (frontmatter, cluster_id) {
        state.arc = Some(Box::new(arc_state(fm, cluster_id, created, &doc.markers)));
    }
    let scope = file_scope(&state);
    let source = format!("{SOURCE_PREFIX}{relpath}");
    let mut items = Vec::new();
    for derived in derived_markers {
        match derived {
            DerivedMarker::Inject(inject) => {
                let marker = &doc.markers[inject.marker];
                state.injects.push(InjectState {
                    id: inject.id,
                    target: inject.target.unwrap_or_else(|| "claude.md".to_string()),
                    content: without_private(&inject.content).into_owned(),
                    since: seconds(marker_date(marker).unwrap_or(created)),
                    ttl_days: inject.ttl_days,
                });
            }
            DerivedMarker::Item(derived) => {
                let marker = &doc.markers[derived.marker];
                let date = marker_date(marker).unwrap_or(created);
                // `scope=global` on a signal: every project's feed shows it, and its item is
                // global (anyone may read it by id); else it is its arc's, like every block.
                let global_signal = derived.kind == Kind::Signal
                    && marker.attr("scope").is_some_and(|scope| scope.trim().eq_ignore_ascii_case("global"));
                if derived.kind == Kind::Signal {
                    let severity = derived.severity.unwrap_or(Severity::Info);
                    state.signals.push(SignalState {
                        id: derived.id.clone(),
                        severity: severity.as_str().to_string(),
                        source: derived.signal_source.clone().filter(|s| !s.trim().is_empty()),
                        text: without_private(&derived.content).into_owned(),
                        since: seconds(date),
                        tombstone: severity == Severity::Resolved && derived.content.contains("(CLEARED:"),
                        global: global_signal,
                        verify: marker.attr("verify").map(str::to_string).filter(|v| !v.trim().is_empty()),
                        line: derived.line,
                    });
                }
                if derived.kind == Kind::Lesson {
                    state.lessons += 1;
                }
                let importance = match derived.heat {
                    Some(heat) if heat >= 8 => 5,
                    Some(heat) if heat >= 6 => 4,
                    _ => derived.importance,
                };
                let tags: Vec<String> = match marker.marker_type.as_str() {
                    "hot" | "milestone" => vec![marker.marker_type.as_str().to_string()],
                    _ => Vec::new(),
                };
                let (mut content, title) = match without_private(&derived.content) {
                    std::borrow::Cow::Borrowed(_) => (derived.content, derived.title),
                    std::borrow::Cow::Owned(public) => {
                        let title = first_line_title(&public);
                        (public, title)
                    }
                };
                if content.trim().is_empty() {
                    note(
                        DiagnosticSeverity::Info,
                        derived.line,
                        format!("@{} block is all private; not indexed", marker.marker_type.as_str()),
                    );
                    continue;
                }
                if content.chars().count() > MAX_CONTENT_CHARS {
                    note(
                        DiagnosticSeverity::Warning,
                        derived.line,
                        format!(
                            "@{} block longer than {MAX_CONTENT_CHARS} characters; indexed cut",
                            marker.marker_type.as_str()
                        ),
                    );
                    content = content.chars().take(MAX_CONTENT_CHARS).collect();
                }
                let spec = ItemSpec {
                    id: derived.id,
                    kind: derived.kind,
                    title,
                    content,
                    importance,
                    severity: derived.severity,
                    tags,
                    created: date,
                };
                let item_scope = if global_signal { &Scope::Global } else { &scope };
                match vault_item(spec, item_scope, &source, counter) {
                    Ok(item) => {
                        state.items.push(item.id.clone());
                        items.push(item);
                    }
                    Err(err) => note(
                        DiagnosticSeverity::Warning,
                        derived.line,
                        format!("@{} block not indexed: {err}", marker.marker_type.as_str()),
                    ),
                }
            }
        }
    }
    Analyzed { state, items, diagnostics }
}

/// A date folder's `_dashboard.md` in the shape clusterers write (no frontmatter, opening
/// with `# Cluster Dashboard`): a generated file the tick takes over and rewrites. Its folder.
fn adopted_dashboard<'r>(relpath: &'r str, bytes: &[u8]) -> Option<&'r str> {
    let folder = relpath.strip_suffix("/_dashboard.md")?;
    let name = folder.strip_prefix("clusters/")?;
    (!name.is_empty() && !name.contains('/') && bytes.starts_with(b"# Cluster Dashboard")).then_some(folder)
}

/// The first non-blank line, at most 100 characters (how derived titles are made).
fn first_line_title(content: &str) -> String {
    let line = content.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
    match line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_string(),
    }
}

fn scalar(entry: Option<&FrontmatterEntry>) -> Option<&str> {
    entry.and_then(|entry| entry.value.as_scalar()).map(str::trim)
}

fn arc_state(fm: &Frontmatter, cluster_id: &str, created: Timestamp, markers: &[Marker]) -> ArcState {
    let signals = fm.signals.unwrap_or_default();
    let mut edges: Vec<String> = fm.edges.iter().map(|edge| edge.target.clone()).collect();
    edges.extend(markers.iter().filter_map(Marker::edge).map(|edge| edge.target));
    ArcState {
        cluster_id: cluster_id.to_string(),
        title: fm
            .title
            .as_deref()
            .map(|title| redacted(title).trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| cluster_id.to_string()),
        region: fm.region.map(|region| region.as_str().to_string()),
        status: fm.status.map(|status| status.as_str().to_string()),
        heat: fm.heat,
        created: seconds(created),
        summary: fm.summary.as_deref().map(|summary| redacted(summary).trim().to_string()).filter(|s| !s.is_empty()),
        synthesized: fm.synthesized.unwrap_or(false),
        sessions: u32::try_from(fm.source_sessions.len()).unwrap_or(u32::MAX),
        tools: signals.tools,
        joy: signals.joy,
        replayed_from: fm.replayed_from.iter().map(|id| id.trim().to_string()).filter(|id| !id.is_empty()).collect(),
        edges,
        mitigates: mitigates_of(fm),
        hosts: hosts_of(fm),
    }
}

/// `mitigates:` as a list of trimmed names (a scalar is a list of one; at most 64 kept).
fn mitigates_of(fm: &Frontmatter) -> Vec<String> {
    let names: Vec<&str> = match fm.get("mitigates").map(|entry| &entry.value) {
        Some(crate::vault::FmValue::List(items)) => items.iter().filter_map(|item| item.as_scalar()).collect(),
        Some(value) => value.as_scalar().into_iter().collect(),
        None => Vec::new(),
    };
    names.into_iter().map(str::trim).filter(|name| !name.is_empty()).take(64).map(str::to_string).collect()
}

/// The known agent hosts listed under `hosts:` (anything else is ignored).
fn hosts_of(fm: &Frontmatter) -> Vec<String> {
    let Some(crate::vault::FmValue::List(items)) = fm.get("hosts").map(|entry| &entry.value) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| item.as_scalar())
        .filter_map(|name| name.trim().parse::<crate::host::Host>().ok())
        .map(|host| host.to_string())
        .collect()
}

/// `2026-04-09-…` → midnight UTC of that date.
fn date_prefix(cluster_id: &str) -> Option<Timestamp> {
    let date: jiff::civil::Date = cluster_id.get(..10)?.parse().ok()?;
    Some(Created::Date(date).timestamp())
}

/// The `date=` (or `since=`) attribute of a marker: a date or an RFC 3339 timestamp.
fn marker_date(marker: &Marker) -> Option<Timestamp> {
    let text = marker.attr("date").or_else(|| marker.attr("since"))?.trim();
    if let Ok(timestamp) = text.parse::<Timestamp>() {
        return Some(timestamp);
    }
    text.parse::<jiff::civil::Date>().ok().map(|date| Created::Date(date).timestamp())
}

/// The scope of a file's items.
pub fn file_scope(state: &FileState) -> Scope {
    if state.project.is_empty() { Scope::Global } else { Scope::Project(state.project.clone()) }
}

struct ItemSpec {
    id: String,
    kind: Kind,
    title: String,
    content: String,
    importance: u8,
    severity: Option<Severity>,
    tags: Vec<String>,
    created: Timestamp,
}

/// A vault-derived item: approved by construction, read-only through the API, dated from
/// the file (so recency means the age of the knowledge, not of the scan). The content is
/// the user's own text, redacted at derivation (`derived_items`; arc titles and summaries in
/// `arc_state`) like every other text that reaches an agent; it is validated and its tokens
/// counted like every other item.
fn vault_item(spec: ItemSpec, scope: &Scope, source: &str, counter: TokenCounter) -> Result<Item, ValidationError> {
    let (strength, decay_rate) = spec.kind.default_strength();
    // Whole seconds, as the store keeps them: a `created:` with a fraction would otherwise
    // never compare equal to the stored item, and every re-parse of its file would rewrite
    // all its items (and their full-text entries).
    let created = timestamp(spec.created.as_second());
    let mut item = Item {
        id: spec.id,
        scope: scope.clone(),
        kind: spec.kind,
        schema_key: spec.kind.default_schema_key(),
        title: spec.title,
        content: spec.content,
        rationale: None,
        confidence: 0.7,
        importance: spec.importance,
        status: Status::Approved,
        severity: spec.severity,
        pinned: false,
        pin_priority: 0,
        stable: false,
        strength,
        decay_rate,
        tags: spec.tags,
        files: Vec::new(),
        evidence: Vec::new(),
        dedup_hint: None,
        supersedes: None,
        superseded_by: None,
        valid_from: None,
        valid_until: None,
        source: source.to_string(),
        created_at: created,
        updated_at: created,
        last_accessed_at: None,
        access_count: 0,
        review_due_at: None,
        review_count: 0,
        tokens: 0,
        version: 1,
    };
    item.validate()?;
    item.tokens = u32::try_from(counter.count(&item.rendered_text())).unwrap_or(u32::MAX);
    Ok(item)
}

/// The item of an arc (kind `arc`, id from its `cluster_id`): its title and summary.
pub fn arc_item(relpath: &str, state: &FileState, counter: TokenCounter) -> Option<Result<Item, ValidationError>> {
    let arc = state.arc.as_ref()?;
    // Redacted whole, then cut: a secret cut in half no longer looks like one.
    let title: String = one_line(&crate::redact::redact_str(&arc.title)).chars().take(MAX_TITLE_CHARS).collect();
    let spec = ItemSpec {
        id: crate::vault::arc_id(&arc.cluster_id),
        kind: Kind::Arc,
        title,
        content: arc.summary.clone().unwrap_or_default(),
        importance: 3,
        severity: None,
        tags: Vec::new(),
        created: timestamp(arc.created),
    };
    Some(vault_item(spec, &file_scope(state), &format!("{SOURCE_PREFIX}{relpath}"), counter))
}

/// True when `stored` already holds everything the index would write for `wanted` (access
/// bookkeeping and version are not the index's business).
pub fn same_indexed_fields(stored: &Item, wanted: &Item) -> bool {
    stored.source == wanted.source && same_but_source(stored, wanted)
}

/// True when `stored` differs from `wanted` in its source alone (a file moved and edited in
/// the same tick): [`WriteTx::move_source`](brain_store::WriteTx::move_source) re-sources it
/// without rewriting its text or its full-text entry.
pub fn moved_only(stored: &Item, wanted: &Item) -> bool {
    stored.source != wanted.source && same_but_source(stored, wanted)
}

/// The index's fields of `stored` and `wanted` but the source are equal.
fn same_but_source(stored: &Item, wanted: &Item) -> bool {
    stored.scope == wanted.scope
        && stored.kind == wanted.kind
        && stored.schema_key == wanted.schema_key
        && stored.title == wanted.title
        && stored.content == wanted.content
        && stored.importance == wanted.importance
        && stored.severity == wanted.severity
        && stored.status == wanted.status
        && stored.tags == wanted.tags
        && stored.created_at == wanted.created_at
        && stored.updated_at == wanted.updated_at
        && stored.tokens == wanted.tokens
}

/// `stored` with the index's fields taken from `wanted`, keeping access bookkeeping.
pub fn with_indexed_fields(stored: &Item, wanted: &Item) -> Item {
    Item {
        access_count: stored.access_count,
        last_accessed_at: stored.last_accessed_at,
        review_due_at: stored.review_due_at,
        review_count: stored.review_count,
        strength: stored.strength,
        version: stored.version,
        ..wanted.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARC: &str = "---\ncluster_id: 2026-11-20-fix-retry-abc\ntitle: Fix retry\nregion: left\nstatus: active\n\
        heat: 4\nproject: api\nsource_sessions: [a, b]\nsignals: {errors: 1, joy: 2, tools: 2500}\n\
        replayed_from: 2026-11-01-old\n---\n\n<!-- @lesson -->\nAlways back off.\n<!-- @/lesson -->\n\n\
        <!-- @signal severity=resolved source=ci -->\nCI red (CLEARED: fixed)\n<!-- @/signal -->\n\n\
        <!-- @signal severity=critical source=db verify=\"pg_isready -q\" date=2026-11-19 -->\nDB down\n<!-- @/signal -->\n\n\
        <!-- @inject target=claude.md ttl_days=3 -->\nShip it.\n<!-- @/inject -->\n\n\
        <!-- @hot heat=9 -->\nRetry storm.\n<!-- @/hot -->\n<!-- @edge type=parent target=2026-11-01-old -->\n";

    #[test]
    fn a_stored_state_reads_back_whole_and_anything_else_reads_as_none() {
        let mut state = analyze("clusters/2026-11-20/a.md", ARC.as_bytes(), 0, 1 << 20, TokenCounter::Heuristic).state;
        state.generated = Some(GeneratedNote { note: "pointer".into(), key: "k".into() });
        state.arc_owner = true;
        assert!(!state.signals.is_empty() && !state.injects.is_empty() && state.arc.is_some());
        let bytes = state.to_bytes();
        assert_eq!(FileState::from_bytes(&bytes), Some(state.clone()));
        assert_eq!(FileState::from_bytes(&FileState::default().to_bytes()), Some(FileState::default()));
        // What an index of an older format holds (JSON), nothing, a cut or a longer state:
        // parsed again by the next scan, never taken for a state.
        assert_eq!(FileState::from_bytes(br#"{"project":"api","items":["mem_1"]}"#), None);
        assert_eq!(FileState::from_bytes(b""), None);
        assert_eq!(FileState::from_bytes(&bytes[..bytes.len() - 1]), None);
        assert_eq!(FileState::from_bytes(&[bytes.as_slice(), &[0]].concat()), None);
    }

    #[test]
    fn an_arc_becomes_state_items_signals_and_injects() {
        let analyzed = analyze("clusters/2026-11-20/a.md", ARC.as_bytes(), 0, 1 << 20, TokenCounter::Heuristic);
        let state = &analyzed.state;
        assert!(!state.readonly && !state.skipped && state.generated.is_none());
        assert_eq!(state.project, "api");
        let arc = state.arc.as_ref().unwrap();
        assert_eq!(
            (arc.title.as_str(), arc.region.as_deref(), arc.status.as_deref()),
            ("Fix retry", Some("left-hemisphere"), Some("active"))
        );
        assert_eq!((arc.heat, arc.sessions, arc.tools, arc.joy), (Some(4), 2, 2500, 2));
        assert_eq!(arc.replayed_from, ["2026-11-01-old"]);
        assert_eq!(arc.edges, ["2026-11-01-old"]);
        // created falls back to the date in cluster_id.
        assert_eq!(timestamp(arc.created).to_string(), "2026-11-20T00:00:00Z");
        let kinds: Vec<Kind> = analyzed.items.iter().map(|item| item.kind).collect();
        assert_eq!(kinds, [Kind::Lesson, Kind::Signal, Kind::Signal, Kind::Note]);
        assert!(analyzed.items.iter().all(|item| item.source == "vault:clusters/2026-11-20/a.md"
            && item.scope == Scope::Project("api".into())
            && item.status == Status::Approved));
        assert_eq!(analyzed.items[3].importance, 5, "@hot heat=9 ranks as importance 5");
        assert_eq!(state.items.len(), 4);
        assert_eq!(state.lessons, 1);
        assert!(state.signals[0].tombstone && !state.signals[1].tombstone);
        assert_eq!(state.signals[1].verify.as_deref(), Some("pg_isready -q"));
        assert_eq!(timestamp(state.signals[1].since).to_string(), "2026-11-19T00:00:00Z");
        assert_eq!((state.injects[0].target.as_str(), state.injects[0].ttl_days), ("claude.md", Some(3)));
        let arc_item = arc_item("clusters/2026-11-20/a.md", state, TokenCounter::Heuristic).unwrap().unwrap();
        assert_eq!((arc_item.kind, arc_item.title.as_str()), (Kind::Arc, "Fix retry"));
        assert_eq!(arc_item.id, crate::vault::arc_id("2026-11-20-fix-retry-abc"));
    }

    #[test]
    fn generated_notes_merged_tombstones_and_binary_files_derive_nothing() {
        let generated = "---\ngenerated_by: brain-tick\nbrain_note: pointer\nbrain_key: x\ncluster_id: x\n---\n<!-- @lesson -->\nno\n<!-- @/lesson -->\n";
        let analyzed =
            analyze("frontal-lobe/conscious/x.pointer.md", generated.as_bytes(), 0, 1 << 20, TokenCounter::Heuristic);
        assert_eq!(analyzed.state.generated, Some(GeneratedNote { note: "pointer".into(), key: "x".into() }));
        assert!(analyzed.items.is_empty() && analyzed.state.arc.is_none());
        let merged = analyze("clusters/d/x.merged.md", ARC.as_bytes(), 0, 1 << 20, TokenCounter::Heuristic);
        assert!(merged.state.merged && merged.items.is_empty() && merged.state.arc.is_none());
        let binary = analyze("b.md", b"abc\0def", 0, 1 << 20, TokenCounter::Heuristic);
        assert!(binary.state.skipped && binary.state.readonly);
        assert!(binary.diagnostics[0].message.contains("binary"), "{:?}", binary.diagnostics);
        let invalid =
            analyze("u.md", b"<!-- @lesson -->\nok\n<!-- @/lesson -->\n\xff", 0, 1 << 20, TokenCounter::Heuristic);
        assert!(invalid.state.readonly, "a file with invalid UTF-8 is never rewritten");
        assert_eq!(invalid.items.len(), 1, "what parsed before the bad byte is still indexed");
    }
}
