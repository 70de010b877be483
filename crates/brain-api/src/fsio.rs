//! File IO of the vault: content hashes, atomic writes that never clobber a concurrent edit,
//! and the tick lock.
//!
//! A user's file is replaced only through [`replace_if_unchanged`]: the new bytes go to a
//! temp file in the same folder (fsynced), the file is read again and compared with the
//! bytes the edit was computed from, and only if they are identical is the temp file renamed
//! over it. An edit made by the user (or an editor, or a sync tool) at any time before that
//! comparison wins: the tick skips the file with a warning and the next tick starts from
//! the new content. What remains is the instant between the comparison and the rename; no
//! portable file API closes it.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::error::{BrainError, BrainResult};

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Opens `path` for reading if it is a regular file (after symlinks). The open does not
/// block: a FIFO without a writer would otherwise hold the reader forever.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file (a {})", describe_file_type(kind))))
}

fn describe_file_type(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_char_device() {
            return "character device";
        }
        if kind.is_block_device() {
            return "block device";
        }
        if kind.is_socket() {
            return "socket";
        }
    }
    if kind.is_dir() { "directory" } else { "special file" }
}

/// Temp files are named `.<name>.brain-<pid>-<n>.tmp`: hidden, so the walker skips them, and
/// carrying the writer's pid, so [`sweep_stale_temps`] can tell a dead writer's leftovers
/// from a live writer's file in flight. Capture's atomic writes use the same names.
pub fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.brain-{}-{n}.tmp", std::process::id()))
}

/// The pid in a temp file name of ours (`.<name>.brain-<pid>-<n>.tmp`), if it is one.
fn temp_file_pid(name: &str) -> Option<u32> {
    let stem = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, counter) = stem.rsplit_once('-')?;
    let (_, pid) = rest.rsplit_once(".brain-")?;
    if counter.is_empty() || !counter.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether `name` is one of our temp file names ([`temp_path`]).
pub fn is_temp_name(name: &str) -> bool {
    temp_file_pid(name).is_some()
}

/// Removes `path`, a temp file of ours named `name`, when its writer is no longer running.
fn remove_if_stale(path: &Path, name: &str) -> bool {
    temp_file_pid(name).is_some_and(|pid| !process_alive(pid) && std::fs::remove_file(path).is_ok())
}

/// Removes those of `temps` (temp files of ours a walk found) whose writer is no longer
/// running, as [`sweep_stale_temps`] does for a whole tree. Returns how many were removed.
pub fn remove_stale_temps(temps: &[PathBuf]) -> usize {
    temps
        .iter()
        .filter(|path| path.file_name().and_then(|name| name.to_str()).is_some_and(|name| remove_if_stale(path, name)))
        .count()
}

/// Whether a process with this pid is running (a pid reused by another process counts as
/// running: its temp file then waits for a later sweep).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
            return false;
        };
        // EPERM means the process exists but belongs to someone else.
        !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Folders deeper than this are not swept (a vault is never that deep; a symlink loop can't
/// form because symlinks are not followed).
const SWEEP_MAX_DEPTH: usize = 16;

/// Removes the temp files a killed writer (tick, scan, capture) left under `root`: files
/// named like [`temp_path`]'s whose writer is no longer running. Symlinks are not followed.
/// Returns how many were removed. Called by the tick and by capture while they hold their
/// lock; a file another live process is writing is never touched.
pub fn sweep_stale_temps(root: &Path) -> usize {
    let mut removed = 0;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if depth < SWEEP_MAX_DEPTH {
                    stack.push((entry.path(), depth + 1));
                }
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let name = entry.file_name();
            if name.to_str().is_some_and(|name| remove_if_stale(&entry.path(), name)) {
                removed += 1;
            }
        }
    }
    removed
}

/// Writes `bytes` to a new temp file next to `path` and fsyncs it; permissions are copied
/// from `permissions_of` when it exists.
fn write_temp(path: &Path, bytes: &[u8], permissions_of: Option<&Path>) -> io::Result<PathBuf> {
    write_temp_with(path, bytes, permissions_of, true)
}

/// A temp file that takes another file's permissions is created private (0600) and given
/// them once written: the copy of a private file (`~/.claude.json`) is never readable by
/// others, not even before its mode is set.
fn write_temp_with(path: &Path, bytes: &[u8], permissions_of: Option<&Path>, sync: bool) -> io::Result<PathBuf> {
    let temp = temp_path(path);
    let copied =
        permissions_of.and_then(|source| std::fs::metadata(source).ok()).map(|metadata| metadata.permissions());
    let result = (|| {
        let mut options = File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if copied.is_some() {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&temp)?;
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
        if let Some(permissions) = copied {
            file.set_permissions(permissions)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(temp),
        Err(err) => {
            let _ = std::fs::remove_file(&temp);
            Err(err)
        }
    }
}

/// Writes `bytes` to a temp file beside `path` (its folder created when missing) and does
/// not sync it: a batch of staged files is made durable by one [`sync_staged`] before any of
/// them is renamed or linked into place ([`replace_staged`], [`create_staged`]), so no file
/// ever takes the place of another before its bytes are on disk. Permissions are copied from
/// `permissions_of` when it exists.
pub fn stage(path: &Path, bytes: &[u8], permissions_of: Option<&Path>) -> io::Result<PathBuf> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_temp_with(path, bytes, permissions_of, false)
}

/// Makes staged temp files durable: one `syncfs` of the file system holding `root` on Linux
/// (every staged file is inside it), else an fsync of each.
pub fn sync_staged(root: &Path, temps: &[&Path]) -> io::Result<()> {
    if temps.is_empty() {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        let dir = File::open(root)?;
        rustix::fs::syncfs(&dir).map_err(io::Error::from)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        for temp in temps {
            File::open(temp)?.sync_all()?;
        }
        Ok(())
    }
}

/// Renames the staged `temp` over `path` if `path` still hashes to `expected_sha256`.
/// Returns false (and removes the temp) when it changed or disappeared since it was read.
pub fn replace_staged(path: &Path, temp: &Path, expected_sha256: &str) -> io::Result<bool> {
    let still_expected = matches!(read_optional(path), Ok(Some(current)) if sha256_hex(&current) == expected_sha256);
    if !still_expected {
        let _ = std::fs::remove_file(temp);
        return Ok(false);
    }
    if let Err(err) = std::fs::rename(temp, path) {
        let _ = std::fs::remove_file(temp);
        return Err(err);
    }
    Ok(true)
}

/// Writes `bytes` over the file at `path` from `offset`, in place, if the file still hashes
/// to `expected_sha256`: the check reads through the very file the write then goes to (a
/// file renamed over `path` meanwhile is not written). Returns false when it changed or
/// disappeared since it was read. Not synced: the caller's index records the file as racy,
/// so a write lost to a crash is a file the next scan hashes and finds as it was.
#[cfg(unix)]
pub fn patch_in_place(path: &Path, expected_sha256: &str, offset: u64, bytes: &[u8]) -> io::Result<bool> {
    use std::io::Read;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let mut file = match std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOFOLLOW).open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    let mut current = Vec::new();
    file.read_to_end(&mut current)?;
    if sha256_hex(&current) != expected_sha256 || offset as usize + bytes.len() > current.len() {
        return Ok(false);
    }
    file.write_all_at(bytes, offset)?;
    Ok(true)
}

/// Links the staged `temp` into place at `path`, never over an existing file, and removes
/// the temp. Returns false when `path` already exists.
pub fn create_staged(path: &Path, temp: &Path) -> io::Result<bool> {
    // A hard link fails when the target exists, so a file created meanwhile is never replaced.
    let linked = std::fs::hard_link(temp, path);
    let _ = std::fs::remove_file(temp);
    match linked {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(err),
    }
}

/// Removes `path` if it still hashes to `expected_sha256`. Returns false when it changed.
pub fn remove_if_hash(path: &Path, expected_sha256: &str) -> io::Result<bool> {
    match read_optional(path)? {
        Some(current) if sha256_hex(&current) == expected_sha256 => {
            std::fs::remove_file(path)?;
            Ok(true)
        }
        Some(_) => Ok(false),
        None => Ok(true),
    }
}

/// Reads a file; a missing file is `None`.
pub fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Replaces `path` with `new` if it still holds exactly `expected`. Returns false (and
/// leaves the file alone) when it changed or disappeared since it was read.
pub fn replace_if_unchanged(path: &Path, expected: &[u8], new: &[u8]) -> io::Result<bool> {
    let temp = write_temp(path, new, Some(path))?;
    let still_expected = matches!(read_optional(path), Ok(Some(current)) if current == expected);
    if !still_expected {
        let _ = std::fs::remove_file(&temp);
        return Ok(false);
    }
    if let Err(err) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(err);
    }
    Ok(true)
}

/// Creates `path` with `bytes` atomically, never replacing an existing file. Returns false
/// when `path` already exists.
pub fn create_new(path: &Path, bytes: &[u8], permissions_of: Option<&Path>) -> io::Result<bool> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = write_temp(path, bytes, permissions_of)?;
    // A hard link fails when the target exists, so a file created meanwhile is never replaced.
    let linked = std::fs::hard_link(&temp, path);
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(err),
    }
}

/// Writes a file the tick owns (feed files, generated notes) atomically.
pub fn write_owned(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = write_temp(path, bytes, Some(path))?;
    if let Err(err) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(err);
    }
    Ok(())
}

/// Removes `path` if it still holds exactly `expected`. Returns false when it changed.
pub fn remove_if_unchanged(path: &Path, expected: &[u8]) -> io::Result<bool> {
    match read_optional(path)? {
        Some(current) if current == expected => {
            std::fs::remove_file(path)?;
            Ok(true)
        }
        Some(_) => Ok(false),
        // Already gone: nothing to do, and nothing of the user's was touched.
        None => Ok(true),
    }
}

/// The file that serializes ticks and scans of one home.
pub(crate) const LOCK_FILE: &str = "tick.lock";

/// How the error of a held lock begins ([`lock`]); callers that may skip a scan check it.
pub const BUSY: &str = "another brain tick or vault scan is running on this home";

/// Held for the whole tick or scan; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct VaultLock {
    _file: File,
}

/// Takes the lock of `home`. An exclusive lock (a tick or scan that writes) creates the lock
/// file when missing. A shared lock (`--dry-run`, which writes nothing at all) is taken only
/// when the file exists, so a dry run never creates it; it still refuses to run beside a
/// writing tick. A held lock is a user error with a clear message, never a wait.
pub fn lock(home: &Path, exclusive: bool) -> BrainResult<Option<VaultLock>> {
    let path = home.join(LOCK_FILE);
    let file = if exclusive {
        File::options().read(true).write(true).create(true).truncate(false).open(&path)
    } else {
        match File::open(&path) {
            Ok(file) => Ok(file),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => Err(err),
        }
    }
    .map_err(|err| BrainError::user(format!("cannot open the tick lock {}: {err}", path.display())))?;
    let attempt = if exclusive { file.try_lock() } else { file.try_lock_shared() };
    match attempt {
        Ok(()) => Ok(Some(VaultLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Err(BrainError::user_with_hint(
            format!("{BUSY} (lock {} is held)", path.display()),
            "wait for it to finish, then run the command again",
        )),
        Err(std::fs::TryLockError::Error(err)) => {
            Err(BrainError::user(format!("cannot lock {}: {err}", path.display())))
        }
    }
}

/// Writes `bytes` to `path` through a temp file in the same folder, fsync and rename, so a
/// reader sees the old or the new file, never half of one. Keeps the file's permissions.
/// (One implementation for every file brain owns: [`write_owned`].)
pub fn write_atomically(path: &Path, bytes: &[u8]) -> BrainResult<()> {
    write_owned(path, bytes).map_err(|err| BrainError::user(format!("cannot write {}: {err}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_after_reading_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arc.md");
        std::fs::write(&path, "heat: 3\n").unwrap();
        assert!(replace_if_unchanged(&path, b"heat: 3\n", b"heat: 5\n").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"heat: 5\n");
        // The caller read "heat: 3" but the file now says "heat: 5": the edit is refused.
        assert!(!replace_if_unchanged(&path, b"heat: 3\n", b"heat: 7\n").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"heat: 5\n");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file is left behind");
    }

    #[test]
    fn create_new_never_replaces_and_the_lock_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/new.md");
        assert!(create_new(&path, b"one", None).unwrap());
        assert!(!create_new(&path, b"two", None).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        assert!(lock(dir.path(), false).unwrap().is_none(), "a dry run creates no lock file");
        let held = lock(dir.path(), true).unwrap();
        assert!(held.is_some());
        let err = lock(dir.path(), true).unwrap_err().to_string();
        assert!(err.contains("another brain tick"), "{err}");
        assert!(lock(dir.path(), false).is_err(), "a dry run does not run beside a tick");
        drop(held);
        assert!(lock(dir.path(), true).is_ok());
    }
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    #[test]
    fn only_our_temp_names_carry_a_pid() {
        assert_eq!(temp_file_pid(".note.md.brain-4242-7.tmp"), Some(4242));
        assert_eq!(temp_file_pid(".a.b-c.md.brain-1-0.tmp"), Some(1));
        assert_eq!(temp_file_pid("note.md.brain-4242-7.tmp"), None, "not hidden");
        assert_eq!(temp_file_pid(".note.md.brain-x-7.tmp"), None);
        assert_eq!(temp_file_pid(".note.md.brain-42-.tmp"), None);
        assert_eq!(temp_file_pid(".note.tmp"), None);
        assert_eq!(temp_file_pid(".export.tmp"), None);
    }

    #[test]
    fn a_dead_writers_temp_files_go_and_a_live_ones_and_the_users_files_stay() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("clusters/2026-11-20");
        std::fs::create_dir_all(&nested).unwrap();
        // A pid above the kernel's maximum (2^22) is never running.
        let dead = nested.join(".arc.md.brain-4194400-3.tmp");
        let live = nested.join(format!(".arc.md.brain-{}-9.tmp", std::process::id()));
        let user = nested.join("arc.md");
        let users_hidden = nested.join(".draft.tmp");
        for path in [&dead, &live, &user, &users_hidden] {
            std::fs::write(path, "x").unwrap();
        }
        assert_eq!(sweep_stale_temps(dir.path()), 1);
        assert!(!dead.exists());
        assert!(live.exists() && user.exists() && users_hidden.exists());
    }
}
