//! The vault's feed as a session start reads it: one read of the feed state the last scan
//! or tick stored (`vault_state.feed`), no vault walk, and the index snapshot the feed is
//! computed from when that state is of an older shape.

use std::collections::BTreeSet;

use brain_core::Signal;
use brain_core::assemble::Feed;
use brain_core::keeper::feed::{
    FEED_STATE_VERSION, FeedState, OLDEST_SERVED_FEED_STATE, active_inject_states, active_injects, active_signals,
    arc_views, owned_by, project_hot, render_hot_arcs, render_injects, render_signals,
};
use brain_core::keeper::snapshot::{IndexedFile, Snapshot};
use brain_core::keeper::state::{FileState, diagnostics_from_json};
use brain_store::VaultFileRow;

use crate::app::Brain;
use crate::error::BrainResult;

/// The index in memory: every row of `vault_files` with its decoded state.
pub fn load_snapshot(brain: &Brain) -> BrainResult<Snapshot> {
    let mut snapshot = Snapshot::new();
    brain.store().vault_files_each(true, &mut |row| {
        // An unreadable state is replaced by the file's next parse (`scan` re-reads it).
        let state = FileState::from_bytes(row.state).unwrap_or_default();
        snapshot.insert(row.relpath.to_string(), indexed_file(&row, state));
    })?;
    Ok(snapshot)
}

/// A row of the index as the snapshot holds it, with its decoded `state`.
pub fn indexed_file(row: &VaultFileRow<'_>, state: FileState) -> IndexedFile {
    IndexedFile {
        size: row.size,
        mtime_ns: row.mtime_ns,
        sha256: row.sha256.to_string(),
        state,
        diagnostics: diagnostics_from_json(row.relpath, row.diagnostics),
    }
}

/// The stored feed state; a state of an older shape (no projects) is computed from the
/// index instead, until the next scan or tick stores it again. `None` when no vault is
/// indexed or on any error.
fn stored_feed(brain: &Brain) -> Option<FeedState> {
    let text = brain.store().vault_value("feed").ok()??;
    let state = serde_json::from_str::<FeedState>(&text).ok()?;
    if (OLDEST_SERVED_FEED_STATE..=FEED_STATE_VERSION).contains(&state.version) {
        return Some(state);
    }
    let snapshot = load_snapshot(brain).ok()?;
    Some(FeedState::compute(&snapshot, brain.now, &brain.config.vault))
}

/// The indexed vault feed of `brain`'s project at `brain.now`: one read of the store, no file
/// system access. Empty when no vault is indexed, and on any error (session start fails
/// open).
pub fn indexed_feed(brain: &Brain) -> Feed {
    stored_feed(brain).map(|state| state.into_feed(brain.now, &brain.project, &brain.config.vault)).unwrap_or_default()
}

/// Every active signal of the indexed feed with the scope whose readers may see it: the
/// project of its arc, or global (a file without a project, `scope=global`, or at or above
/// `shared_signal_severity`).
pub fn indexed_signals(brain: &Brain) -> Vec<Signal> {
    stored_feed(brain).map(|state| state.scoped_signals(brain.now, &brain.config.vault)).unwrap_or_default()
}

/// [`indexed_feed`] and the active vault signals the same session sees (in the one signal
/// model), from one read of the store: what session start takes from the vault.
pub fn indexed_session_feed(brain: &Brain) -> (Feed, Vec<Signal>) {
    let Some(state) = stored_feed(brain) else { return (Feed::default(), Vec::new()) };
    let config = &brain.config.vault;
    let signals = state.project_signals(brain.now, &brain.project, config);
    (state.into_feed(brain.now, &brain.project, config), signals)
}

/// The projects named by the indexed vault's files (`project:`).
pub fn vault_projects(brain: &Brain) -> BrainResult<BTreeSet<String>> {
    let snapshot = load_snapshot(brain)?;
    Ok(snapshot.into_values().map(|file| file.state.project).filter(|project| !project.is_empty()).collect())
}

/// The feed files a project's feed has (the others cover the whole vault).
pub const PROJECT_FEED_FILES: [&str; 3] = ["hot-arcs.md", "inject.md", "signals.md"];

/// `name` (one of [`PROJECT_FEED_FILES`]) as the tick would write it for `project` alone,
/// from the index at `brain.now`: its own arcs, blocks and signals, those of files without a
/// project and the shared signals. `None` for another name.
pub fn project_feed_file(brain: &Brain, name: &str, project: &str) -> BrainResult<Option<String>> {
    let config = &brain.config.vault;
    let now = brain.now;
    let snapshot = load_snapshot(brain)?;
    Ok(match name {
        "hot-arcs.md" => {
            let views = arc_views(&snapshot, now);
            Some(render_hot_arcs(&project_hot(&views, project, config.hot_arcs), now))
        }
        "signals.md" => {
            let mut active = active_signals(&snapshot, now, config);
            active.retain(|signal| signal.visible_to(project, config));
            Some(render_signals(&active, now))
        }
        "inject.md" => {
            let mut states = active_inject_states(&snapshot, now);
            states.retain(|active| owned_by(active.project, project));
            Some(render_injects(&active_injects(&states), now))
        }
        _ => None,
    })
}
