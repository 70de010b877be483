//! `brain vault doctor [--repair]`: a drift audit of the vault's files (not of the index),
//! and the repairs that are safe to make without a person.
//!
//! | problem | found when | `--repair` |
//! |---|---|---|
//! | `interrupted_graduation` | a move journal is waiting (a tick was killed mid-graduation) | finishes it (see [`super::moves`]) |
//! | `duplicate_cluster_id` | two arc files share a `cluster_id` | keeps one (the rule below); the other is removed when it is the same arc (equal but for `heat:`/`status:`), else renamed `<name>.merged.md` with `merged_into:` the kept arc, so nothing the user wrote is lost |
//! | `missing_cluster_id` | a file with frontmatter under `clusters/`, or with `region`, `heat` or `source_sessions`, has no `cluster_id` | adds `cluster_id: <date>-<slug of title>-<8 hex>` (date from `created`, else the file's time) |
//! | `orphaned_pointer` | a generated pointer note names a `cluster_id` no arc has | removes the note when it is byte for byte what the tick writes, in the folder it writes it (`frontal-lobe/conscious` or `unconscious`); a note holding anything else (text a person added or edited) or kept elsewhere is left to a person |
//! | `dangling_tombstone` | a `*.merged.md` tombstone has no `merged_into:`, or names no arc | none: the arc it stood for is gone; a person decides |
//! | `duplicate_edge` | an arc declares the same edge (type and target) twice | removes a repeated `@edge` marker; a repeat inside the frontmatter `edges:` list is left to a person |
//!
//! A pointer note is judged by its own bytes, since the arc it names is gone: it is rendered
//! again from its fields and must come out identical. Text added at the end, in the
//! frontmatter, the heading or the link line, or a second line before the footer, tells it
//! apart; what cannot be told from the tick's output is a one-line summary (a line where
//! the tick writes the arc's summary) — the tick overwrites that line whenever the arc's heat
//! changes anyway, which is why the footer says to edit the arc instead.
//!
//! Which copy of a duplicated arc is kept: the one graduated into its region folder, else one
//! with `status: graduated`, else the most recently modified, else the first by path.
//!
//! Without `--repair` nothing is written (no lock file either). With it, every write is
//! atomic and refused when the file changed since the audit read it; afterwards the vault is
//! audited again and what remains is reported. The index is not touched: the next scan or
//! tick picks the changes up.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::Path;

use brain_core::vault::{Frontmatter, MarkerType, parse, set_frontmatter_scalar};
use serde::Serialize;

use super::fsio::{self, create_new, read_optional, remove_if_unchanged, replace_if_unchanged, sha256_hex};
use super::moves::{self, Recovered};
use super::state::GENERATED_BY;
use super::text::{one_line, slug};
use super::walk::walk;
use super::{Location, tick};
use brain_api::app::Brain;
use brain_api::error::BrainResult;

/// One problem found.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    pub kind: &'static str,
    /// Vault-relative path of the file the problem is in.
    pub file: String,
    pub detail: String,
    /// What `--repair` does about it (or that a person must).
    pub fix: String,
    /// `--repair` fixed it.
    pub repaired: bool,
    /// Why a repair was not made (the file changed since it was read, a write failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_repaired: Option<String>,
}

/// What `brain vault doctor` found (and, with `--repair`, did).
#[derive(Clone, Debug, Serialize)]
pub struct DoctorReport {
    pub vault: String,
    pub repair: bool,
    /// Markdown files audited.
    pub files: usize,
    pub arcs: usize,
    /// Interrupted graduations finished (with `--repair`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<Recovered>,
    pub problems: Vec<Problem>,
    /// Problems still there at the end (after the repairs, by a second audit).
    pub remaining: Vec<Problem>,
}

/// A repair planned for one file.
#[derive(Clone, Debug)]
enum Fix {
    /// Remove the file (a copy of the kept arc, or a generated note).
    Remove,
    /// Rename to `to` (a `.merged.md` tombstone) with `merged_into: cluster_id`.
    Tombstone {
        to: String,
        cluster_id: String,
    },
    SetClusterId(String),
    /// Remove these `@edge` marker blocks.
    RemoveBlocks(Vec<Range<usize>>),
    /// Nothing a program should do.
    Manual,
}

/// What the audit knows of one file.
struct Audited {
    relpath: String,
    mtime_ns: i64,
    bytes: Vec<u8>,
    cluster_id: Option<String>,
    graduated_in_region: bool,
    graduated: bool,
}

/// Frontmatter keys that only an arc has: a file with one of them and no `cluster_id` is an
/// arc that lost its id.
const ARC_KEYS: &[&str] = &["region", "heat", "source_sessions"];

fn scalar<'f>(fm: &'f Frontmatter, key: &str) -> Option<&'f str> {
    fm.get(key).and_then(|entry| entry.value.as_scalar()).map(str::trim).filter(|value| !value.is_empty())
}

/// The audit: problems with their planned fixes (by file), the counts.
struct Audit {
    files: usize,
    arcs: usize,
    problems: Vec<(Problem, Fix, Option<Vec<u8>>)>,
}

fn audit(root: &Path, skip: &[String], max_bytes: usize) -> Audit {
    let walked = walk(root, skip);
    let files = walked.files.len();
    let mut audited: Vec<Audited> = Vec::new();
    let mut pointers: Vec<(String, String, PointerOrigin, Vec<u8>)> = Vec::new();
    let mut tombstones: Vec<(String, Option<String>)> = Vec::new();
    let mut missing: Vec<(String, String, Vec<u8>)> = Vec::new();
    let mut edge_problems: Vec<(Problem, Fix, Option<Vec<u8>>)> = Vec::new();
    for file in &walked.files {
        if file.size > max_bytes as u64 {
            continue;
        }
        let Ok(Some(bytes)) = read_optional(&root.join(&file.relpath)) else { continue };
        let (doc, _) = parse(&file.relpath, &bytes, max_bytes);
        let Some(fm) = doc.frontmatter.as_ref() else { continue };
        if scalar(fm, "generated_by") == Some(GENERATED_BY) {
            if scalar(fm, "brain_note") == Some("pointer") {
                let key = scalar(fm, "brain_key").unwrap_or_default().to_string();
                let origin = pointer_origin(&file.relpath, &bytes, fm);
                pointers.push((file.relpath.clone(), key, origin, bytes));
            }
            continue;
        }
        if file.relpath.ends_with(".merged.md") {
            tombstones.push((file.relpath.clone(), scalar(fm, "merged_into").map(str::to_string)));
            continue;
        }
        let Some(cluster_id) = fm.cluster_id.as_deref().map(str::trim).filter(|id| !id.is_empty()) else {
            if file.relpath.starts_with("clusters/") || ARC_KEYS.iter().any(|key| fm.get(key).is_some()) {
                let id = new_cluster_id(fm, &file.relpath, file.mtime_ns);
                missing.push((file.relpath.clone(), id, bytes));
            }
            continue;
        };
        // Duplicate edges: the frontmatter list first, then the markers in file order.
        let text = doc.text(&bytes);
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut repeated_blocks = Vec::new();
        for edge in &fm.edges {
            let key = (edge.edge_type.as_str().to_string(), edge.target.clone());
            if !seen.insert(key) {
                edge_problems.push((
                    problem(
                        "duplicate_edge",
                        &file.relpath,
                        format!(
                            "edge {} → {} repeated in the frontmatter `edges:` list",
                            edge.edge_type.as_str(),
                            edge.target
                        ),
                        "by hand: remove the repeated entry from `edges:`",
                    ),
                    Fix::Manual,
                    None,
                ));
            }
        }
        for marker in doc.markers.iter().filter(|m| m.marker_type == MarkerType::Edge) {
            let Some(edge) = marker.edge() else { continue };
            if !seen.insert((edge.edge_type.as_str().to_string(), edge.target.clone())) {
                repeated_blocks.push((marker.span.clone(), edge, marker.line));
            }
        }
        if !repeated_blocks.is_empty() && !text.is_empty() {
            let detail = repeated_blocks
                .iter()
                .map(|(_, edge, line)| format!("line {line}: edge {} → {}", edge.edge_type.as_str(), edge.target))
                .collect::<Vec<_>>()
                .join(", ");
            let spans = repeated_blocks.into_iter().map(|(span, _, _)| span).collect();
            edge_problems.push((
                problem(
                    "duplicate_edge",
                    &file.relpath,
                    format!("repeated @edge marker(s): {detail}"),
                    "remove the repeated @edge marker(s)",
                ),
                Fix::RemoveBlocks(spans),
                Some(bytes.clone()),
            ));
        }
        let graduated = scalar(fm, "status") == Some("graduated");
        let region_folder = tick::region_folder(scalar(fm, "region"));
        let graduated_in_region =
            graduated && file.relpath.strip_prefix(region_folder).is_some_and(|rest| rest.starts_with('/'));
        audited.push(Audited {
            relpath: file.relpath.clone(),
            mtime_ns: file.mtime_ns,
            bytes,
            cluster_id: Some(cluster_id.to_string()),
            graduated_in_region,
            graduated,
        });
    }

    let mut by_id: BTreeMap<&str, Vec<&Audited>> = BTreeMap::new();
    for file in &audited {
        if let Some(id) = file.cluster_id.as_deref() {
            by_id.entry(id).or_default().push(file);
        }
    }
    let arcs = by_id.len();
    let mut problems: Vec<(Problem, Fix, Option<Vec<u8>>)> = Vec::new();
    let mut taken_paths: HashSet<String> = walked.files.iter().map(|file| file.relpath.clone()).collect();
    for (cluster_id, copies) in &by_id {
        if copies.len() < 2 {
            continue;
        }
        let keeper = keeper(copies);
        for copy in copies.iter().filter(|copy| copy.relpath != keeper.relpath) {
            let same = same_arc(&copy.bytes, &keeper.bytes);
            let fix = if same {
                Fix::Remove
            } else {
                let to = merged_path(&copy.relpath, &taken_paths);
                taken_paths.insert(to.clone());
                Fix::Tombstone { to, cluster_id: cluster_id.to_string() }
            };
            let fix_text = match &fix {
                Fix::Tombstone { to, .. } => format!("rename to {to} (a tombstone with merged_into: {cluster_id})"),
                _ => "remove it (the same arc, differing only in heat/status)".to_string(),
            };
            problems.push((
                problem(
                    "duplicate_cluster_id",
                    &copy.relpath,
                    format!(
                        "cluster_id {cluster_id} is also in {} (kept: {})",
                        keeper.relpath,
                        keep_reason(keeper, copies)
                    ),
                    &fix_text,
                ),
                fix,
                Some(copy.bytes.clone()),
            ));
        }
    }
    let known: HashSet<&str> = by_id.keys().copied().collect();
    let mut used_ids: HashSet<String> = known.iter().map(|id| id.to_string()).collect();
    for (relpath, id, bytes) in missing {
        let mut id = id;
        let mut n = 2;
        while used_ids.contains(&id) {
            id = format!("{id}-{n}");
            n += 1;
        }
        used_ids.insert(id.clone());
        problems.push((
            problem(
                "missing_cluster_id",
                &relpath,
                "an arc without cluster_id".into(),
                &format!("add cluster_id: {id}"),
            ),
            Fix::SetClusterId(id),
            Some(bytes),
        ));
    }
    for (relpath, key, origin, bytes) in pointers {
        if known.contains(key.as_str()) {
            continue;
        }
        let detail = if key.is_empty() {
            "a pointer note without brain_key".to_string()
        } else {
            format!("a pointer note to {key}, which no arc has")
        };
        let (fix, fix_text) = match origin {
            PointerOrigin::AsGenerated => (Fix::Remove, "remove the note (brain wrote it and it holds nothing else)"),
            PointerOrigin::Edited => (
                Fix::Manual,
                "by hand: it holds text brain did not write (it differs from the note the tick generates); \
                 keep what you need, then delete it",
            ),
            PointerOrigin::Elsewhere => (
                Fix::Manual,
                "by hand: it is outside frontal-lobe/conscious and frontal-lobe/unconscious, where the tick writes \
                 pointer notes, so brain never deletes it; delete it, or remove its `generated_by:` line to keep it \
                 as your own note",
            ),
        };
        problems.push((problem("orphaned_pointer", &relpath, detail, fix_text), fix, Some(bytes)));
    }
    for (relpath, target) in tombstones {
        let detail = match &target {
            None => "a tombstone without merged_into".to_string(),
            Some(id) if !known.contains(id.as_str()) => format!("a tombstone merged into {id}, which no arc has"),
            Some(_) => continue,
        };
        problems.push((
            problem(
                "dangling_tombstone",
                &relpath,
                detail,
                "by hand: point merged_into at the arc that holds it, restore it as an arc, or delete it",
            ),
            Fix::Manual,
            None,
        ));
    }
    problems.extend(edge_problems);
    problems.sort_by(|a, b| a.0.kind.cmp(b.0.kind).then(a.0.file.cmp(&b.0.file)));
    Audit { files, arcs, problems }
}

/// Where a generated pointer note came from, as far as its bytes and path tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PointerOrigin {
    /// Byte for byte what the tick writes, where it writes it: brain's to delete.
    AsGenerated,
    /// In the tick's folder, but not what the tick writes (text added, edited, renamed).
    Edited,
    /// Outside the folders the tick writes pointer notes into: a person put it there.
    Elsewhere,
}

fn pointer_origin(relpath: &str, bytes: &[u8], fm: &Frontmatter) -> PointerOrigin {
    let in_tick_folder = [tick::CONSCIOUS, tick::UNCONSCIOUS].iter().any(|folder| {
        relpath
            .strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|name| !name.contains('/') && name.ends_with(".pointer.md"))
    });
    if !in_tick_folder {
        return PointerOrigin::Elsewhere;
    }
    if pointer_as_generated(relpath, bytes, fm) { PointerOrigin::AsGenerated } else { PointerOrigin::Edited }
}

/// Whether `bytes` are exactly the pointer note the tick would write at `relpath`. The arc
/// the note names is gone, so the note is rendered again from its own fields (frontmatter,
/// link line, summary) and compared byte for byte: text a person added anywhere, or edited
/// in the frontmatter, heading or link line, makes the two differ. The fields are taken
/// loosely; the comparison is what decides.
fn pointer_as_generated(relpath: &str, bytes: &[u8], fm: &Frontmatter) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else { return false };
    let Some(cluster_id) = scalar(fm, "brain_key") else { return false };
    let title = fm.get("title").and_then(|entry| entry.value.as_scalar()).unwrap_or_default();
    let Some(heat) = scalar(fm, "heat").and_then(|heat| heat.parse::<u8>().ok()) else { return false };
    // The link line is the first to start with `[[` after a blank line: the frontmatter has
    // no blank line and the heading is one line.
    let Some(link_line_start) = text.find("\n\n[[").map(|at| at + 2) else { return false };
    let Some(link_line_length) = text[link_line_start..].find('\n') else { return false };
    let link_line = &text[link_line_start + 2..link_line_start + link_line_length];
    let after_link = format!("|{}]] · heat {heat} · ", one_line(title).replace(['|', ']', '['], " "));
    let Some((link, facts)) = link_line.split_once(&after_link) else { return false };
    let Some((region, status)) = facts.split_once(" · ") else { return false };
    let rest = &text[link_line_start + link_line_length + 1..];
    let summary = if rest == tick::POINTER_FOOTER {
        None
    } else {
        let Some(summary) = rest
            .strip_suffix(tick::POINTER_FOOTER)
            .and_then(|rest| rest.strip_prefix('\n'))
            .and_then(|rest| rest.strip_suffix('\n'))
        else {
            return false;
        };
        Some(summary)
    };
    let name = relpath.rsplit('/').next().unwrap_or(relpath);
    if name.strip_suffix(".pointer.md") != Some(tick::stem(&format!("{link}.md"))) {
        return false;
    }
    let rendered =
        tick::render_pointer_note(&tick::PointerNote { cluster_id, title, heat, link, region, status, summary });
    rendered == text
}

fn problem(kind: &'static str, file: &str, detail: String, fix: &str) -> Problem {
    Problem { kind, file: file.to_string(), detail, fix: fix.to_string(), repaired: false, not_repaired: None }
}

/// The copy of an arc that is kept (see the module documentation).
fn keeper<'a>(copies: &[&'a Audited]) -> &'a Audited {
    let mut best = copies[0];
    for copy in &copies[1..] {
        let rank = |file: &Audited| (file.graduated_in_region, file.graduated, file.mtime_ns);
        // Strictly better only: on a tie the first by path (the walk's order) stays.
        if rank(copy) > rank(best) {
            best = copy;
        }
    }
    best
}

fn keep_reason(keeper: &Audited, copies: &[&Audited]) -> &'static str {
    if keeper.graduated_in_region {
        "graduated into its region folder"
    } else if keeper.graduated {
        "graduated"
    } else if copies.iter().any(|copy| copy.mtime_ns != keeper.mtime_ns) {
        "the most recently modified"
    } else {
        "the first by path"
    }
}

/// Equal but for the values of `heat:` and `status:` (what a graduation changes).
fn same_arc(a: &[u8], b: &[u8]) -> bool {
    let normal = |bytes: &[u8]| {
        let text = std::str::from_utf8(bytes).ok()?;
        let text = set_frontmatter_scalar(text, "heat", "0")?;
        set_frontmatter_scalar(&text, "status", "x")
    };
    matches!((normal(a), normal(b)), (Some(a), Some(b)) if a == b)
}

/// `<dir>/<stem>.merged.md`, or `<stem>.merged-2.md`… when taken.
pub fn merged_path(relpath: &str, taken: &HashSet<String>) -> String {
    let base = relpath.strip_suffix(".md").unwrap_or(relpath);
    let mut candidate = format!("{base}.merged.md");
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{base}.{n}.merged.md");
        n += 1;
    }
    candidate
}

/// `<date>-<slug of the title or the file name>-<8 hex of the path's hash>`.
fn new_cluster_id(fm: &Frontmatter, relpath: &str, mtime_ns: i64) -> String {
    let created = fm
        .created
        .map(brain_core::vault::Created::timestamp)
        .unwrap_or_else(|| super::state::timestamp(mtime_ns.div_euclid(1_000_000_000)));
    let date = brain_core::time::format_timestamp(created);
    let date = date.get(..10).unwrap_or("1970-01-01");
    let name = relpath.rsplit('/').next().unwrap_or(relpath);
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let title = fm.title.as_deref().map(str::trim).filter(|title| !title.is_empty()).unwrap_or(stem);
    let mut title_slug = slug(title, 40);
    if title_slug.is_empty() {
        title_slug = "arc".to_string();
    }
    let hash = sha256_hex(relpath.as_bytes());
    format!("{date}-{title_slug}-{}", &hash[..8])
}

/// Applies one fix; the file must still hold `expected`.
fn apply_fix(root: &Path, relpath: &str, fix: &Fix, expected: &[u8]) -> Result<(), String> {
    let path = root.join(relpath);
    let changed = || "the file changed since the audit read it; run the doctor again".to_string();
    let text = || std::str::from_utf8(expected).map_err(|_| "not valid UTF-8".to_string());
    match fix {
        Fix::Manual => Err("needs a person".into()),
        Fix::Remove => match remove_if_unchanged(&path, expected) {
            Ok(true) => Ok(()),
            Ok(false) => Err(changed()),
            Err(err) => Err(format!("cannot remove it: {err}")),
        },
        Fix::SetClusterId(id) => {
            let new = set_frontmatter_scalar(text()?, "cluster_id", id)
                .ok_or("its `cluster_id:` cannot be written in place (not a single value)")?;
            match replace_if_unchanged(&path, expected, new.as_bytes()) {
                Ok(true) => Ok(()),
                Ok(false) => Err(changed()),
                Err(err) => Err(format!("cannot write it: {err}")),
            }
        }
        Fix::RemoveBlocks(spans) => {
            let mut new = text()?.to_string();
            let mut spans = spans.clone();
            spans.sort_by_key(|span| std::cmp::Reverse(span.start));
            for span in spans {
                tick::remove_block(&mut new, span);
            }
            match replace_if_unchanged(&path, expected, new.as_bytes()) {
                Ok(true) => Ok(()),
                Ok(false) => Err(changed()),
                Err(err) => Err(format!("cannot write it: {err}")),
            }
        }
        Fix::Tombstone { to, cluster_id } => {
            let new = set_frontmatter_scalar(text()?, "merged_into", cluster_id)
                .ok_or("its `merged_into:` cannot be written in place")?;
            let target = root.join(to);
            // The tombstone first (never over a file), then the original; should the
            // original have changed meanwhile, the tombstone goes again.
            match create_new(&target, new.as_bytes(), Some(&path)) {
                Ok(true) => {}
                Ok(false) => return Err(format!("{to} appeared meanwhile; run the doctor again")),
                Err(err) => return Err(format!("cannot write {to}: {err}")),
            }
            match remove_if_unchanged(&path, expected) {
                Ok(true) => Ok(()),
                Ok(false) => {
                    let _ = remove_if_unchanged(&target, new.as_bytes());
                    Err(changed())
                }
                Err(err) => {
                    let _ = remove_if_unchanged(&target, new.as_bytes());
                    Err(format!("cannot remove it: {err}"))
                }
            }
        }
    }
}

/// Audits the vault and, with `repair`, fixes what can be fixed.
pub fn vault_doctor(brain: &Brain, location: &Location, repair: bool) -> BrainResult<DoctorReport> {
    let _lock = fsio::lock(brain.home(), repair)?;
    let root = &location.root;
    let max_bytes = brain.config().vault.max_file_bytes;
    let mut recovered = Vec::new();
    if repair {
        fsio::sweep_stale_temps(root);
        recovered = moves::recover(root);
    }
    let pending = moves::pending(root);
    let Audit { files, arcs, problems } = audit(root, &location.skip, max_bytes);
    let interrupted = || {
        problem(
            "interrupted_graduation",
            moves::JOURNAL,
            "a tick was killed while graduating arcs; its moves are half done".into(),
            "finish the moves (the next tick or scan does it too)",
        )
    };
    let mut found: Vec<Problem> = Vec::new();
    if pending {
        found.push(interrupted());
    }
    for (mut problem, fix, expected) in problems {
        if repair && !matches!(fix, Fix::Manual) {
            match apply_fix(root, &problem.file, &fix, expected.as_deref().unwrap_or_default()) {
                Ok(()) => problem.repaired = true,
                Err(reason) => problem.not_repaired = Some(reason),
            }
        }
        found.push(problem);
    }
    let remaining = if repair {
        let mut again: Vec<Problem> =
            audit(root, &location.skip, max_bytes).problems.into_iter().map(|p| p.0).collect();
        if moves::pending(root) {
            again.insert(0, interrupted());
        }
        again
    } else {
        found.clone()
    };
    Ok(DoctorReport { vault: root.display().to_string(), repair, files, arcs, recovered, problems: found, remaining })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_that_differ_only_in_heat_and_status_are_the_same_arc() {
        let a = b"---\ncluster_id: x\nheat: 4\nstatus: active\n---\nBody.\n";
        let b = b"---\ncluster_id: x\nheat: 0\nstatus: graduated\n---\nBody.\n";
        let c = b"---\ncluster_id: x\nheat: 0\nstatus: graduated\n---\nBody, edited.\n";
        assert!(same_arc(a, b));
        assert!(!same_arc(a, c));
    }

    #[test]
    fn a_repair_is_refused_when_the_file_changed_since_the_audit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "---\ntitle: A\n---\nedited\n").unwrap();
        let read = b"---\ntitle: A\n---\nas read\n";
        let err = apply_fix(dir.path(), "a.md", &Fix::Remove, read).unwrap_err();
        assert!(err.contains("changed since the audit"), "{err}");
        let err = apply_fix(dir.path(), "a.md", &Fix::SetClusterId("x".into()), read).unwrap_err();
        assert!(err.contains("changed since the audit"), "{err}");
        let tombstone = Fix::Tombstone { to: "a.merged.md".into(), cluster_id: "x".into() };
        assert!(apply_fix(dir.path(), "a.md", &tombstone, read).is_err());
        assert_eq!(std::fs::read_to_string(dir.path().join("a.md")).unwrap(), "---\ntitle: A\n---\nedited\n");
        assert!(!dir.path().join("a.merged.md").exists(), "the tombstone went again");
    }

    /// The origin of `text` at `relpath`, as the audit judges it.
    fn origin_of(relpath: &str, text: &str) -> PointerOrigin {
        let (doc, _) = parse(relpath, text.as_bytes(), 1 << 20);
        pointer_origin(relpath, text.as_bytes(), doc.frontmatter.as_ref().unwrap())
    }

    #[test]
    fn a_pointer_note_is_brains_to_delete_only_when_it_is_exactly_what_the_tick_writes() {
        let long_title = format!("Why \"retries\" [need] a | cap \\ backoff, é {}", "x".repeat(300));
        let notes = [
            ("2026-09-01-gone", "Gone", Some("Fixed by backoff"), "left-hemisphere", "active"),
            ("a\"quoted\\id", long_title.as_str(), None, "-", "-"),
            ("plain", "Plain", Some(""), "a · b", "stalled"),
        ];
        for (cluster_id, title, summary, region, status) in notes {
            let link = format!("clusters/2026-09-01/{}", cluster_id.replace(['"', '\\'], "-"));
            let note = tick::PointerNote { cluster_id, title, heat: 8, link: &link, region, status, summary };
            let generated = tick::render_pointer_note(&note);
            let name = format!("{}.pointer.md", tick::stem(&format!("{link}.md")));
            let conscious = format!("frontal-lobe/conscious/{name}");
            assert_eq!(origin_of(&conscious, &generated), PointerOrigin::AsGenerated, "{generated}");
            assert_eq!(origin_of(&format!("frontal-lobe/unconscious/{name}"), &generated), PointerOrigin::AsGenerated);

            let mut edits = vec![
                format!("{generated}\nMy own notes.\n"),
                generated.replace("\n---\n", "\ntags: [mine]\n---\n"),
                generated.replacen("\n# ", "\n# My ", 1),
                generated.replace(tick::POINTER_FOOTER, &format!("\nMy notes.\nMore.\n{}", tick::POINTER_FOOTER)),
                generated.replace(tick::POINTER_FOOTER, "\n"),
                generated.replace('\n', "\r\n"),
                generated.replace("heat: 8", "heat: 9"),
            ];
            // One line where a summary goes is one only in a note without a summary (where it
            // reads as one: the limit the module documentation names).
            if summary.is_some() {
                edits.push(
                    generated.replace(tick::POINTER_FOOTER, &format!("\nA line of mine.\n{}", tick::POINTER_FOOTER)),
                );
            }
            for edited in edits {
                assert_eq!(origin_of(&conscious, &edited), PointerOrigin::Edited, "{edited}");
            }
            assert_eq!(origin_of("frontal-lobe/conscious/renamed.pointer.md", &generated), PointerOrigin::Edited);
            for elsewhere in
                [format!("notes/{name}"), format!("frontal-lobe/conscious/sub/{name}"), "frontal-lobe/x.md".into()]
            {
                assert_eq!(origin_of(&elsewhere, &generated), PointerOrigin::Elsewhere, "{elsewhere}");
            }
        }
    }

    #[test]
    fn the_kept_copy_is_the_graduated_one_then_the_newest_then_the_first() {
        let file = |relpath: &str, mtime_ns: i64, graduated: bool, in_region: bool| Audited {
            relpath: relpath.into(),
            mtime_ns,
            bytes: Vec::new(),
            cluster_id: Some("x".into()),
            graduated_in_region: in_region,
            graduated,
        };
        let (a, b, c) =
            (file("a.md", 5, false, false), file("b.md", 9, false, false), file("left/c.md", 1, true, true));
        assert_eq!(keeper(&[&a, &b, &c]).relpath, "left/c.md");
        assert_eq!(keeper(&[&a, &b]).relpath, "b.md");
        let d = file("d.md", 5, false, false);
        assert_eq!(keeper(&[&a, &d]).relpath, "a.md");
        assert_eq!(merged_path("clusters/a.md", &HashSet::new()), "clusters/a.merged.md");
        let taken: HashSet<String> = ["clusters/a.merged.md".to_string()].into();
        assert_eq!(merged_path("clusters/a.md", &taken), "clusters/a.2.merged.md");
    }
}
