//! The active signals, in the one model every surface shows (`brain_core::signal`): the
//! `signal` items written through the CLI, HTTP or MCP and the `@signal` markers of the
//! vault, merged and ordered alike. Session start puts the critical and nuclear ones first
//! (`Brain::session_start`), `brain status` and `GET /api/v2/signals` list them all, `brain
//! serve` announces and publishes new critical ones (`serve::signals`), the user-prompt-submit
//! hook surfaces a new one at the next prompt, and the AI tick's prompt shows the item ones
//! beside the vault's.
//!
//! One lifecycle for both origins. An item signal is active while it is `approved`, its
//! severity is not `resolved` and its `valid_until` has not passed; a vault signal while its
//! marker is not `resolved`, tombstoned nor named by an arc's `mitigates:` (`vault::feed`).
//! Either goes stale `[vault] signal_stale_days` after it was raised unless it is critical or
//! nuclear (`brain_core::signal::is_live`). Resolving one — deprecating, archiving or
//! superseding the item, editing its severity to `resolved`, or resolving the marker —
//! removes it from every reader at once; nothing keeps a copy of its own.

use brain_core::signal::is_live;
use brain_core::{Item, Kind, Scope, Signal, SignalOrigin, Status};
use brain_store::ItemFilter;

use crate::app::Brain;
use crate::error::BrainResult;

/// At most this many signal items are read per look (the most recently written): far more
/// than any reader shows, so the cap only bounds a store that collects thousands.
const MAX_SIGNAL_ITEMS: usize = 500;

/// The active signals a session of `brain`'s project sees (global and the project's own
/// scope), items and vault alike, in the one order.
pub fn visible(brain: &Brain) -> BrainResult<Vec<Signal>> {
    let (_, vault) = crate::feed_index::indexed_session_feed(brain);
    Ok(merge(item_signals(brain, Some(brain.visible_scopes()))?, vault))
}

/// The active signals of every scope (a server's watcher announces each to the subscribers
/// that may read its scope), in the one order.
pub fn current(brain: &Brain) -> BrainResult<Vec<Signal>> {
    Ok(merge(item_signals(brain, None)?, crate::feed_index::indexed_signals(brain)))
}

/// The active critical and nuclear signals of every scope: what the event stream announces
/// and the bus publishes.
pub fn current_urgent(brain: &Brain) -> BrainResult<Vec<Signal>> {
    Ok(current(brain)?.into_iter().filter(Signal::is_urgent).collect())
}

/// `items` and `vault` in one list, in the one order.
pub fn merge(items: Vec<Signal>, vault: Vec<Signal>) -> Vec<Signal> {
    let mut signals = items;
    signals.extend(vault);
    signals.sort_by(brain_core::signal::order);
    signals
}

/// The active signal items of `scopes` (`None`: every scope) at `brain.now`: one filtered
/// read of the store (approved items of kind `signal` not derived from the vault — the vault
/// half comes from its feed, which knows what resolved, mitigated or tombstoned it).
pub fn item_signals(brain: &Brain, scopes: Option<Vec<Scope>>) -> BrainResult<Vec<Signal>> {
    let filter = ItemFilter {
        scopes,
        kinds: vec![Kind::Signal],
        statuses: vec![Status::Approved],
        source_prefix_not: Some(brain_core::keeper::state::SOURCE_PREFIX.to_string()),
        limit: Some(MAX_SIGNAL_ITEMS),
        ..ItemFilter::default()
    };
    let now = brain.now;
    let stale_days = brain.config.vault.signal_stale_days;
    Ok(brain
        .list(&filter)?
        .into_iter()
        .filter(|item| !item.is_expired(now))
        .filter(|item| {
            item.severity
                .is_some_and(|severity| is_live(severity, item.created_at.as_second(), now.as_second(), stale_days))
        })
        .filter_map(from_item)
        .collect())
}

/// An item of kind `signal` in the one model (`None` without a severity).
pub fn from_item(item: Item) -> Option<Signal> {
    let severity = item.severity?;
    let text = if item.content.trim().is_empty() { item.title.clone() } else { item.content };
    let project = match &item.scope {
        Scope::Project(name) => Some(name.clone()),
        _ => None,
    };
    Some(Signal {
        id: item.id,
        origin: SignalOrigin::Item,
        severity,
        scope: item.scope,
        project,
        source: item.source,
        title: item.title,
        text,
        created_at: Some(item.created_at),
        file: None,
    })
}
