//! The one rule for files brain writes into a repository (a project's host settings,
//! Cursor's rule and `.git/info/exclude`, the `brain inject` block, a plugin marketplace):
//! never through a symbolic link below the folder brain was pointed at.
//!
//! A cloned repository can carry links: `.claude -> ~/.claude` would turn a project install
//! into an edit of the user's own settings, `.cursor/rules -> ../other-repo/docs` would copy
//! the personal working memory wherever the repository's author chose, and a linked
//! `settings.json` would be read into the project (and the link replaced by a file). So
//! every component below the root is checked before anything is read or written, the file
//! itself included, and a link is refused with its path and target named. The root itself
//! (the project folder, `--dir`, the plugin folder) is the user's choice and may be a link.

use std::path::Path;

use brain_api::error::{BrainError, BrainResult};

/// The first symbolic link on the way from `root` to `path` (below `root`, `path` itself
/// included) and where it points; `None` when there is none, when the way ends at a missing
/// component (brain creates real folders from there) or when `path` is not under `root`.
pub fn first_link(root: &Path, path: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let relative = path.strip_prefix(root).ok()?;
    let mut current = root.to_path_buf();
    for component in relative.components() {
        current.push(component);
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&current).unwrap_or_default();
                return Some((current, target));
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Refuses to write `path` when a symbolic link lies between `root` and it (see the module
/// documentation); the error names the link and where it points.
pub fn refuse_links(root: &Path, path: &Path) -> BrainResult<()> {
    let Some((link, target)) = first_link(root, path) else { return Ok(()) };
    Err(BrainError::user_with_hint(
        format!("refusing to write {}: {} is a symbolic link to {}", path.display(), link.display(), target.display()),
        "brain never writes through a link inside a repository (it can lead anywhere); make it a real folder or \
         file, or write to where it points yourself",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_below_the_root_are_found_the_root_and_missing_parts_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join(".claude")).unwrap();
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), real.join(".cursor")).unwrap();
        std::os::unix::fs::symlink("settings.json", real.join(".claude/linked.json")).unwrap();
        let linked_root = dir.path().join("linked-root");
        std::os::unix::fs::symlink(&real, &linked_root).unwrap();

        assert_eq!(first_link(&real, &real.join(".claude/settings.json")), None, "a missing file is written");
        assert_eq!(first_link(&real, &real.join(".gemini/x/settings.json")), None, "missing folders are created");
        assert_eq!(
            first_link(&linked_root, &linked_root.join(".claude/settings.json")),
            None,
            "the root may be a link"
        );
        assert_eq!(
            first_link(&real, &real.join(".cursor/rules/brain.mdc")),
            Some((real.join(".cursor"), dir.path().join("elsewhere")))
        );
        assert_eq!(
            first_link(&real, &real.join(".claude/linked.json")),
            Some((real.join(".claude/linked.json"), "settings.json".into()))
        );
        let err = refuse_links(&real, &real.join(".cursor/rules/brain.mdc")).unwrap_err().to_string();
        assert!(err.starts_with("refusing to write ") && err.contains(".cursor is a symbolic link to "), "{err}");
    }
}
