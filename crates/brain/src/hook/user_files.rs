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

use std::io::Write;
use std::path::{Path, PathBuf};

use brain_api::error::{BrainError, BrainResult};

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

/// The permission bits of the file at `path` (followed), if it exists.
#[cfg(unix)]
fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).ok().map(|metadata| metadata.permissions().mode() & 0o7777)
}

/// Writes `bytes` to a new temp file beside `path`, synced, then gives it `mode`. With a
/// mode, the temp is created private (never readable by others before it gets the mode);
/// without, it is created as any new file (0666 less the umask).
fn private_temp(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<PathBuf> {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let mut attempt = 0u32;
    loop {
        let temp = path.with_file_name(format!(".{name}.brain-tmp-{}-{attempt}", std::process::id()));
        let mut options = std::fs::File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if mode.is_some() { 0o600 } else { 0o666 });
        }
        let mut file = match options.open(&temp) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
                continue;
            }
            Err(err) => return Err(err),
        };
        let written = (|| {
            file.write_all(bytes)?;
            file.sync_all()?;
            #[cfg(unix)]
            if let Some(mode) = mode {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            #[cfg(not(unix))]
            let _ = mode;
            Ok(())
        })();
        return match written {
            Ok(()) => Ok(temp),
            Err(err) => {
                let _ = std::fs::remove_file(&temp);
                Err(err)
            }
        };
    }
}

/// Keeps `before`, the current text of `path`, in the next free backup name (never over an
/// existing file), with `path`'s permission bits; returns the backup's path.
pub fn write_backup(path: &Path, before: &[u8]) -> BrainResult<PathBuf> {
    let cannot =
        |target: &Path, err: std::io::Error| BrainError::user(format!("cannot write {}: {err}", target.display()));
    #[cfg(unix)]
    let mode = mode_of(path).map(|mode| mode & 0o777);
    #[cfg(not(unix))]
    let mode = None;
    let first = next_backup(path)?;
    let temp = private_temp(&first, before, mode).map_err(|err| cannot(&first, err))?;
    let result = (|| {
        for n in 0..MAX_BACKUPS {
            let candidate = backup_name(path, n);
            // A hard link fails when the name exists, so no backup is ever replaced (one
            // made meanwhile by another run included).
            match std::fs::hard_link(&temp, &candidate) {
                Ok(()) => return Ok(candidate),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(cannot(&candidate, err)),
            }
        }
        Err(too_many_backups(path))
    })();
    let _ = std::fs::remove_file(&temp);
    result
}

/// Replaces the text of `path` with `bytes` atomically (temp file, fsync, rename), keeping
/// its permissions; a symbolic link is written through to its target and stays a link.
/// Returns the target when it was a link.
pub fn replace(path: &Path, bytes: &[u8]) -> BrainResult<Option<PathBuf>> {
    let link = link_target(path)?;
    let target = link.clone().unwrap_or_else(|| path.to_path_buf());
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| BrainError::user(format!("cannot create {}: {err}", parent.display())))?;
    }
    #[cfg(unix)]
    let mode = mode_of(&target);
    #[cfg(not(unix))]
    let mode = None;
    let cannot = |err: std::io::Error| BrainError::user(format!("cannot write {}: {err}", target.display()));
    // A new file gets the usual mode (the umask's): only an existing one's is kept.
    let temp = private_temp(&target, bytes, mode).map_err(cannot)?;
    if let Err(err) = std::fs::rename(&temp, &target) {
        let _ = std::fs::remove_file(&temp);
        return Err(cannot(err));
    }
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
            .filter(|entry| entry.file_name().to_string_lossy().contains("brain-tmp"));
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
