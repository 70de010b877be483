//! The active critical and nuclear signals, as every surface shows them: the vault feed's
//! and the approved, unexpired `signal` items of every scope. `brain serve` announces and
//! publishes new ones (`serve::signals`); the user-prompt-submit hook surfaces a new one at
//! the next prompt.

use brain_core::{Kind, Scope, Severity, Status, Timestamp};
use brain_store::ItemFilter;
use serde::{Deserialize, Serialize};

use crate::app::Brain;
use crate::error::BrainResult;

/// At most this many signal items are read per look (the newest).
const MAX_SIGNAL_ITEMS: usize = 200;

/// A critical or nuclear signal as announced and published.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CriticalSignal {
    pub id: String,
    pub severity: Severity,
    #[serde(serialize_with = "scope_text", deserialize_with = "scope_from_text")]
    pub scope: Scope,
    pub source: String,
    pub text: String,
}

fn scope_text<S: serde::Serializer>(scope: &Scope, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&scope.to_string())
}

fn scope_from_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Scope, D::Error> {
    let text = String::deserialize(deserializer)?;
    Scope::parse(&text).map_err(serde::de::Error::custom)
}

/// The signals a session of `brain`'s project sees (global and the project's own scope).
pub fn visible(brain: &Brain, now: Timestamp) -> BrainResult<Vec<CriticalSignal>> {
    let scopes = brain.visible_scopes();
    Ok(current(brain, now)?.into_iter().filter(|signal| scopes.contains(&signal.scope)).collect())
}

fn is_critical(severity: Severity) -> bool {
    matches!(severity, Severity::Critical | Severity::Nuclear)
}

/// The active critical and nuclear signals: the vault feed's (scoped to their arc's project,
/// global when shared: see `vault::indexed_signals`) and the approved, unexpired signal items
/// of every scope (subscribers see only the scopes they may read).
pub fn current(brain: &Brain, now: Timestamp) -> BrainResult<Vec<CriticalSignal>> {
    let mut signals: Vec<CriticalSignal> = crate::vault::indexed_signals(brain)
        .into_iter()
        .filter(|(signal, _)| is_critical(signal.severity))
        .map(|(signal, scope)| CriticalSignal {
            id: signal.id,
            severity: signal.severity,
            scope,
            source: signal.source,
            text: signal.text,
        })
        .collect();
    let filter = ItemFilter {
        kinds: vec![Kind::Signal],
        statuses: vec![Status::Approved],
        limit: Some(MAX_SIGNAL_ITEMS),
        ..ItemFilter::default()
    };
    for item in brain.list(&filter)? {
        let Some(severity) = item.severity.filter(|severity| is_critical(*severity)) else { continue };
        if item.is_expired(now) || signals.iter().any(|known| known.id == item.id) {
            continue;
        }
        let text = if item.content.trim().is_empty() { item.title.clone() } else { item.content.clone() };
        signals.push(CriticalSignal { id: item.id, severity, scope: item.scope, source: item.source, text });
    }
    Ok(signals)
}
