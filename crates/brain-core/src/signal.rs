//! One signal model (SPEC §2.1 `severity`, §6.5): a signal written as an item (`kind:
//! signal`, through the CLI, HTTP or MCP) and a signal written as a vault marker (`@signal`
//! in an arc) are the same thing to every reader — session start, the hooks, status, the
//! HTTP API, the event stream, the bus and the AI tick. Each reader gets [`Signal`]s of both
//! origins in one order ([`order`]) and decides nothing about where they came from.
//!
//! The lifecycle is the same for both origins: a signal is *active* until it is resolved
//! (severity `resolved`; for an item also a status other than `approved` — deprecated,
//! archived, superseded — and an expired `valid_until`; for a vault signal also a tombstone
//! or an arc whose `mitigates:` names it), and a signal that is neither critical nor nuclear
//! goes stale [`stale_after`] `signal_stale_days` from when it was raised. Critical and
//! nuclear signals never go stale: they stay until someone resolves them.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::item::Severity;
use crate::scope::Scope;
use crate::time::{Timestamp, serde_rfc3339};

/// Where a signal was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalOrigin {
    /// An item of kind `signal` (`brain remember --kind signal`, `POST /api/v2/items`,
    /// `brain_remember`).
    #[default]
    Item,
    /// An `@signal` marker in an arc of the vault.
    Vault,
}

/// An active signal, whatever its origin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    /// The item id (`mem_…`), or the stable id of the vault marker (`mem_v…`).
    pub id: String,
    #[serde(default)]
    pub origin: SignalOrigin,
    pub severity: Severity,
    /// Whose readers may see it: a project, or global (SSE subscribers, tokens and sessions
    /// are checked against it).
    pub scope: Scope,
    /// The project it belongs to; `None` for a global one.
    #[serde(default)]
    pub project: Option<String>,
    /// Where it comes from: a marker's `source=` (`auth-broker`), or the channel an item
    /// was written through (`cli`, `mcp`, `http`).
    pub source: String,
    /// One line: the item's title, or the first line of the marker's text.
    #[serde(default)]
    pub title: String,
    /// The whole text (the item's content, else its title; the marker's text).
    pub text: String,
    /// When it was raised: the item's creation, the marker's date (else its arc's).
    #[serde(default, with = "serde_rfc3339::option")]
    pub created_at: Option<Timestamp>,
    /// Vault signals: the file holding the marker (relative to the vault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Signal {
    /// Critical or nuclear: always shown, announced and published.
    pub fn is_urgent(&self) -> bool {
        is_urgent(self.severity)
    }

    /// The text without a first line that only repeats the title (a vault marker's title
    /// is its first line), so a renderer that shows both does not say it twice.
    pub fn detail(&self) -> &str {
        let text = self.text.trim();
        let title = self.title.trim();
        if title.is_empty() {
            return text;
        }
        match text.strip_prefix(title) {
            Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => rest.trim_start(),
            _ => text,
        }
    }
}

/// Critical and nuclear signals.
pub fn is_urgent(severity: Severity) -> bool {
    matches!(severity, Severity::Critical | Severity::Nuclear)
}

/// Most urgent first: nuclear, critical, warning, info, resolved.
pub fn severity_rank(severity: Severity) -> u8 {
    match severity {
        Severity::Nuclear => 0,
        Severity::Critical => 1,
        Severity::Warning => 2,
        Severity::Info => 3,
        Severity::Resolved => 4,
    }
}

/// The one order of signals everywhere: by severity (nuclear first), then newest first
/// (an unknown date last), then by id.
pub fn order(a: &Signal, b: &Signal) -> Ordering {
    severity_rank(a.severity)
        .cmp(&severity_rank(b.severity))
        .then_with(|| b.created_at.cmp(&a.created_at))
        .then_with(|| a.id.cmp(&b.id))
}

/// When a signal of `severity` raised at `raised` (Unix seconds) goes stale, given
/// `signal_stale_days`: never for a critical or nuclear one (`None`).
pub fn stale_after(severity: Severity, raised: i64, stale_days: f64) -> Option<i64> {
    if is_urgent(severity) {
        return None;
    }
    Some(raised.saturating_add((stale_days * 86_400.0) as i64))
}

/// Whether a signal of `severity` raised at `raised` is still shown at `now` (not resolved,
/// not stale): the rule both origins share.
pub fn is_live(severity: Severity, raised: i64, now: i64, stale_days: f64) -> bool {
    severity != Severity::Resolved && stale_after(severity, raised, stale_days).is_none_or(|stale| stale > now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(id: &str, severity: Severity, created: Option<i64>) -> Signal {
        Signal {
            id: id.into(),
            origin: SignalOrigin::Item,
            severity,
            scope: Scope::Global,
            project: None,
            source: "cli".into(),
            title: id.into(),
            text: id.into(),
            created_at: created.map(|seconds| Timestamp::from_second(seconds).unwrap()),
            file: None,
        }
    }

    #[test]
    fn signals_are_ordered_nuclear_then_critical_then_newest_first() {
        let mut signals = [
            signal("a-old-critical", Severity::Critical, Some(100)),
            signal("b-warning", Severity::Warning, Some(900)),
            signal("c-new-critical", Severity::Critical, Some(500)),
            signal("d-old-nuclear", Severity::Nuclear, Some(1)),
            signal("e-undated-critical", Severity::Critical, None),
        ];
        signals.sort_by(order);
        let ids: Vec<&str> = signals.iter().map(|signal| signal.id.as_str()).collect();
        assert_eq!(ids, ["d-old-nuclear", "c-new-critical", "a-old-critical", "e-undated-critical", "b-warning"]);
    }

    #[test]
    fn only_signals_below_critical_go_stale_and_resolved_ones_never_show() {
        let day = 86_400;
        assert!(is_live(Severity::Warning, 0, 3 * day - 1, 3.0));
        assert!(!is_live(Severity::Warning, 0, 3 * day, 3.0));
        assert!(!is_live(Severity::Info, 0, 4 * day, 3.0));
        assert!(is_live(Severity::Critical, 0, 400 * day, 3.0));
        assert!(is_live(Severity::Nuclear, 0, 400 * day, 3.0));
        assert!(!is_live(Severity::Resolved, 0, 0, 3.0));
    }

    #[test]
    fn the_detail_leaves_out_a_first_line_that_repeats_the_title() {
        let mut vault = signal("v", Severity::Critical, None);
        vault.title = "Auth broker ban rate increasing.".into();
        vault.text = "Auth broker ban rate increasing.\nSee the dashboard.".into();
        assert_eq!(vault.detail(), "See the dashboard.");
        vault.text = vault.title.clone();
        assert_eq!(vault.detail(), "");
        let mut item = signal("i", Severity::Nuclear, None);
        item.title = "Prod DB is read-only".into();
        item.text = "Failover in progress; writes fail".into();
        assert_eq!(item.detail(), "Failover in progress; writes fail");
        item.text = "Prod DB is read-only-ish".into();
        assert_eq!(item.detail(), "Prod DB is read-only-ish", "a word that only starts like the title stays");
    }
}
