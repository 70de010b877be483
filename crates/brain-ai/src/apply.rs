//! Phases 4 and 5: apply the accepted proposals through the vault's write rules, then
//! re-read every written file and confirm each change.
//!
//! What may change in a user's file, and how:
//! - an edge: one inline marker `<!-- @edge type=T target=ID by=brain-tick -->` appended on a
//!   line of its own at the end of the source arc (nothing else of the file moves);
//! - a signal escalation: the `severity=` value of its `@signal` opener;
//! - a signal clearance: `severity=resolved` and ` (CLEARED: reason)` at the end of its text,
//!   so the next tick removes the block (the two-tick tombstone lifecycle of SPEC §6.5);
//! - a merge: each absorbed arc becomes `<name>.merged.md` with `merged_into: <survivor>` in
//!   its frontmatter (the rest byte for byte), under the move journal, like `brain vault doctor
//!   --repair`'s tombstones; the survivor is not edited.
//!
//! Every file is read, checked against the hash phase 1 left in the index (else "changed since
//! the scan"), and written with [`fsio::replace_if_unchanged`] / [`fsio::create_new`] +
//! [`fsio::remove_if_unchanged`]. A merge's absorbed files are all prepared (read, checked,
//! computed) before any of them is written, so a refused file refuses the whole merge.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::Path;

use brain_core::tokens::TokenCounter;
use brain_core::vault::{DerivedMarker, derived_items, parse, set_frontmatter_scalar};

use super::proposals::{Plan, ProposalOutcome, SignalChange};
use brain_api::fsio::{create_new, read_optional, remove_if_unchanged, replace_if_unchanged, sha256_hex};
use brain_core::keeper::state::analyze;
use brain_core::keeper::text::{clip, one_line, redacted};
use brain_vault::moves;
use brain_vault::scan::{ChangedFile, Snapshot};

/// What a file must show after the write for each of its changes.
#[derive(Clone, Debug)]
enum Expect {
    Edge { target: String },
    Signal { line: u32, change: SignalChange },
}

/// A user file rewritten in place.
#[derive(Debug)]
struct Rewritten {
    relpath: String,
    bytes: Vec<u8>,
    checks: Vec<(usize, Expect)>,
}

/// An arc turned into a tombstone.
#[derive(Debug)]
struct Tombstoned {
    outcome: usize,
    from: String,
    to: String,
    bytes: Vec<u8>,
}

/// What phase 4 wrote, for phase 5.
#[derive(Debug, Default)]
pub(crate) struct Written {
    rewritten: Vec<Rewritten>,
    tombstoned: Vec<Tombstoned>,
}

fn fail(outcomes: &mut [ProposalOutcome], index: usize, why: String) {
    outcomes[index].status = "failed".into();
    outcomes[index].why = Some(why);
}

/// An absorbed arc ready to become a tombstone: its relpath, the bytes read, the tombstone's
/// text and its relpath.
struct PreparedTombstone {
    from: String,
    bytes: Vec<u8>,
    new: String,
    to: String,
}

/// The bytes a rewrite wrote and what each change must show after it.
type RewriteResult = Result<(Vec<u8>, Vec<(usize, Expect)>), String>;

/// One edit of a file, prepared.
#[derive(Default)]
struct FileEdit {
    edges: Vec<(usize, String, String)>,
    signals: Vec<(usize, String, SignalChange, String)>,
}

/// Applies `plan` to the vault at `root` (phase 4). Outcomes of the accepted proposals become
/// `applied` or `failed` (or `would apply` in a dry run, which writes nothing).
pub(crate) fn apply(
    root: &Path,
    snapshot: &Snapshot,
    plan: &Plan,
    outcomes: &mut [ProposalOutcome],
    dry_run: bool,
) -> Written {
    let mut written = Written::default();
    if dry_run {
        let accepted = plan
            .edges
            .iter()
            .map(|(i, _)| *i)
            .chain(plan.merges.iter().map(|(i, _)| *i))
            .chain(plan.signals.iter().map(|(i, _, _)| *i));
        for index in accepted {
            outcomes[index].status = "would apply".into();
        }
        return written;
    }
    let arc_file = |id: &str| {
        snapshot
            .iter()
            .find(|(_, file)| file.state.arc_owner && file.state.arc.as_ref().is_some_and(|arc| arc.cluster_id == id))
            .map(|(relpath, _)| relpath.clone())
    };
    let signal_file = |id: &str| {
        snapshot
            .iter()
            .find(|(_, file)| file.state.signals.iter().any(|s| s.id == id))
            .map(|(relpath, _)| relpath.clone())
    };

    // In-place edits, grouped by file.
    let mut edits: BTreeMap<String, FileEdit> = BTreeMap::new();
    for (index, edge) in &plan.edges {
        match arc_file(&edge.from) {
            Some(relpath) => {
                edits.entry(relpath).or_default().edges.push((*index, edge.edge_type.clone(), edge.to.clone()))
            }
            None => fail(outcomes, *index, format!("{} is no longer indexed", edge.from)),
        }
    }
    for (index, signal, change) in &plan.signals {
        match signal_file(&signal.signal) {
            Some(relpath) => edits.entry(relpath).or_default().signals.push((
                *index,
                signal.signal.clone(),
                *change,
                signal.reason.clone(),
            )),
            None => fail(outcomes, *index, format!("{} is no longer indexed", signal.signal)),
        }
    }
    for (relpath, edit) in edits {
        let indices: Vec<usize> =
            edit.edges.iter().map(|(i, _, _)| *i).chain(edit.signals.iter().map(|(i, _, _, _)| *i)).collect();
        let expected_sha = snapshot.get(&relpath).map(|file| file.sha256.clone()).unwrap_or_default();
        match rewrite(root, &relpath, &expected_sha, &edit) {
            Ok((bytes, checks)) => {
                for index in &indices {
                    outcomes[*index].status = "applied".into();
                }
                written.rewritten.push(Rewritten { relpath, bytes, checks });
            }
            Err(why) => {
                for index in indices {
                    fail(outcomes, index, format!("{relpath}: {why}"));
                }
            }
        }
    }

    // Merges: every absorbed file prepared first, then all written under one journal.
    let mut taken: HashSet<String> = snapshot.keys().cloned().collect();
    let mut ready: Vec<(usize, Vec<PreparedTombstone>)> = Vec::new();
    for (index, merge) in &plan.merges {
        let mut prepared = Vec::new();
        let mut refused = None;
        for id in &merge.arcs {
            let Some(relpath) = arc_file(id) else {
                refused = Some(format!("{id} is no longer indexed"));
                break;
            };
            let expected_sha = snapshot.get(&relpath).map(|file| file.sha256.clone()).unwrap_or_default();
            match prepare_tombstone(root, &relpath, &expected_sha, &merge.into) {
                Ok((bytes, new)) => {
                    let to = brain_vault::doctor::merged_path(&relpath, &taken);
                    taken.insert(to.clone());
                    prepared.push(PreparedTombstone { from: relpath, bytes, new, to });
                }
                Err(why) => {
                    refused = Some(format!("{relpath}: {why}"));
                    break;
                }
            }
        }
        match refused {
            Some(why) => fail(outcomes, *index, format!("nothing merged: {why}")),
            None => ready.push((*index, prepared)),
        }
    }
    if ready.is_empty() {
        return written;
    }
    let journal: Vec<moves::Move> = ready
        .iter()
        .flat_map(|(_, files)| files.iter())
        .map(|prepared| moves::Move {
            from: prepared.from.clone(),
            to: prepared.to.clone(),
            from_sha256: sha256_hex(&prepared.bytes),
            to_sha256: sha256_hex(prepared.new.as_bytes()),
        })
        .collect();
    if let Err(err) = moves::begin(root, &journal) {
        for (index, _) in &ready {
            fail(outcomes, *index, format!("nothing merged: cannot write the move journal: {err}"));
        }
        return written;
    }
    for (index, files) in ready {
        let mut failures = Vec::new();
        for PreparedTombstone { from, bytes, new, to } in files {
            match commit_tombstone(root, &from, &bytes, &new, &to) {
                Ok(()) => written.tombstoned.push(Tombstoned { outcome: index, from, to, bytes: new.into_bytes() }),
                Err(why) => failures.push(format!("{from}: {why}")),
            }
        }
        if failures.is_empty() {
            outcomes[index].status = "applied".into();
        } else {
            fail(outcomes, index, failures.join("; "));
        }
    }
    // Every move is done (or undone); should the removal fail, the next run finds each move
    // completed and removes the journal.
    let _ = moves::end(root);
    written
}

/// Reads `relpath` (it must hash to `expected_sha`) and computes its edited text.
fn read_checked(root: &Path, relpath: &str, expected_sha: &str) -> Result<(Vec<u8>, String), String> {
    let bytes = match read_optional(&root.join(relpath)) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("left alone: the file disappeared since the scan".into()),
        Err(err) => return Err(format!("left alone: cannot read it: {err}")),
    };
    if sha256_hex(&bytes) != expected_sha {
        return Err("left alone: the file changed since the scan (the next tick picks it up)".into());
    }
    let text = String::from_utf8(bytes.clone()).map_err(|_| "left alone: not valid UTF-8".to_string())?;
    Ok((bytes, text))
}

fn rewrite(root: &Path, relpath: &str, expected_sha: &str, edit: &FileEdit) -> RewriteResult {
    let (bytes, text) = read_checked(root, relpath, expected_sha)?;
    let mut new = text.clone();
    let mut checks = Vec::new();
    if !edit.signals.is_empty() {
        let (doc, _) = parse(relpath, &bytes, usize::MAX);
        let derived = derived_items(&doc, &bytes).0;
        let mut replacements: Vec<(Range<usize>, String)> = Vec::new();
        for (index, id, change, reason) in &edit.signals {
            let marker = derived.iter().find_map(|derived| match derived {
                DerivedMarker::Item(item) if item.id == *id => Some(&doc.markers[item.marker]),
                _ => None,
            });
            let Some(marker) = marker else {
                return Err(format!("left alone: signal {id} is not in the file"));
            };
            let severity = match change {
                SignalChange::Escalate(to) => to.as_str(),
                SignalChange::Clear => "resolved",
            };
            let opener = &text[marker.opener_span.clone()];
            replacements.push((marker.opener_span.clone(), with_attribute(opener, "severity", severity)));
            if *change == SignalChange::Clear {
                let end = marker.content_span.end;
                replacements.push((end..end, format!(" (CLEARED: {})", cleared_reason(reason))));
            }
            checks.push((*index, Expect::Signal { line: marker.line, change: *change }));
        }
        replacements.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
        for (range, replacement) in replacements {
            new.replace_range(range, &replacement);
        }
    }
    if !edit.edges.is_empty() {
        if !new.is_empty() && !new.ends_with('\n') {
            new.push('\n');
        }
        for (index, edge_type, target) in &edit.edges {
            let target_attr = attribute_value(target)
                .ok_or_else(|| format!("left alone: {target:?} cannot be a marker attribute"))?;
            new.push_str(&format!("<!-- @edge type={edge_type} target={target_attr} by=brain-tick -->\n"));
            checks.push((*index, Expect::Edge { target: target.clone() }));
        }
    }
    match replace_if_unchanged(&root.join(relpath), &bytes, new.as_bytes()) {
        Ok(true) => Ok((new.into_bytes(), checks)),
        Ok(false) => Err("left alone: the file changed while the tick was updating it".into()),
        Err(err) => Err(format!("left alone: cannot write it: {err}")),
    }
}

fn prepare_tombstone(root: &Path, relpath: &str, expected_sha: &str, into: &str) -> Result<(Vec<u8>, String), String> {
    let (bytes, text) = read_checked(root, relpath, expected_sha)?;
    let new = set_frontmatter_scalar(&text, "merged_into", into)
        .ok_or("left alone: its `merged_into:` cannot be written in place")?;
    Ok((bytes, new))
}

/// The tombstone first (never over a file), then the original, only if it is still what was
/// read; should it have changed meanwhile, the tombstone goes again.
fn commit_tombstone(root: &Path, from: &str, bytes: &[u8], new: &str, to: &str) -> Result<(), String> {
    let original = root.join(from);
    let target = root.join(to);
    match create_new(&target, new.as_bytes(), Some(&original)) {
        Ok(true) => {}
        Ok(false) => return Err(format!("not merged: {to} already exists")),
        Err(err) => return Err(format!("not merged: cannot write {to}: {err}")),
    }
    match remove_if_unchanged(&original, bytes) {
        Ok(true) => Ok(()),
        Ok(false) => {
            let _ = remove_if_unchanged(&target, new.as_bytes());
            Err("left alone: the file changed while the tick was merging it".into())
        }
        Err(err) => {
            let _ = remove_if_unchanged(&target, new.as_bytes());
            Err(format!("not merged: cannot remove the original: {err}"))
        }
    }
}

/// `opener` with attribute `key` set to `value` (in place when present, else after the type).
pub(crate) fn with_attribute(opener: &str, key: &str, value: &str) -> String {
    let bytes = opener.as_bytes();
    let needle = format!("{key}=");
    let mut search = 0;
    while let Some(found) = opener[search..].find(&needle) {
        let start = search + found;
        let preceded_by_space = start > 0 && bytes[start - 1].is_ascii_whitespace();
        // Inside a quoted value (`source="x severity=y"`) is not an attribute.
        let quoted = opener[..start].bytes().filter(|b| *b == b'"').count() % 2 == 1;
        if !preceded_by_space || quoted {
            search = start + needle.len();
            continue;
        }
        let value_start = start + needle.len();
        let value_end = if bytes.get(value_start) == Some(&b'"') {
            opener[value_start + 1..].find('"').map_or(opener.len(), |end| value_start + 1 + end + 1)
        } else {
            opener[value_start..]
                .find(|c: char| c.is_whitespace() || c == '>')
                .map_or(opener.len(), |end| value_start + end)
                .min(opener[value_start..].find("-->").map_or(opener.len(), |end| value_start + end))
        };
        return format!("{}{value}{}", &opener[..value_start], &opener[value_end..]);
    }
    // No such attribute: after `@type`.
    let at = opener
        .find('@')
        .map_or(0, |at| at + opener[at..].find(|c: char| c.is_whitespace() || c == '-').unwrap_or(opener.len() - at));
    format!("{} {key}={value}{}", &opener[..at], &opener[at..])
}

/// An id as a marker attribute value: bare when it is a plain token, quoted when it has
/// spaces; `None` when it could break the comment.
fn attribute_value(id: &str) -> Option<String> {
    if id.contains(['"', '<', '>', '\n', '\r']) || id.contains("--") && id.contains('>') {
        return None;
    }
    if id.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/')) {
        return Some(id.to_string());
    }
    Some(format!("\"{id}\""))
}

/// The model's reason for a clearance, fit for the user's file: one line, redacted, no
/// marker syntax, at most 200 characters.
fn cleared_reason(reason: &str) -> String {
    let text: String =
        redacted(reason).chars().map(|c| if matches!(c, '<' | '>' | '(' | ')') { ' ' } else { c }).collect();
    let text = clip(&one_line(&text), 200).into_owned();
    if text.is_empty() { "cleared by the AI tick".into() } else { text }
}

/// Phase 5: every written file read back and analysed like a scan; each change confirmed
/// (`verified`) or not (`failed`). Returns the index entries of the files written and the
/// relpaths removed (the merged originals).
pub(crate) fn verify(
    root: &Path,
    written: &Written,
    outcomes: &mut [ProposalOutcome],
    max_bytes: usize,
    counter: TokenCounter,
) -> (Vec<ChangedFile>, Vec<String>) {
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    for file in &written.rewritten {
        let on_disk = read_optional(&root.join(&file.relpath)).ok().flatten();
        let Some(bytes) = on_disk.filter(|bytes| *bytes == file.bytes) else {
            for (index, _) in &file.checks {
                fail(outcomes, *index, format!("{}: the re-scan found other bytes than written", file.relpath));
            }
            continue;
        };
        let analyzed = reindexed(root, &file.relpath, &bytes, max_bytes, counter);
        for (index, expect) in &file.checks {
            let confirmed = match expect {
                Expect::Edge { target } => {
                    analyzed.analyzed.state.arc.as_ref().is_some_and(|arc| arc.edges.iter().any(|edge| edge == target))
                }
                Expect::Signal { line, change } => analyzed.analyzed.state.signals.iter().any(|signal| {
                    signal.line == *line
                        && match change {
                            SignalChange::Escalate(to) => signal.severity() == *to,
                            SignalChange::Clear => signal.tombstone,
                        }
                }),
            };
            if confirmed {
                outcomes[*index].status = "verified".into();
            } else {
                fail(outcomes, *index, format!("{}: the re-scan does not show the change", file.relpath));
            }
        }
        changed.push(analyzed);
    }
    let mut merge_ok: BTreeMap<usize, bool> = BTreeMap::new();
    for tombstone in &written.tombstoned {
        let original_gone = !root.join(&tombstone.from).exists();
        let on_disk = read_optional(&root.join(&tombstone.to)).ok().flatten();
        let ok = original_gone && on_disk.as_deref() == Some(tombstone.bytes.as_slice());
        if ok {
            let entry = reindexed(root, &tombstone.to, &tombstone.bytes, max_bytes, counter);
            if entry.analyzed.state.merged {
                changed.push(entry);
            }
            removed.push(tombstone.from.clone());
        }
        let all = merge_ok.entry(tombstone.outcome).or_insert(true);
        *all &= ok;
    }
    for (index, ok) in merge_ok {
        if outcomes[index].status != "applied" {
            continue;
        }
        if ok {
            outcomes[index].status = "verified".into();
        } else {
            fail(outcomes, index, "the re-scan does not show the tombstone in place of the arc".into());
        }
    }
    (changed, removed)
}

/// The index entry of a file the tick just wrote (recorded as racy, like phase 1's: the next
/// scan confirms its hash once).
fn reindexed(root: &Path, relpath: &str, bytes: &[u8], max_bytes: usize, counter: TokenCounter) -> ChangedFile {
    let mtime_ns = std::fs::metadata(root.join(relpath)).map_or(0, |metadata| brain_vault::walk::mtime_ns(&metadata));
    let analyzed = analyze(relpath, bytes, mtime_ns, max_bytes, counter);
    ChangedFile::new(relpath.to_string(), bytes.len() as u64, 0, sha256_hex(bytes), analyzed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attribute_is_set_in_place_or_added_after_the_type() {
        let set = |opener: &str| with_attribute(opener, "severity", "critical");
        assert_eq!(set("<!-- @signal severity=warning source=ci -->"), "<!-- @signal severity=critical source=ci -->");
        assert_eq!(
            set("<!-- @signal source=ci severity=\"warning\" -->"),
            "<!-- @signal source=ci severity=critical -->"
        );
        assert_eq!(set("<!-- @signal severity=info-->"), "<!-- @signal severity=critical-->");
        assert_eq!(set("<!-- @signal source=ci -->"), "<!-- @signal severity=critical source=ci -->");
        assert_eq!(set("<!-- @signal xseverity=a -->"), "<!-- @signal severity=critical xseverity=a -->");
        assert_eq!(set("<!--@signal-->"), "<!--@signal severity=critical-->");
        assert_eq!(
            set("<!-- @signal source=\"a severity=b\" severity=info -->"),
            "<!-- @signal source=\"a severity=b\" severity=critical -->"
        );
        assert_eq!(attribute_value("2026-11-21-a"), Some("2026-11-21-a".into()));
        assert_eq!(attribute_value("a b"), Some("\"a b\"".into()));
        assert_eq!(attribute_value("a\"b"), None);
        assert_eq!(cleared_reason("fixed (see <b>)"), "fixed see b");
    }
}
