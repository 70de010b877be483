//! Per-session hook state (`<home>/hooks/sessions/<token>.json`): turns seen and what the
//! session was last given, so `user-prompt-submit` refreshes only when something the session
//! sees changed. The file name is the session id when it is a safe token, else its hash
//! ([`safe_session_token`]); the file is read with a size bound and a bad one is a fresh state.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::harness::{LogPolicy, safe_session_token, write_log};
use brain_api::app::write_atomically;
use brain_api::error::BrainError;

/// A state file larger than this is not ours: it is ignored.
const MAX_STATE_BYTES: u64 = 64 * 1024;

/// What one session has been given.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// Prompts submitted so far.
    pub turns: u32,
    /// The store's write generation when the session's memory was last checked.
    pub generation: Option<u64>,
    /// The `brainHash` of the working memory the session was last given: what it sees. A
    /// refresh is due only when this changes (not on a write to another project).
    pub brain_hash: Option<String>,
    /// Ids of the items the session was given (pins, recall), so a task recall adds only
    /// what is new; at most [`MAX_GIVEN`].
    pub given: Vec<String>,
    /// The first prompt's task recall has run.
    pub task_recall_done: bool,
    /// The store's generation when critical signals were last looked at (`None`: never, so
    /// the signals active then are taken as already known).
    pub signals_generation: Option<u64>,
    /// Ids of the critical signals this session has seen; at most [`MAX_GIVEN`].
    pub signals_seen: Vec<String>,
}

/// Ids remembered per session.
pub const MAX_GIVEN: usize = 200;

impl SessionState {
    /// Remembers that the session was given `ids`.
    pub fn give<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) {
        for id in ids {
            if self.given.len() < MAX_GIVEN && !self.given.iter().any(|given| given == id) {
                self.given.push(id.to_string());
            }
        }
    }
}

impl SessionState {
    fn path(home: &Path, session: &str) -> PathBuf {
        home.join("hooks").join("sessions").join(format!("{}.json", safe_session_token(session)))
    }

    /// The saved state, or a fresh one (missing, oversized, not a regular file, not JSON).
    pub fn load(home: &Path, session: &str) -> SessionState {
        let path = Self::path(home, session);
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            return SessionState::default();
        };
        if !metadata.is_file() || metadata.len() > MAX_STATE_BYTES {
            return SessionState::default();
        }
        let mut bytes = Vec::new();
        let read = std::fs::File::open(&path).and_then(|file| file.take(MAX_STATE_BYTES).read_to_end(&mut bytes));
        if read.is_err() {
            return SessionState::default();
        }
        serde_json::from_slice(&bytes).unwrap_or_default()
    }

    /// Saves the state; a failure is logged, never returned (the hook goes on).
    pub fn save(&self, home: &Path, session: &str) {
        let path = Self::path(home, session);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(BrainError::from)
            .and_then(|()| write_atomically(&path, serde_json::to_string(self).unwrap_or_default().as_bytes()));
        if let Err(err) = written {
            write_log(
                home,
                "hook-state",
                Some(&safe_session_token(session)),
                &format!("cannot save session state: {err}"),
                LogPolicy::ExistingHome,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_under_safe_names_and_bad_files_are_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let state = SessionState {
            turns: 3,
            generation: Some(9),
            brain_hash: Some("abc".into()),
            given: vec!["mem_1".into()],
            task_recall_done: true,
            ..SessionState::default()
        };
        state.save(dir.path(), "../../escape");
        assert_eq!(SessionState::load(dir.path(), "../../escape"), state);
        let names: Vec<String> = std::fs::read_dir(dir.path().join("hooks/sessions"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with("h-") && names[0].ends_with(".json"), "{names:?}");
        assert!(!dir.path().parent().unwrap().join("escape.json").exists());
        std::fs::write(dir.path().join("hooks/sessions/s2.json"), r#"{"turns":4,"generation":2}"#).unwrap();
        assert_eq!(SessionState::load(dir.path(), "s2").turns, 4, "the older form still reads");
        std::fs::write(dir.path().join("hooks/sessions/s1.json"), "{broken").unwrap();
        assert_eq!(SessionState::load(dir.path(), "s1"), SessionState::default());
    }
}
