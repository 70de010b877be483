//! The journal that makes a graduation (a move of an arc into its region folder) crash-safe.
//!
//! A move is two steps: create the graduated file at its target (new bytes: `status:
//! graduated`, the new heat), then remove the original. A process killed between the two would
//! leave both files, one arc twice. So before the first target is created the tick writes,
//! atomically, `<vault>/.brain-moves.json`: for every move its source and target and the
//! SHA-256 of the bytes read and of the bytes to write. The journal goes when the moves are
//! done. Whoever next takes the vault's lock (a tick, a scan, `brain vault doctor --repair`)
//! finds a leftover journal and finishes each move before doing anything else:
//!
//! | target | original | action |
//! |---|---|---|
//! | the new bytes | the bytes read | remove the original (the move completes) |
//! | the new bytes | gone | nothing (it had completed) |
//! | the new bytes | changed since | remove the target: the user's edit wins, the next tick plans again |
//! | missing | any | nothing (the move never started; the next tick plans again) |
//! | other bytes | any | both are left; `brain vault doctor` reports the duplicate |
//!
//! Every removal goes through [`fsio::remove_if_unchanged`], so a file is only ever removed
//! when it holds exactly the bytes the journal names. The journal is hidden (the walk skips
//! it) and its paths must be plain vault-relative paths, else it is ignored.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::fsio::{self, read_optional, sha256_hex};

/// The journal's file name, at the root of the vault.
pub(crate) const JOURNAL: &str = ".brain-moves.json";

/// At most this many bytes of journal are read (a tick graduating 100,000 arcs writes ~30 MB).
const MAX_JOURNAL_BYTES: u64 = 64 << 20;

/// One planned move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub from: String,
    pub to: String,
    /// SHA-256 of the original's bytes as read.
    pub from_sha256: String,
    /// SHA-256 of the bytes the target is created with.
    pub to_sha256: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    moves: Vec<Move>,
}

/// What recovery did with one move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Recovered {
    pub from: String,
    pub to: String,
    /// `completed`, `rolled back`, `not started` or `left`.
    pub action: &'static str,
    pub reason: String,
}

/// Writes the journal of `moves` (atomically, fsynced, the folder too) before any of them
/// starts.
pub fn begin(root: &Path, moves: &[Move]) -> std::io::Result<()> {
    let journal = Journal { moves: moves.to_vec() };
    let bytes = serde_json::to_vec(&journal).map_err(std::io::Error::other)?;
    fsio::write_owned(&root.join(JOURNAL), &bytes)?;
    // The rename must be durable before a target appears.
    std::fs::File::open(root)?.sync_all()
}

/// Removes the journal once every move of it is done.
pub fn end(root: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(root.join(JOURNAL)) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

/// Whether a journal is waiting (a graduation was interrupted).
pub(crate) fn pending(root: &Path) -> bool {
    root.join(JOURNAL).is_file()
}

/// A plain vault-relative path: no root, no `.` or `..`, no empty component.
fn plain_relpath(relpath: &str) -> bool {
    !relpath.is_empty()
        && !relpath.starts_with('/')
        && !relpath.contains('\\')
        && relpath.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Finishes the moves of a leftover journal (see the module's table) and removes it. Call
/// with the vault's lock held, before anything reads the vault. A journal that cannot be
/// read or names unsafe paths is removed untouched and reported.
pub(crate) fn recover(root: &Path) -> Vec<Recovered> {
    let path = root.join(JOURNAL);
    let Ok(metadata) = std::fs::symlink_metadata(&path) else { return Vec::new() };
    let journal: Option<Journal> = (metadata.is_file() && metadata.len() <= MAX_JOURNAL_BYTES)
        .then(|| std::fs::read(&path).ok())
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let mut out = Vec::new();
    match journal {
        Some(journal) => {
            for entry in journal.moves {
                out.push(recover_one(root, &entry));
            }
        }
        None => out.push(Recovered {
            from: JOURNAL.to_string(),
            to: String::new(),
            action: "left",
            reason: "the graduation journal could not be read; it was removed and nothing was moved".into(),
        }),
    }
    if metadata.is_file() {
        let _ = end(root);
    }
    out
}

fn recover_one(root: &Path, entry: &Move) -> Recovered {
    let outcome = |action: &'static str, reason: String| Recovered {
        from: entry.from.clone(),
        to: entry.to.clone(),
        action,
        reason,
    };
    if !plain_relpath(&entry.from) || !plain_relpath(&entry.to) || entry.from == entry.to {
        return outcome("left", "not a plain vault-relative path; ignored".into());
    }
    let (from, to) = (root.join(&entry.from), root.join(&entry.to));
    let read = |path: &Path| read_optional(path).map_err(|err| format!("cannot read {}: {err}", path.display()));
    let (original, target) = match (read(&from), read(&to)) {
        (Ok(original), Ok(target)) => (original, target),
        (Err(reason), _) | (_, Err(reason)) => return outcome("left", reason),
    };
    let Some(target) = target else {
        return outcome("not started", "the graduated file was never created; the next tick plans again".into());
    };
    if sha256_hex(&target) != entry.to_sha256 {
        return outcome("left", format!("{} changed since it was written; both files are kept", entry.to));
    }
    match original {
        None => outcome("completed", "the original was already gone".into()),
        Some(bytes) if sha256_hex(&bytes) == entry.from_sha256 => match fsio::remove_if_unchanged(&from, &bytes) {
            Ok(true) => outcome("completed", "the original was removed".into()),
            Ok(false) => outcome("left", format!("{} changed while recovering", entry.from)),
            Err(err) => outcome("left", format!("cannot remove {}: {err}", entry.from)),
        },
        Some(_) => match fsio::remove_if_unchanged(&to, &target) {
            Ok(true) => {
                outcome("rolled back", format!("{} was edited since; the graduated copy was removed", entry.from))
            }
            Ok(false) => outcome("left", format!("{} changed while recovering", entry.to)),
            Err(err) => outcome("left", format!("cannot remove {}: {err}", entry.to)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(original: Option<&str>, target: Option<&str>) -> (tempfile::TempDir, Move) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("clusters/d")).unwrap();
        std::fs::create_dir_all(dir.path().join("left")).unwrap();
        if let Some(text) = original {
            std::fs::write(dir.path().join("clusters/d/a.md"), text).unwrap();
        }
        if let Some(text) = target {
            std::fs::write(dir.path().join("left/a.md"), text).unwrap();
        }
        let entry = Move {
            from: "clusters/d/a.md".into(),
            to: "left/a.md".into(),
            from_sha256: sha256_hex(b"old"),
            to_sha256: sha256_hex(b"new"),
        };
        begin(dir.path(), std::slice::from_ref(&entry)).unwrap();
        (dir, entry)
    }

    fn files(dir: &Path) -> (Option<String>, Option<String>) {
        let read = |relpath: &str| std::fs::read_to_string(dir.join(relpath)).ok();
        (read("clusters/d/a.md"), read("left/a.md"))
    }

    #[test]
    fn an_interrupted_move_is_completed_and_the_journal_goes() {
        let (dir, _) = setup(Some("old"), Some("new"));
        let done = recover(dir.path());
        assert_eq!(done[0].action, "completed");
        assert_eq!(files(dir.path()), (None, Some("new".into())));
        assert!(!pending(dir.path()));
        assert!(recover(dir.path()).is_empty(), "nothing left to do");
    }

    #[test]
    fn a_move_that_never_started_or_had_finished_is_left_as_it_is() {
        let (dir, _) = setup(Some("old"), None);
        assert_eq!(recover(dir.path())[0].action, "not started");
        assert_eq!(files(dir.path()), (Some("old".into()), None));
        let (dir, _) = setup(None, Some("new"));
        assert_eq!(recover(dir.path())[0].action, "completed");
        assert_eq!(files(dir.path()), (None, Some("new".into())));
    }

    #[test]
    fn user_edits_win_over_the_journal() {
        // The original was edited after the crash: the graduated copy goes, the edit stays.
        let (dir, _) = setup(Some("edited"), Some("new"));
        assert_eq!(recover(dir.path())[0].action, "rolled back");
        assert_eq!(files(dir.path()), (Some("edited".into()), None));
        // The graduated copy was edited: nothing is removed.
        let (dir, _) = setup(Some("old"), Some("edited"));
        assert_eq!(recover(dir.path())[0].action, "left");
        assert_eq!(files(dir.path()), (Some("old".into()), Some("edited".into())));
        assert!(!pending(dir.path()));
    }

    #[test]
    fn a_hostile_journal_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.md"), "new").unwrap();
        let entry = Move {
            from: "../outside.md".into(),
            to: "keep.md".into(),
            from_sha256: sha256_hex(b"x"),
            to_sha256: sha256_hex(b"new"),
        };
        begin(dir.path(), &[entry]).unwrap();
        assert_eq!(recover(dir.path())[0].action, "left");
        std::fs::write(dir.path().join(JOURNAL), "not json").unwrap();
        assert_eq!(recover(dir.path())[0].action, "left");
        assert!(dir.path().join("keep.md").exists() && !pending(dir.path()));
    }
}
