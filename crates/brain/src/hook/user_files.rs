//! How brain rewrites a settings file of the user's own (`~/.claude/settings.json`,
//! `~/.claude.json`, `~/.codex/config.toml`, a plugin marketplace …): the previous text kept
//! in a backup no one else can read when the file was private, and a file that is a symbolic
//! link (a dotfiles checkout) written through, the link kept.
//!
//! - **Backups** are `<file>.brain-backup`, then `<file>.brain-backup.1` … `.20`: an existing
//!   backup is never overwritten (the first one holds the file as it was before brain ever
//!   touched it), and once all [`MAX_BACKUPS`] names are taken the change is refused with a
//!   message saying to remove old backups. A backup gets the file's permission bits — never
//!   wider than the file's — and is written through a private temp file linked into place.
//! - **A link** is written through: the new text goes to a temp file beside the link's
//!   target, with the target's permissions, renamed over the target; the link stays. The
//!   backup lies beside the link (where the user looks for it). Only the user's own files
//!   are written this way: files inside a repository are never written through a link
//!   ([`super::repo_files`]; the callers refuse those first).

use std::path::{Path, PathBuf};

use brain_api::error::{BrainError, BrainResult};
use brain_api::fsio;

/// The most backups of one file: `.brain-backup` and `.brain-backup.1` to `.brain-backup.19`.
pub const MAX_BACKUPS: usize = 20;

/// The `n`th backup name of `path` (0: `<file>.brain-backup`).
fn backup_name(path: &Path, n: usize) -> PathBuf {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    match n {
        0 => path.with_file_name(format!("{name}.brain-backup")),
        n => path.with_file_name(format!("{name}.brain-backup.{n}")),
    }
}

/// The backup name the next change of `path` would take, or why there is none (every name
/// taken). A dry run asks it too, so a refusal comes before anything is written.
pub fn next_backup(path: &Path) -> BrainResult<PathBuf> {
    (0..MAX_BACKUPS)
        .map(|n| backup_name(path, n))
        .find(|candidate| std::fs::symlink_metadata(candidate).is_err())
        .ok_or_else(|| too_many_backups(path))
}

fn too_many_backups(path: &Path) -> BrainError {
    BrainError::user_with_hint(
        format!(
            "{} already has {MAX_BACKUPS} brain backups ({} … {}); refusing to change it without keeping the \
             previous text",
            path.display(),
            backup_name(path, 0).display(),
            backup_name(path, MAX_BACKUPS - 1).display()
        ),
        "remove the backups you no longer need (the first, .brain-backup, is the file before brain), then run \
         again",
    )
}

/// Where a write of `path` goes: `Some(target)` when `path` is a symbolic link (followed to
/// its end), `None` when it is the file itself (or missing). A dangling link is refused.
pub fn link_target(path: &Path) -> BrainResult<Option<PathBuf>> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => std::fs::canonicalize(path).map(Some).map_err(|err| {
            BrainError::user_with_hint(
                format!(
                    "{} is a symbolic link that cannot be followed ({err}); refusing to replace it",
                    path.display()
                ),
                "point the link at an existing file, or remove it, then run again",
            )
        }),
        _ => Ok(None),
    }
}

/// Keeps `before`, the current text of `path`, in the next free backup name (never over an
/// existing file, `fsio::create_new`), with `path`'s permissions; returns the backup's path.
pub fn write_backup(path: &Path, before: &[u8]) -> BrainResult<PathBuf> {
    next_backup(path)?;
    for n in 0..MAX_BACKUPS {
        let candidate = backup_name(path, n);
        // A backup made meanwhile by another run is never replaced: the next name is taken.
        match fsio::create_new(&candidate, before, Some(path)) {
            Ok(true) => return Ok(candidate),
            Ok(false) => continue,
            Err(err) => return Err(BrainError::user(format!("cannot write {}: {err}", candidate.display()))),
        }
    }
    Err(too_many_backups(path))
}

/// Replaces the text of `path` with `bytes` atomically (`fsio::write_owned`: temp file,
/// fsync, rename, its permissions kept); a symbolic link is written through to its target
/// and stays a link. Returns the target when it was a link.
pub fn replace(path: &Path, bytes: &[u8]) -> BrainResult<Option<PathBuf>> {
    let link = link_target(path)?;
    let target = link.clone().unwrap_or_else(|| path.to_path_buf());
    fsio::write_owned(&target, bytes)
        .map_err(|err| BrainError::user(format!("cannot write {}: {err}", target.display())))?;
    Ok(link)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_backup_keeps_the_files_mode_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        std::fs::write(&path, "secret one").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let first = write_backup(&path, b"secret one").unwrap();
        assert_eq!(first, dir.path().join(".claude.json.brain-backup"));
        assert_eq!(mode(&first), 0o600, "a private file's backup is private");
        let second = write_backup(&path, b"rewritten").unwrap();
        assert_eq!(second, dir.path().join(".claude.json.brain-backup.1"));
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "secret one", "the first backup is kept");
        for _ in 2..MAX_BACKUPS {
            write_backup(&path, b"again").unwrap();
        }
        let err = write_backup(&path, b"once more").unwrap_err().to_string();
        assert!(err.contains("already has 20 brain backups"), "{err}");
        assert!(next_backup(&path).is_err());
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|entry| fsio::is_temp_name(&entry.file_name().to_string_lossy()));
        assert_eq!(leftovers.count(), 0, "no temp file is left behind");
    }

    #[test]
    fn a_link_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        let target = dotfiles.join("claude-settings.json");
        std::fs::write(&target, "{}").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let through = replace(&link, b"{\"a\": 1}").unwrap();
        assert_eq!(through, Some(std::fs::canonicalize(&target).unwrap()));
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{\"a\": 1}");
        assert_eq!(mode(&target), 0o640);
        let dangling = dir.path().join("gone.json");
        std::os::unix::fs::symlink(dir.path().join("nowhere.json"), &dangling).unwrap();
        let err = replace(&dangling, b"{}").unwrap_err().to_string();
        assert!(err.contains("cannot be followed"), "{err}");
    }
}
