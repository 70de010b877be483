//! Planning the inbox's drain and the generated notes (pointer notes, amygdala notes,
//! dashboards): what the tick would write, decided from the index alone.

use super::*;

/// The folder whose notes are drained into region folders (SPEC §6.1 `raw/inbox`).
pub(crate) const INBOX: &str = "raw/inbox";

/// Where a drained inbox note goes, by its first tag that names one (as the reference
/// engine's keeper does); notes without such a tag go to `left`.
pub(crate) const TAG_FOLDERS: &[(&str, &str)] = &[
    ("architecture", "left"),
    ("infrastructure", "left"),
    ("deployment", "left"),
    ("code", "left"),
    ("bug", "left"),
    ("fix", "left"),
    ("ci", "left"),
    ("database", "left"),
    ("api", "left"),
    ("security", "left"),
    ("research", "left/research"),
    ("incident", "left/incidents"),
    ("decision", "left/decisions"),
    ("reference", "left/reference"),
    ("idea", "right/ideas"),
    ("strategy", "right/strategy"),
    ("creative", "right/creative"),
    ("vision", "right"),
    ("risk", "right/risk"),
    ("life", "right/life"),
    ("brain-system", "bridge"),
    ("cross-cutting", "bridge"),
];

/// A name is tried with at most this many numeric suffixes before a drain is skipped.
pub(crate) const MAX_NAME_SUFFIX: usize = 100;

/// The tags of a note's frontmatter (a list, or one comma-separated value), lowercased, and
/// whether it has a `status:`.
pub(crate) fn inbox_note(bytes: &[u8], relpath: &str) -> (Vec<String>, bool) {
    let (doc, _) = parse(relpath, bytes, usize::MAX);
    let Some(fm) = doc.frontmatter.as_ref() else { return (Vec::new(), false) };
    let tags = match fm.get("tags").map(|entry| &entry.value) {
        Some(brain_core::vault::FmValue::List(items)) => {
            items.iter().filter_map(|item| item.as_scalar()).map(|tag| tag.trim().to_lowercase()).collect()
        }
        Some(value) => value
            .as_scalar()
            .map(|text| text.split(',').map(|tag| tag.trim().to_lowercase()).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    };
    (tags, fm.get("status").is_some())
}

/// Plans the drain of `raw/inbox`: every note directly in it (but brain mark's own inbox
/// note, which agents keep appending to) moves into the folder its tags name, with
/// `region:` set (and `status: active` when it has none), under the same rules as a
/// graduation (read again and checked against the scan, journaled, never over a file). A
/// name taken in the target folder gets the first free `-2`, `-3`, … suffix.
pub(crate) fn plan_inbox(
    root: &Path,
    snapshot: &Snapshot,
    edits: &mut BTreeMap<String, FileEdit>,
    planned_targets: &mut HashSet<String>,
    skipped: &mut Vec<Skipped>,
) -> Vec<InboxMove> {
    let mut drained = Vec::new();
    let prefix = format!("{INBOX}/");
    for (relpath, file) in snapshot.range(prefix.clone()..) {
        let Some(name) = relpath.strip_prefix(&prefix) else { break };
        if name.contains('/') || !name.ends_with(".md") || relpath == crate::mark::INBOX_NOTE {
            continue;
        }
        if file.state.generated.is_some() || file.state.merged {
            continue;
        }
        let leave = |reason: String, skipped: &mut Vec<Skipped>| {
            skipped.push(Skipped { path: relpath.clone(), reason: format!("not drained from the inbox: {reason}") })
        };
        if file.state.readonly {
            leave("not valid UTF-8 text".into(), skipped);
            continue;
        }
        if edits.get(relpath).is_some_and(|edit| edit.move_to.is_some()) {
            continue;
        }
        let bytes = match read_optional(&root.join(relpath)) {
            Ok(Some(bytes)) if sha256_hex(&bytes) == file.sha256 => bytes,
            Ok(Some(_)) => {
                leave("it changed since the scan (the next tick picks it up)".into(), skipped);
                continue;
            }
            Ok(None) => continue,
            Err(err) => {
                leave(format!("cannot read it: {err}"), skipped);
                continue;
            }
        };
        let (tags, has_status) = inbox_note(&bytes, relpath);
        let chosen = tags.iter().find_map(|tag| TAG_FOLDERS.iter().find(|(name, _)| name == tag));
        let folder = chosen.map_or("left", |(_, folder)| *folder);
        let region = match folder.split('/').next() {
            Some("right") => "right-hemisphere",
            Some("bridge") => "bridge",
            _ => "left-hemisphere",
        };
        let stem = name.strip_suffix(".md").unwrap_or(name);
        let free = |candidate: &String| {
            !snapshot.contains_key(candidate)
                && !planned_targets.contains(candidate)
                && std::fs::symlink_metadata(root.join(candidate)).is_err()
        };
        let target = (1..=MAX_NAME_SUFFIX)
            .map(|n| if n == 1 { format!("{folder}/{name}") } else { format!("{folder}/{stem}-{n}.md") })
            .find(|candidate| free(candidate));
        let Some(target) = target else {
            leave(format!("{folder}/{name} and its numbered variants are taken"), skipped);
            continue;
        };
        planned_targets.insert(target.clone());
        let edit = edits.entry(relpath.clone()).or_insert_with(|| FileEdit {
            relpath: relpath.clone(),
            sha256: file.sha256.clone(),
            ..FileEdit::default()
        });
        edit.move_to = Some(target.clone());
        edit.set_region = Some(region);
        edit.set_active = !has_status;
        drained.push(InboxMove { from: relpath.clone(), to: target, tag: chosen.map(|(tag, _)| tag.to_string()) });
    }
    drained
}

/// The folder an arc of `region` graduates into.
pub(crate) fn region_folder(region: Option<&str>) -> &'static str {
    match region {
        Some("right-hemisphere") => "right",
        Some("amygdala") => "amygdala",
        Some("pineal") => "pineal",
        Some("bridge") => "bridge",
        // Technical memory is the default home (left hemisphere), frontal-lobe included:
        // that folder holds generated notes only.
        _ => "left",
    }
}

/// Plans the pointer notes (promotion, demotion) and the amygdala notes.
pub(crate) fn plan_notes(
    snapshot: &Snapshot,
    views: &[ArcView<'_>],
    active: &[ActiveSignal<'_>],
    moved: &HashMap<&str, &str>,
    config: &crate::VaultConfig,
    skipped: &mut Vec<Skipped>,
) -> (Vec<NoteOp>, Vec<ArcMove>, Vec<ArcMove>) {
    // Existing generated notes: pointer notes by cluster id, signal notes by relpath. Only
    // those in the folders the tick writes them into: a copy a person keeps elsewhere is
    // theirs, never rewritten or removed (issue 27).
    let mut pointers: HashMap<&str, Vec<(&str, Lobe)>> = HashMap::new();
    let mut signal_notes: Vec<&str> = Vec::new();
    for (relpath, file) in snapshot {
        let Some(generated) = &file.state.generated else { continue };
        if !in_generated_folder(relpath, &generated.note) {
            continue;
        }
        match generated.note.as_str() {
            "pointer" => {
                let lobe =
                    if relpath.starts_with(&format!("{UNCONSCIOUS}/")) { Lobe::Unconscious } else { Lobe::Conscious };
                pointers.entry(generated.key.as_str()).or_default().push((relpath.as_str(), lobe));
            }
            "signal" | "dashboard" => signal_notes.push(relpath.as_str()),
            _ => {}
        }
    }
    let mut ops = Vec::new();
    let mut wanted: HashSet<String> = HashSet::new();
    let mut promotions = Vec::new();
    let mut demotions = Vec::new();
    let write = |relpath: String, content: String, ops: &mut Vec<NoteOp>, skipped: &mut Vec<Skipped>| match snapshot
        .get(&relpath)
    {
        Some(file) if file.state.generated.is_none() => skipped.push(Skipped {
            path: relpath,
            reason: "not replaced: the file exists and was not generated by brain".into(),
        }),
        Some(file) if file.sha256 == sha256_hex(content.as_bytes()) => {}
        Some(file) => ops.push(NoteOp::Write { relpath, content, existing_sha: Some(file.sha256.clone()) }),
        None => ops.push(NoteOp::Write { relpath, content, existing_sha: None }),
    };
    for view in views {
        let current: Option<Lobe> = pointers.get(view.arc.cluster_id.as_str()).and_then(|notes| {
            notes.iter().map(|(_, lobe)| *lobe).find(|lobe| *lobe == Lobe::Conscious).or(Some(notes[0].1))
        });
        let desired = if view.graduated {
            None
        } else if view.heat >= config.promote_heat {
            Some(Lobe::Conscious)
        } else if view.heat < config.demote_heat {
            current.map(|_| Lobe::Unconscious)
        } else {
            current
        };
        let moved_to = moved.get(view.relpath).copied().unwrap_or(view.relpath);
        let summary =
            || ArcMove { cluster_id: view.arc.cluster_id.clone(), title: view.arc.title.clone(), heat: view.heat };
        if desired == Some(Lobe::Conscious) && current != Some(Lobe::Conscious) {
            promotions.push(summary());
        }
        if desired == Some(Lobe::Unconscious) && current == Some(Lobe::Conscious) {
            demotions.push(summary());
        }
        if let Some(lobe) = desired {
            let relpath = pointer_relpath(lobe, moved_to);
            wanted.insert(relpath.clone());
            write(relpath, render_pointer(view, moved_to), &mut ops, skipped);
        }
    }
    for signal in
        active.iter().filter(|s| matches!(s.severity, brain_core::Severity::Critical | brain_core::Severity::Nuclear))
    {
        let relpath = signal_relpath(signal);
        if !wanted.insert(relpath.clone()) {
            continue;
        }
        // A signal of an arc graduating in this tick links to where the arc goes.
        let arc_relpath = moved.get(signal.relpath).copied().unwrap_or(signal.relpath);
        write(relpath, render_signal_note(signal, arc_relpath), &mut ops, skipped);
    }
    for (relpath, content) in render_dashboards(views, moved) {
        wanted.insert(relpath.clone());
        write(relpath, content, &mut ops, skipped);
    }
    let mut removals: Vec<&str> = pointers.values().flatten().map(|(relpath, _)| *relpath).collect();
    removals.extend(signal_notes);
    removals.sort_unstable();
    for relpath in removals {
        if !wanted.contains(relpath) {
            ops.push(NoteOp::Remove { relpath: relpath.to_string(), sha256: snapshot[relpath].sha256.clone() });
        }
    }
    (ops, promotions, demotions)
}

/// Whether `relpath` is where the tick writes a generated note of kind `note`: a pointer
/// directly in a frontal-lobe folder, a signal note directly in `amygdala/`, a dashboard in
/// a date folder of `clusters/`.
pub(crate) fn in_generated_folder(relpath: &str, note: &str) -> bool {
    let directly_in = |folder: &str| {
        relpath.strip_prefix(folder).and_then(|rest| rest.strip_prefix('/')).is_some_and(|name| !name.contains('/'))
    };
    match note {
        "pointer" => directly_in(CONSCIOUS) || directly_in(UNCONSCIOUS),
        "signal" => directly_in(AMYGDALA),
        "dashboard" => relpath
            .strip_prefix("clusters/")
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(folder, name)| !folder.is_empty() && name == DASHBOARD),
        _ => false,
    }
}
