//! The staged commit of a tick's writes: every user-file edit and generated note is staged
//! beside its target (a temp file, or an in-place range within one sector), then committed
//! under the changed-since-read guard, and the index told what was written.

use super::*;

/// An edit computed and not yet written: the file's path, the bytes read and the new text.
pub(crate) struct Prepared {
    pub(crate) path: PathBuf,
    pub(crate) old: Vec<u8>,
    pub(crate) new: String,
}

/// Reads the file of an edit (it must be what the scan indexed) and computes its new text.
pub(crate) fn prepare_edit(root: &Path, edit: &FileEdit) -> Result<Prepared, String> {
    let path = root.join(&edit.relpath);
    let bytes = match read_optional(&path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("left alone: the file disappeared since the scan".into()),
        Err(err) => return Err(format!("left alone: cannot read it: {err}")),
    };
    if sha256_hex(&bytes) != edit.sha256 {
        return Err("left alone: the file changed since the scan (the next tick picks it up)".into());
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err("left alone: not valid UTF-8".into());
    };
    let mut new = text.to_string();
    if !edit.tombstones.is_empty() {
        let (doc, _) = parse(&edit.relpath, &bytes, usize::MAX);
        let mut spans: Vec<Range<usize>> = derived_items(&doc, &bytes)
            .0
            .into_iter()
            .filter_map(|derived| match derived {
                DerivedMarker::Item(item) if edit.tombstones.contains(&item.id) => {
                    Some(doc.markers[item.marker].span.clone())
                }
                _ => None,
            })
            .collect();
        spans.sort_by_key(|span| std::cmp::Reverse(span.start));
        let mut removed_from = usize::MAX;
        for span in spans {
            // Blocks nested in an already removed block went with it.
            if span.end > removed_from {
                continue;
            }
            removed_from = remove_block(&mut new, span);
        }
    }
    if let Some(heat) = edit.set_heat {
        new = set_frontmatter_scalar(&new, "heat", &heat.to_string())
            .ok_or("left alone: its `heat:` cannot be rewritten in place (not a single value)")?;
    }
    if edit.graduate {
        new = set_frontmatter_scalar(&new, "status", "graduated")
            .ok_or("left alone: its `status:` cannot be rewritten in place (not a single value)")?;
    }
    // A drained note without frontmatter (or with a `region:` that is not one value) moves
    // as it is: its folder says where it belongs.
    if let Some(region) = edit.set_region {
        new = set_frontmatter_scalar(&new, "region", region).unwrap_or(new);
    }
    if edit.set_active {
        new = set_frontmatter_scalar(&new, "status", "active").unwrap_or(new);
    }
    Ok(Prepared { path, old: bytes, new })
}

/// Bytes of one disk sector: a write within one is never torn by a crash.
pub(crate) const SECTOR: usize = 512;

/// The one range of bytes where `new` differs from `old` when both have the same length and
/// the range lies within one sector (a new `heat:` digit): such an edit is written in place,
/// and a crash leaves the file either as it was or as the tick made it.
pub(crate) fn in_place_range(old: &[u8], new: &[u8]) -> Option<Range<usize>> {
    if old.len() != new.len() {
        return None;
    }
    let start = old.iter().zip(new).position(|(a, b)| a != b)?;
    let end = old.len() - old.iter().rev().zip(new.iter().rev()).position(|(a, b)| a != b)?;
    (start / SECTOR == (end - 1) / SECTOR).then_some(start..end)
}

/// A write whose new bytes wait in a temp file beside their destination (not yet synced,
/// not yet in place), with the index entry they make.
pub(crate) struct Staged {
    pub(crate) temp: PathBuf,
    pub(crate) new_sha256: String,
    pub(crate) changed: ChangedFile,
}

/// An edit ready to be put in place: staged in a temp file, or (an edit of a few bytes of
/// one sector that leaves the length, no move) the new text, written in place at commit.
pub(crate) enum StagedEdit {
    Temp(Box<Staged>),
    InPlace { new: String, range: Range<usize> },
}

/// How the index entry of a written file is made: `(relpath, bytes, a path to stat)`.
pub(crate) type Reindex<'a> = &'a (dyn Fn(&str, &[u8], &Path) -> ChangedFile + Sync);

/// Computes an edit and stages its new bytes (beside the target of a move), or keeps the
/// new text of an edit written in place (see [`in_place_range`]; Unix).
pub(crate) fn stage_edit(root: &Path, edit: &FileEdit, reindex: Reindex<'_>) -> Result<StagedEdit, String> {
    let Prepared { path, old, new } = prepare_edit(root, edit)?;
    if cfg!(unix)
        && edit.move_to.is_none()
        && let Some(range) = in_place_range(&old, new.as_bytes())
    {
        return Ok(StagedEdit::InPlace { new, range });
    }
    drop(old);
    let relpath = edit.move_to.as_deref().unwrap_or(&edit.relpath);
    let temp = fsio::stage(&root.join(relpath), new.as_bytes(), Some(&path)).map_err(|err| match &edit.move_to {
        Some(target) => format!("not graduated: cannot write {target}: {err}"),
        None => format!("left alone: cannot write it: {err}"),
    })?;
    let changed = reindex(relpath, new.as_bytes(), &temp);
    Ok(StagedEdit::Temp(Box::new(Staged { temp, new_sha256: sha256_hex(new.as_bytes()), changed })))
}

/// Writes an edit of a few bytes in place if the file still holds what was read, then
/// makes its index entry (dated by the file as written).
pub(crate) fn commit_in_place(
    root: &Path,
    edit: &FileEdit,
    new: &str,
    range: Range<usize>,
    before_write: Option<&(dyn Fn(&Path) + Sync)>,
    reindex: Reindex<'_>,
) -> Result<ChangedFile, String> {
    let path = root.join(&edit.relpath);
    if let Some(hook) = before_write {
        hook(&path);
    }
    #[cfg(unix)]
    let written = fsio::patch_in_place(&path, &edit.sha256, range.start as u64, &new.as_bytes()[range]);
    #[cfg(not(unix))]
    let written: std::io::Result<bool> = {
        let _ = range;
        Err(std::io::Error::other("in-place writes need Unix"))
    };
    match written {
        Ok(true) => Ok(reindex(&edit.relpath, new.as_bytes(), &path)),
        Ok(false) => Err("left alone: the file changed while the tick was updating it".into()),
        Err(err) => Err(format!("left alone: cannot write it: {err}")),
    }
}

/// Puts a staged edit in place: renamed over the file if it still holds what was read, or,
/// for a graduation that moves the file, linked in at the target (never over an existing
/// file) and then the original removed if it still holds what was read. A move runs only
/// under the journal of [`crate::moves`].
pub(crate) fn commit_edit(
    root: &Path,
    edit: &FileEdit,
    temp: &Path,
    new_sha256: &str,
    before_write: Option<&(dyn Fn(&Path) + Sync)>,
) -> Result<(), String> {
    let path = root.join(&edit.relpath);
    if let Some(hook) = before_write {
        hook(&path);
    }
    let changed = || "left alone: the file changed while the tick was updating it".to_string();
    match &edit.move_to {
        None => match fsio::replace_staged(&path, temp, &edit.sha256) {
            Ok(true) => Ok(()),
            Ok(false) => Err(changed()),
            Err(err) => Err(format!("left alone: cannot write it: {err}")),
        },
        Some(target_relpath) => {
            let target = root.join(target_relpath);
            match fsio::create_staged(&target, temp) {
                Ok(true) => {}
                Ok(false) => return Err(format!("not graduated: {target_relpath} already exists")),
                Err(err) => return Err(format!("not graduated: cannot write {target_relpath}: {err}")),
            }
            // The copy exists; the original goes only if nobody touched it meanwhile.
            match fsio::remove_if_hash(&path, &edit.sha256) {
                Ok(true) => Ok(()),
                Ok(false) => {
                    let _ = fsio::remove_if_hash(&target, new_sha256);
                    Err(changed())
                }
                Err(err) => {
                    let _ = fsio::remove_if_hash(&target, new_sha256);
                    Err(format!("not graduated: cannot remove the original: {err}"))
                }
            }
        }
    }
}

/// Stages a generated note to write (removals stage nothing).
pub(crate) fn stage_note(root: &Path, op: &NoteOp, reindex: Reindex<'_>) -> Result<Option<Staged>, (String, String)> {
    let NoteOp::Write { relpath, content, .. } = op else { return Ok(None) };
    let temp = fsio::stage(&root.join(relpath), content.as_bytes(), None)
        .map_err(|err| (relpath.clone(), format!("not written: {err}")))?;
    let changed = reindex(relpath, content.as_bytes(), &temp);
    Ok(Some(Staged { temp, new_sha256: sha256_hex(content.as_bytes()), changed }))
}

/// What [`commit_note`] did: the index entry of the note written (`None` for a removal), or
/// the relpath and why it was skipped.
pub(crate) type NoteOutcome = Result<Option<ChangedFile>, (String, String)>;

/// Puts a staged note in place, or removes a note, never over a file changed since the scan.
pub(crate) fn commit_note(root: &Path, op: &NoteOp, staged: Option<Staged>) -> NoteOutcome {
    match (op, staged) {
        (NoteOp::Write { relpath, existing_sha, .. }, Some(staged)) => {
            let path = root.join(relpath);
            let result = match existing_sha {
                None => fsio::create_staged(&path, &staged.temp)
                    .map(|created| created.then_some(()).ok_or("not written: the file appeared since the scan")),
                Some(sha) => fsio::replace_staged(&path, &staged.temp, sha)
                    .map(|replaced| replaced.then_some(()).ok_or("not written: the file changed since the scan")),
            };
            match result {
                Ok(Ok(())) => Ok(Some(staged.changed)),
                Ok(Err(reason)) => Err((relpath.clone(), reason.to_string())),
                Err(err) => Err((relpath.clone(), format!("not written: {err}"))),
            }
        }
        (NoteOp::Write { relpath, .. }, None) => Err((relpath.clone(), "not written: not staged".into())),
        (NoteOp::Remove { relpath, sha256 }, _) => match fsio::remove_if_hash(&root.join(relpath), sha256) {
            Ok(true) => Ok(None),
            Ok(false) => Err((relpath.clone(), "not removed: the file changed since the scan".into())),
            Err(err) => Err((relpath.clone(), format!("not removed: {err}"))),
        },
    }
}

/// Writes the edits of user files and the generated notes (results in their order) in three
/// steps: every new text is computed and staged in a temp file beside its destination (on
/// several threads); one sync makes all of them durable; then each is put in place, checked
/// against what was read just before. Graduations that move a file are journaled (see
/// [`crate::moves`]) between the sync and the first move; the journal goes when they are
/// done, so a kill at any moment leaves moves the next tick, scan or doctor completes, and
/// never a file whose bytes were not on disk before it took another's place.
pub(crate) fn apply_writes(
    root: &Path,
    edits: &[&FileEdit],
    notes: &[NoteOp],
    before_write: Option<&(dyn Fn(&Path) + Sync)>,
    reindex: Reindex<'_>,
) -> (Vec<Result<ChangedFile, String>>, Vec<NoteOutcome>) {
    let staged_edits = parallel_map(edits, |edit| stage_edit(root, edit, reindex));
    let staged_notes = parallel_map(notes, |op| stage_note(root, op, reindex));
    let temps: Vec<&Path> = staged_edits
        .iter()
        .filter_map(|staged| match staged {
            Ok(StagedEdit::Temp(s)) => Some(s.temp.as_path()),
            _ => None,
        })
        .chain(staged_notes.iter().filter_map(|staged| staged.as_ref().ok()?.as_ref().map(|s| s.temp.as_path())))
        .collect();
    if let Err(err) = fsio::sync_staged(root, &temps) {
        for temp in temps {
            let _ = std::fs::remove_file(temp);
        }
        let reason = format!("not written: cannot sync the new files: {err}");
        return (
            edits.iter().map(|_| Err(reason.clone())).collect(),
            notes.iter().map(|op| Err((note_relpath(op).to_string(), reason.clone()))).collect(),
        );
    }
    let journal: Vec<moves::Move> = edits
        .iter()
        .zip(&staged_edits)
        .filter_map(|(edit, staged)| {
            Some(moves::Move {
                from: edit.relpath.clone(),
                to: edit.move_to.clone()?,
                from_sha256: edit.sha256.clone(),
                to_sha256: match staged.as_ref().ok()? {
                    StagedEdit::Temp(s) => s.new_sha256.clone(),
                    StagedEdit::InPlace { .. } => return None,
                },
            })
        })
        .collect();
    let journaled = if journal.is_empty() { Ok(()) } else { moves::begin(root, &journal) };
    let slots: Vec<(usize, Slot<Result<StagedEdit, String>>)> =
        staged_edits.into_iter().enumerate().map(|(i, staged)| (i, std::sync::Mutex::new(Some(staged)))).collect();
    let edited = parallel_map(&slots, |(i, slot)| {
        let edit = edits[*i];
        let staged = slot.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        let staged = match staged.unwrap_or_else(|| Err("not applied".to_string()))? {
            StagedEdit::Temp(staged) => *staged,
            StagedEdit::InPlace { new, range } => {
                return commit_in_place(root, edit, &new, range, before_write, reindex);
            }
        };
        if edit.move_to.is_some()
            && let Err(err) = &journaled
        {
            let _ = std::fs::remove_file(&staged.temp);
            return Err(format!("not graduated: cannot write the move journal: {err}"));
        }
        commit_edit(root, edit, &staged.temp, &staged.new_sha256, before_write).map(|()| staged.changed)
    });
    if !journal.is_empty() && journaled.is_ok() {
        // Every move is done (or undone): the journal goes. Should that fail, the next run
        // finds each move completed and removes it.
        let _ = moves::end(root);
    }
    let note_slots: Vec<(usize, Slot<StagedNote>)> =
        staged_notes.into_iter().enumerate().map(|(i, staged)| (i, std::sync::Mutex::new(Some(staged)))).collect();
    let written = parallel_map(&note_slots, |(i, slot)| {
        let staged = slot.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        match staged {
            Some(Ok(staged)) => commit_note(root, &notes[*i], staged),
            Some(Err(skipped)) => Err(skipped),
            None => Err((note_relpath(&notes[*i]).to_string(), "not applied".into())),
        }
    });
    (edited, written)
}

/// A value one worker of [`parallel_map`] takes out.
pub(crate) type Slot<T> = std::sync::Mutex<Option<T>>;

/// A staged note (`None`: a removal), or the relpath and why it was not staged.
pub(crate) type StagedNote = Result<Option<Staged>, (String, String)>;

pub(crate) fn note_relpath(op: &NoteOp) -> &str {
    match op {
        NoteOp::Write { relpath, .. } | NoteOp::Remove { relpath, .. } => relpath,
    }
}

/// Removes a marker block; when it stands on lines of its own, the lines go too. Returns
/// where the removal started.
pub(crate) fn remove_block(text: &mut String, span: Range<usize>) -> usize {
    let line_start = text[..span.start].rfind('\n').map_or(0, |index| index + 1);
    let line_end = text[span.end..].find('\n').map_or(text.len(), |index| span.end + index);
    let (start, end) = if text[line_start..span.start].trim().is_empty() && text[span.end..line_end].trim().is_empty() {
        (line_start, (line_end + 1).min(text.len()))
    } else {
        (span.start, span.end)
    };
    text.replace_range(start..end, "");
    start
}

/// The items of an edited file when the edit left them as they were: an edit of `heat:` and
/// `status:` only (no item is made of them; `cluster_id`, `project:`, `created:` and the
/// blocks are untouched) that derives the very ids and date the index holds for the file.
pub(crate) fn kept_items(snapshot: &Snapshot, edit: &FileEdit, changed: &ChangedFile) -> Option<KeptItems> {
    if !edit.tombstones.is_empty() {
        return None;
    }
    let old = &snapshot.get(&edit.relpath)?.state;
    let new = &changed.analyzed.state;
    let same_ids = old.items == new.items && changed.analyzed.items.iter().map(|item| &item.id).eq(new.items.iter());
    // `created` may come from the file's time when the frontmatter has none: items are
    // dated by it, so it must not have moved either.
    // The arc item is made of the title and summary: they must not have moved either.
    let key =
        |arc: &crate::state::ArcState| (arc.cluster_id.clone(), arc.created, arc.title.clone(), arc.summary.clone());
    let same_arc = old.arc.as_deref().map(key) == new.arc.as_deref().map(key);
    if !same_ids || !same_arc || old.project != new.project {
        return None;
    }
    let mut ids = new.items.clone();
    ids.extend(new.arc.as_ref().map(|arc| brain_core::vault::arc_id(&arc.cluster_id)));
    Some(KeptItems { from: edit.relpath.clone(), ids, was_owner: false })
}

/// The index entry of a file the tick just wrote (`stat`: the file whose time dates it, the
/// staged temp that becomes it). Its time is recent, so it is recorded as racy: the next
/// scan confirms the hash once (without parsing).
pub(crate) fn reindex(
    stat: &Path,
    relpath: &str,
    bytes: &[u8],
    max_bytes: usize,
    counter: TokenCounter,
) -> ChangedFile {
    let metadata = std::fs::metadata(stat).ok();
    let mtime_ns = metadata.as_ref().map_or(0, crate::walk::mtime_ns);
    let analyzed = analyze(relpath, bytes, mtime_ns, max_bytes, counter);
    ChangedFile::new(relpath.to_string(), bytes.len() as u64, 0, sha256_hex(bytes), analyzed)
}
