//! The brain feed: hot arcs, active signals and inject blocks, computed from the index.
//!
//! Two forms. The feed *files* in `brain-feed/` (SPEC §6.4), written by the tick. And the
//! feed *state*, one JSON value in the store (`vault_state.feed`) that the scan and the tick
//! refresh and that the session-start path reads (`brain::feed_index`): one indexed row, no
//! vault walk. Stale signals and expired inject blocks are filtered again at read time, so a
//! feed computed yesterday does not serve what has expired since.
//!
//! Everything written here for an agent to read is redacted (secrets, `<private>` blocks),
//! even though the index keeps the user's text as written.
//!
//! Per project: an arc belongs to the project of its file's `project:` (none: to every
//! project, like its global items). The feed state keeps each entry's project, and the
//! hottest `hot_arcs` of every project, so that a session start serves one project its own
//! arcs, inject blocks and signals plus those of files without a project, and the signals
//! shared with everyone: marked `scope=global`, or at or above `[vault]
//! shared_signal_severity`. The feed files the tick writes cover the whole vault; `GET
//! /api/v2/feed/{name}?project=` renders one project's.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::assemble::{Feed, FeedSignal, HotArc, InjectBlock};
use crate::signal::{severity_rank, stale_after};
use crate::time::age_days;
use crate::vault::normalize_content;
use crate::{Scope, Severity, Signal, SignalOrigin, Timestamp};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde::{Deserialize, Serialize};

use super::config::VaultConfig;
use super::heat::{HeatInputs, heat};
use super::snapshot::{IndexedFile, Snapshot};
use super::state::{ArcState, InjectState, SignalState, timestamp};
use super::text::{clip, one_line, redacted, table_cell};

/// At most this many signals of one project (or of files without one) are kept in the feed
/// state (most urgent first); the session feed has a budget far smaller than that anyway.
const MAX_FEED_SIGNALS: usize = 200;

/// The shape of the stored feed state: 2 = every entry carries its project; 3 = every
/// signal carries when it was raised and its file (the one signal model's `createdAt` and
/// `file`).
pub const FEED_STATE_VERSION: u32 = 3;

/// The oldest shape still served as stored. A state of shape 2 has no `since` or `file` for
/// its signals: they read as unknown until the next tick (whose feed digest changed with
/// them) or changing scan stores it again — rather than every session start computing the
/// feed from the whole index meanwhile. An older state is not served; the feed is computed
/// from the index instead.
pub const OLDEST_SERVED_FEED_STATE: u32 = 2;

/// Days within which an arc's `replayed_from` warms the arcs it names.
const REPLAY_DAYS: f64 = 14.0;

/// An arc as the tick sees it: the owning file, its indexed state, its heat at `now`.
#[derive(Clone, Debug)]
pub struct ArcView<'a> {
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

    /// The project of the arc's file (`project:`), empty for none.
    pub fn project(&self) -> &str {
        &self.file.state.project
    }
}

/// Whether an entry of `owner` (a project name, empty for none) belongs in the feed of
/// `project`: its own, or one without a project.
pub fn owned_by(owner: &str, project: &str) -> bool {
    owner.is_empty() || owner == project
}

/// Every arc (one per `cluster_id`) with its heat at `now`, in relpath order.
pub fn arc_views(snapshot: &Snapshot, now: Timestamp) -> Vec<ArcView<'_>> {
    let owned: Vec<(&str, &IndexedFile, &ArcState)> = snapshot
        .iter()
        .filter(|(_, file)| file.state.arc_owner)
        .filter_map(|(relpath, file)| Some((relpath.as_str(), file, file.state.arc.as_deref()?)))
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
pub fn arc_heat(arc: &ArcState, replays: u32, active: bool, now: Timestamp) -> u8 {
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

/// Hot-arc order: heat, then newest, then cluster id.
fn hot_order(a: &&ArcView<'_>, b: &&ArcView<'_>) -> Ordering {
    b.heat.cmp(&a.heat).then(b.arc.created.cmp(&a.arc.created)).then(a.arc.cluster_id.cmp(&b.arc.cluster_id))
}

/// The first `limit` of `hot` in [`hot_order`], sorted.
fn top<'v, 'a>(mut hot: Vec<&'v ArcView<'a>>, limit: usize) -> Vec<&'v ArcView<'a>> {
    // The top `limit` first (linear), then only those sorted.
    if limit > 0 && hot.len() > limit {
        hot.select_nth_unstable_by(limit - 1, hot_order);
    }
    hot.truncate(limit);
    hot.sort_by(hot_order);
    hot
}

/// The hottest `limit` arcs that have not graduated: heat, then newest, then cluster id.
pub fn hot_views<'v, 'a>(views: &'v [ArcView<'a>], limit: usize) -> Vec<&'v ArcView<'a>> {
    top(views.iter().filter(|view| !view.graduated).collect(), limit)
}

/// The hottest `limit` arcs of every project (and of the files without one), in hot order:
/// the top `limit` of any one project's feed is among them.
pub fn project_hot_views<'v, 'a>(views: &'v [ArcView<'a>], limit: usize) -> Vec<&'v ArcView<'a>> {
    let mut by_project: BTreeMap<&str, Vec<&'v ArcView<'a>>> = BTreeMap::new();
    for view in views.iter().filter(|view| !view.graduated) {
        by_project.entry(view.project()).or_default().push(view);
    }
    let mut chosen: Vec<&'v ArcView<'a>> = by_project.into_values().flat_map(|group| top(group, limit)).collect();
    chosen.sort_by(hot_order);
    chosen
}

/// The hottest `limit` arcs of `project`'s feed (its own and those without a project).
pub fn project_hot<'v, 'a>(views: &'v [ArcView<'a>], project: &str, limit: usize) -> Vec<&'v ArcView<'a>> {
    top(views.iter().filter(|view| !view.graduated && owned_by(view.project(), project)).collect(), limit)
}

/// A signal that is active at `now`.
#[derive(Clone, Debug)]
pub struct ActiveSignal<'a> {
    pub relpath: &'a str,
    pub signal: &'a SignalState,
    pub severity: Severity,
    /// The project of the signal's file, empty for none.
    pub project: &'a str,
}

impl ActiveSignal<'_> {
    /// Whether `project`'s feed shows it: its own, without a project, or shared.
    pub fn visible_to(&self, project: &str, config: &VaultConfig) -> bool {
        owned_by(self.project, project) || config.shares(self.severity, self.signal.global)
    }
}

/// When a signal of `severity` seen since `since` goes stale (critical and nuclear never do):
/// the rule item signals follow too (`crate::signal::stale_after`).
fn stale_at(severity: Severity, since: i64, config: &VaultConfig) -> Option<i64> {
    stale_after(severity, since, config.signal_stale_days)
}

/// Signals shown in the feed: not resolved (so no tombstone), not stale, not named by an
/// arc's `mitigates:` (by source or id), each source and text once; nuclear, critical,
/// warning, info; newest first within a severity; then by id.
pub fn active_signals<'a>(snapshot: &'a Snapshot, now: Timestamp, config: &VaultConfig) -> Vec<ActiveSignal<'a>> {
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
            active.push(ActiveSignal { relpath, signal, severity, project: &file.state.project });
        }
    }
    active.sort_by(|a, b| {
        severity_rank(a.severity)
            .cmp(&severity_rank(b.severity))
            .then(b.signal.since.cmp(&a.signal.since))
            .then(a.signal.id.cmp(&b.signal.id))
    });
    // The same signal written in two files of a project (a copy of an arc) shows once, at
    // its most urgent.
    let mut seen: HashSet<(&str, String, String)> = HashSet::new();
    active.retain(|signal| {
        let source = signal.signal.source.as_deref().unwrap_or("").trim().to_ascii_lowercase();
        seen.insert((signal.project, source, normalize_content(&signal.signal.text)))
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
pub const INJECT_MAX_DAYS: i64 = 30;

/// Arc statuses whose inject blocks are over: the work they steered has ended.
const FINISHED_STATUSES: [&str; 3] = ["resolved", "complete", "graduated"];

/// An inject block that has not expired.
#[derive(Clone, Debug)]
pub struct ActiveInject<'a> {
    pub inject: &'a InjectState,
    /// Seconds.
    pub expires_at: Option<i64>,
    /// The project of the block's file, empty for none.
    pub project: &'a str,
}

/// Inject blocks that are still live, deduplicated per project by target and normalized
/// content, in vault order, as indexed (not yet redacted). Dropped: an expired `ttl=`, a block
/// more than [`INJECT_MAX_DAYS`] old, and every block of an arc that is resolved, complete or
/// graduated.
pub fn active_inject_states(snapshot: &Snapshot, now: Timestamp) -> Vec<ActiveInject<'_>> {
    let mut seen: HashSet<(&str, String, String)> = HashSet::new();
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
        let project = file.state.project.as_str();
        for inject in &file.state.injects {
            let max_age = INJECT_MAX_DAYS.saturating_mul(86_400);
            let ttl = inject.ttl_days.map_or(max_age, |days| i64::from(days).saturating_mul(86_400).min(max_age));
            let expires_at = Some(inject.since.saturating_add(ttl));
            if expires_at.is_some_and(|expiry| expiry <= now.as_second()) {
                continue;
            }
            let key = (project, inject.target.trim().to_ascii_lowercase(), normalize_content(&inject.content));
            if seen.insert(key) {
                injects.push(ActiveInject { inject, expires_at, project });
            }
        }
    }
    injects
}

/// The blocks of [`active_inject_states`], redacted, as stored and shown.
pub fn active_injects(states: &[ActiveInject<'_>]) -> Vec<StoredInject> {
    states
        .iter()
        .map(|active| StoredInject {
            block: InjectBlock {
                id: active.inject.id.clone(),
                target: active.inject.target.clone(),
                content: redacted(&active.inject.content).into_owned(),
            },
            expires_at: active.expires_at,
            project: active.project.to_string(),
        })
        .collect()
}

/// The digest of everything the feed files and the session feed are made of (the day,
/// the hot arcs of every project — [`project_hot_views`] —, the active signals, the inject
/// blocks, each with its project): equal digests, equal feed.
pub fn feed_digest(
    now: Timestamp,
    hot: &[&ArcView<'_>],
    active: &[ActiveSignal<'_>],
    injects: &[ActiveInject<'_>],
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut field = |text: &str| {
        hasher.update(text.as_bytes());
        hasher.update([0]);
    };
    field("feed v3");
    field(&date(now));
    for view in hot {
        field(view.project());
        field(&view.arc.cluster_id);
        field(&view.arc.title);
        field(&view.heat.to_string());
        field(view.region());
        field(view.status());
        field(view.arc.summary.as_deref().unwrap_or(""));
    }
    field("signals");
    for signal in active {
        field(signal.project);
        field(if signal.signal.global { "global" } else { "" });
        field(&signal.signal.id);
        field(signal.severity.as_str());
        field(signal.signal.source.as_deref().unwrap_or(""));
        field(&signal.signal.text);
        field(&signal.signal.since.to_string());
        field(signal.relpath);
    }
    field("injects");
    for active in injects {
        field(active.project);
        field(&active.inject.id);
        field(&active.inject.target);
        field(&active.inject.content);
        field(&active.expires_at.map_or(String::new(), |expiry| expiry.to_string()));
    }
    hex::encode(hasher.finalize())
}

/// The feed as stored for the session-start path: every project's entries, each with its
/// project (empty: a file without one).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FeedState {
    /// [`FEED_STATE_VERSION`] when written by this version; 0 for an older state.
    pub version: u32,
    pub hot_arcs: Vec<StoredArc>,
    pub signals: Vec<StoredSignal>,
    pub injects: Vec<StoredInject>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredArc {
    #[serde(flatten)]
    pub arc: HotArc,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredSignal {
    #[serde(flatten)]
    pub signal: FeedSignal,
    /// Seconds; `None` for critical and nuclear signals, which never go stale.
    #[serde(default)]
    pub stale_at: Option<i64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project: String,
    /// Marked `scope=global`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub global: bool,
    /// When it was raised (seconds): the marker's date, else its file's.
    #[serde(default)]
    pub since: i64,
    /// The file holding the marker, relative to the vault.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredInject {
    #[serde(flatten)]
    pub block: InjectBlock,
    #[serde(default)]
    pub expires_at: Option<i64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project: String,
}

impl StoredSignal {
    /// The scope whose readers may see it: global when it has no project or is shared.
    fn scope(&self, config: &VaultConfig) -> Scope {
        if self.project.is_empty() || config.shares(self.signal.severity, self.global) {
            Scope::Global
        } else {
            Scope::Project(self.project.clone())
        }
    }
}

impl FeedState {
    /// The feed of `snapshot` at `now` (heat computed fresh).
    pub fn compute(snapshot: &Snapshot, now: Timestamp, config: &VaultConfig) -> FeedState {
        let views = arc_views(snapshot, now);
        FeedState::from_parts(&views, snapshot, now, config)
    }

    /// The feed from already computed arc views (the tick's, with this tick's graduations).
    pub fn from_parts(views: &[ArcView<'_>], snapshot: &Snapshot, now: Timestamp, config: &VaultConfig) -> FeedState {
        let hot_arcs = project_hot_views(views, config.hot_arcs)
            .into_iter()
            .map(|view| StoredArc {
                arc: HotArc {
                    id: crate::vault::arc_id(&view.arc.cluster_id),
                    title: clip(&one_line(&redacted(&view.arc.title)), 200).into_owned(),
                    heat: view.heat,
                    region: view.region().to_string(),
                    status: view.status().to_string(),
                },
                project: view.project().to_string(),
            })
            .collect();
        let mut kept: HashMap<&str, usize> = HashMap::new();
        let signals = active_signals(snapshot, now, config)
            .into_iter()
            .filter(|active| {
                let count = kept.entry(active.project).or_default();
                *count += 1;
                *count <= MAX_FEED_SIGNALS
            })
            .map(|active| StoredSignal {
                signal: FeedSignal {
                    id: active.signal.id.clone(),
                    severity: active.severity,
                    source: active.signal.source.clone().unwrap_or_else(|| "unknown".into()),
                    text: redacted(&active.signal.text).into_owned(),
                },
                stale_at: stale_at(active.severity, active.signal.since, config),
                project: active.project.to_string(),
                global: active.signal.global,
                since: active.signal.since,
                file: active.relpath.to_string(),
            })
            .collect();
        FeedState {
            version: FEED_STATE_VERSION,
            hot_arcs,
            signals,
            injects: active_injects(&active_inject_states(snapshot, now)),
        }
    }

    /// What a session of `project` gets at `now`: the hottest `hot_arcs` of its own arcs
    /// and those without a project, the signals it may see, its inject blocks; stale
    /// signals and expired blocks dropped, each signal and block once.
    pub fn into_feed(self, now: Timestamp, project: &str, config: &VaultConfig) -> Feed {
        let now = now.as_second();
        let mut seen_signals: HashSet<(String, String)> = HashSet::new();
        let mut seen_injects: HashSet<(String, String)> = HashSet::new();
        Feed {
            hot_arcs: self
                .hot_arcs
                .into_iter()
                .filter(|stored| owned_by(&stored.project, project))
                .take(config.hot_arcs)
                .map(|stored| stored.arc)
                .collect(),
            signals: self
                .signals
                .into_iter()
                .filter(|s| s.stale_at.is_none_or(|stale| stale > now))
                .filter(|s| owned_by(&s.project, project) || config.shares(s.signal.severity, s.global))
                .filter(|s| {
                    let source = s.signal.source.trim().to_ascii_lowercase();
                    seen_signals.insert((source, normalize_content(&s.signal.text)))
                })
                .map(|s| s.signal)
                .collect(),
            injects: self
                .injects
                .into_iter()
                .filter(|i| i.expires_at.is_none_or(|expiry| expiry > now))
                .filter(|i| owned_by(&i.project, project))
                .filter(|i| {
                    let key = (i.block.target.trim().to_ascii_lowercase(), normalize_content(&i.block.content));
                    seen_injects.insert(key)
                })
                .map(|i| i.block)
                .collect(),
        }
    }

    /// Every active signal at `now`, each with the scope whose readers may see it.
    pub fn scoped_signals(&self, now: Timestamp, config: &VaultConfig) -> Vec<Signal> {
        let now = now.as_second();
        self.signals.iter().filter(|s| s.stale_at.is_none_or(|stale| stale > now)).map(|s| s.model(config)).collect()
    }

    /// The active signals a session of `project` sees at `now` (those [`Self::into_feed`]
    /// keeps), in the one signal model.
    pub fn project_signals(&self, now: Timestamp, project: &str, config: &VaultConfig) -> Vec<Signal> {
        let now = now.as_second();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        self.signals
            .iter()
            .filter(|s| s.stale_at.is_none_or(|stale| stale > now))
            .filter(|s| owned_by(&s.project, project) || config.shares(s.signal.severity, s.global))
            .filter(|s| seen.insert((s.signal.source.trim().to_ascii_lowercase(), normalize_content(&s.signal.text))))
            .map(|s| s.model(config))
            .collect()
    }
}

impl StoredSignal {
    /// The signal in the model every reader shares (`crate::signal`).
    fn model(&self, config: &VaultConfig) -> Signal {
        let scope = self.scope(config);
        let title = clip(&one_line(self.signal.text.lines().find(|line| !line.trim().is_empty()).unwrap_or("")), 100)
            .into_owned();
        Signal {
            id: self.signal.id.clone(),
            origin: SignalOrigin::Vault,
            severity: self.signal.severity,
            project: (!self.project.is_empty()).then(|| self.project.clone()),
            scope,
            source: self.signal.source.clone(),
            title,
            text: self.signal.text.clone(),
            created_at: (self.since > 0).then(|| timestamp(self.since)),
            file: (!self.file.is_empty()).then(|| self.file.clone()),
        }
    }
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
pub fn render_hot_arcs(hot: &[&ArcView<'_>], now: Timestamp) -> String {
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

/// `signals.md`: active signals, most urgent first: `- **[sev]** (source) text`; the same
/// source and text once (copies in arcs of two projects).
pub fn render_signals(active: &[ActiveSignal<'_>], now: Timestamp) -> String {
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let active: Vec<&ActiveSignal<'_>> = active
        .iter()
        .filter(|signal| {
            let source = signal.signal.source.as_deref().unwrap_or("").trim().to_ascii_lowercase();
            seen.insert((source, normalize_content(&signal.signal.text)))
        })
        .collect();
    let day = date(now);
    let top = active.first().map_or("info", |signal| signal.severity.as_str());
    let mut out = frontmatter(&format!("signals-{day}"), "Active Signals", 8, 3600, top);
    out.push_str(&format!("## Active Signals — {day}\n\n"));
    if active.is_empty() {
        out.push_str("No active signals.\n");
        return out;
    }
    for signal in &active {
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

/// `inject.md`: `**[target]** content` per block, deduplicated (across projects too),
/// expired ones dropped.
pub fn render_injects(injects: &[StoredInject], now: Timestamp) -> String {
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let injects: Vec<&StoredInject> = injects
        .iter()
        .filter(|inject| {
            let key = (inject.block.target.trim().to_ascii_lowercase(), normalize_content(&inject.block.content));
            seen.insert(key)
        })
        .collect();
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
pub fn render_intent_placeholder() -> String {
    let mut out = frontmatter("intent", "Operator Intent", 7, 7200, "info");
    out.push_str(
        "## Operator Intent\n\nNo intent inferred yet: it comes from the AI phases of `brain tick`, and none has run.\n",
    );
    out
}

/// `last-tick-diff.md`: what the tick changed. The caller redacts the user's text in the
/// lines (titles, signal texts); counts and paths need none.
pub fn render_diff(now: Timestamp, sections: &[(String, Vec<String>)]) -> String {
    let stamp = crate::time::format_timestamp(now);
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

    fn signal(id: &str, severity: Severity, stale_at: Option<i64>, project: &str, global: bool) -> StoredSignal {
        StoredSignal {
            signal: FeedSignal { id: id.into(), severity, source: "s".into(), text: format!("text of {id}") },
            stale_at,
            project: project.into(),
            global,
            since: 0,
            file: String::new(),
        }
    }

    fn arc(id: &str, heat: u8, project: &str) -> StoredArc {
        StoredArc {
            arc: HotArc { id: id.into(), title: id.into(), heat, region: "-".into(), status: "-".into() },
            project: project.into(),
        }
    }

    #[test]
    fn the_stored_feed_drops_what_went_stale_or_expired_since() {
        let state = FeedState {
            version: FEED_STATE_VERSION,
            hot_arcs: vec![],
            signals: vec![
                signal("a", Severity::Warning, Some(100), "", false),
                signal("b", Severity::Critical, None, "", false),
            ],
            injects: vec![StoredInject {
                block: InjectBlock { id: "i".into(), target: "claude.md".into(), content: "c".into() },
                expires_at: Some(100),
                project: String::new(),
            }],
        };
        let json = serde_json::to_string(&state).unwrap();
        let back: FeedState = serde_json::from_str(&json).unwrap();
        assert_eq!(back, state);
        let config = VaultConfig::default();
        let early = back.clone().into_feed(Timestamp::from_second(50).unwrap(), "api", &config);
        assert_eq!((early.signals.len(), early.injects.len()), (2, 1));
        let late = back.into_feed(Timestamp::from_second(150).unwrap(), "api", &config);
        assert_eq!(late.signals.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["b"]);
        assert!(late.injects.is_empty());
    }

    #[test]
    fn a_project_gets_its_own_entries_those_without_a_project_and_shared_signals() {
        let inject = |id: &str, project: &str| StoredInject {
            block: InjectBlock { id: id.into(), target: "claude.md".into(), content: format!("block {id}") },
            expires_at: None,
            project: project.into(),
        };
        let state = FeedState {
            version: FEED_STATE_VERSION,
            hot_arcs: vec![arc("web-1", 9, "web"), arc("api-1", 8, "api"), arc("all-1", 7, ""), arc("api-2", 6, "api")],
            signals: vec![
                signal("web-nuclear", Severity::Nuclear, None, "web", false),
                signal("web-critical", Severity::Critical, None, "web", false),
                signal("web-marked", Severity::Info, None, "web", true),
                signal("api-warning", Severity::Warning, None, "api", false),
                signal("all-info", Severity::Info, None, "", false),
            ],
            injects: vec![inject("web-i", "web"), inject("api-i", "api"), inject("all-i", "")],
        };
        let now = Timestamp::from_second(50).unwrap();
        let ids = |feed: &Feed| {
            (
                feed.hot_arcs.iter().map(|a| a.id.clone()).collect::<Vec<_>>(),
                feed.signals.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
                feed.injects.iter().map(|i| i.id.clone()).collect::<Vec<_>>(),
            )
        };
        let config = VaultConfig { hot_arcs: 2, ..VaultConfig::default() };
        let api = state.clone().into_feed(now, "api", &config);
        assert_eq!(
            ids(&api),
            (
                vec!["api-1".to_string(), "all-1".into()],
                vec!["web-marked".to_string(), "api-warning".into(), "all-info".into()],
                vec!["api-i".to_string(), "all-i".into()]
            )
        );
        let shared = VaultConfig { shared_signal_severity: Some(Severity::Nuclear), ..config.clone() };
        let api = state.clone().into_feed(now, "api", &shared);
        assert_eq!(ids(&api).1, ["web-nuclear", "web-marked", "api-warning", "all-info"]);
        let scoped: Vec<(String, String)> = state
            .scoped_signals(now, &shared)
            .into_iter()
            .map(|signal| (signal.id, signal.scope.to_string()))
            .collect();
        let project_ids = |project: &str| -> Vec<String> {
            state.project_signals(now, project, &shared).into_iter().map(|signal| signal.id).collect()
        };
        assert_eq!(project_ids("api"), ids(&state.clone().into_feed(now, "api", &shared)).1, "the same signals");
        assert_eq!(project_ids("web"), ids(&state.clone().into_feed(now, "web", &shared)).1, "the same signals");
        let scope_of = |id: &str| scoped.iter().find(|(known, _)| known == id).map(|(_, scope)| scope.as_str());
        assert_eq!(scope_of("web-nuclear"), Some("global"));
        assert_eq!(scope_of("web-critical"), Some("project/web"));
        assert_eq!(scope_of("web-marked"), Some("global"));
        assert_eq!(scope_of("all-info"), Some("global"));
    }

    #[test]
    fn a_feed_state_without_projects_is_recognised_as_old() {
        let old =
            r#"{"hot_arcs":[{"id":"a","title":"t","heat":3,"region":"-","status":"-"}],"signals":[],"injects":[]}"#;
        let state: FeedState = serde_json::from_str(old).unwrap();
        assert!(state.version < OLDEST_SERVED_FEED_STATE, "an old state must not be served as if it had projects");
    }

    #[test]
    fn a_feed_state_of_shape_2_serves_its_signals_without_a_date_or_file() {
        let stored = r#"{"version":2,"hot_arcs":[],"injects":[],"signals":[{"id":"mem_v1","severity":"critical",
            "source":"db","text":"Primary is down\nfail over","stale_at":null,"project":"api"}]}"#;
        let state: FeedState = serde_json::from_str(stored).unwrap();
        assert!((OLDEST_SERVED_FEED_STATE..=FEED_STATE_VERSION).contains(&state.version));
        let now = Timestamp::from_second(50).unwrap();
        let signals = state.project_signals(now, "api", &VaultConfig::default());
        assert_eq!(signals.len(), 1);
        let signal = &signals[0];
        assert_eq!(
            (signal.origin, signal.title.as_str(), signal.project.as_deref()),
            (SignalOrigin::Vault, "Primary is down", Some("api"))
        );
        assert_eq!((signal.created_at, signal.file.as_deref()), (None, None));
    }
}
