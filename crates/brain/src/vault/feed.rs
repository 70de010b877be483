//! The brain feed: hot arcs, active signals and inject blocks, computed from the index.
//!
//! Two forms. The feed *files* in `brain-feed/` (SPEC §6.4), written by the tick. And the
//! feed *state*, one JSON value in the store (`vault_state.feed`) that the scan and the tick
//! refresh and that [`indexed_feed`] reads on the session-start path: one indexed row, no
//! vault walk. Stale signals and expired inject blocks are filtered again at read time, so a
//! feed computed yesterday does not serve what has expired since.
//!
//! Everything written here for an agent to read is redacted (secrets, `<private>` blocks),
//! even though the index keeps the user's text as written.

use std::collections::{HashMap, HashSet};

use brain_core::assemble::{Feed, FeedSignal, HotArc, InjectBlock};
use brain_core::time::age_days;
use brain_core::vault::normalize_content;
use brain_core::{Severity, Timestamp};
use brain_store::Store;
use serde::{Deserialize, Serialize};

use super::config::VaultConfig;
use super::heat::{HeatInputs, heat};
use super::scan::{IndexedFile, Snapshot};
use super::state::{ArcState, InjectState, SignalState, timestamp};
use super::text::{clip, one_line, redacted, table_cell};

/// At most this many signals are kept in the feed state (most urgent first); the session
/// feed has a budget far smaller than that anyway.
const MAX_FEED_SIGNALS: usize = 200;

/// Days within which an arc's `replayed_from` warms the arcs it names.
const REPLAY_DAYS: f64 = 14.0;

/// An arc as the tick sees it: the owning file, its indexed state, its heat at `now`.
#[derive(Clone, Debug)]
pub(crate) struct ArcView<'a> {
    pub relpath: &'a str,
    pub file: &'a IndexedFile,
    pub arc: &'a ArcState,
    pub heat: u8,
    /// `status: graduated`, or graduating in this tick.
    pub graduated: bool,
    /// Recent arcs naming this one in `replayed_from`.
    pub replays: u32,
}

impl ArcView<'_> {
    pub fn status(&self) -> &str {
        if self.graduated { "graduated" } else { self.arc.status.as_deref().unwrap_or("-") }
    }

    pub fn region(&self) -> &str {
        self.arc.region.as_deref().unwrap_or("-")
    }
}

/// Every arc (one per `cluster_id`) with its heat at `now`, in relpath order.
pub(crate) fn arc_views(snapshot: &Snapshot, now: Timestamp) -> Vec<ArcView<'_>> {
    let owned: Vec<(&str, &IndexedFile, &ArcState)> = snapshot
        .iter()
        .filter(|(_, file)| file.state.arc_owner)
        .filter_map(|(relpath, file)| Some((relpath.as_str(), file, file.state.arc.as_ref()?)))
        .collect();
    let mut replays: HashMap<&str, u32> = HashMap::new();
    for (_, _, arc) in &owned {
        let created = timestamp(arc.created);
        if arc.replayed_from.is_empty() || created > now || age_days(created, now) > REPLAY_DAYS {
            continue;
        }
        for target in &arc.replayed_from {
            *replays.entry(target.as_str()).or_default() += 1;
        }
    }
    owned
        .into_iter()
        .map(|(relpath, file, arc)| {
            let replays = replays.get(arc.cluster_id.as_str()).copied().unwrap_or(0);
            let active = arc.status.as_deref() == Some("active");
            let heat = arc_heat(arc, replays, active, now);
            ArcView { relpath, file, arc, heat, graduated: arc.is_graduated(), replays }
        })
        .collect()
}

/// The heat of `arc` at `now` (`active`: whether its status is `active`).
pub(crate) fn arc_heat(arc: &ArcState, replays: u32, active: bool, now: Timestamp) -> u8 {
    let inputs = HeatInputs {
        created: timestamp(arc.created),
        tools: arc.tools,
        sessions: arc.sessions,
        joy: arc.joy,
        active,
        replays,
    };
    heat(&inputs, now)
}

/// The hottest `limit` arcs that have not graduated: heat, then newest, then cluster id.
pub(crate) fn hot_views<'v, 'a>(views: &'v [ArcView<'a>], limit: usize) -> Vec<&'v ArcView<'a>> {
    let order = |a: &&ArcView<'a>, b: &&ArcView<'a>| {
        b.heat.cmp(&a.heat).then(b.arc.created.cmp(&a.arc.created)).then(a.arc.cluster_id.cmp(&b.arc.cluster_id))
    };
    let mut hot: Vec<&ArcView<'a>> = views.iter().filter(|view| !view.graduated).collect();
    // The top `limit` first (linear), then only those sorted.
    if limit > 0 && hot.len() > limit {
        hot.select_nth_unstable_by(limit - 1, order);
    }
    hot.truncate(limit);
    hot.sort_by(order);
    hot
}

/// A signal that is active at `now`.
#[derive(Clone, Debug)]
pub(crate) struct ActiveSignal<'a> {
    pub relpath: &'a str,
    pub signal: &'a SignalState,
    pub severity: Severity,
}

/// Most urgent first.
pub(crate) fn severity_rank(severity: Severity) -> u8 {
    match severity {
        Severity::Nuclear => 0,
        Severity::Critical => 1,
        Severity::Warning => 2,
        Severity::Info => 3,
        Severity::Resolved => 4,
    }
}

fn is_urgent(severity: Severity) -> bool {
    matches!(severity, Severity::Critical | Severity::Nuclear)
}

/// When a signal of `severity` seen since `since` goes stale (critical and nuclear never do).
fn stale_at(severity: Severity, since: i64, config: &VaultConfig) -> Option<i64> {
    if is_urgent(severity) {
        return None;
    }
    Some(since.saturating_add((config.signal_stale_days * 86_400.0) as i64))
}

/// Signals shown in the feed: not resolved (so no tombstone), not stale, not named by an
/// arc's `mitigates:` (by source or id), each source and text once; nuclear, critical,
/// warning, info; newest first within a severity; then by id.
pub(crate) fn active_signals<'a>(
    snapshot: &'a Snapshot,
    now: Timestamp,
    config: &VaultConfig,
) -> Vec<ActiveSignal<'a>> {
    let now_seconds = now.as_second();
    let mitigated = mitigated_names(snapshot);
    let is_mitigated = |signal: &SignalState| {
        !mitigated.is_empty()
            && (mitigated.contains(&signal.id.to_ascii_lowercase())
                || signal
                    .source
                    .as_deref()
                    .is_some_and(|source| mitigated.contains(&source.trim().to_ascii_lowercase())))
    };
    let mut active: Vec<ActiveSignal<'a>> = Vec::new();
    for (relpath, file) in snapshot {
        if file.state.generated.is_some() {
            continue;
        }
        for signal in &file.state.signals {
            let severity = signal.severity();
            if severity == Severity::Resolved || signal.tombstone || is_mitigated(signal) {
                continue;
            }
            if stale_at(severity, signal.since, config).is_some_and(|stale| stale <= now_seconds) {
                continue;
            }
            active.push(ActiveSignal { relpath, signal, severity });
        }
    }
    active.sort_by(|a, b| {
        severity_rank(a.severity)
            .cmp(&severity_rank(b.severity))
            .then(b.signal.since.cmp(&a.signal.since))
            .then(a.signal.id.cmp(&b.signal.id))
    });
    // The same signal written in two files (a copy of an arc) shows once, at its most urgent.
    let mut seen: HashSet<(String, String)> = HashSet::new();
    active.retain(|signal| {
        let source = signal.signal.source.as_deref().unwrap_or("").trim().to_ascii_lowercase();
        seen.insert((source, normalize_content(&signal.signal.text)))
    });
    active
}

/// The names (lowercased) that arcs' `mitigates:` resolve.
fn mitigated_names(snapshot: &Snapshot) -> HashSet<String> {
    snapshot
        .values()
        .filter(|file| file.state.generated.is_none())
        .filter_map(|file| file.state.arc.as_ref())
        .flat_map(|arc| arc.mitigates.iter().map(|name| name.to_ascii_lowercase()))
        .collect()
}

/// An inject block lives at most this many days after its date (its `ttl=` may say less).
pub(crate) const INJECT_MAX_DAYS: i64 = 30;

/// Arc statuses whose inject blocks are over: the work they steered has ended.
const FINISHED_STATUSES: [&str; 3] = ["resolved", "complete", "graduated"];

/// Inject blocks that are still live, deduplicated by target and normalized content, in vault
/// order, with their expiry (seconds), as indexed (not yet redacted). Dropped: an expired
/// `ttl=`, a block more than [`INJECT_MAX_DAYS`] old, and every block of an arc that is
/// resolved, complete or graduated.
pub(crate) fn active_inject_states(snapshot: &Snapshot, now: Timestamp) -> Vec<(&InjectState, Option<i64>)> {
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut injects = Vec::new();
    for file in snapshot.values() {
        if file.state.generated.is_some() {
            continue;
        }
        let finished = file.state.arc.as_ref().and_then(|arc| arc.status.as_deref()).is_some_and(|status| {
            FINISHED_STATUSES.iter().any(|finished| status.trim().eq_ignore_ascii_case(finished))
        });
        if finished {
            continue;
        }
        for inject in &file.state.injects {
            let max_age = INJECT_MAX_DAYS.saturating_mul(86_400);
            let ttl = inject.ttl_days.map_or(max_age, |days| i64::from(days).saturating_mul(86_400).min(max_age));
            let expires_at = Some(inject.since.saturating_add(ttl));
            if expires_at.is_some_and(|expiry| expiry <= now.as_second()) {
                continue;
            }
            let key = (inject.target.trim().to_ascii_lowercase(), normalize_content(&inject.content));
            if seen.insert(key) {
                injects.push((inject, expires_at));
            }
        }
    }
    injects
}

/// The blocks of [`active_inject_states`], redacted, as stored and shown.
pub(crate) fn active_injects(states: &[(&InjectState, Option<i64>)]) -> Vec<StoredInject> {
    states
        .iter()
        .map(|(inject, expires_at)| StoredInject {
            block: InjectBlock {
                id: inject.id.clone(),
                target: inject.target.clone(),
                content: redacted(&inject.content).into_owned(),
            },
            expires_at: *expires_at,
        })
        .collect()
}

/// The digest of everything the feed files and the session feed are made of (the day,
/// the hot arcs, the active signals, the inject blocks): equal digests, equal feed.
pub(crate) fn feed_digest(
    now: Timestamp,
    hot: &[&ArcView<'_>],
    active: &[ActiveSignal<'_>],
    injects: &[(&InjectState, Option<i64>)],
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut field = |text: &str| {
        hasher.update(text.as_bytes());
        hasher.update([0]);
    };
    field("feed v1");
    field(&date(now));
    for view in hot {
        field(&view.arc.cluster_id);
        field(&view.arc.title);
        field(&view.heat.to_string());
        field(view.region());
        field(view.status());
        field(view.arc.summary.as_deref().unwrap_or(""));
    }
    field("signals");
    for signal in active {
        field(&signal.signal.id);
        field(signal.severity.as_str());
        field(signal.signal.source.as_deref().unwrap_or(""));
        field(&signal.signal.text);
        field(&signal.signal.since.to_string());
    }
    field("injects");
    for (inject, expires_at) in injects {
        field(&inject.id);
        field(&inject.target);
        field(&inject.content);
        field(&expires_at.map_or(String::new(), |expiry| expiry.to_string()));
    }
    hex::encode(hasher.finalize())
}

/// What the last tick wrote to the feed: the digest of its inputs and the SHA-256 of each
/// feed file it derived from them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FeedCache {
    pub digest: String,
    pub files: Vec<(String, String)>,
}

impl FeedCache {
    /// The files that depend on the digest's inputs only.
    pub const FILES: [&'static str; 3] = ["hot-arcs.md", "inject.md", "signals.md"];

    /// True when every file is on disk with the content the last tick wrote (a file someone
    /// edited or deleted is written again).
    pub fn files_intact(&self, feed_dir: &std::path::Path) -> bool {
        self.files.len() == Self::FILES.len()
            && self.files.iter().all(|(name, sha)| {
                std::fs::read(feed_dir.join(name)).is_ok_and(|bytes| super::fsio::sha256_hex(&bytes) == *sha)
            })
    }
}

/// The feed as stored for the session-start path.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct FeedState {
    pub hot_arcs: Vec<HotArc>,
    pub signals: Vec<StoredSignal>,
    pub injects: Vec<StoredInject>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredSignal {
    #[serde(flatten)]
    pub signal: FeedSignal,
    /// Seconds; `None` for critical and nuclear signals, which never go stale.
    #[serde(default)]
    pub stale_at: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredInject {
    #[serde(flatten)]
    pub block: InjectBlock,
    #[serde(default)]
    pub expires_at: Option<i64>,
}

impl FeedState {
    /// The feed of `snapshot` at `now` (heat computed fresh).
    pub fn compute(snapshot: &Snapshot, now: Timestamp, config: &VaultConfig) -> FeedState {
        let views = arc_views(snapshot, now);
        FeedState::from_parts(&views, snapshot, now, config)
    }

    /// The feed from already computed arc views (the tick's, with this tick's graduations).
    pub fn from_parts(views: &[ArcView<'_>], snapshot: &Snapshot, now: Timestamp, config: &VaultConfig) -> FeedState {
        let hot_arcs = hot_views(views, config.hot_arcs)
            .into_iter()
            .map(|view| HotArc {
                id: brain_core::vault::arc_id(&view.arc.cluster_id),
                title: clip(&one_line(&redacted(&view.arc.title)), 200).into_owned(),
                heat: view.heat,
                region: view.region().to_string(),
                status: view.status().to_string(),
            })
            .collect();
        let signals = active_signals(snapshot, now, config)
            .into_iter()
            .take(MAX_FEED_SIGNALS)
            .map(|active| StoredSignal {
                signal: FeedSignal {
                    id: active.signal.id.clone(),
                    severity: active.severity,
                    source: active.signal.source.clone().unwrap_or_else(|| "unknown".into()),
                    text: redacted(&active.signal.text).into_owned(),
                },
                stale_at: stale_at(active.severity, active.signal.since, config),
            })
            .collect();
        FeedState { hot_arcs, signals, injects: active_injects(&active_inject_states(snapshot, now)) }
    }

    /// What an agent gets at `now`: stale signals and expired blocks dropped.
    pub fn into_feed(self, now: Timestamp) -> Feed {
        let now = now.as_second();
        Feed {
            hot_arcs: self.hot_arcs,
            signals: self
                .signals
                .into_iter()
                .filter(|s| s.stale_at.is_none_or(|stale| stale > now))
                .map(|s| s.signal)
                .collect(),
            injects: self
                .injects
                .into_iter()
                .filter(|i| i.expires_at.is_none_or(|expiry| expiry > now))
                .map(|i| i.block)
                .collect(),
        }
    }
}

/// The indexed vault feed at `now`: one read of the store, no file system access. Empty when
/// no vault is indexed, and on any error (session start fails open).
pub fn indexed_feed(store: &Store, now: Timestamp) -> Feed {
    let Ok(Some(text)) = store.vault_value("feed") else {
        return Feed::default();
    };
    serde_json::from_str::<FeedState>(&text).map(|state| state.into_feed(now)).unwrap_or_default()
}

/// Feed file frontmatter (SPEC §6.4): `id, title, priority, ttl, severity`.
fn frontmatter(id: &str, title: &str, priority: u8, ttl: u32, severity: &str) -> String {
    format!("---\nid: {id}\ntitle: {title}\npriority: {priority}\nttl: {ttl}\nseverity: {severity}\n---\n")
}

fn date(now: Timestamp) -> String {
    now.strftime("%Y-%m-%d").to_string()
}

/// `hot-arcs.md`: the top arcs by heat as a table: the bare `cluster_id`, heat, region,
/// status and what it is (the summary, else the title ≤ 80 characters); pipes escaped.
pub(crate) fn render_hot_arcs(hot: &[&ArcView<'_>], now: Timestamp) -> String {
    let day = date(now);
    let mut out = frontmatter(&format!("hot-arcs-{day}"), "Active Hot Arcs", 10, 3600, "info");
    out.push_str(&format!("## Hot Arcs — {day}\n\n"));
    if hot.is_empty() {
        out.push_str("No arcs yet.\n");
        return out;
    }
    out.push_str("| Arc | Heat | Region | Status | What it is |\n|---|---|---|---|---|\n");
    for view in hot {
        // The Arc column is the bare `cluster_id` (what the feed's consumers look arcs up by);
        // an arc without one is named by its title.
        let title = clip(&one_line(&redacted(&view.arc.title)), 80).into_owned();
        let cluster_id = one_line(&redacted(view.arc.cluster_id.trim())).into_owned();
        let arc = if cluster_id.is_empty() { title.clone() } else { cluster_id };
        // "What it is": the summary, else the title, so the row always says something.
        let what = view
            .arc
            .summary
            .as_deref()
            .map(str::trim)
            .filter(|summary| !summary.is_empty())
            .map(|summary| clip(&one_line(&redacted(summary)), 160).into_owned())
            .unwrap_or(title);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            table_cell(&arc),
            view.heat,
            table_cell(view.region()),
            table_cell(view.status()),
            table_cell(&what)
        ));
    }
    out
}

/// `signals.md`: active signals, most urgent first: `- **[sev]** (source) text`.
pub(crate) fn render_signals(active: &[ActiveSignal<'_>], now: Timestamp) -> String {
    let day = date(now);
    let top = active.first().map_or("info", |signal| signal.severity.as_str());
    let mut out = frontmatter(&format!("signals-{day}"), "Active Signals", 8, 3600, top);
    out.push_str(&format!("## Active Signals — {day}\n\n"));
    if active.is_empty() {
        out.push_str("No active signals.\n");
        return out;
    }
    for signal in active {
        let source = signal.signal.source.as_deref().unwrap_or("unknown");
        out.push_str(&format!(
            "- **[{}]** ({}) {}\n",
            signal.severity,
            one_line(&redacted(source)),
            one_line(&redacted(&signal.signal.text))
        ));
    }
    out
}

/// `inject.md`: `**[target]** content` per block, deduplicated, expired ones dropped.
pub(crate) fn render_injects(injects: &[StoredInject], now: Timestamp) -> String {
    let day = date(now);
    let mut out = frontmatter(&format!("inject-{day}"), "Inject Blocks", 9, 86_400, "info");
    out.push_str(&format!("## Inject Blocks — {day}\n\n"));
    if injects.is_empty() {
        out.push_str("No inject blocks.\n");
        return out;
    }
    for (index, inject) in injects.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&format!("**[{}]** {}\n", one_line(&inject.block.target), inject.block.content.trim()));
    }
    out
}

/// `intent.md` before any AI tick has inferred one (it is never overwritten by phase 1).
pub(crate) fn render_intent_placeholder() -> String {
    let mut out = frontmatter("intent", "Operator Intent", 7, 7200, "info");
    out.push_str(
        "## Operator Intent\n\nNo intent inferred yet: it comes from the AI phases of `brain tick`, and none has run.\n",
    );
    out
}

/// `last-tick-diff.md`: what the tick changed. The caller redacts the user's text in the
/// lines (titles, signal texts); counts and paths need none.
pub(crate) fn render_diff(now: Timestamp, sections: &[(String, Vec<String>)]) -> String {
    let stamp = brain_core::time::format_timestamp(now);
    let mut out = frontmatter(&format!("last-tick-diff-{}", date(now)), "Last Tick Diff", 5, 7200, "info");
    out.push_str(&format!("## Last Tick — {stamp}\n"));
    for (heading, lines) in sections {
        out.push_str(&format!("\n### {heading}\n\n"));
        if lines.is_empty() {
            out.push_str("- none\n");
        }
        for line in lines {
            out.push_str(&format!("- {}\n", one_line(line)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_feed_drops_what_went_stale_or_expired_since() {
        let state = FeedState {
            hot_arcs: vec![],
            signals: vec![
                StoredSignal {
                    signal: FeedSignal {
                        id: "a".into(),
                        severity: Severity::Warning,
                        source: "s".into(),
                        text: "t".into(),
                    },
                    stale_at: Some(100),
                },
                StoredSignal {
                    signal: FeedSignal {
                        id: "b".into(),
                        severity: Severity::Critical,
                        source: "s".into(),
                        text: "t".into(),
                    },
                    stale_at: None,
                },
            ],
            injects: vec![StoredInject {
                block: InjectBlock { id: "i".into(), target: "claude.md".into(), content: "c".into() },
                expires_at: Some(100),
            }],
        };
        let json = serde_json::to_string(&state).unwrap();
        let back: FeedState = serde_json::from_str(&json).unwrap();
        assert_eq!(back, state);
        let early = back.clone().into_feed(Timestamp::from_second(50).unwrap());
        assert_eq!((early.signals.len(), early.injects.len()), (2, 1));
        let late = back.into_feed(Timestamp::from_second(150).unwrap());
        assert_eq!(late.signals.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["b"]);
        assert!(late.injects.is_empty());
    }
}
