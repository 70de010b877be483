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
//! Any other folder gets a project of its own, the name followed by a hash of its path
//! (`acme-api.1f2e3d4c`), until the user ties it (`brain project link`). A name given on the
//! command line or in `BRAIN_PROJECT` is the user's choice and is not checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use brain_core::scope::MAX_SCOPE_NAME_CHARS;

use crate::error::{BrainError, BrainResult};

/// The file in the home that ties project names to folders.
pub const PROJECT_FOLDERS_FILE: &str = "project-folders.json";

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
    /// The project to use: the name, or the folder's own when the name is held elsewhere.
    pub project: String,
    /// The folder holding the name, when this folder was given a project of its own.
    pub held_by: Option<PathBuf>,
}

/// The project for `name`, which the folder of `cwd` chose: `name` when this folder holds
/// it or may share it (recording the tie when `record`), else the folder's own project.
pub fn tie(home: &Path, name: &str, cwd: &Path, record: bool) -> BrainResult<Tied> {
    let root = root_of(cwd);
    let mut ties = load(home)?;
    let ours = Tied { project: name.to_string(), held_by: None };
    let Some(folders) = ties.projects.get_mut(name) else {
        if record {
            ties.projects.insert(name.to_string(), vec![root]);
            record_tie(home, &ties);
        }
        return Ok(ours);
    };
    if folders.contains(&root) {
        return Ok(ours);
    }
    let here = GitIdentity::of(&root);
    if !here.is_empty() && folders.iter().any(|folder| here.shares(&GitIdentity::of(folder), folder)) {
        if record {
            add_folder(folders, root);
            record_tie(home, &ties);
        }
        return Ok(ours);
    }
    let held_by = folders.first().cloned();
    Ok(Tied { project: own_project_of_root(name, &root), held_by })
}

/// Ties `name` to the folder of `cwd` (`brain project link`); returns the folders that hold it.
pub fn link(home: &Path, name: &str, cwd: &Path) -> BrainResult<Vec<PathBuf>> {
    let mut ties = load(home)?;
    let folders = ties.projects.entry(name.to_string()).or_default();
    add_folder(folders, root_of(cwd));
    let folders = folders.clone();
    save(home, &ties)?;
    Ok(folders)
}

/// Unties `name` from the folder of `cwd`; returns whether it was tied there.
pub fn unlink(home: &Path, name: &str, cwd: &Path) -> BrainResult<bool> {
    let mut ties = load(home)?;
    let root = root_of(cwd);
    let Some(folders) = ties.projects.get_mut(name) else { return Ok(false) };
    let before = folders.len();
    folders.retain(|folder| *folder != root);
    let removed = folders.len() < before;
    if folders.is_empty() {
        ties.projects.remove(name);
    }
    if removed {
        save(home, &ties)?;
    }
    Ok(removed)
}

/// Every tied project and its folders.
pub fn list(home: &Path) -> BrainResult<BTreeMap<String, Vec<PathBuf>>> {
    Ok(load(home)?.projects)
}

/// Records a first use, as far as the home lets it: a home that refuses writes (read-only,
/// full) still serves what it holds, and the tie is recorded by a later use.
fn record_tie(home: &Path, ties: &Ties) {
    let _ = save(home, ties);
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
    let root = super::project_root(cwd);
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// A folder's own project: `name.` and the first 8 hex digits of its root's path's SHA-256.
pub fn own_project(name: &str, cwd: &Path) -> String {
    own_project_of_root(name, &root_of(cwd))
}

fn own_project_of_root(name: &str, root: &Path) -> String {
    let hash = hex::encode(Sha256::digest(root.to_string_lossy().as_bytes()));
    let keep = MAX_SCOPE_NAME_CHARS - 9;
    let name: String = name.chars().take(keep).collect();
    format!("{name}.{}", &hash[..8])
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
        let Some(dot_git) = super::find_upwards(root, ".git") else { return GitIdentity::default() };
        let common_dir = if dot_git.is_dir() {
            Some(dot_git)
        } else {
            read_small(&dot_git).and_then(|text| {
                let target = text.strip_prefix("gitdir:")?.trim();
                let git_dir = dot_git.parent()?.join(target);
                match read_small(&git_dir.join("commondir")) {
                    Some(common) => Some(git_dir.join(common.trim())),
                    None => Some(git_dir),
                }
            })
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
        assert_eq!(tie(&home, "acme", &first, true).unwrap(), Tied { project: "acme".into(), held_by: None });
        assert_eq!(tie(&home, "acme", &first.join("."), true).unwrap().project, "acme");
        let elsewhere = tie(&home, "acme", &other, true).unwrap();
        assert!(
            elsewhere.project.starts_with("acme.") && elsewhere.project.len() == "acme.".len() + 8,
            "{elsewhere:?}"
        );
        assert_eq!(elsewhere.held_by.as_deref(), Some(first.as_path()));
        assert_eq!(tie(&home, "acme", &other, true).unwrap(), elsewhere, "the same own project every time");
        brain_core::scope::validate_scope_name(&elsewhere.project).unwrap();

        // Linked by the user, it shares the name; unlinked, it is on its own again.
        assert_eq!(link(&home, "acme", &other).unwrap(), [first.clone(), other.clone()]);
        assert_eq!(tie(&home, "acme", &other, true).unwrap().project, "acme");
        assert!(unlink(&home, "acme", &other).unwrap());
        assert_eq!(tie(&home, "acme", &other, true).unwrap(), elsewhere);

        // Not recording ties nothing.
        assert_eq!(tie(&home, "beta", &other, false).unwrap().project, "beta");
        assert!(!list(&home).unwrap().contains_key("beta"));
    }

    #[test]
    fn a_worktree_or_a_clone_of_the_same_remote_shares_the_name_and_a_stranger_does_not() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        let main = folder(base.path(), "src/acme");
        git_repo(&main, Some("git@github.com:me/acme.git"));
        assert_eq!(tie(&home, "acme", &main.join("src"), true).unwrap().project, "acme");

        // A worktree: a `.git` file pointing into the main repository's git directory.
        let worktree = folder(base.path(), "trees/feature");
        let git_dir = main.join(".git/worktrees/feature");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
        std::fs::write(worktree.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
        assert_eq!(tie(&home, "acme", &worktree, true).unwrap().project, "acme");

        // A second clone of the same remote (its URL written without `.git`).
        let clone = folder(base.path(), "jobs/17/acme");
        git_repo(&clone, Some("git@github.com:me/acme"));
        assert_eq!(tie(&home, "acme", &clone, true).unwrap().project, "acme");
        // A clone of the main folder itself (`git clone ~/src/acme`).
        let local = folder(base.path(), "tmp/fix/acme");
        git_repo(&local, Some(&main.display().to_string()));
        assert_eq!(tie(&home, "acme", &local, true).unwrap().project, "acme");
        assert_eq!(list(&home).unwrap()["acme"], [main.clone(), worktree, clone, local]);

        // A repository from elsewhere that names itself acme.
        let stranger = folder(base.path(), "Downloads/acme");
        git_repo(&stranger, Some("https://example.com/someone/acme.git"));
        assert_ne!(tie(&home, "acme", &stranger, true).unwrap().project, "acme");
        let no_remote = folder(base.path(), "tmp/acme");
        git_repo(&no_remote, None);
        assert_ne!(tie(&home, "acme", &no_remote, true).unwrap().project, "acme");
    }

    #[test]
    fn a_broken_ties_file_is_an_error_naming_it() {
        let base = tempfile::tempdir().unwrap();
        let home = folder(base.path(), "home");
        std::fs::write(home.join(PROJECT_FOLDERS_FILE), "{not json").unwrap();
        let err = tie(&home, "acme", base.path(), true).unwrap_err().to_string();
        assert!(err.contains(PROJECT_FOLDERS_FILE), "{err}");
    }
}
