//! Context recall (SPEC §5): which items a session should see for its topics or task, with
//! a score and a short reason.
//!
//! The recall score of a candidate is
//!
//! ```text
//! score = (0.50 × relevance + 0.15 × strength + 0.15 × recency + 0.10 × importance/5
//!          + 0.10 × confidence) × scope_match × validity
//! ```
//!
//! - `relevance`: the item's search score (`crate::search`: coverage of the query, then
//!   BM25F) divided by the best score of the query (0..1);
//!   0 for every candidate when there is no query (then the other signals rank).
//! - `strength`: the decayed memory strength, `strength × decay_rate^days` since the last
//!   access (or update); pinned and stable items do not decay (SPEC §5.4).
//! - `recency`: `max(0.1, 1 − 0.9 × age_days / 90)`, age from `updated_at` (as in §4.1).
//! - `scope_match`: 1.0 for the current project, 0.85 for global items.
//! - `validity`: 0.25 once `valid_until` has passed (SPEC §2.1), else 1.
//!
//! Relevance dominates when there is a query; the rest break ties between equally relevant
//! items and rank recent, strong, important memory first when there is none. The weights
//! are checked by the retrieval test in `tests/it/session_start.rs`.

use brain_core::{Item, Scope, Timestamp};

/// How much one recall reinforces an item's strength.
pub const REINFORCEMENT: f32 = 0.1;

/// The decayed strength of an item at `now`.
pub fn effective_strength(item: &Item, now: Timestamp) -> f32 {
    if item.pinned || item.stable {
        return item.strength;
    }
    let since = item.last_accessed_at.unwrap_or(item.updated_at);
    let days = brain_core::time::age_days(since, now);
    (f64::from(item.strength) * f64::from(item.decay_rate).powf(days)) as f32
}

/// The strength after being recalled now.
pub fn reinforced_strength(item: &Item, now: Timestamp) -> f32 {
    (effective_strength(item, now) + REINFORCEMENT).min(1.0)
}

/// `max(0.1, 1 − 0.9 × age_days / 90)`.
pub fn recency(item: &Item, now: Timestamp) -> f64 {
    let age = brain_core::time::age_days(item.updated_at, now);
    (1.0 - 0.9 * age / 90.0).max(0.1)
}

/// The recall score (module docs) of an item with the given normalized relevance.
pub fn recall_score(item: &Item, relevance: f64, now: Timestamp) -> f64 {
    let base = 0.50 * relevance
        + 0.15 * f64::from(effective_strength(item, now))
        + 0.15 * recency(item, now)
        + 0.10 * f64::from(item.importance) / 5.0
        + 0.10 * f64::from(item.confidence);
    let scope_match = if item.scope == Scope::Global { 0.85 } else { 1.0 };
    let validity = if item.is_expired(now) { 0.25 } else { 1.0 };
    base * scope_match * validity
}

/// A few words on why an item was recalled: what its search matched (see
/// `crate::search::explain`), and whether it is recent, important or expired.
pub fn why(item: &Item, matched: &str, now: Timestamp) -> String {
    let mut reasons: Vec<String> = Vec::new();
    if !matched.is_empty() {
        reasons.push(matched.to_string());
    }
    let age = brain_core::time::age_days(item.updated_at, now);
    if age <= 7.0 {
        reasons.push("recent".into());
    }
    if item.importance >= 4 {
        reasons.push("important".into());
    }
    if item.is_expired(now) {
        reasons.push("expired".into());
    }
    if reasons.is_empty() {
        reasons.push("relevant to the project".into());
    }
    reasons.join("; ")
}
