//! `brain sync`: the same brain on every machine. Each machine keeps its own home (reads and
//! hooks stay local); changes travel both ways through a `brain serve`, by cursor.
//!
//! The model is atuin's sync, adapted to items that change: every store keeps a change log
//! (`brain_store::sync`: one row per item, its latest change under a growing cursor,
//! tombstones for deletions). A sync *pushes* the changes no server has acknowledged yet,
//! each with the server version it was based on (`baseVersion`), which the server applies
//! only on that version — a push replayed after a lost answer is recognised by its content
//! and repeats nothing — then *pulls* the server's log after this copy's cursor, page by
//! page, each page applied in one transaction with the cursor moved in the same one. An
//! item changed on both sides since the last sync is never overwritten: the server's
//! version is kept beside the local one as a conflict until `brain sync resolve`.
//!
//! The server is not trusted to be sane: a run stops at its [`RunBounds`] (pulls, bytes,
//! time) whatever the server says follows; every number of an answer (cursor, versions,
//! counts) is checked before anything of it is written; a pulled change is applied only to
//! an item whose local copy is in a scope synced now, whatever scope the change claims.
//!
//! This module is above `Brain` (like `remote`): the wire types, the scope selection, the
//! server's halves of the two routes (`accept_push`, `pull_page`) and the client's run.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use brain_core::item::MAX_VERSION;
use brain_core::{Item, Scope, Timestamp};
use brain_store::{Change, ChangePage, PullOutcome, PushOutcome, StoreError};
use serde::{Deserialize, Serialize};

use crate::remote::RemoteBrain;
use brain_api::app::Brain;
use brain_api::config::SyncConfig;
use brain_api::error::{BrainError, BrainResult};

/// `BRAIN_SYNC_TRACE=1`: the time of each phase of a sync (client) or sync request
/// (server) on stderr, for profiling.
pub fn trace(phase: &str) {
    use std::sync::OnceLock;
    static START: OnceLock<Option<std::time::Instant>> = OnceLock::new();
    let start = START.get_or_init(|| std::env::var_os("BRAIN_SYNC_TRACE").map(|_| std::time::Instant::now()));
    if let Some(start) = start {
        eprintln!("sync-trace {:9.2} ms  {phase}", start.elapsed().as_secs_f64() * 1000.0);
    }
}

/// Most changes one push request carries (the server refuses more), and one pull page holds.
pub const MAX_PUSH_CHANGES: usize = 500;
/// Changes the client sends per push request: a request stays well inside the client's
/// time-out on a busy server (under load 7–12 a 500-change request of a 100k first sync
/// took 5–10 s), and a request cut off by a time-out costs less to replay.
pub const PUSH_BATCH: usize = 200;
pub const MAX_PULL_CHANGES: usize = 1000;
/// A push request is cut before its JSON reaches this size (the server takes 1 MiB by
/// default); a pull answer likewise stays under [`MAX_PULL_BYTES`].
pub const MAX_PUSH_BYTES: usize = 512 * 1024;
pub const MAX_PULL_BYTES: usize = 4 * 1024 * 1024;

/// How far one run may go, whatever the server says follows: a server that answers "more"
/// for ever (broken or hostile) would otherwise keep a sync — a write transaction per page,
/// the sync lock held, a hook's background sync never ending — running for good. A run that
/// reaches a bound stops with an error naming it; every page applied so far stays applied,
/// the cursor at the last one, so the next run resumes there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBounds {
    /// Pull requests.
    pub max_pulls: u64,
    /// Bytes of pull answers (checked after each answer: a run reads at most one answer past
    /// the bound, and an answer is at most 16 MiB).
    pub max_bytes: u64,
    /// Time since the run started, checked before each request (a request under way ends
    /// within `[remote] timeout_ms`).
    pub max_time: Duration,
}

impl RunBounds {
    /// A first sync of up to a million changes fits one run (1,000 full pages of 1,000, or
    /// 256 pages at the 4 MiB a server sends at most), and so does ten minutes of it; a
    /// larger one goes on in the next run.
    pub const DEFAULT: RunBounds = RunBounds {
        max_pulls: SyncConfig::DEFAULT_MAX_PULLS,
        max_bytes: SyncConfig::DEFAULT_MAX_PULL_MIB << 20,
        max_time: Duration::from_secs(SyncConfig::DEFAULT_MAX_SECONDS),
    };

    /// The bounds `[sync]` sets (`max_pulls`, `max_pull_mib`, `max_seconds`); 0 is refused.
    pub fn from_config(config: &SyncConfig) -> BrainResult<RunBounds> {
        let keys = [
            ("max_pulls", config.max_pulls),
            ("max_pull_mib", config.max_pull_mib),
            ("max_seconds", config.max_seconds),
        ];
        for (key, value) in keys {
            if value == 0 {
                return Err(BrainError::Config {
                    message: format!("[sync] {key} must be at least 1 (0 would stop every sync before it starts)"),
                    hint: Some(format!("raise [sync] {key}, or remove it for the default")),
                });
            }
        }
        Ok(RunBounds {
            max_pulls: config.max_pulls,
            max_bytes: config.max_pull_mib.saturating_mul(1 << 20),
            max_time: Duration::from_secs(config.max_seconds),
        })
    }
}

/// What a run has used of its [`RunBounds`].
struct RunBudget {
    bounds: RunBounds,
    started: Instant,
    pulls: u64,
    bytes: u64,
}

impl RunBudget {
    fn new(bounds: RunBounds) -> RunBudget {
        RunBudget { bounds, started: Instant::now(), pulls: 0, bytes: 0 }
    }

    /// The error that stops the run when its time is up (`doing`: what it was at).
    fn check_time(&self, doing: &str, resume: &str) -> BrainResult<()> {
        if self.started.elapsed() < self.bounds.max_time {
            return Ok(());
        }
        let message = format!("stopped after {} s ([sync] max_seconds) while {doing}", self.bounds.max_time.as_secs());
        Err(stopped(message, "max_seconds", resume))
    }

    /// The error that stops the run before another pull, when a bound is reached.
    fn check_pull(&self, pulled: usize, cursor: u64) -> BrainResult<()> {
        let resume = format!("{pulled} change(s) applied in this run, pulled through cursor {cursor}");
        if self.pulls >= self.bounds.max_pulls {
            return Err(stopped(
                format!(
                    "stopped after {} pulls ([sync] max_pulls): the server still says more changes follow",
                    self.pulls
                ),
                "max_pulls",
                &resume,
            ));
        }
        if self.bytes >= self.bounds.max_bytes {
            return Err(stopped(
                format!(
                    "stopped after {} MiB of answers ([sync] max_pull_mib): the server still says more changes follow",
                    self.bytes >> 20
                ),
                "max_pull_mib",
                &resume,
            ));
        }
        self.check_time("pulling", &resume)
    }
}

/// The error of a run stopped by the bound `[sync] key`.
fn stopped(message: String, key: &str, resume: &str) -> BrainError {
    BrainError::user_with_hint(
        message,
        format!(
            "{resume}; raise [sync] {key} if the server really has that much to send (one that never ends is broken)"
        ),
    )
}

/// Which scopes travel: the `[sync] scopes` patterns — `global`, `project/NAME`,
/// `team/NAME`, `agent/NAME`, `project/*`, `team/*`, `agent/*`, or `*` for every scope but
/// agents' (an agent's private memory travels only when a pattern names `agent/…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeSelector {
    patterns: Vec<String>,
}

impl ScopeSelector {
    /// The default: global, every project and every team.
    pub fn default_patterns() -> Vec<String> {
        SyncConfig::DEFAULT_SCOPES.iter().map(|scope| scope.to_string()).collect()
    }

    pub fn parse(patterns: &[String]) -> BrainResult<ScopeSelector> {
        let mut checked = Vec::new();
        for pattern in patterns {
            let pattern = pattern.trim();
            let valid = pattern == "*"
                || matches!(pattern, "project/*" | "team/*" | "agent/*")
                || Scope::parse(pattern).is_ok();
            if !valid {
                return Err(BrainError::Config {
                    message: format!("[sync] scopes: invalid pattern {pattern:?}"),
                    hint: Some(
                        "use global, project/NAME, team/NAME, agent/NAME, project/*, team/*, agent/* or *".into(),
                    ),
                });
            }
            checked.push(pattern.to_string());
        }
        Ok(ScopeSelector { patterns: checked })
    }

    /// Whether items of `scope` travel.
    pub fn matches(&self, scope: &str) -> bool {
        self.patterns.iter().any(|pattern| match pattern.as_str() {
            "*" => !scope.starts_with("agent/"),
            _ => match pattern.strip_suffix("/*") {
                Some(kind) => scope.split_once('/').is_some_and(|(prefix, _)| prefix == kind),
                None => pattern == scope,
            },
        })
    }

    /// The patterns that name one scope (not a wildcard).
    pub fn exact_scopes(&self) -> Vec<Scope> {
        self.patterns.iter().filter_map(|pattern| Scope::parse(pattern).ok()).collect()
    }

    /// The patterns joined with commas (the `scopes=` parameter of a pull).
    pub fn to_param(&self) -> String {
        self.patterns.join(",")
    }

    pub fn from_param(text: &str) -> BrainResult<ScopeSelector> {
        let patterns: Vec<String> = text.split(',').filter(|p| !p.trim().is_empty()).map(str::to_string).collect();
        ScopeSelector::parse(&patterns).map_err(|err| BrainError::user(err.to_string()))
    }
}

/// One change on the wire: an item's state (or tombstone, `item: null`) and versions.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WireChange {
    pub id: String,
    pub scope: String,
    /// The version in the log it was read from (the server's, in a pull).
    pub version: u64,
    /// In a push: the server version the change was made on (0: never synced).
    #[serde(default)]
    pub base_version: u64,
    pub item: Option<Item>,
}

impl WireChange {
    fn from_change(change: Change) -> WireChange {
        WireChange {
            id: change.id,
            scope: change.scope,
            version: change.version,
            base_version: change.base_version,
            item: change.item,
        }
    }

    fn into_change(self) -> Change {
        Change {
            seq: 0,
            id: self.id,
            scope: self.scope,
            version: self.version,
            base_version: self.base_version,
            item: self.item,
        }
    }
}

/// `POST /api/v2/sync/push` body.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushRequest {
    pub changes: Vec<WireChange>,
}

/// What the server did with one pushed change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushResult {
    pub id: String,
    /// `accepted` or `conflict`.
    pub status: String,
    /// The server's version of the item now.
    pub version: u64,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PushResponse {
    pub results: Vec<PushResult>,
}

/// `GET /api/v2/sync/pull` answer: a page of the server's log after `after`.
#[derive(Debug, Serialize, Deserialize)]
pub struct PullResponse {
    pub changes: Vec<WireChange>,
    /// The cursor to ask from next.
    pub next: u64,
    /// More changes may follow `next`.
    pub more: bool,
}

/// The pushed item, checked as every write is (`Brain::prepare`: redaction, validation,
/// token count), and its scope agreeing with the change's.
fn prepared_change(brain: &Brain, wire: WireChange) -> BrainResult<Change> {
    brain_core::item::validate_id(&wire.id).map_err(|err| BrainError::user(format!("change: {}", err.message)))?;
    if wire.id.starts_with("mem_v") {
        return Err(BrainError::user(format!("change {}: vault-derived items do not sync", wire.id)));
    }
    Scope::parse(&wire.scope).map_err(|err| BrainError::user(format!("change {}: {err}", wire.id)))?;
    let mut change = wire.into_change();
    if let Some(item) = change.item.as_mut() {
        if item.id != change.id || item.scope.to_string() != change.scope {
            return Err(BrainError::user(format!(
                "change {}: the item's id and scope must be the change's",
                change.id
            )));
        }
        brain_api::policy::refuse_vault_source(Some(&item.source))
            .map_err(|err| BrainError::user(format!("change {}: {err}", change.id)))?;
        brain.prepare(item)?;
    }
    Ok(change)
}

/// What a push needs, said with a refusal.
const PUSH_GRANTS: &str = " (a push needs the write grant, and under write_policy = \"draft\" the review grant)";

/// The server's side of a push: every change checked and prepared, the caller's write
/// grant checked on each change's scope and, inside the transaction, on the stored item's
/// (an item may not be moved out of a scope the caller cannot write); then all applied in
/// one transaction. A change the caller may not write fails the whole request, writing
/// nothing.
pub fn accept_push(
    brain: &Brain,
    request: PushRequest,
    may_write: &dyn Fn(&str) -> bool,
) -> BrainResult<Vec<PushResult>> {
    if request.changes.len() > MAX_PUSH_CHANGES {
        return Err(BrainError::user(format!(
            "a push carries at most {MAX_PUSH_CHANGES} changes (this one {})",
            request.changes.len()
        )));
    }
    trace(&format!("push request: {} changes", request.changes.len()));
    let mut changes = Vec::with_capacity(request.changes.len());
    for wire in request.changes {
        let change = prepared_change(brain, wire)?;
        if !may_write(&change.scope) {
            return Err(BrainError::Forbidden {
                message: format!("this token may not push into {}{PUSH_GRANTS}", change.scope),
            });
        }
        changes.push(change);
    }
    trace("push request: prepared");
    let mut refused: Option<String> = None;
    let outcomes = brain.store().write(|tx| {
        for change in &changes {
            if let Some(stored) = tx.get(&change.id)?
                && !may_write(&stored.scope.to_string())
            {
                refused = Some(stored.scope.to_string());
                return Ok(Vec::new());
            }
        }
        changes.iter().map(|change| tx.apply_pushed(change)).collect::<Result<Vec<_>, StoreError>>()
    })?;
    trace("push request: committed");
    if let Some(scope) = refused {
        return Err(BrainError::Forbidden { message: format!("this token may not push into {scope}{PUSH_GRANTS}") });
    }
    Ok(changes
        .iter()
        .zip(outcomes)
        .map(|(change, outcome)| match outcome {
            PushOutcome::Accepted { version } => {
                PushResult { id: change.id.clone(), status: "accepted".into(), version }
            }
            PushOutcome::Conflict { version } => {
                PushResult { id: change.id.clone(), status: "conflict".into(), version }
            }
        })
        .collect())
}

/// The server's side of a pull: the log after `after` in the scopes `keep` allows (the
/// caller's read grants and the requested patterns), at most `limit` rows read and
/// [`MAX_PULL_BYTES`] of JSON.
pub fn pull_page(brain: &Brain, after: u64, limit: usize, keep: &dyn Fn(&str) -> bool) -> BrainResult<PullResponse> {
    let limit = limit.clamp(1, MAX_PULL_CHANGES);
    let page: ChangePage = brain.store().changes_since(after, limit, keep)?;
    let mut bytes = 0;
    let mut changes = Vec::with_capacity(page.changes.len());
    let (mut next, mut more) = (page.next, page.more);
    for change in page.changes {
        let seq = change.seq;
        let wire = WireChange::from_change(Change { base_version: 0, ..change });
        bytes += serde_json::to_vec(&wire).map(|json| json.len()).unwrap_or(0);
        if bytes > MAX_PULL_BYTES && !changes.is_empty() {
            // The rest waits for the next page, which starts right after the last one sent.
            more = true;
            break;
        }
        changes.push((seq, wire));
    }
    if more
        && let Some((seq, _)) = changes.last()
        && bytes > MAX_PULL_BYTES
    {
        next = *seq;
    }
    let changes = changes.into_iter().map(|(_, wire)| wire).collect();
    Ok(PullResponse { changes, next, more })
}

/// What one `brain sync` did.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    pub url: String,
    /// Local changes the server took.
    pub pushed: usize,
    /// Local changes the server refused because its item changed meanwhile (they come
    /// back in the pull as conflicts).
    pub push_conflicts: usize,
    /// Server changes applied here.
    pub pulled: usize,
    /// New conflicts found by this run.
    pub conflicts: usize,
    /// Local changes still waiting for a push (items in conflict included).
    pub pending: u64,
    /// Conflicts waiting for `brain sync resolve`.
    pub unresolved: usize,
    /// Pulled changes refused because the item here is in a scope this copy does not sync
    /// (after `[sync] scopes` was narrowed): never applied.
    pub refused: Vec<RefusedChange>,
    /// The server's version of each change it accepted in this run: the pull passes over
    /// these changes coming back (this copy has them already; see [`pull`]).
    #[serde(skip)]
    acknowledged: std::collections::HashMap<String, u64>,
}

/// A pulled change refused: it would have deleted or moved an item of a scope not synced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedChange {
    pub id: String,
    /// The scope the change claimed.
    pub scope: String,
    /// The scope of the item here.
    pub local_scope: String,
}

/// Synchronises `brain`'s home with the server `remote`: push, then pull, within `bounds`.
/// Each step is durable on its own: a change is marked pushed only after the server's
/// answer, the pull cursor moves in the transaction that applies its page, so a run killed
/// (or stopped by a bound) at any point leaves a home the next run completes (see the
/// module docs). Every number the server sends is checked before anything of its answer
/// is written. `progress(stage, done)`.
pub fn run(
    brain: &Brain,
    remote: &RemoteBrain,
    selector: &ScopeSelector,
    bounds: RunBounds,
    progress: &mut dyn FnMut(&str, usize),
) -> BrainResult<SyncReport> {
    let mut report = SyncReport { url: remote.base_url().to_string(), ..SyncReport::default() };
    let mut budget = RunBudget::new(bounds);
    trace("run");
    push(brain, remote, selector, &budget, &mut report, progress)?;
    trace("pushed");
    pull(brain, remote, selector, &mut budget, &mut report, progress)?;
    trace("pulled");
    let (pending, unresolved) = brain
        .store()
        .read(|tx| Ok((tx.count_pending(&|scope| selector.matches(scope))?, tx.sync_conflicts()?.len())))?;
    report.pending = pending;
    report.unresolved = unresolved;
    trace("counted");
    Ok(report)
}

fn push(
    brain: &Brain,
    remote: &RemoteBrain,
    selector: &ScopeSelector,
    budget: &RunBudget,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(&str, usize),
) -> BrainResult<()> {
    let keep = |scope: &str| selector.matches(scope);
    let mut after = 0;
    let mut send = |batch: Vec<(u64, WireChange)>, report: &mut SyncReport| -> BrainResult<()> {
        let resume = format!("{} change(s) pushed in this run", report.pushed);
        budget.check_time("pushing", &resume)?;
        send_batch(brain, remote, batch, report)?;
        progress("push", report.pushed + report.push_conflicts);
        Ok(())
    };
    loop {
        let page = brain.store().pending_changes(after, PUSH_BATCH, &keep)?;
        let mut batch: Vec<(u64, WireChange)> = Vec::new();
        let mut bytes = 0;
        for change in page.changes {
            let seq = change.seq;
            let wire = WireChange::from_change(change);
            let size = serde_json::to_vec(&wire).map(|json| json.len()).unwrap_or(0);
            if bytes + size > MAX_PUSH_BYTES && !batch.is_empty() {
                send(std::mem::take(&mut batch), report)?;
                bytes = 0;
            }
            bytes += size;
            batch.push((seq, wire));
        }
        if !batch.is_empty() {
            send(batch, report)?;
        }
        if !page.more || page.next <= after {
            return Ok(());
        }
        after = page.next;
    }
}

/// Pushes one batch and records what the server took, in one transaction.
fn send_batch(
    brain: &Brain,
    remote: &RemoteBrain,
    batch: Vec<(u64, WireChange)>,
    report: &mut SyncReport,
) -> BrainResult<()> {
    let seqs: Vec<(String, u64)> = batch.iter().map(|(seq, wire)| (wire.id.clone(), *seq)).collect();
    let request = PushRequest { changes: batch.into_iter().map(|(_, wire)| wire).collect() };
    trace("push: sending");
    let answer: PushResponse = remote.sync_push(&request)?;
    trace("push: answered");
    check_push_answer(remote.base_url(), &seqs, &answer)?;
    brain.store().write(|tx| {
        for ((id, seq), result) in seqs.iter().zip(&answer.results) {
            if result.status == "accepted" {
                tx.acknowledge_push(id, *seq, result.version)?;
                report.acknowledged.insert(id.clone(), result.version);
                report.pushed += 1;
            } else {
                report.push_conflicts += 1;
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// Checks a push answer before anything of it is written: one result per change pushed, in
/// order, each with a known status and a version the store can hold.
fn check_push_answer(url: &str, sent: &[(String, u64)], answer: &PushResponse) -> BrainResult<()> {
    let refuse = |what: String| {
        Err(BrainError::internal(format!(
            "brain serve at {url} {what}; the answer was refused and the changes stay pending"
        )))
    };
    if answer.results.len() != sent.len() {
        return refuse(format!("answered {} results for {} pushed changes", answer.results.len(), sent.len()));
    }
    for ((id, _), result) in sent.iter().zip(&answer.results) {
        if result.id != *id {
            return refuse(format!("answered for item {:?} where {id} was pushed", clip_wire(&result.id)));
        }
        if result.status != "accepted" && result.status != "conflict" {
            return refuse(format!("answered status {:?} for {id} (accepted or conflict)", clip_wire(&result.status)));
        }
        // 0: a deletion of an item the server never had is accepted as its (absent) state.
        if result.version > MAX_VERSION {
            return refuse(format!("answered version {} for {id}, past the largest ({MAX_VERSION})", result.version));
        }
    }
    Ok(())
}

/// A server's text quoted in a message: one short line.
fn clip_wire(text: &str) -> String {
    brain_api::output::escape_controls(&text.chars().take(80).collect::<String>()).into_owned()
}

/// How far ahead of a clock a synced item's times may be: machines' clocks differ.
const CLOCK_SKEW: Duration = Duration::from_secs(24 * 3600);

/// The first of `item`'s times later than a write on the clock `now` could date it, with
/// its field: a time more than a day ahead ([`CLOCK_SKEW`]), or a review due later than the
/// review schedule's longest step from then. Both sides of sync refuse such an item: dated
/// 9999 it came first in every newest-first list, a signal never went stale, an access was
/// "recent" for good, a review never fell due.
pub fn too_late(item: &Item, now: Timestamp) -> Option<(&'static str, Timestamp)> {
    let limit = now.checked_add(CLOCK_SKEW).unwrap_or(now);
    let review_limit = brain_api::app::next_review(limit, u32::MAX);
    [
        ("created_at", Some(item.created_at), limit),
        ("updated_at", Some(item.updated_at), limit),
        ("last_accessed_at", item.last_accessed_at, limit),
        ("review_due_at", item.review_due_at, review_limit),
    ]
    .into_iter()
    .find_map(|(field, at, limit)| at.filter(|at| *at > limit).map(|at| (field, at)))
}

/// Checks a pull answer before anything of it is written: a cursor that moves forward
/// (and does move when the answer carries changes or says more follow) and stays within
/// what a store can count (2^53 − 1, like versions: what a JSON client reads exactly); no
/// more changes than asked for; each item once; every version within 1 to 2^53 − 1; no
/// item dated later than this machine's clock lets a write date it ([`too_late`]).
fn check_pull_answer(url: &str, after: u64, limit: usize, answer: &PullResponse, now: Timestamp) -> BrainResult<()> {
    let refuse = |what: String| {
        Err(BrainError::internal(format!(
            "brain serve at {url} {what}; nothing of this answer was applied and the cursor stays at {after}"
        )))
    };
    if answer.next > MAX_VERSION {
        return refuse(format!("sent cursor {}, past the largest a server can reach ({MAX_VERSION})", answer.next));
    }
    if answer.next < after {
        return refuse(format!("sent cursor {}, behind the cursor {after} asked from", answer.next));
    }
    if answer.next == after && (answer.more || !answer.changes.is_empty()) {
        return refuse(format!(
            "sent {} change(s){} but its cursor did not move",
            answer.changes.len(),
            if answer.more { " and said more follow" } else { "" }
        ));
    }
    if answer.changes.len() > limit {
        return refuse(format!("sent {} changes in one page, more than the {limit} asked for", answer.changes.len()));
    }
    let mut seen: HashSet<&str> = HashSet::with_capacity(answer.changes.len());
    for change in &answer.changes {
        if !seen.insert(change.id.as_str()) {
            return refuse(format!("sent item {:?} twice in one page", clip_wire(&change.id)));
        }
        if !(1..=MAX_VERSION).contains(&change.version) {
            return refuse(format!(
                "sent version {} of item {:?}, outside 1 to {MAX_VERSION}",
                change.version,
                clip_wire(&change.id)
            ));
        }
        if let Some((field, at)) = change.item.as_ref().and_then(|item| too_late(item, now)) {
            return refuse(format!(
                "sent item {:?} with {field} {}, later than this machine's clock ({}) lets a write date it",
                clip_wire(&change.id),
                brain_core::time::format_timestamp(at),
                brain_core::time::format_timestamp(now)
            ));
        }
    }
    Ok(())
}

fn pull(
    brain: &Brain,
    remote: &RemoteBrain,
    selector: &ScopeSelector,
    budget: &mut RunBudget,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(&str, usize),
) -> BrainResult<()> {
    let name = format!("pull:{}", remote.base_url());
    let synced = |scope: &str| selector.matches(scope);
    loop {
        let after = brain.store().read(|tx| tx.sync_cursor(&name))?;
        budget.check_pull(report.pulled, after)?;
        trace("pull: asking");
        let (answer, bytes): (PullResponse, usize) = remote.sync_pull(after, MAX_PULL_CHANGES, &selector.to_param())?;
        budget.pulls += 1;
        budget.bytes = budget.bytes.saturating_add(bytes as u64);
        trace(&format!("pull: answered {} changes", answer.changes.len()));
        check_pull_answer(remote.base_url(), after, MAX_PULL_CHANGES, &answer, brain.now())?;
        let (next, more) = (answer.next, answer.more);
        let mut changes = Vec::with_capacity(answer.changes.len());
        for wire in answer.changes {
            // The server filtered by scope already; a change outside the selection (an
            // older server, a wider grant) is passed over, never stored.
            if !selector.matches(&wire.scope) {
                continue;
            }
            // This run's own push coming back: its acknowledgement (committed) made the
            // server's version this copy's base, so applying it would find nothing to do.
            // Passing over it here saves preparing it (redaction, validation) for nothing.
            if report.acknowledged.get(&wire.id).is_some_and(|&version| wire.version <= version) {
                continue;
            }
            changes.push(prepared_change(brain, wire)?);
        }
        if changes.is_empty() && next == after {
            // Nothing to apply and the cursor stays: no transaction (and no fsync).
            trace("pull: nothing to write");
            return Ok(());
        }
        trace("pull: prepared");
        let now = brain.now();
        let (applied, conflicts, refused) = brain.store().write(|tx| {
            let (mut applied, mut conflicts, mut refused) = (0, 0, Vec::new());
            for change in &changes {
                match tx.apply_pulled(change, now, &synced)? {
                    PullOutcome::Applied => applied += 1,
                    PullOutcome::Conflict => conflicts += 1,
                    PullOutcome::Unchanged => {}
                    PullOutcome::OutOfScope { local_scope } => {
                        refused.push(RefusedChange { id: change.id.clone(), scope: change.scope.clone(), local_scope })
                    }
                }
            }
            // A refused change is final (asking again brings the same answer): the cursor
            // moves past it like past any other.
            tx.set_sync_cursor(&name, next)?;
            Ok((applied, conflicts, refused))
        })?;
        trace("pull: applied");
        report.pulled += applied;
        report.conflicts += conflicts;
        report.refused.extend(refused);
        progress("pull", report.pulled);
        if !more {
            return Ok(());
        }
    }
}

/// One unresolved conflict as `brain sync --status` shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConflictView {
    pub id: String,
    pub title: String,
    /// The local item (`null`: deleted here).
    pub local: Option<Item>,
    pub remote_version: u64,
    /// The server's item (`null`: deleted there).
    pub remote: Option<Item>,
    #[serde(with = "brain_core::time::serde_rfc3339")]
    pub found_at: brain_core::Timestamp,
}

/// `brain sync --status`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// `[sync] url`, when configured.
    pub url: Option<String>,
    pub scopes: Vec<String>,
    /// Local changes waiting for a push.
    pub pending: u64,
    /// The server's cursor this home has pulled through (0: never).
    pub pulled_through: u64,
    pub conflicts: Vec<ConflictView>,
}

pub fn status(brain: &Brain, url: Option<&str>, selector: &ScopeSelector) -> BrainResult<SyncStatus> {
    let name = url.map(|url| format!("pull:{url}"));
    let (pending, pulled_through, conflicts) = brain.store().read(|tx| {
        let cursor = match &name {
            Some(name) => tx.sync_cursor(name)?,
            None => 0,
        };
        Ok((tx.count_pending(&|scope| selector.matches(scope))?, cursor, tx.sync_conflicts()?))
    })?;
    let conflicts = conflicts
        .into_iter()
        .map(|conflict| ConflictView {
            title: conflict
                .local
                .as_ref()
                .or(conflict.remote.as_ref())
                .map(|item| item.title.clone())
                .unwrap_or_default(),
            id: conflict.id,
            local: conflict.local,
            remote_version: conflict.remote_version,
            remote: conflict.remote,
            found_at: conflict.found_at,
        })
        .collect();
    Ok(SyncStatus {
        url: url.map(str::to_string),
        scopes: selector.patterns.clone(),
        pending,
        pulled_through,
        conflicts,
    })
}

/// `brain sync resolve ID --keep local|remote`.
pub fn resolve(brain: &Brain, id: &str, keep: brain_store::Keep) -> BrainResult<()> {
    brain_core::item::validate_id(id).map_err(|err| BrainError::user(err.message))?;
    match brain.store().write(|tx| tx.resolve_conflict(id, keep)) {
        Err(StoreError::NotFound { .. }) => Err(BrainError::user_with_hint(
            format!("item {id} is not in conflict"),
            "`brain sync --status` lists the conflicts",
        )),
        other => Ok(other?),
    }
}

/// The file whose modification time says when a hook last started a background sync.
pub const STAMP_FILE: &str = "sync.stamp";

/// Called by the stop and session-end hooks (never session start): when `[sync] url` is set
/// and `[sync] interval` seconds passed since the last start, starts `brain sync
/// --background` detached — in a process group of its own, no stdin/stdout/stderr, never
/// waited for — so the hook returns at once and an offline or slow server costs it nothing.
/// Returns whether a sync was started. The sync's own lock keeps two from running at once.
pub fn trigger_background(context: &brain_api::app::Context, sync: &SyncConfig) -> BrainResult<bool> {
    if sync.url.as_deref().is_none_or(|url| url.trim().is_empty()) || sync.interval == 0 {
        return Ok(false);
    }
    let stamp = context.home.join(STAMP_FILE);
    let recent = std::fs::metadata(&stamp)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age < std::time::Duration::from_secs(sync.interval));
    if recent {
        return Ok(false);
    }
    std::fs::write(&stamp, b"")
        .map_err(|err| BrainError::internal(format!("cannot write {}: {err}", stamp.display())))?;
    let exe = std::env::current_exe().map_err(|err| BrainError::internal(format!("cannot find brain: {err}")))?;
    let mut command = std::process::Command::new(exe);
    command
        .args(["sync", "--background"])
        .env("BRAIN_HOME", &context.home)
        .current_dir(&context.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    command.spawn().map_err(|err| BrainError::internal(format!("cannot start a background sync: {err}")))?;
    Ok(true)
}
