//! Projects tied to their folders. A folder names its project (`.brain.toml`, else the git
//! root's or the folder's name: SPEC §2.6), and a cloned repository chooses both: without a
//! tie, a clone named like one of the user's projects read that project's memory into its
//! agent's context, and filed its sessions there.
//!
//! The first folder that uses a project name on this machine holds it (`project-folders.json`
//! in the home). Another folder naming the same project shares it when it is the same git
//! repository as a folder that holds it (a worktree: the same git directory) or a clone of the
//! same remote (`origin`'s URL: a second checkout, a fleet's job folder) or of that folder
//! itself (`git clone ~/src/acme`); it is then tied too.
//! Any other folder gets a project of its own, the name followed by a hash of its path and a
//! salt kept in the home (`acme-api.1f2e3d4c`, unguessable from outside), until the user
//! ties it (`brain project link`). A name given on the command line or in `BRAIN_PROJECT` is
//! the user's choice and is not checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use brain_core::scope::MAX_SCOPE_NAME_CHARS;

use crate::error::{BrainError, BrainResult};

/// The file in the home that ties project names to folders.
pub const PROJECT_FOLDERS_FILE: &str = "project-folders.json";

/// The file in the home holding the salt of folders' own project names.
const SALT_FILE: &str = "project-folders.salt";

/// Folders kept per project: the first one always, then the most recent (fleets' job folders
/// come and go).
const MAX_FOLDERS_PER_PROJECT: usize = 64;

/// The file's size bound: it is read by every hook.
const MAX_FILE_BYTES: u64 = 4 << 20;

#[derive(Default, Serialize, Deserialize)]
struct Ties {
    projects: BTreeMap<String, Vec<PathBuf>>,
}

/// The project of a folder whose name came from the folder itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tied {
    /// The project to use: the name, or the folder's own when the name is held elsewhere (or
    /// the ties cannot be read).
    pub project: String,
    /// The folder holding the name, when this folder was given a project of its own.
    pub held_by: Option<PathBuf>,
    /// Why the ties could not be read, when they could not: every folder then has a project
    /// of its own (no folder reads a project it may not hold) until the file is mended. Or
    /// why this folder's own project cannot be kept (a home that cannot keep a salt).
    pub unreadable: Option<String>,
}

/// What the ties say of a folder naming a project.
enum Decision {
    /// The folder holds the name (or may share it); `Some` when that is to be recorded.
    Ours(Option<PathBuf>),
    /// Another folder holds it.
    HeldBy(PathBuf),
}

/// The project for `name`, which the folder of `cwd` chose: `name` when this folder holds
/// it or may share it (recording the tie when `record`), else the folder's own project,
/// whose name is then held by this folder.
pub fn tie(home: &Path, name: &str, cwd: &Path, record: bool) -> Tied {
    let root = root_of(cwd);
    let ties = match load(home) {
        Ok(ties) => ties,
        Err(err) => {
            let (project, _) = own_project_of_root(home, &Ties::default(), name, &root);
            return Tied { project, held_by: None, unreadable: Some(err.to_string()) };
        }
    };
    let tied = match decide(&ties, name, &root) {
        Decision::Ours(new) => {
            if record && new.is_some() {
                // Under the lock, from the file as it is now (another process may have tied
                // the name meanwhile): best-effort, so a home that refuses writes still serves.
                let _ = update(home, |ties| match decide(ties, name, &root) {
                    Decision::Ours(Some(root)) => {
                        add_folder(ties.projects.entry(name.to_string()).or_default(), root);
                        true
                    }
                    _ => false,
                });
            }
            return Tied { project: name.to_string(), held_by: None, unreadable: None };
        }
        Decision::HeldBy(folder) => {
            let (project, unkept) = own_project_of_root(home, &ties, name, &root);
            Tied { project, held_by: Some(folder), unreadable: unkept }
        }
    };
    if record && !ties.projects.contains_key(&tied.project) {
        // A folder's own project is held by it, so no other folder can name it.
        let _ = update(home, |ties| {
            let fresh = !ties.projects.contains_key(&tied.project);
            ties.projects.entry(tied.project.clone()).or_insert_with(|| vec![root.clone()]);
            fresh
        });
    }
    tied
}

/// Whether the folder `root` may use `name` by the ties.
fn decide(ties: &Ties, name: &str, root: &Path) -> Decision {
    let Some(folders) = ties.projects.get(name) else { return Decision::Ours(Some(root.to_path_buf())) };
    if folders.iter().any(|folder| folder == root) {
        return Decision::Ours(None);
    }
    let here = GitIdentity::of(root);
    if !here.is_empty() && folders.iter().any(|folder| here.shares(&GitIdentity::of(folder), folder)) {
        return Decision::Ours(Some(root.to_path_buf()));
    }
    Decision::HeldBy(folders.first().cloned().unwrap_or_default())
}

/// The project the ties record for the folder `path`, which may be gone (a checkout deleted
/// before its session was captured): the project of the recorded folder that is `path`
/// itself or its nearest ancestor, among the folders that are gone too and the project root
/// the folders still there give (the nearest `.brain.toml` or git root above `path`). A
/// recorded folder that still exists without being that root is not `path`'s project: a
/// folder below it would name its own. When several projects record the folder, a name it
/// shares by a tie comes before a folder's own project (`name.1f2e3d4c`), as for a folder
/// that exists. `None` when the ties record none of these folders or cannot be read. Reads
/// the ties without writing anything.
pub fn recorded_project(home: &Path, path: &Path) -> Option<String> {
    let ties = load(home).ok()?;
    let path = real_path(path);
    let root = root_of(&path);
    let gone = path.ancestors().take_while(|folder| !folder.exists());
    gone.chain([root.as_path()]).find_map(|folder| project_recording(&ties, folder))
}

/// The project whose folders include `folder`, a tie's name before a folder's own project.
fn project_recording(ties: &Ties, folder: &Path) -> Option<String> {
    let is_own = |project: &str| project.rsplit_once('.').is_some_and(|(_, suffix)| is_own_suffix(suffix));
    let mut recording =
        ties.projects.iter().filter(|(_, folders)| folders.iter().any(|f| f == folder)).map(|(project, _)| project);
    let first = recording.next()?;
    if !is_own(first) {
        return Some(first.clone());
    }
    Some(recording.find(|project| !is_own(project)).unwrap_or(first).clone())
}

/// Ties `name` to the folder of `cwd` (`brain project link`); returns the folders that hold
/// it. An unreadable ties file is replaced (the error says what it held is gone).
pub fn link(home: &Path, name: &str, cwd: &Path) -> BrainResult<Vec<PathBuf>> {
    let root = root_of(cwd);
    let mut folders = Vec::new();
    update_or_replace(home, |ties| {
        let entry = ties.projects.entry(name.to_string()).or_default();
        add_folder(entry, root.clone());
        folders = entry.clone();
        true
    })?;
    Ok(folders)
}

/// Unties `name` from the folder of `cwd`; returns whether it was tied there.
pub fn unlink(home: &Path, name: &str, cwd: &Path) -> BrainResult<bool> {
    let root = root_of(cwd);
    let mut removed = false;
    update(home, |ties| {
        let Some(folders) = ties.projects.get_mut(name) else { return false };
        let before = folders.len();
        folders.retain(|folder| *folder != root);
        removed = folders.len() < before;
        if folders.is_empty() {
            ties.projects.remove(name);
        }
        removed
    })?;
    Ok(removed)
}

/// Every tied project and its folders.
pub fn list(home: &Path) -> BrainResult<BTreeMap<String, Vec<PathBuf>>> {
    Ok(load(home)?.projects)
}

/// Changes the ties under the home's lock: `change` says whether it changed anything.
fn update(home: &Path, change: impl FnOnce(&mut Ties) -> bool) -> BrainResult<()> {
    let _lock = lock(home)?;
    let mut ties = load(home)?;
    if change(&mut ties) { save_salted(home, &ties) } else { Ok(()) }
}

/// Saves the ties with a salt beside them, under the lock held by the caller: once a home
/// has ties, folders' own names are salted ([`own_project_of_root`]).
fn save_salted(home: &Path, ties: &Ties) -> BrainResult<()> {
    let _ = salt_locked(home);
    save(home, ties)
}

/// As [`update`], starting afresh when the file cannot be read (`brain project link` mends it).
fn update_or_replace(home: &Path, change: impl FnOnce(&mut Ties) -> bool) -> BrainResult<()> {
    let _lock = lock(home)?;
    let mut ties = match load(home) {
        Ok(ties) => ties,
        Err(err) => {
            eprintln!("warning: {err}; it is replaced by the tie made now");
            Ties::default()
        }
    };
    if change(&mut ties) { save_salted(home, &ties) } else { Ok(()) }
}

/// The home's lock of the ties (`project-folders.lock`), held until dropped.
fn lock(home: &Path) -> BrainResult<std::fs::File> {
    let path = home.join("project-folders.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|err| BrainError::internal(format!("cannot open {}: {err}", path.display())))?;
    file.lock().map_err(|err| BrainError::internal(format!("cannot lock {}: {err}", path.display())))?;
    Ok(file)
}

fn add_folder(folders: &mut Vec<PathBuf>, root: PathBuf) {
    if folders.contains(&root) {
        return;
    }
    if folders.len() >= MAX_FOLDERS_PER_PROJECT {
        folders.remove(1);
    }
    folders.push(root);
}

/// The folder a project is tied by: the project's root (the nearest `.brain.toml`, else the
/// git root, else the folder), its real path.
fn root_of(cwd: &Path) -> PathBuf {
    real_path(&super::project_root(cwd))
}

/// The real path of `path` as far as it exists: a folder that is gone keeps its name below
/// the real path of its nearest ancestor still there, so it is found under the path the ties
/// recorded for it while it existed.
fn real_path(path: &Path) -> PathBuf {
    for existing in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return match path.strip_prefix(existing) {
                Ok(rest) if !rest.as_os_str().is_empty() => real.join(rest),
                _ => real,
            };
        }
    }
    path.to_path_buf()
}

/// A folder's own project: `name.` and the first 8 hex digits of the SHA-256 of the home's
/// salt ([`salt`]) and its root's path. Without the salt a repository could name the own
/// project of a folder whose path it guesses (`/home/runner/work/acme/acme`) before that
/// folder is first used, and so hold it. A name the folder already holds as its own is kept,
/// whatever becomes of the salt (and names given before salts, of the path alone, too).
/// The second value says why the name cannot be kept, when the home cannot keep a salt.
fn own_project_of_root(home: &Path, ties: &Ties, name: &str, root: &Path) -> (String, Option<String>) {
    let keep = MAX_SCOPE_NAME_CHARS - 9;
    let name: String = name.chars().take(keep).collect();
    let prefix = format!("{name}.");
    let held = ties
        .projects
        .range(prefix.clone()..)
        .take_while(|(project, _)| project.starts_with(&prefix))
        .find(|(project, folders)| is_own_suffix(&project[prefix.len()..]) && folders.iter().any(|f| f == root));
    if let Some((project, _)) = held {
        return (project.clone(), None);
    }
    let path = root.to_string_lossy();
    match salt(home) {
        Ok(salt) => {
            let hash =
                Sha256::new().chain_update(salt.as_bytes()).chain_update([0]).chain_update(path.as_bytes()).finalize();
            (format!("{prefix}{}", &hex::encode(hash)[..8]), None)
        }
        // A home that cannot keep a salt: the path alone names the project, unless another
        // folder holds that name (a repository can compute it); then a random one, kept by
        // the ties where they can be written.
        Err(why) => {
            let unsalted = format!("{prefix}{}", &hex::encode(Sha256::digest(path.as_bytes()))[..8]);
            if !ties.projects.contains_key(&unsalted) {
                return (unsalted, Some(why));
            }
            let mut bytes = [0u8; 4];
            let _ = getrandom::fill(&mut bytes);
            (format!("{prefix}{}", hex::encode(bytes)), Some(why))
        }
    }
}

/// Whether `suffix` is the 8 hex digits of an own project's name.
fn is_own_suffix(suffix: &str) -> bool {
    suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The home's salt of folders' own project names (`project-folders.salt`, 32 hex digits),
/// made on first need under the ties' lock; why not, when the home cannot keep one.
fn salt(home: &Path) -> Result<String, String> {
    if let Some(salt) = read_salt(home) {
        return Ok(salt);
    }
    let _lock = lock(home).map_err(|err| err.to_string())?;
    salt_locked(home)
}

fn read_salt(home: &Path) -> Option<String> {
    let text = read_small(&home.join(SALT_FILE))?;
    let salt = text.trim();
    (salt.len() == 32 && salt.bytes().all(|b| b.is_ascii_hexdigit())).then(|| salt.to_string())
}

/// [`salt`], under the ties' lock held by the caller. A salt file that is not one (empty,
/// cut short, not a file) is replaced: the folders it named keep their names by the ties.
fn salt_locked(home: &Path) -> Result<String, String> {
    if let Some(salt) = read_salt(home) {
        return Ok(salt);
    }
    let file = home.join(SALT_FILE);
    let cannot = |err: std::io::Error| format!("cannot keep {}: {err}", file.display());
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| format!("no randomness for {}: {err}", file.display()))?;
    let salt = hex::encode(bytes);
    let temp = crate::fsio::temp_path(&file);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&temp)
        .and_then(|mut out| std::io::Write::write_all(&mut out, format!("{salt}\n").as_bytes()))
        .and_then(|()| std::fs::rename(&temp, &file));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(cannot(err));
    }
    Ok(salt)
}

fn path(home: &Path) -> PathBuf {
    home.join(PROJECT_FOLDERS_FILE)
}

fn load(home: &Path) -> BrainResult<Ties> {
    let file = path(home);
    let unreadable = |why: String| BrainError::Config {
        message: format!("cannot read {}: {why}", file.display()),
        hint: Some(
            "it ties project names to folders; `brain project link` in each project's folder writes it again".into(),
        ),
    };
    match std::fs::metadata(&file) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Ties::default()),
        Err(err) => return Err(unreadable(err.to_string())),
        Ok(meta) if meta.len() > MAX_FILE_BYTES => {
            return Err(unreadable(format!("{} bytes (at most {MAX_FILE_BYTES})", meta.len())));
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(&file).map_err(|err| unreadable(err.to_string()))?;
    serde_json::from_str(&text).map_err(|err| unreadable(err.to_string()))
}

fn save(home: &Path, ties: &Ties) -> BrainResult<()> {
    let file = path(home);
    let text = serde_json::to_string_pretty(ties).map_err(|err| BrainError::internal(err.to_string()))?;
    if text.len() as u64 >= MAX_FILE_BYTES {
        return Err(BrainError::user(format!(
            "{} would pass {MAX_FILE_BYTES} bytes: not written (`brain project unlink` in folders gone for good)",
            file.display()
        )));
    }
    let temp = crate::fsio::temp_path(&file);
    std::fs::write(&temp, text + "\n").and_then(|()| std::fs::rename(&temp, &file)).map_err(|err| {
        let _ = std::fs::remove_file(&temp);
        BrainError::internal(format!("cannot write {}: {err}", file.display()))
    })
}

/// What makes two folders one repository: the git directory they share (a worktree's
/// `.git` file points into it) and the URL of their `origin` remote.
#[derive(Debug, Default, PartialEq)]
struct GitIdentity {
    common_dir: Option<PathBuf>,
    origin: Option<String>,
}

impl GitIdentity {
    fn of(root: &Path) -> GitIdentity {
        let Some(dot_git) = git_entry(root) else { return GitIdentity::default() };
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { return GitIdentity::default() };
        let common_dir = if meta.is_dir() {
            Some(dot_git)
        } else if meta.is_file() {
            worktree_common_dir(&dot_git)
        } else {
            // A link: git never makes one, an archive can point it at another repository.
            None
        };
        let common_dir = common_dir.map(|dir| std::fs::canonicalize(&dir).unwrap_or(dir));
        let origin =
            common_dir.as_ref().and_then(|dir| read_small(&dir.join("config"))).and_then(|config| origin_url(&config));
        GitIdentity { common_dir, origin }
    }

    fn is_empty(&self) -> bool {
        self.common_dir.is_none() && self.origin.is_none()
    }

    /// Whether this folder is the same repository as `other` (the identity of `folder`): one
    /// git directory, one `origin`, or an `origin` that is `folder` itself (a local clone).
    fn shares(&self, other: &GitIdentity, folder: &Path) -> bool {
        let same_dir = self.common_dir.is_some() && self.common_dir == other.common_dir;
        let same_origin = self.origin.is_some() && self.origin == other.origin;
        let cloned_from_folder = self.origin.as_deref().is_some_and(|origin| {
            let origin = origin.strip_prefix("file://").unwrap_or(origin);
            Path::new(origin).is_absolute()
                && std::fs::canonicalize(origin)
                    .is_ok_and(|path| path == folder || Some(&path) == other.common_dir.as_ref())
        });
        same_dir || same_origin || cloned_from_folder
    }
}

/// The `.git` of the repository `root` is in: at `root`, or in an ancestor below the user's
/// home folder (a repository of the home itself, such as dotfiles, would make every folder
/// under it one repository).
fn git_entry(root: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from).and_then(|home| std::fs::canonicalize(home).ok());
    for dir in root.ancestors() {
        if dir != root && home.as_deref().is_some_and(|home| home.starts_with(dir)) {
            return None;
        }
        let candidate = dir.join(".git");
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return Some(candidate);
        }
    }
    None
}

/// The common git directory of a worktree whose `.git` file is `dot_git`, when that
/// directory knows the worktree (see [`linked_git_dir`]).
fn worktree_common_dir(dot_git: &Path) -> Option<PathBuf> {
    linked_git_dir(dot_git).map(|linked| linked.common)
}

/// The git directories a worktree's `.git` file leads to, as git made them (both
/// canonical, with no link in their path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedGitDir {
    /// The worktree's own git directory (its `HEAD`, its index).
    pub own: PathBuf,
    /// The repository's common git directory (`info/exclude`, the config).
    pub common: PathBuf,
}

/// The git directories of the worktree whose `.git` file is `dot_git` — believed only the
/// way git itself wrote them: the `gitdir:` it names must hold a `gitdir` file pointing back
/// at this `.git` file, and when it names a common directory (`commondir`), it must be one of
/// that directory's `worktrees/`. A `.git` file an archive carries, pointing at a repository
/// that never made it (or anywhere else), is not believed.
pub fn linked_git_dir(dot_git: &Path) -> Option<LinkedGitDir> {
    let text = read_small(dot_git)?;
    let target = text.strip_prefix("gitdir:")?.trim();
    let git_dir = std::fs::canonicalize(dot_git.parent()?.join(target)).ok()?;
    let back = read_small(&git_dir.join("gitdir"))?;
    let back = std::fs::canonicalize(git_dir.join(back.trim())).ok()?;
    if back != std::fs::canonicalize(dot_git).ok()? {
        return None;
    }
    let common = match read_small(&git_dir.join("commondir")) {
        Some(common) => {
            let common = std::fs::canonicalize(git_dir.join(common.trim())).ok()?;
            if git_dir.parent() != Some(common.join("worktrees").as_path()) {
                return None;
            }
            common
        }
        None => git_dir.clone(),
    };
    Some(LinkedGitDir { own: git_dir, common })
}

/// A small text file (a git pointer or config), or `None`.
fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The URL of `[remote "origin"]` in a git config, without a trailing `/` or `.git`.
fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_origin = line.replace(char::is_whitespace, "") == "[remote\"origin\"]";
            continue;
        }
        if in_origin
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            let url = value.trim().trim_matches('"').trim_end_matches('/');
            let url = url.strip_suffix(".git").unwrap_or(url);
            return (!url.is_empty()).then(|| url.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(base: &Path, name: &str) -> PathBuf {
        let dir = base.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::canonicalize(dir).unwrap()
    }

    fn git_repo(dir: &Path, origin: Option<&str>) {
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        let config =
            origin.map_or(String::new(), |url| format!("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {url}\n"));
        std::fs::write(dir.join(".git/config"), config).unwrap();
    }

    #[test]
    fn the_first_folder_holds_a_name_and_another_gets_a_project_of_its_own() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let (first, other) = (folder(base.path(), "a/acme"), folder(base.path(), "b/acme"));
        assert_eq!(tie(&home, "acme", &first, true), Tied { project: "acme".into(), held_by: None, unreadable: None });
        assert_eq!(tie(&home, "acme", &first.join("."), true).project, "acme");
        let elsewhere = tie(&home, "acme", &other, true);
        assert!(
            elsewhere.project.starts_with("acme.") && elsewhere.project.len() == "acme.".len() + 8,
            "{elsewhere:?}"
        );
        assert_eq!(elsewhere.held_by.as_deref(), Some(first.as_path()));
        assert_eq!(tie(&home, "acme", &other, true), elsewhere, "the same own project every time");
        brain_core::scope::validate_scope_name(&elsewhere.project).unwrap();

        // Linked by the user, it shares the name; unlinked, it is on its own again.
        assert_eq!(link(&home, "acme", &other).unwrap(), [first.clone(), other.clone()]);
        assert_eq!(tie(&home, "acme", &other, true).project, "acme");
        assert!(unlink(&home, "acme", &other).unwrap());
        assert_eq!(tie(&home, "acme", &other, true), elsewhere);

        // Not recording ties nothing.
        assert_eq!(tie(&home, "beta", &other, false).project, "beta");
        assert!(!list(&home).unwrap().contains_key("beta"));
    }

    #[test]
    fn a_worktree_or_a_clone_of_the_same_remote_shares_the_name_and_a_stranger_does_not() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let main = folder(base.path(), "src/acme");
        git_repo(&main, Some("git@github.com:me/acme.git"));
        assert_eq!(tie(&home, "acme", &main.join("src"), true).project, "acme");

        // A worktree: a `.git` file pointing into the main repository's git directory.
        let worktree = folder(base.path(), "trees/feature");
        let git_dir = main.join(".git/worktrees/feature");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
        std::fs::write(worktree.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
        // Until the main repository knows the worktree (git writes its `.git` file's path
        // there), the `.git` file is not believed: an archive can carry one.
        assert_ne!(tie(&home, "acme", &worktree, false).project, "acme");
        std::fs::write(git_dir.join("gitdir"), format!("{}\n", worktree.join(".git").display())).unwrap();
        assert_eq!(tie(&home, "acme", &worktree, true).project, "acme");

        // A second clone of the same remote (its URL written without `.git`).
        let clone = folder(base.path(), "jobs/17/acme");
        git_repo(&clone, Some("git@github.com:me/acme"));
        assert_eq!(tie(&home, "acme", &clone, true).project, "acme");
        // A clone of the main folder itself (`git clone ~/src/acme`).
        let local = folder(base.path(), "tmp/fix/acme");
        git_repo(&local, Some(&main.display().to_string()));
        assert_eq!(tie(&home, "acme", &local, true).project, "acme");
        assert_eq!(list(&home).unwrap()["acme"], [main.clone(), worktree, clone, local]);

        // A repository from elsewhere that names itself acme.
        let stranger = folder(base.path(), "Downloads/acme");
        git_repo(&stranger, Some("https://example.com/someone/acme.git"));
        assert_ne!(tie(&home, "acme", &stranger, true).project, "acme");
        let no_remote = folder(base.path(), "tmp/acme");
        git_repo(&no_remote, None);
        assert_ne!(tie(&home, "acme", &no_remote, true).project, "acme");

        // A `.git` that is a link to the main repository's.
        let linked = folder(base.path(), "tmp/linked/acme");
        std::os::unix::fs::symlink(main.join(".git"), linked.join(".git")).unwrap();
        assert_ne!(tie(&home, "acme", &linked, true).project, "acme");

        // A folder's own project is held by it: another folder naming it gets its own.
        let own = tie(&home, "acme", &stranger, true).project;
        let naming_it = folder(base.path(), "elsewhere/x");
        assert_ne!(tie(&home, &own, &naming_it, true).project, own);
    }

    #[test]
    fn a_folders_own_project_cannot_be_guessed_and_claimed_before_it_is_used() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let (holder, victim, hostile) =
            (folder(base.path(), "a/acme"), folder(base.path(), "b/acme"), folder(base.path(), "c/x"));
        assert_eq!(tie(&home, "acme", &holder, true).project, "acme");
        // What a repository could compute from the victim folder's path alone, claimed first.
        let guessed = format!("acme.{}", &hex::encode(Sha256::digest(victim.to_string_lossy().as_bytes()))[..8]);
        assert_eq!(tie(&home, &guessed, &hostile, true).project, guessed);

        let own = tie(&home, "acme", &victim, true);
        assert_ne!(own.project, guessed, "the salt makes the own name unguessable");
        assert!(own.project.starts_with("acme.") && own.project.len() == "acme.".len() + 8, "{own:?}");
        assert_eq!(tie(&home, "acme", &victim, false), own, "stable");
        assert_eq!(list(&home).unwrap()[&own.project], std::slice::from_ref(&victim));
        let salt = std::fs::read_to_string(home.join(SALT_FILE)).unwrap();
        assert_eq!(salt.trim().len(), 32);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(home.join(SALT_FILE)).unwrap().permissions().mode() & 0o777, 0o600);

        // Another home, another salt: another name for the same folder.
        let other_home = folder(base.path(), "home2");
        tie(&other_home, "acme", &holder, true);
        assert_ne!(tie(&other_home, "acme", &victim, true).project, own.project);
    }

    #[test]
    fn a_folder_keeps_its_own_project_when_the_salt_is_lost_and_a_home_without_one_lends_no_claimed_name() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let (holder, other) = (folder(base.path(), "a/acme"), folder(base.path(), "b/acme"));
        tie(&home, "acme", &holder, true);
        let own = tie(&home, "acme", &other, true).project;
        // A salt file broken or emptied: the folder keeps the name the ties record for it.
        std::fs::write(home.join(SALT_FILE), "garbage\n").unwrap();
        assert_eq!(tie(&home, "acme", &other, true).project, own);
        assert_eq!(list(&home).unwrap().keys().filter(|p| p.starts_with("acme.")).count(), 1);

        // A home that cannot keep a salt (here its file is a folder), where a repository has
        // claimed the name the path alone gives: that name is not lent to the folder.
        let home = folder(base.path(), "home2");
        std::fs::create_dir_all(home.join(SALT_FILE)).unwrap();
        let victim = folder(base.path(), "c/acme");
        let guessed = format!("acme.{}", &hex::encode(Sha256::digest(victim.to_string_lossy().as_bytes()))[..8]);
        let hostile = folder(base.path(), "d/evil");
        assert_eq!(tie(&home, &guessed, &hostile, true).project, guessed);
        tie(&home, "acme", &holder, true);
        let tied = tie(&home, "acme", &victim, true);
        assert_ne!(tied.project, guessed, "{tied:?}");
        assert!(tied.unreadable.as_deref().is_some_and(|why| why.contains(SALT_FILE)), "{tied:?}");
    }

    #[test]
    fn a_gone_folder_has_the_project_the_ties_record_for_it_or_its_root() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let holder = folder(base.path(), "a/acme");
        git_repo(&holder, None);
        let clone = folder(base.path(), "b/acme");
        git_repo(&clone, Some("https://example.com/someone/acme.git"));
        let scratch = folder(base.path(), "c/scratch");
        assert_eq!(tie(&home, "acme", &holder, true).project, "acme");
        let own = tie(&home, "acme", &clone, true).project;
        assert_ne!(own, "acme");
        assert_eq!(tie(&home, "scratch", &scratch, true).project, "scratch");
        std::fs::remove_dir_all(&clone).unwrap();
        let files = |home: &Path| {
            let mut files: Vec<_> = std::fs::read_dir(home)
                .unwrap()
                .map(|entry| {
                    let path = entry.unwrap().path();
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    (path, bytes)
                })
                .collect();
            files.sort();
            files
        };
        let before = files(&home);

        // The deleted clone and a folder inside it keep the clone's own project, not the name
        // the holder's folder holds.
        assert_eq!(recorded_project(&home, &clone).as_deref(), Some(own.as_str()));
        assert_eq!(recorded_project(&home, &clone.join("src/bin")).as_deref(), Some(own.as_str()));
        // A folder gone from a repository still there has that repository's project.
        assert_eq!(recorded_project(&home, &holder.join("gone/deeper")).as_deref(), Some("acme"));
        // A recorded folder that is no project root does not claim the folders gone below it.
        assert_eq!(recorded_project(&home, &scratch.join("victim")), None);
        assert_eq!(recorded_project(&home, &base.path().join("d/elsewhere")), None);
        assert_eq!(files(&home), before, "reading the ties writes nothing");

        // A folder also tied to a name by a link has that name, as it would if it existed.
        link(&home, "acme", &clone).unwrap();
        assert_eq!(recorded_project(&home, &clone).as_deref(), Some("acme"));

        // Ties that cannot be read record nothing.
        std::fs::write(home.join(PROJECT_FOLDERS_FILE), "{not json").unwrap();
        assert_eq!(recorded_project(&home, &clone), None);
    }

    #[test]
    fn a_folder_given_its_own_project_before_salts_keeps_it() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let (holder, other) = (folder(base.path(), "a/acme"), folder(base.path(), "b/acme"));
        let legacy = format!("acme.{}", &hex::encode(Sha256::digest(other.to_string_lossy().as_bytes()))[..8]);
        let file = serde_json::json!({ "projects": { "acme": [holder], legacy.clone(): [other.clone()] } });
        std::fs::write(home.join(PROJECT_FOLDERS_FILE), file.to_string()).unwrap();
        assert_eq!(tie(&home, "acme", &other, true).project, legacy);
    }

    #[test]
    fn a_broken_ties_file_gives_every_folder_its_own_project_until_a_link_replaces_it() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let repo = folder(base.path(), "acme");
        std::fs::write(home.join(PROJECT_FOLDERS_FILE), "{not json").unwrap();
        let tied = tie(&home, "acme", &repo, true);
        assert_ne!(tied.project, "acme");
        assert!(tied.unreadable.as_deref().is_some_and(|why| why.contains(PROJECT_FOLDERS_FILE)), "{tied:?}");
        assert!(list(&home).is_err(), "listing says what is wrong");
        assert_eq!(link(&home, "acme", &repo).unwrap(), std::slice::from_ref(&repo));
        assert_eq!(tie(&home, "acme", &repo, true).project, "acme");
    }

    #[test]
    fn folders_of_one_repository_below_the_users_home_share_it() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "brain-home");
        let monorepo = folder(base.path(), "mono");
        git_repo(&monorepo, None);
        let (a, b) = (folder(&monorepo, "a"), folder(&monorepo, "b"));
        std::fs::write(a.join(".brain.toml"), "").unwrap();
        std::fs::write(b.join(".brain.toml"), "").unwrap();
        assert_eq!(tie(&home, "mono-a", &a, true).project, "mono-a");
        assert_eq!(tie(&home, "mono-a", &b, true).project, "mono-a", "one repository");
    }
}
