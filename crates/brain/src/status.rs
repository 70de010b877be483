//! `brain status` and the MCP tool `brain_status`: the store at a glance — the project, the
//! home, the write generation, items by status — and every active signal the project's
//! sessions see, items and vault alike (`crate::signals`), in the shape `GET
//! /api/v2/signals` serves.

use brain_core::{Signal, Status};
use brain_store::ItemFilter;
use serde::Serialize;

use crate::app::Brain;
use crate::error::BrainResult;

/// What `brain status` prints.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    pub project: String,
    pub home: String,
    pub generation: u64,
    /// Items of every scope by status, in the order of `Status::ALL`.
    pub by_status: serde_json::Map<String, serde_json::Value>,
    /// The active signals of the project and global ones, most urgent first.
    pub signals: Vec<Signal>,
}

/// The status of `brain`'s store and project at `brain.now`.
pub fn status(brain: &Brain) -> BrainResult<StatusReport> {
    let mut by_status = serde_json::Map::new();
    for status in Status::ALL {
        let count = brain.count(&ItemFilter { statuses: vec![*status], ..ItemFilter::default() })?;
        by_status.insert(status.to_string(), count.into());
    }
    Ok(StatusReport {
        project: brain.project.clone(),
        home: brain.home.display().to_string(),
        generation: brain.store().generation()?,
        by_status,
        signals: crate::signals::visible(brain)?,
    })
}
