//! `brain mark`, `POST /api/v2/markers` and the MCP `brain_mark` tool: an agent appends one
//! marker block (`lesson`, `signal`, `decision`, `todo`, `inject`) to an arc, or to the vault's
//! inbox note, without editing files by hand.
//!
//! Every write is an append through [`fsio::replace_if_unchanged`] (a concurrent edit of the
//! file is re-read and the append retried, never overwritten), redacted before it is written,
//! and idempotent: a block carries `key=` (given, or a digest of its type, text and
//! attributes), and a key already present in the file writes nothing. Input is bounded and
//! checked before anything is read: the text (size, control characters, no `<!--`/`-->` that
//! would open or close other markers, no code fence that would swallow the closer), every
//! attribute value (a short token), and the arc, named only by its `cluster_id` as indexed —
//! never by a path, so nothing outside the vault's arcs can be reached.

use std::path::{Path, PathBuf};

use brain_core::{Scope, Timestamp};
use serde::Serialize;

use super::scan::{self, Snapshot};
use super::text::redacted;
use super::{Location, fsio};
use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};

/// The longest text a marker block may hold (bytes, after trimming).
pub const MAX_MARK_TEXT_BYTES: usize = 8 * 1024;

/// The longest attribute value (`source=`, `target=`, `key=`) and arc id.
const MAX_TOKEN_CHARS: usize = 128;

/// The note that collects blocks written without an arc, relative to the vault.
pub const INBOX_NOTE: &str = "raw/inbox/brain-marks.md";

/// How often an append is retried when the file keeps changing under it.
const APPEND_ATTEMPTS: usize = 5;

/// The block types an agent may write.
pub const MARK_TYPES: [&str; 5] = ["lesson", "signal", "decision", "todo", "inject"];

/// Signal severities a block may carry.
const SEVERITIES: [&str; 5] = ["info", "warning", "critical", "nuclear", "resolved"];

/// One block to append.
#[derive(Clone, Debug, Default)]
pub struct MarkRequest {
    /// One of [`MARK_TYPES`].
    pub kind: String,
    pub text: String,
    /// The arc's `cluster_id`; `None` writes to the inbox note.
    pub arc: Option<String>,
    /// `signal` only (default `info`).
    pub severity: Option<String>,
    /// `signal` only: where it comes from (`source=`).
    pub source: Option<String>,
    /// `inject` only: the file it steers (`target=`, default `claude.md`).
    pub target: Option<String>,
    /// The idempotency key; by default a digest of the block.
    pub key: Option<String>,
}

/// What a mark did.
#[derive(Clone, Debug, Serialize)]
pub struct MarkOutcome {
    /// The vault-relative file the block is in.
    pub file: String,
    pub key: String,
    /// False when a block with this key was already there (nothing written).
    pub written: bool,
    /// The block, as written (redacted).
    pub block: String,
    /// Whether the index saw the block at once (false while a tick holds the vault: the next
    /// scan or tick indexes it).
    pub indexed: bool,
}

/// A checked request: the block to write and where.
#[derive(Debug)]
struct Block {
    kind: &'static str,
    key: String,
    text: String,
}

/// Appends the block of `request` to its arc (or the inbox) in the vault at `location`, then
/// indexes the vault. `now` dates a new inbox note. `authorize` is asked, before anything is
/// written, with the scope the block's items will have (the arc's `project/<name>`, else
/// `global`); the HTTP API checks the caller's write grant there.
pub fn mark(
    brain: &Brain,
    location: &Location,
    request: &MarkRequest,
    now: Timestamp,
    authorize: &dyn Fn(&Scope) -> BrainResult<()>,
) -> BrainResult<MarkOutcome> {
    let block = check(request)?;
    if request.arc.is_none() {
        authorize(&Scope::Global)?;
    }
    if !location.root.is_dir() {
        return Err(BrainError::user_with_hint(
            format!("no vault at {}", location.root.display()),
            "create it with `brain vault init`, or name it with --vault",
        ));
    }
    let relpath = match request.arc.as_deref() {
        Some(arc) => {
            let (relpath, project) = arc_file(brain, location, arc)?;
            authorize(&if project.is_empty() { Scope::Global } else { Scope::Project(project) })?;
            relpath
        }
        None => INBOX_NOTE.to_string(),
    };
    let path = location.root.join(&relpath);
    let written = append(&path, &block, now)?;
    let indexed = if written { super::scan_unless_busy(brain, location)? } else { true };
    Ok(MarkOutcome { file: relpath, key: block.key.clone(), written, block: render(&block), indexed })
}

/// Validates the request and builds the block (redacted, keyed).
fn check(request: &MarkRequest) -> BrainResult<Block> {
    let kind =
        MARK_TYPES.iter().copied().find(|kind| request.kind.trim().eq_ignore_ascii_case(kind)).ok_or_else(|| {
            BrainError::user(format!("unknown marker type {:?}: one of {}", request.kind, MARK_TYPES.join(", ")))
        })?;
    let text = request.text.trim();
    if text.is_empty() {
        return Err(BrainError::user("the marker's text is empty"));
    }
    if text.len() > MAX_MARK_TEXT_BYTES {
        return Err(BrainError::user(format!(
            "the marker's text is {} bytes; at most {MAX_MARK_TEXT_BYTES} are allowed",
            text.len()
        )));
    }
    if let Some(bad) = text.chars().find(|c| c.is_control() && *c != '\n' && *c != '\t') {
        return Err(BrainError::user(format!("the marker's text holds a control character ({:?})", bad)));
    }
    if text.contains("<!--") || text.contains("-->") {
        return Err(BrainError::user_with_hint(
            "the marker's text holds an HTML comment (`<!--` or `-->`), which would open or close other blocks",
            "write the text without comment delimiters",
        ));
    }
    if text.lines().any(is_fence) {
        return Err(BrainError::user_with_hint(
            "the marker's text holds a code fence (``` or ~~~), which would hide the block's end",
            "indent code by four spaces instead",
        ));
    }
    let mut attrs: Vec<(&str, String)> = Vec::new();
    let only = |name: &str, value: &Option<String>, allowed: bool| -> BrainResult<()> {
        if value.is_some() && !allowed {
            return Err(BrainError::user(format!(
                "{name} applies to {} blocks only",
                if name == "target" { "inject" } else { "signal" }
            )));
        }
        Ok(())
    };
    only("severity", &request.severity, kind == "signal")?;
    only("source", &request.source, kind == "signal")?;
    only("target", &request.target, kind == "inject")?;
    if kind == "signal" {
        let severity = request.severity.as_deref().map(str::trim).unwrap_or("info").to_ascii_lowercase();
        if !SEVERITIES.contains(&severity.as_str()) {
            return Err(BrainError::user(format!("unknown severity {severity:?}: one of {}", SEVERITIES.join(", "))));
        }
        attrs.push(("severity", severity));
        if let Some(source) = &request.source {
            attrs.push(("source", token("source", source)?));
        }
    }
    if kind == "inject" {
        attrs.push(("target", token("target", request.target.as_deref().unwrap_or("claude.md"))?));
    }
    let text = redacted(text).into_owned();
    let key = match &request.key {
        Some(key) => token("key", key)?,
        None => {
            let mut material = format!("{kind}\n{}", brain_core::vault::normalize_content(&text));
            for (name, value) in &attrs {
                material.push_str(&format!("\n{name}={value}"));
            }
            fsio::sha256_hex(material.as_bytes())[..16].to_string()
        }
    };
    let mut opener_attrs: String = attrs.iter().map(|(name, value)| format!(" {name}={value}")).collect();
    opener_attrs.push_str(&format!(" key={key}"));
    Ok(Block { kind, key, text: format!("{opener_attrs}\n{text}") })
}

/// A short attribute value: letters, digits and `._:/@-`, at most [`MAX_TOKEN_CHARS`].
fn token(name: &str, value: &str) -> BrainResult<String> {
    let value = value.trim();
    let valid = !value.is_empty()
        && value.chars().count() <= MAX_TOKEN_CHARS
        && value.chars().all(|c| c.is_ascii_alphanumeric() || "._:/@-".contains(c));
    if !valid {
        return Err(BrainError::user(format!(
            "{name} {value:?} is not a short token (letters, digits and . _ : / @ -, at most {MAX_TOKEN_CHARS})"
        )));
    }
    Ok(value.to_string())
}

/// A CommonMark fence line: up to three spaces, then three or more backticks or tildes.
fn is_fence(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    indent <= 3 && (rest.starts_with("```") || rest.starts_with("~~~"))
}

fn render(block: &Block) -> String {
    let (attrs, text) = block.text.split_once('\n').unwrap_or(("", &block.text));
    format!("<!-- @{}{attrs} -->\n{text}\n<!-- @/{} -->\n", block.kind, block.kind)
}

/// The file of the arc `cluster_id` and its project, from the index (scanned again when the
/// arc is not there yet, so a new arc is found).
fn arc_file(brain: &Brain, location: &Location, cluster_id: &str) -> BrainResult<(String, String)> {
    let cluster_id = token("arc", cluster_id)?;
    if cluster_id.contains('/') || cluster_id.starts_with('.') {
        return Err(BrainError::user(format!("arc {cluster_id:?} is not a cluster_id (no paths)")));
    }
    let mut snapshot = scan::load_snapshot(brain)?;
    if find_arc(&snapshot, &cluster_id).is_none() && super::scan_unless_busy(brain, location)? {
        snapshot = scan::load_snapshot(brain)?;
    }
    find_arc(&snapshot, &cluster_id).ok_or_else(|| BrainError::NotFound {
        message: format!("no arc with cluster_id {cluster_id:?} in the vault's index"),
        hint: Some("GET /api/v2/arcs lists them; leave the arc out to write to the inbox".into()),
    })
}

fn find_arc(snapshot: &Snapshot, cluster_id: &str) -> Option<(String, String)> {
    snapshot
        .iter()
        .filter(|(_, file)| file.state.generated.is_none() && !file.state.merged && !file.state.readonly)
        .find(|(_, file)| file.state.arc.as_ref().is_some_and(|arc| arc.cluster_id == cluster_id))
        .map(|(relpath, file)| (relpath.clone(), file.state.project.clone()))
}

/// Appends `block` to `path` unless its key is there; true when written.
fn append(path: &Path, block: &Block, now: Timestamp) -> BrainResult<bool> {
    let rendered = render(block);
    let io_error = |err: std::io::Error| BrainError::user(format!("cannot write {}: {err}", path.display()));
    for _ in 0..APPEND_ATTEMPTS {
        match fsio::read_optional(path).map_err(io_error)? {
            None => {
                create_parent(path)?;
                let day = now.strftime("%Y-%m-%d");
                let note = format!(
                    "---\ntitle: Inbox\ncreated: {day}\n---\n\n# Inbox\n\nBlocks written by agents (`brain mark`).\n\n{rendered}"
                );
                if fsio::create_new(path, note.as_bytes(), None).map_err(io_error)? {
                    return Ok(true);
                }
            }
            Some(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                if has_key(&text, block.kind, &block.key) {
                    return Ok(false);
                }
                let mut new = bytes.clone();
                if !new.is_empty() && !new.ends_with(b"\n") {
                    new.push(b'\n');
                }
                if !new.is_empty() && !new.ends_with(b"\n\n") {
                    new.push(b'\n');
                }
                new.extend_from_slice(rendered.as_bytes());
                if fsio::replace_if_unchanged(path, &bytes, &new).map_err(io_error)? {
                    return Ok(true);
                }
            }
        }
    }
    Err(BrainError::user_with_hint(
        format!("{} kept changing while the block was appended; nothing was written", path.display()),
        "run the command again",
    ))
}

fn create_parent(path: &Path) -> BrainResult<()> {
    let parent: PathBuf = path.parent().map(Path::to_path_buf).unwrap_or_default();
    std::fs::create_dir_all(&parent)
        .map_err(|err| BrainError::user(format!("cannot create {}: {err}", parent.display())))
}

/// Whether an opener of `kind` with `key=KEY` is in `text`.
fn has_key(text: &str, kind: &str, key: &str) -> bool {
    let opener = format!("@{kind}");
    let attr = format!("key={key}");
    text.lines().any(|line| {
        let line = line.trim();
        line.starts_with("<!--")
            && line.contains(&opener)
            && line.split_whitespace().any(|word| word.trim_end_matches("-->") == attr)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(kind: &str, text: &str) -> MarkRequest {
        MarkRequest { kind: kind.into(), text: text.into(), ..MarkRequest::default() }
    }

    #[test]
    fn a_block_is_keyed_by_its_content_and_redacted() {
        let one = check(&request("lesson", "Back off exponentially.")).unwrap();
        let two = check(&request("Lesson", "  Back off   exponentially. ")).unwrap();
        assert_eq!(one.key, two.key, "the same lesson is the same block");
        assert_ne!(one.key, check(&request("decision", "Back off exponentially.")).unwrap().key);
        let secret = check(&request("lesson", "the key is ghp_abcdefghijklmnopqrstuvwxyz0123456789")).unwrap();
        assert!(!render(&secret).contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "{}", render(&secret));
    }

    #[test]
    fn hostile_text_and_attributes_are_refused() {
        for text in ["", "   ", "a <!-- @signal severity=nuclear --> b", "end -->", "```\ncode", "bell\u{7}"] {
            assert!(check(&request("lesson", text)).is_err(), "{text:?} accepted");
        }
        assert!(check(&request("lesson", &"x".repeat(MAX_MARK_TEXT_BYTES + 1))).is_err());
        assert!(check(&request("script", "text")).is_err());
        let mut signal = request("signal", "CI is red");
        signal.severity = Some("apocalyptic".into());
        assert!(check(&signal).is_err());
        signal.severity = Some("critical".into());
        signal.source = Some("ci --> <!-- @inject".into());
        assert!(check(&signal).is_err());
        let mut lesson = request("lesson", "text");
        lesson.severity = Some("critical".into());
        assert!(check(&lesson).is_err(), "severity is for signals");
    }

    #[test]
    fn a_rendered_block_parses_back_as_one_marker_with_its_attributes() {
        let mut signal = request("signal", "Auth broker ban rate increasing.\n\n    indented code");
        signal.severity = Some("Critical".into());
        signal.source = Some("auth-broker".into());
        let block = check(&signal).unwrap();
        let text = format!("# Inbox\n\n{}", render(&block));
        let (doc, diagnostics) = brain_core::vault::parse("inbox.md", text.as_bytes(), text.len() + 1);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(doc.markers.len(), 1);
        let marker = &doc.markers[0];
        assert_eq!(marker.attr("severity"), Some("critical"));
        assert_eq!(marker.attr("source"), Some("auth-broker"));
        assert_eq!(marker.attr("key"), Some(block.key.as_str()));
        assert!(has_key(&render(&block), "signal", &block.key));
        assert!(!has_key(&render(&block), "lesson", &block.key));
    }
}
