//! Enrichment (`brain enrich`): the configured LLM reads captured sessions (their redacted
//! summaries under `<home>/capture/sessions/`, and the vault's recent arcs) and proposes typed
//! memory items — decisions, bugs and fixes, conventions, lessons, todos — each with evidence
//! (the sessions it comes from, the files they touched), a confidence and a dedup hint. Code
//! checks every proposal before anything is written, and writes the accepted ones as
//! **drafts** (whatever `write_policy` says: a model's proposal waits for a person —
//! `brain review --drafts`, `brain approve ID`, the dashboard).
//!
//! One prompt per project: the sessions of the window are grouped by the project they were
//! captured in (a session without a valid project name counts as the current project's),
//! each group asked about in a prompt of its own — its sessions, its project's recent arcs,
//! the dedup hints of its project and global — and each draft is filed under its sessions'
//! project. One project's session text never sways a draft of another.
//!
//! Rules (a rejected proposal is reported with its reason): the text is not empty; every
//! session named is one the prompt showed, and every file is one those sessions touched; the
//! dedup hint is `category:topic:key`; no item of the project's scopes (any status) has the
//! same hint, and no earlier proposal of the answer does; the text is not a near-duplicate
//! (word 3-shingle Jaccard ≥ [`NEAR_THRESHOLD`]) of an earlier proposal or of an item search
//! finds for its title or its content; at most `max_changes_per_kind` items per run.
//!
//! Bounds: sessions of the window only (`--since`, else since the last run, else 7 days),
//! oldest first, at most `max_sessions`; the prompt within `prompt_max_tokens` (configured
//! tokenizer; every text redacted before it is counted), per prompt; all the prompts' exchanges
//! within `timeout_ms` and `max_cost_per_tick`, one repair retry and one wait on a 429 per
//! prompt — the tick's machinery.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use brain_core::near_dup;
use brain_core::{ItemDraft, Kind, Status, Timestamp};
use brain_store::ItemFilter;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::provider::Provider;
use super::{Structured, Usage, ask_until, audit_answer, write_audit};
use brain_api::app::Brain;
use brain_api::error::{BrainError, BrainResult};
use brain_capture::SessionSummary;
use brain_capture::store::{Shard, capture_dir, sessions_dir};
use brain_core::keeper::text::{clip, one_line, redacted};

/// The schema's name (the tool an Anthropic model calls).
pub(crate) const SCHEMA_NAME: &str = "brain_enrich_items";
/// A proposal at least this similar to an existing item (or an earlier proposal) is a duplicate.
pub const NEAR_THRESHOLD: f64 = 0.6;
/// Sessions of one run unless told otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 20;
/// The window when neither `--since` nor an earlier run says where to start.
const DEFAULT_WINDOW_DAYS: i64 = 7;
/// The kinds an enrichment may propose.
pub const KINDS: [&str; 5] = ["decision", "bug", "convention", "lesson", "todo"];
/// At most this many proposals in an answer (the schema's `maxItems`).
const MAX_PROPOSALS: usize = 50;
const MAX_TITLE_CHARS: usize = 200;
const MAX_CONTENT_CHARS: usize = 2_000;
const MAX_RATIONALE_CHARS: usize = 1_000;
/// The most arcs shown beside the sessions.
const MAX_ARCS: usize = 20;
/// Search hits compared with a proposal (per query: its title, its content).
const DUPLICATE_CANDIDATES: usize = 10;

const INSTRUCTIONS: &str = "You turn the record of past coding-agent sessions into durable memory for brain, a \
memory system for coding agents. Code validates every proposal; a person approves it before it is used.

Answer with ONE JSON document matching the schema brain_enrich_items and nothing else: items, a list of \
{kind, title, content, rationale, confidence, dedup_hint, sessions, files, tags}.
- kind: decision (a choice and why), bug (a defect, its cause and its fix), convention (a rule of this codebase), \
lesson (what to do or avoid next time), todo (work left open).
- title: one line; content: the knowledge itself, self-contained, at most a few sentences; rationale: why it \
holds (may be empty).
- confidence: 0 to 1, how sure the sessions make you.
- dedup_hint: category:topic:key in lowercase (e.g. bug:gateway:retry-storm); the same fact always gets the same hint.
- sessions: the ids of the sessions below that show it (at least one); files: paths those sessions touched that it \
concerns (may be empty); tags: up to 5 short words.
Only what a future session would need and cannot see in the code; never secrets. Never propose something listed \
under known items. Propose nothing rather than guess; an empty list is a good answer.";

/// What `brain enrich` was asked.
#[derive(Clone, Debug)]
pub struct EnrichOptions {
    /// Sessions that ended at or after this (default: the end of the last run's window, else
    /// 7 days before now).
    pub since: Option<Timestamp>,
    /// Ask and check, write nothing (no drafts, no window stamp, no audit record).
    pub dry_run: bool,
    /// At most this many sessions (oldest of the window first; the rest wait for the next run).
    pub max_sessions: usize,
}

impl Default for EnrichOptions {
    fn default() -> Self {
        EnrichOptions { since: None, dry_run: false, max_sessions: DEFAULT_MAX_SESSIONS }
    }
}

/// One proposal and what became of it.
#[derive(Clone, Debug, Serialize)]
pub struct EnrichOutcome {
    pub kind: String,
    pub title: String,
    pub confidence: f64,
    pub dedup_hint: String,
    /// `session:<id>` for each session it comes from.
    pub evidence: Vec<String>,
    pub files: Vec<String>,
    /// `written` (a draft), `would write` (dry run), `rejected` (by the rules) or `failed`
    /// (the store refused it).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The draft's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The scope the draft is (or would be) filed under: its sessions' project.
    pub scope: String,
}

/// What one run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EnrichReport {
    pub provider: String,
    pub model: String,
    pub dry_run: bool,
    /// The window: sessions that ended at or after `since`.
    pub since: String,
    /// Sessions in the window, shown in the prompt, and left for a later run.
    pub sessions_in_window: usize,
    pub sessions_shown: usize,
    pub sessions_left: usize,
    /// Prompts asked (one per project of the sessions shown) and their projects.
    pub prompts: usize,
    pub projects: Vec<String>,
    pub arcs_shown: usize,
    pub prompt_tokens: usize,
    pub prompt_max_tokens: usize,
    pub prompt_chars: usize,
    pub prompt_build_ms: f64,
    #[serde(flatten)]
    pub usage: Usage,
    pub cost: f64,
    pub latency_ms: f64,
    pub proposed: usize,
    pub written: usize,
    pub rejected: usize,
    pub proposals: Vec<EnrichOutcome>,
    /// Why no proposal was checked (no answer, an unusable answer, a bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
}

/// The answer.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    pub items: Vec<Proposal>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Proposal {
    pub kind: String,
    pub title: String,
    pub content: String,
    pub rationale: String,
    pub confidence: f64,
    pub dedup_hint: String,
    pub sessions: Vec<String>,
    pub files: Vec<String>,
    pub tags: Vec<String>,
}

pub(crate) fn schema() -> Value {
    let text = |max: usize| json!({"type": "string", "maxLength": max});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["items"],
        "properties": {
            "items": {"type": "array", "maxItems": MAX_PROPOSALS, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["kind", "title", "content", "rationale", "confidence", "dedup_hint", "sessions", "files", "tags"],
                "properties": {
                    "kind": {"type": "string", "enum": KINDS},
                    "title": text(MAX_TITLE_CHARS),
                    "content": text(MAX_CONTENT_CHARS),
                    "rationale": text(MAX_RATIONALE_CHARS),
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "dedup_hint": text(200),
                    "sessions": {"type": "array", "minItems": 1, "maxItems": 10, "items": text(200)},
                    "files": {"type": "array", "maxItems": 20, "items": text(500)},
                    "tags": {"type": "array", "maxItems": 5, "items": text(50)},
                },
            }},
        },
    })
}

/// Parses an answer and checks what the schema says (a server may ignore `strict`).
pub(crate) fn parse(text: &str) -> Result<Answer, String> {
    let answer: Answer = serde_json::from_str(text).map_err(|err| format!("not the schema's JSON: {err}"))?;
    if answer.items.len() > MAX_PROPOSALS {
        return Err(format!("items has {} entries (at most {MAX_PROPOSALS})", answer.items.len()));
    }
    for item in &answer.items {
        if !KINDS.contains(&item.kind.as_str()) {
            return Err(format!("kind {:?} is not one of {}", item.kind, KINDS.join(", ")));
        }
        if !(0.0..=1.0).contains(&item.confidence) {
            return Err(format!("confidence {} is outside 0 to 1", item.confidence));
        }
        for (name, value, max) in [
            ("title", &item.title, MAX_TITLE_CHARS),
            ("content", &item.content, MAX_CONTENT_CHARS),
            ("rationale", &item.rationale, MAX_RATIONALE_CHARS),
        ] {
            if value.chars().count() > max {
                return Err(format!("{name} is longer than {max} characters"));
            }
        }
        if item.sessions.is_empty() || item.sessions.len() > 10 || item.files.len() > 20 || item.tags.len() > 5 {
            return Err("sessions (1 to 10), files (at most 20) or tags (at most 5) out of bounds".into());
        }
    }
    Ok(answer)
}

/// A session as the prompt and the rules see it.
struct Session {
    summary: SessionSummary,
    end: Timestamp,
}

/// The sessions captured under `<home>/capture/sessions/` that ended at or after `since`,
/// oldest first.
fn sessions_since(brain: &Brain, since: Timestamp) -> Vec<Session> {
    let mut sessions: Vec<Session> = Vec::new();
    let Ok(entries) = std::fs::read_dir(sessions_dir(brain.home())) else { return sessions };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|n| n.strip_suffix(".jsonl")).map(str::to_string))
        .collect();
    names.sort();
    for name in names {
        let shard = Shard::load(brain.home(), &name);
        for state in shard.states() {
            let Some(end) = state.summary.end.or(state.summary.start) else { continue };
            if end >= since && end <= brain.now() {
                sessions.push(Session { summary: state.summary.clone(), end });
            }
        }
    }
    sessions.sort_by(|a, b| a.end.cmp(&b.end).then_with(|| a.summary.session_id.cmp(&b.summary.session_id)));
    sessions
}

/// `<home>/capture/enriched.json`: where the last run's window ended.
fn stamp_path(brain: &Brain) -> PathBuf {
    capture_dir(brain.home()).join("enriched.json")
}

#[derive(Serialize, Deserialize)]
struct Stamp {
    #[serde(with = "brain_core::time::serde_rfc3339")]
    until: Timestamp,
}

fn read_stamp(brain: &Brain) -> Option<Timestamp> {
    let bytes = std::fs::read(stamp_path(brain)).ok()?;
    serde_json::from_slice::<Stamp>(&bytes).ok().map(|stamp| stamp.until)
}

/// The project a session's drafts are filed under: the one it was captured in, else (no
/// valid project name) the current one.
fn session_project(brain: &Brain, session: &Session) -> String {
    let project = session.summary.project.trim();
    match brain_core::scope::validate_scope_name(project) {
        Ok(()) => project.to_string(),
        Err(_) => brain.project().to_string(),
    }
}

/// The sessions by project, each group oldest first, the groups in the order of their oldest
/// session.
fn by_project<'a>(brain: &Brain, sessions: &'a [Session]) -> Vec<(String, Vec<&'a Session>)> {
    let mut groups: Vec<(String, Vec<&Session>)> = Vec::new();
    for session in sessions {
        let project = session_project(brain, session);
        match groups.iter_mut().find(|(name, _)| *name == project) {
            Some((_, group)) => group.push(session),
            None => groups.push((project, vec![session])),
        }
    }
    groups
}

/// The lines of one session (redacted, clipped).
fn session_block(session: &Session) -> String {
    let s = &session.summary;
    let text = |value: &str, max: usize| clip(&one_line(&redacted(value)), max).into_owned();
    let mut block = format!(
        "### session {} ({}, project {}, ended {}, {} prompts, {:.0} min, {} errors)\n",
        s.session_id,
        s.host.as_str(),
        if s.project.is_empty() { "-" } else { s.project.as_str() },
        brain_core::time::format_timestamp(session.end),
        s.turns,
        s.duration_minutes,
        s.error_markers
    );
    if !s.first_prompt.is_empty() {
        block.push_str(&format!("first prompt: {}\n", text(&s.first_prompt, 400)));
    }
    let late: Vec<String> = s.late_prompts.iter().rev().take(3).rev().map(|p| text(p, 200)).collect();
    if !late.is_empty() {
        block.push_str(&format!("last prompts: {}\n", late.join(" | ")));
    }
    if !s.outcome.is_empty() {
        block.push_str(&format!("outcome: {}\n", text(&s.outcome, 600)));
    }
    if !s.files_touched.is_empty() {
        let files: Vec<String> = s.files_touched.iter().take(15).map(|f| text(f, 200)).collect();
        block.push_str(&format!("files: {}\n", files.join(", ")));
    }
    block
}

/// The prompt and what it showed.
struct Built {
    system: String,
    user: String,
    tokens: usize,
    shown: Vec<usize>,
    arcs_shown: usize,
}

/// The prompt about `project`'s `sessions`: the sessions (70 % of the data budget), recent
/// arcs (15 %) and the dedup hints already taken (15 %); a section's unused share flows on;
/// the instructions are never cut.
fn build_prompt(brain: &Brain, project: &str, sessions: &[&Session], arcs: &[String], hints: &[String]) -> Built {
    let counter = brain.counter();
    let max_tokens = brain.config().ai.prompt_max_tokens;
    let system = INSTRUCTIONS.to_string();
    let header = format!(
        "Now: {}\nProject: {project} (every session below was captured in it)\n",
        brain_core::time::format_timestamp(brain.now())
    );
    let data = max_tokens.saturating_sub(counter.count(&system) + counter.count(&header) + 40);
    let mut user = header;
    let mut shown = Vec::new();
    let mut budget = data * 70 / 100;
    let mut body = String::new();
    let mut used = 0;
    for (index, session) in sessions.iter().enumerate() {
        let block = session_block(session);
        let cost = counter.count(&block) + 1;
        if used + cost > budget {
            break;
        }
        used += cost;
        body.push_str(&block);
        body.push('\n');
        shown.push(index);
    }
    if !body.is_empty() {
        user.push_str("\n## sessions\n\n");
        user.push_str(&body);
    }
    budget = budget.saturating_sub(used) + data * 15 / 100;
    let mut section = |title: &str, lines: &[String], budget: usize| -> (usize, usize) {
        let mut used = 0;
        let mut body = String::new();
        let mut count = 0;
        for line in lines {
            let line = format!("- {}\n", clip(&one_line(&redacted(line)), 240));
            let cost = counter.count(&line);
            if used + cost > budget {
                break;
            }
            used += cost;
            body.push_str(&line);
            count += 1;
        }
        if count > 0 {
            user.push_str(&format!("\n## {title}\n"));
            user.push_str(&body);
        }
        (count, budget.saturating_sub(used))
    };
    let (arcs_shown, left) = section("recent arcs (context: cluster_id | title — summary)", arcs, budget);
    section("known items (dedup hints already taken; never propose these)", hints, left + data * 15 / 100);
    let mut tokens = counter.count(&system) + counter.count(&user);
    // A counter that is not subadditive may count the whole above its parts: cut lines from
    // the end until it fits (the instructions are never cut).
    while tokens > max_tokens {
        let Some(cut) = user.trim_end_matches('\n').rfind('\n') else { break };
        user.truncate(cut + 1);
        tokens = counter.count(&system) + counter.count(&user);
    }
    shown.retain(|index| user.contains(&format!("### session {} (", sessions[*index].summary.session_id)));
    Built { system, user, tokens, shown, arcs_shown }
}

/// Existing items a proposal must not repeat: their dedup hints (every status), and search
/// for near-duplicates.
struct Existing {
    hints: HashMap<String, String>,
    scopes: Vec<brain_core::Scope>,
}

fn normal_hint(hint: &str) -> Option<String> {
    let hint = hint.trim().to_lowercase();
    let parts: Vec<&str> = hint.split(':').collect();
    let ok = parts.len() >= 3
        && parts.iter().all(|part| !part.trim().is_empty())
        && hint.len() <= 200
        && hint.chars().all(|c| c.is_alphanumeric() || ":-_./ ".contains(c));
    ok.then_some(hint)
}

/// The near-duplicate among `candidates` (id, text) of `text`, if any.
fn near_duplicate<'a>(text: &str, candidates: impl Iterator<Item = (&'a str, &'a str)>) -> Option<(String, f64)> {
    let shingles = near_dup::shingles(text);
    candidates
        .map(|(id, other)| (id, near_dup::jaccard(&shingles, &near_dup::shingles(other))))
        .filter(|(_, similarity)| *similarity >= NEAR_THRESHOLD)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(id, similarity)| (id.to_string(), similarity))
}

/// Items search finds for `query` (lexical, every status, the session's scopes), no access recorded.
fn search_candidates(brain: &Brain, scopes: &[brain_core::Scope], query: &str) -> Vec<brain_core::Item> {
    let Ok(parsed) = brain_api::search::parse(query) else { return Vec::new() };
    let filter = ItemFilter {
        scopes: Some(scopes.to_vec()),
        statuses: Status::ALL.to_vec(),
        limit: Some(DUPLICATE_CANDIDATES),
        ..ItemFilter::default()
    };
    brain_api::search::lexical(brain.store(), &parsed, &filter, DUPLICATE_CANDIDATES)
        .map(|hits| hits.into_iter().map(|hit| hit.item).collect())
        .unwrap_or_default()
}

/// Checks every proposal of the answer to the prompt about one project (its `sessions`,
/// `shown` of them; drafts filed under `scope`); returns the accepted ones (index into
/// `outcomes`, draft, source). `accepted_before`: drafts the run's earlier answers accepted
/// (the cap counts the whole run).
#[allow(clippy::too_many_arguments)]
fn check(
    brain: &Brain,
    answer: &Answer,
    sessions: &[&Session],
    shown: &[usize],
    scope: &str,
    existing: &Existing,
    accepted_before: usize,
    outcomes: &mut Vec<EnrichOutcome>,
) -> Vec<(usize, ItemDraft, String)> {
    let cap = brain.config().ai.max_changes_per_kind;
    let shown_sessions: HashMap<&str, &Session> =
        shown.iter().map(|i| (sessions[*i].summary.session_id.as_str(), sessions[*i])).collect();
    let mut accepted: Vec<(usize, ItemDraft, String)> = Vec::new();
    let mut accepted_texts: Vec<(String, String)> = Vec::new();
    let mut accepted_hints: HashSet<String> = HashSet::new();
    for proposal in &answer.items {
        let title = one_line(&redacted(&proposal.title)).trim().to_string();
        let content = redacted(proposal.content.trim()).into_owned();
        let mut outcome = EnrichOutcome {
            kind: proposal.kind.clone(),
            title: clip(&title, 120).into_owned(),
            confidence: proposal.confidence,
            dedup_hint: clip(&one_line(&redacted(&proposal.dedup_hint)), 200).into_owned(),
            evidence: proposal
                .sessions
                .iter()
                .map(|s| format!("session:{}", clip(&one_line(&redacted(s)), 120)))
                .collect(),
            files: proposal.files.iter().map(|f| clip(&one_line(&redacted(f)), 300).into_owned()).collect(),
            status: "rejected".into(),
            why: None,
            id: None,
            scope: scope.to_string(),
        };
        let verdict = (|| -> Result<(ItemDraft, String), String> {
            if title.is_empty() || content.is_empty() {
                return Err("the title or the content is empty".into());
            }
            let mut touched: BTreeSet<&str> = BTreeSet::new();
            let mut evidence_sessions: Vec<&str> = Vec::new();
            for id in &proposal.sessions {
                let session = shown_sessions
                    .get(id.trim())
                    .ok_or_else(|| format!("no session shown has the id {}", clip(&one_line(id), 80)))?;
                if !evidence_sessions.contains(&session.summary.session_id.as_str()) {
                    evidence_sessions.push(session.summary.session_id.as_str());
                }
                touched.extend(session.summary.files_touched.iter().map(String::as_str));
            }
            for file in &proposal.files {
                if !touched.contains(file.trim()) {
                    return Err(format!("the file {} was not touched by its sessions", clip(&one_line(file), 120)));
                }
            }
            let hint = normal_hint(&proposal.dedup_hint)
                .ok_or_else(|| format!("the dedup hint {:?} is not category:topic:key", outcome.dedup_hint))?;
            if let Some(id) = existing.hints.get(&hint) {
                return Err(format!("duplicate of {id} (same dedup hint)"));
            }
            if accepted_hints.contains(&hint) {
                return Err("repeats the dedup hint of an earlier proposal".into());
            }
            let text = format!("{title}\n{content}");
            if let Some((index, similarity)) =
                near_duplicate(&text, accepted_texts.iter().map(|(id, text)| (id.as_str(), text.as_str())))
            {
                return Err(format!("near-duplicate of proposal {index} ({:.0}% the same words)", similarity * 100.0));
            }
            let words: String = content.split_whitespace().take(30).collect::<Vec<_>>().join(" ");
            let mut candidates = search_candidates(brain, &existing.scopes, &title);
            candidates.extend(search_candidates(brain, &existing.scopes, &words));
            if let Some(same) = candidates.iter().find(|item| item.title.trim().eq_ignore_ascii_case(&title)) {
                return Err(format!("duplicate of {} (same title)", same.id));
            }
            let texts: Vec<(String, String)> =
                candidates.iter().map(|item| (item.id.clone(), format!("{}\n{}", item.title, item.content))).collect();
            if let Some((id, similarity)) =
                near_duplicate(&text, texts.iter().map(|(id, text)| (id.as_str(), text.as_str())))
            {
                return Err(format!("near-duplicate of {id} ({:.0}% the same words)", similarity * 100.0));
            }
            if accepted_before + accepted.len() >= cap {
                return Err(format!("over the cap of {cap} items per run (max_changes_per_kind)"));
            }
            let mut tags: Vec<String> = vec!["enriched".into()];
            for tag in &proposal.tags {
                let tag = clip(&one_line(&redacted(tag)), 50).trim().to_lowercase();
                if !tag.is_empty() && !tags.contains(&tag) && tags.len() < 6 {
                    tags.push(tag);
                }
            }
            let rationale = redacted(proposal.rationale.trim()).into_owned();
            let draft = ItemDraft {
                kind: Some(proposal.kind.clone()),
                title: Some(title.clone()),
                content: Some(content.clone()),
                rationale: (!rationale.is_empty()).then_some(rationale),
                confidence: Some((proposal.confidence * 100.0).round() / 100.0),
                status: Some(Status::Draft.as_str().into()),
                tags: Some(tags),
                files: Some(proposal.files.iter().map(|f| f.trim().to_string()).collect()),
                evidence: Some(evidence_sessions.iter().map(|id| format!("session:{id}")).collect()),
                dedup_hint: Some(hint.clone()),
                scope: Some(scope.to_string()),
                ..ItemDraft::default()
            };
            let source = format!("transcript:{}", evidence_sessions[0]);
            accepted_hints.insert(hint);
            accepted_texts.push((format!("{}", outcomes.len() + 1), text));
            Ok((draft, source))
        })();
        match verdict {
            Ok((draft, source)) => {
                outcome.status = "accepted".into();
                accepted.push((outcomes.len(), draft, source));
            }
            Err(why) => outcome.why = Some(why),
        }
        outcomes.push(outcome);
    }
    accepted
}

/// `brain enrich`: asks the configured LLM for memory items from the captured sessions of the
/// window and writes the ones that pass the rules as drafts.
pub fn run(brain: &Brain, options: &EnrichOptions) -> BrainResult<EnrichReport> {
    run_with_env(brain, options, &|name| std::env::var(name).ok())
}

/// [`run`] with the environment the API key is read from.
pub fn run_with_env(
    brain: &Brain,
    options: &EnrichOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> BrainResult<EnrichReport> {
    let config = &brain.config().ai;
    let hint = || format!("set [ai] provider, base_url and model in {}", brain.home().join("config.toml").display());
    let provider = match Provider::from_config(config, env) {
        Ok(Some(provider)) => provider,
        Ok(None) => return Err(BrainError::user_with_hint("enrichment needs an LLM: no [ai] provider is set", hint())),
        Err(message) => return Err(BrainError::user_with_hint(message, hint())),
    };
    if options.max_sessions == 0 {
        return Err(BrainError::user("--max-sessions must be at least 1"));
    }
    let since = options.since.or_else(|| read_stamp(brain)).unwrap_or_else(|| {
        Timestamp::from_second(brain.now().as_second() - DEFAULT_WINDOW_DAYS * 86_400).unwrap_or(brain.now())
    });
    let mut report = EnrichReport {
        provider: provider.name().into(),
        model: provider.model().into(),
        dry_run: options.dry_run,
        since: brain_core::time::format_timestamp(since),
        prompt_max_tokens: config.prompt_max_tokens,
        ..EnrichReport::default()
    };

    let mut sessions = sessions_since(brain, since);
    report.sessions_in_window = sessions.len();
    sessions.truncate(options.max_sessions);
    if sessions.is_empty() {
        report.error = Some(format!("no captured session ended since {}", report.since));
        return Ok(report);
    }
    let arcs = recent_arcs(brain, since);
    let deadline = Instant::now() + std::time::Duration::from_millis(config.timeout_ms);
    let schema = schema();
    let mut usage = Usage::default();
    let (mut failures, mut prompts, mut raws) = (Vec::new(), String::new(), String::new());
    let mut shown_ends: Vec<Timestamp> = Vec::new();
    let mut unshown_ends: Vec<Timestamp> = Vec::new();
    let mut accepted_count = 0;
    let mut build_ms = 0.0;
    let groups = by_project(brain, &sessions);
    for (index, (project, group)) in groups.iter().enumerate() {
        // The project's prompt.
        let building = Instant::now();
        let scopes = vec![brain_core::Scope::Global, brain_core::Scope::Project(project.clone())];
        let metas = brain.store().read(|tx| tx.list_metas(&scopes))?;
        let mut hints: HashMap<String, String> = HashMap::new();
        for meta in &metas {
            if let Some(hint) = meta.dedup_hint.as_deref().and_then(normal_hint) {
                hints.entry(hint).or_insert_with(|| meta.id.clone());
            }
        }
        let mut hint_lines: Vec<String> = hints.keys().cloned().collect();
        hint_lines.sort();
        let project_arcs: Vec<String> =
            arcs.iter().filter(|(of, _)| of == project).map(|(_, line)| line.clone()).collect();
        let built = build_prompt(brain, project, group, &project_arcs, &hint_lines);
        build_ms += building.elapsed().as_secs_f64() * 1000.0;
        report.prompts += 1;
        report.projects.push(project.clone());
        report.sessions_shown += built.shown.len();
        report.arcs_shown += built.arcs_shown;
        report.prompt_tokens += built.tokens;
        report.prompt_chars += built.system.chars().count() + built.user.chars().count();
        prompts.push_str(&format!("{}\n\n{}\n\n", built.system, built.user));
        for (position, session) in group.iter().enumerate() {
            let ends = if built.shown.contains(&position) { &mut shown_ends } else { &mut unshown_ends };
            ends.push(session.end);
        }
        if built.shown.is_empty() {
            failures.push(format!("no session of project {project} fits in prompt_max_tokens"));
            continue;
        }

        // Then the question, within what the run's budgets leave.
        let asking = Instant::now();
        let question = Structured {
            name: SCHEMA_NAME,
            system: &built.system,
            user: &built.user,
            prompt_tokens: built.tokens,
            schema: &schema,
        };
        let asked = ask_until(config, brain.counter(), &provider, &question, &parse, &mut usage, deadline);
        report.latency_ms += asking.elapsed().as_secs_f64() * 1000.0;
        let (answer, raw, exhausted) = match asked {
            Ok((answer, raw)) => (Some(answer), raw, false),
            Err(failure) => {
                failures.push(format!("{} (the prompt about project {project})", failure.message));
                (None, failure.raw, failure.exhausted)
            }
        };
        if !raw.is_empty() {
            raws.push_str(&format!("--- the answer about project {project} ---\n{raw}\n"));
        }
        if let Some(answer) = answer {
            let existing = Existing { hints, scopes };
            let scope = format!("project/{project}");
            let accepted =
                check(brain, &answer, group, &built.shown, &scope, &existing, accepted_count, &mut report.proposals);
            accepted_count += accepted.len();
            for (index, draft, source) in accepted {
                let outcome = &mut report.proposals[index];
                if options.dry_run {
                    outcome.status = "would write".into();
                    continue;
                }
                match brain.remember(draft, &source) {
                    Ok(item) => {
                        outcome.status = "written".into();
                        outcome.id = Some(item.id);
                    }
                    Err(err) => {
                        outcome.status = "failed".into();
                        outcome.why = Some(err.to_string());
                    }
                }
            }
        }
        if exhausted && index + 1 < groups.len() {
            let left: Vec<&str> = groups[index + 1..].iter().map(|(project, _)| project.as_str()).collect();
            failures.push(format!("not asked after that failure: project(s) {}", left.join(", ")));
            break;
        }
    }
    report.sessions_left = report.sessions_in_window - report.sessions_shown;
    report.prompt_build_ms = (build_ms * 1000.0).round() / 1000.0;
    report.latency_ms = (report.latency_ms * 1000.0).round() / 1000.0;
    report.usage = usage;
    report.cost = config.cost(report.usage.tokens_in, report.usage.tokens_out);
    if !failures.is_empty() {
        report.error = Some(failures.join("; "));
    }
    report.proposed = report.proposals.len();
    report.written = report.proposals.iter().filter(|p| p.status == "written").count();
    report.rejected = report.proposals.iter().filter(|p| p.status == "rejected").count();
    if !options.dry_run {
        if report.error.is_none() {
            // The next run starts after the newest session shown, or at the oldest one a
            // prompt had no room for (that project's rest waits; the sessions shown since
            // come again, and their drafts then are duplicates of these).
            let after_shown =
                shown_ends.iter().max().map(|last| Timestamp::from_second(last.as_second() + 1).unwrap_or(*last));
            let until = match (after_shown, unshown_ends.iter().min()) {
                (Some(after), Some(unshown)) => Some(after.min(*unshown)),
                (after, unshown) => after.or(unshown.copied()),
            };
            if let Some(until) = until
                && let Ok(text) = serde_json::to_vec(&Stamp { until })
            {
                let _ = brain_api::fsio::write_owned(&stamp_path(brain), &text);
            }
        }
        #[derive(Serialize)]
        struct Record<'a> {
            timestamp: String,
            #[serde(flatten)]
            report: &'a EnrichReport,
            prompt_sha256: String,
            answer: String,
        }
        let record = Record {
            timestamp: brain_core::time::format_timestamp(brain.now()),
            report: &report,
            prompt_sha256: brain_api::fsio::sha256_hex(prompts.as_bytes()),
            answer: audit_answer(&raws),
        };
        report.audit = write_audit(brain, "enrich", &record);
    }
    Ok(report)
}

/// Arcs of the vault index created since `since`, newest first, each with its project (empty:
/// none): `cluster_id | title — summary`. At most [`MAX_ARCS`] of each project.
fn recent_arcs(brain: &Brain, since: Timestamp) -> Vec<(String, String)> {
    let Ok(snapshot) = brain_api::feed_index::load_snapshot(brain) else { return Vec::new() };
    let mut arcs: Vec<(&str, &brain_core::keeper::state::ArcState)> = snapshot
        .values()
        .filter(|file| file.state.arc_owner && !file.state.merged && file.state.generated.is_none())
        .filter_map(|file| Some((file.state.project.as_str(), file.state.arc.as_deref()?)))
        .filter(|(_, arc)| arc.created >= since.as_second())
        .collect();
    arcs.sort_by(|a, b| b.1.created.cmp(&a.1.created).then_with(|| a.1.cluster_id.cmp(&b.1.cluster_id)));
    let mut per_project: HashMap<&str, usize> = HashMap::new();
    arcs.into_iter()
        .filter(|(project, _)| {
            let count = per_project.entry(project).or_default();
            *count += 1;
            *count <= MAX_ARCS
        })
        .map(|(project, arc)| {
            let summary = arc.summary.as_deref().map(|s| format!(" — {s}")).unwrap_or_default();
            (project.to_string(), format!("{} | {}{}", arc.cluster_id, arc.title, summary))
        })
        .collect()
}

/// Kinds an enrichment writes, as the store's closed set (for tests and docs).
pub fn kinds() -> Vec<Kind> {
    KINDS.iter().filter_map(|kind| kind.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_category_topic_key_and_the_parse_checks_the_schema() {
        assert_eq!(normal_hint(" Bug:Gateway:retry-storm "), Some("bug:gateway:retry-storm".into()));
        assert_eq!(normal_hint("bug:gateway"), None);
        assert_eq!(normal_hint("bug::x"), None);
        assert_eq!(normal_hint("bug:x:<script>"), None);
        assert_eq!(kinds().len(), 5);
        let item = |kind: &str, confidence: f64| {
            format!(
                r#"{{"items":[{{"kind":"{kind}","title":"t","content":"c","rationale":"","confidence":{confidence},"dedup_hint":"a:b:c","sessions":["s1"],"files":[],"tags":[]}}]}}"#
            )
        };
        assert_eq!(parse(&item("decision", 0.8)).unwrap().items.len(), 1);
        assert!(parse(&item("architecture", 0.8)).unwrap_err().contains("kind"));
        assert!(parse(&item("bug", 1.5)).unwrap_err().contains("confidence"));
        assert!(parse(r#"{"items":[],"more":1}"#).is_err());
        assert!(parse("{\"items\":[").is_err());
    }
}
