//! `brain status` and the MCP tool `brain_status`: the store at a glance — the project, the
//! home, the write generation, items by status — and every active signal the project's
//! sessions see, items and vault alike (`crate::signals`), in the shape `GET
//! /api/v2/signals` serves.

use brain_core::{Signal, Status};
use brain_store::ItemFilter;
use serde::Serialize;

use crate::app::Brain;
use crate::error::BrainResult;
use crate::policy::Caller;

/// What `brain status` prints.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    pub project: String,
    /// The folder that holds the project name this folder chose, when this folder was given
    /// a project of its own instead (`config::folders`; the local user's only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_name_held_by: Option<String>,
    /// Why the project ties could not be read: this folder then has a project of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_ties_error: Option<String>,
    /// The brain home's path: the local user's, not a token holder's (it names the
    /// server's user and folders).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    pub generation: u64,
    /// Items of every scope by status, in the order of `Status::ALL`.
    pub by_status: serde_json::Map<String, serde_json::Value>,
    /// The active signals of the project and global ones, most urgent first.
    pub signals: Vec<Signal>,
    /// The project's use rate over the last four weeks, oldest first (`crate::usage`):
    /// empty when the caller may not read the project.
    pub use_rate: Vec<crate::usage::UseRate>,
}

/// The status of `brain`'s store and project at `brain.now`, for the local user.
pub fn status(brain: &Brain) -> BrainResult<StatusReport> {
    status_for(brain, &Caller::Open)
}

/// The status as `caller` may see it: a token's holder counts the items of the scopes it
/// may read (the project and global) and sees the signals of those scopes; the local user
/// counts the whole store.
pub fn status_for(brain: &Brain, caller: &Caller) -> BrainResult<StatusReport> {
    let scopes = match caller {
        Caller::Open | Caller::Agent => None,
        Caller::Token(_) => Some(brain.readable_scopes_for(caller)),
    };
    let mut by_status = serde_json::Map::new();
    for status in Status::ALL {
        let filter = ItemFilter { scopes: scopes.clone(), statuses: vec![*status], ..ItemFilter::default() };
        by_status.insert(status.to_string(), brain.count_for(caller, &filter)?.into());
    }
    let signals = crate::signals::visible(brain)?.into_iter().filter(|signal| caller.can_read(&signal.scope)).collect();
    let use_rate = if caller.can_read(&brain.project_scope()) { brain.use_rate(4)? } else { Vec::new() };
    Ok(StatusReport {
        use_rate,
        project: brain.project.clone(),
        project_name_held_by: brain
            .project_held_by
            .as_ref()
            .filter(|_| caller.is_local())
            .map(|folder| folder.display().to_string()),
        project_ties_error: brain.project_ties_error.clone().filter(|_| caller.is_local()),
        home: caller.is_local().then(|| brain.home.display().to_string()),
        generation: brain.store().generation()?,
        by_status,
        signals,
    })
}
