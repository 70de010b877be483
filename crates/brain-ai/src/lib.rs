//! The AI half of `brain tick` (SPEC §6.2, §6.6): phases 2–5 after the deterministic keeper.
//! An optional LLM *recommends*; code validates and applies.
//!
//! - [`config`]: `[ai]` (user config only), the bounds of a tick.
//! - [`provider`]: the providers (OpenAI-compatible chat completions, Anthropic Messages)
//!   behind one closed enum; the key from the environment only, never printed.
//! - [`prompt`] (phase 2): a redacted, token-bounded view of one project's part of the vault;
//!   one prompt per project.
//! - [`run`] (phase 3): one request per prompt, one repair retry on an answer that is not the
//!   schema's JSON, at most one bounded wait on a 429 with `retry-after`, all prompts within
//!   `timeout_ms` and `max_cost_per_tick`.
//! - [`proposals`] (phase 4, first half): schema and rules, each answer held to its prompt's
//!   project; [`apply`] (phase 4, second half, and phase 5): the writes through the vault's
//!   rules and the re-read that verifies them.
//!
//! Invariants: phase 1 has finished and written its feed before anything here runs, and
//! nothing here can fail the tick (a failure is reported in the tick report,
//! `last-tick-diff.md` and the audit record); no proposal is written before every proposal
//! of every answer has been checked; no prompt holds two projects' text, and no answer
//! changes a project other than its prompt's; nothing leaves the machine that the redactor
//! did not see; `--dry-run` asks the model but writes nothing anywhere.

pub(crate) mod apply;
pub mod hygiene;
pub use brain_api::config::ai as config;
pub mod enrich;
pub(crate) mod prompt;
pub mod proposals;
pub mod provider;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use config::AiConfig;
pub use proposals::ProposalOutcome;

use brain_api::app::Brain;
use brain_api::error::BrainResult;
use brain_api::fsio::{self, read_optional, sha256_hex};
use brain_core::keeper::feed::{FeedState, active_signals};
use brain_core::keeper::text::{clip, one_line};
use brain_vault::scan::{IndexChanges, Snapshot, apply as apply_index, overlay};
use brain_vault::{LaterInput, LaterOutcome, LaterPhases, PhaseTiming, StepTiming, TickOptions};
use proposals::{ArcFacts, Facts, SignalFacts};
use provider::{CallError, Provider, Question, Reply};

/// Audit records kept under `<home>/ticks/` (the oldest go first).
const AUDIT_KEEP: usize = 200;
/// The most bytes of an answer kept in an audit record.
const AUDIT_ANSWER_BYTES: usize = 256 << 10;
/// A server that does not honour `max_tokens` is caught by counting: an answer over this many
/// times the limit (under the configured tokenizer, which may differ from the model's) is refused.
const OUTPUT_SLACK: usize = 2;

/// The prompts' figures (one prompt per project: sums over them).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PromptFigures {
    /// Prompts built (one per project with something to change, hottest first).
    pub prompts: usize,
    /// Their projects, in the order asked (empty: the arcs without a project).
    pub projects: Vec<String>,
    pub tokens: usize,
    /// The bound of each prompt.
    pub max_tokens: usize,
    pub chars: usize,
    /// SHA-256 of the prompts' system and user texts (the audit record keeps the digest, not
    /// the text).
    pub sha256: String,
    pub arcs_shown: usize,
    pub arcs_total: usize,
    pub signals_shown: usize,
    pub build_ms: f64,
}

/// The AI health line.
#[derive(Clone, Debug, Serialize)]
pub struct AiHealth {
    pub score: u8,
    pub reason: String,
}

/// What phases 2–5 did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AiReport {
    pub provider: String,
    pub model: String,
    pub prompt: PromptFigures,
    /// Requests sent (a repair retry and a retry after a 429 count).
    pub requests: u32,
    /// A repair retry was needed.
    pub repaired: bool,
    /// Time spent waiting on `retry-after`.
    pub waited_ms: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost: f64,
    pub latency_ms: f64,
    pub proposed: usize,
    pub applied: usize,
    pub rejected: usize,
    pub verified: usize,
    pub failed: usize,
    pub proposals: Vec<ProposalOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<AiHealth>,
    /// Why the phases stopped early (no answer, an unusable answer, a bound); `None` when the
    /// answer was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The audit record of this tick (`<home>/ticks/…json`); none in a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
}

/// What the tick hands the AI phases, after phase 1.
pub(crate) type AiInput<'a> = LaterInput<'a>;

/// What the tick reports of phases 2–5.
pub(crate) type AiOutcome = LaterOutcome<AiReport>;

/// Whether the AI phases ran, and what they did.
pub type AiStatus = brain_vault::AiStatus<AiReport>;

/// A tick's report, with what its AI phases did.
pub type TickReport = brain_vault::TickReport<AiReport>;

/// Phases 2–5 as the vault keeper's tick runs them after its phase 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct AiPhases;

impl LaterPhases for AiPhases {
    type Report = AiReport;
    fn run(&self, brain: &Brain, input: LaterInput<'_>) -> AiOutcome {
        run(brain, input)
    }
}

/// A whole tick: the vault keeper's phase 1, then the AI phases when an LLM is configured.
pub fn tick(brain: &Brain, options: &TickOptions<'_>) -> BrainResult<TickReport> {
    brain_vault::tick(brain, options, &AiPhases)
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0
}

fn skipped(reason: String) -> AiOutcome {
    AiOutcome {
        status: AiStatus { ran: false, reason, report: None },
        phases: [(2, "prompt"), (3, "reason"), (4, "apply"), (5, "verify")]
            .into_iter()
            .map(|(phase, name)| PhaseTiming { phase, name, ran: false, ms: 0.0, steps: Vec::new() })
            .collect(),
    }
}

/// Runs phases 2–5 when an LLM is configured and `--no-ai` is not given. Never fails: phase 1
/// is done, and whatever goes wrong here is reported.
pub(crate) fn run(brain: &Brain, input: AiInput<'_>) -> AiOutcome {
    run_with_env(brain, input, &|name| std::env::var(name).ok())
}

/// [`run`] with the environment the API key is read from.
pub(crate) fn run_with_env(brain: &Brain, input: AiInput<'_>, env: &dyn Fn(&str) -> Option<String>) -> AiOutcome {
    if input.no_ai {
        return skipped("phase 1 only: --no-ai".into());
    }
    let config = &brain.config().ai;
    let provider = match Provider::from_config(config, env) {
        Ok(Some(provider)) => provider,
        Ok(None) => return skipped("phase 1 only: no LLM is configured ([ai] provider)".into()),
        Err(message) => {
            let mut outcome = skipped(format!("AI phases failed: {message}"));
            let report = AiReport {
                provider: config.provider.clone(),
                model: config.model.clone(),
                error: Some(message),
                audit: (!input.dry_run).then(|| audit_path(brain).display().to_string()),
                ..AiReport::default()
            };
            finish(brain, &input, &report, &[]);
            outcome.status.report = Some(report);
            return outcome;
        }
    };
    let mut phases = Vec::new();
    let mut report =
        AiReport { provider: provider.name().into(), model: provider.model().into(), ..AiReport::default() };

    // Phase 2: the prompts, one per project (see `prompt`).
    let started = Instant::now();
    let mut step = Instant::now();
    let mut steps = Vec::new();
    let mut lap = |name: &'static str, step: &mut Instant| {
        steps.push(StepTiming { name, ms: ms(*step) });
        *step = Instant::now();
    };
    let now = brain.now();
    let active = active_signals(input.snapshot, now, &brain.config().vault);
    let projects = prompt::projects(input.snapshot, &active);
    let lessons: Vec<Vec<String>> = projects.iter().map(|project| prompt::recent_lessons(brain, project)).collect();
    // Signal items are context for the model (each prompt shows its project's and global
    // ones); it acts on the vault's only.
    let item_signals = brain_api::signals::item_signals(brain, None).unwrap_or_default();
    lap("inputs", &mut step);
    let built: Vec<prompt::Prompt> = projects
        .iter()
        .zip(&lessons)
        .map(|(project, lessons)| {
            let input = prompt::PromptInput {
                snapshot: input.snapshot,
                project,
                active: &active,
                item_signals: &item_signals,
                lessons,
                last_diff: input.last_diff,
                now,
            };
            prompt::build(&input, brain.counter(), config.prompt_max_tokens)
        })
        .collect();
    lap("render", &mut step);
    let facts = facts(input.snapshot);
    lap("facts", &mut step);
    drop(active);
    let texts: String = built.iter().map(|built| format!("{}\n\n{}\n\n", built.system, built.user)).collect();
    report.prompt = PromptFigures {
        prompts: built.len(),
        projects: projects.clone(),
        tokens: built.iter().map(|built| built.tokens).sum(),
        max_tokens: config.prompt_max_tokens,
        chars: built.iter().map(|built| built.system.chars().count() + built.user.chars().count()).sum(),
        sha256: sha256_hex(texts.as_bytes()),
        arcs_shown: built.iter().map(|built| built.arcs_shown).sum(),
        arcs_total: arcs_total(input.snapshot),
        signals_shown: built.iter().map(|built| built.signals_shown).sum(),
        build_ms: ms(started),
    };
    phases.push(PhaseTiming { phase: 2, name: "prompt", ran: true, ms: ms(started), steps });
    if built.is_empty() {
        // Nothing any answer could change: no request, nothing to check or write.
        report.audit = (!input.dry_run).then(|| audit_path(brain).display().to_string());
        finish(brain, &input, &report, &[]);
        for (phase, name) in [(3, "reason"), (4, "apply"), (5, "verify")] {
            phases.push(PhaseTiming { phase, name, ran: false, ms: 0.0, steps: Vec::new() });
        }
        let reason = "nothing to ask: no project has two arcs or an active signal".to_string();
        return AiOutcome { status: AiStatus { ran: true, reason, report: Some(report) }, phases };
    }

    // Phase 3: the questions, one after the other within the tick's time and cost budgets.
    let started = Instant::now();
    let schema = proposals::schema();
    let (answers, raw, failures) = reason(brain, &provider, &projects, &built, &schema, &mut report);
    report.latency_ms = ms(started);
    report.cost = config.cost(report.tokens_in, report.tokens_out);
    phases.push(PhaseTiming { phase: 3, name: "reason", ran: true, ms: ms(started), steps: Vec::new() });
    report.audit = (!input.dry_run).then(|| audit_path(brain).display().to_string());
    if !failures.is_empty() {
        report.error = Some(failures.join("; "));
    }
    if answers.is_empty() {
        let message = report.error.clone().unwrap_or_default();
        finish(brain, &input, &report, raw.as_bytes());
        for (phase, name) in [(4, "apply"), (5, "verify")] {
            phases.push(PhaseTiming { phase, name, ran: false, ms: 0.0, steps: Vec::new() });
        }
        let reason = format!("AI phases failed: {message}");
        return AiOutcome { status: AiStatus { ran: true, reason, report: Some(report) }, phases };
    }

    // Phase 4: rules (each answer held to its prompt's project), then writes.
    let started = Instant::now();
    let mut facts = facts;
    if answers.iter().any(|(_, answer)| names_unknown_arcs(answer, &facts)) {
        // Only the rejection of an unknown id tells a tombstone apart: read them only then.
        facts.tombstones = tombstones(&input.location.root, input.snapshot, brain.config().vault.max_file_bytes);
    }
    let mut checked = proposals::Checked::default();
    for (project, answer) in &answers {
        proposals::check(&mut checked, answer, &facts, project, config.max_changes_per_kind);
    }
    let checked_ms = ms(started);
    let mut outcomes = std::mem::take(&mut checked.outcomes);
    let written = apply::apply(&input.location.root, input.snapshot, &checked.plan, &mut outcomes, input.dry_run);
    report.intent = combined_intent(&checked.plan.intents);
    report.health = weakest_health(&checked.plan.health);
    phases.push(PhaseTiming {
        phase: 4,
        name: "apply",
        ran: true,
        ms: ms(started),
        steps: vec![StepTiming { name: "check", ms: checked_ms }],
    });

    // Phase 5: re-read what was written, confirm, and tell the index.
    let started = Instant::now();
    if !input.dry_run {
        let vault = &brain.config().vault;
        let (changed, removed) =
            apply::verify(&input.location.root, &written, &mut outcomes, vault.max_file_bytes, *brain.counter());
        if !changed.is_empty() || !removed.is_empty() {
            let mut changes = IndexChanges { changed, ..IndexChanges::default() };
            overlay(input.snapshot, &mut changes, &removed);
            // The session feed follows at once: a cleared signal, an escalation or a merged
            // arc reaches `brain status` and the next session start now, not after a scan.
            let feed = FeedState::compute(input.snapshot, now, &brain.config().vault);
            changes.feed = serde_json::to_string(&feed).ok();
            let mut diagnostics = Vec::new();
            if let Err(err) = apply_index(brain, &changes, &mut diagnostics) {
                let failure = format!("the index was not updated (the next scan will): {err}");
                report.error = Some(match report.error.take() {
                    Some(earlier) => format!("{earlier}; {failure}"),
                    None => failure,
                });
            }
        }
    }
    phases.push(PhaseTiming { phase: 5, name: "verify", ran: !input.dry_run, ms: ms(started), steps: Vec::new() });

    report.proposed = outcomes.len();
    let count = |status: &str| outcomes.iter().filter(|o| o.status == status).count();
    report.rejected = count("rejected");
    report.verified = count("verified");
    report.applied = report.verified + count("applied");
    report.failed = count("failed");
    report.proposals = outcomes;
    finish(brain, &input, &report, raw.as_bytes());
    let reason = format!(
        "{} proposed, {} applied, {} verified, {} rejected{}",
        report.proposed,
        report.applied,
        report.verified,
        report.rejected,
        if input.dry_run { " (dry run: nothing written)" } else { "" }
    );
    AiOutcome { status: AiStatus { ran: true, reason, report: Some(report) }, phases }
}

/// Phase 3: asks each prompt in turn (`built[i]` is about `projects[i]`), each with one
/// repair and one wait, all within the tick's `timeout_ms` and `max_cost_per_tick`. Returns
/// the answers by project, the raw texts (for the audit record) and why a prompt got no
/// answer. A failure of the provider or a spent budget leaves the later prompts unasked; an
/// unusable answer to one prompt does not.
fn reason(
    brain: &Brain,
    provider: &Provider,
    projects: &[String],
    built: &[prompt::Prompt],
    schema: &serde_json::Value,
    report: &mut AiReport,
) -> (Vec<(String, proposals::Answer)>, String, Vec<String>) {
    let config = &brain.config().ai;
    let deadline = Instant::now() + Duration::from_millis(config.timeout_ms);
    let mut usage = Usage::default();
    let (mut answers, mut raws, mut failures) = (Vec::new(), String::new(), Vec::new());
    for (index, (project, built)) in projects.iter().zip(built).enumerate() {
        let question = Structured {
            name: provider::SCHEMA_NAME,
            system: &built.system,
            user: &built.user,
            prompt_tokens: built.tokens,
            schema,
        };
        let label = prompt::project_label(project);
        let asked = ask_until(config, brain.counter(), provider, &question, &proposals::parse, &mut usage, deadline);
        let (raw, exhausted) = match asked {
            Ok((answer, raw)) => {
                answers.push((project.clone(), answer));
                (raw, false)
            }
            Err(failure) => {
                failures.push(format!("{} (the prompt about {label})", failure.message));
                (failure.raw, failure.exhausted)
            }
        };
        if !raw.is_empty() {
            raws.push_str(&format!("--- the answer about {label} ---\n{raw}\n"));
        }
        if exhausted && index + 1 < projects.len() {
            let left: Vec<String> =
                projects[index + 1..].iter().map(|project| prompt::project_label(project)).collect();
            failures.push(format!("not asked after that failure: {}", left.join(", ")));
            break;
        }
    }
    report.requests = usage.requests;
    report.repaired = usage.repaired;
    report.waited_ms = usage.waited_ms;
    report.tokens_in = usage.tokens_in;
    report.tokens_out = usage.tokens_out;
    (answers, raws, failures)
}

/// The intent of the answers: the one given, or one line per project.
fn combined_intent(intents: &[(String, String)]) -> Option<String> {
    match intents {
        [] => None,
        [(_, intent)] => Some(intent.clone()),
        _ => Some(
            intents
                .iter()
                .map(|(project, intent)| format!("{}: {intent}", prompt::project_label(project)))
                .collect::<Vec<_>>()
                .join("\n\n"),
        ),
    }
}

/// The vault's health as the answers see it: the weakest project's score (with its reason,
/// named when there are several).
fn weakest_health(health: &[(String, u8, String)]) -> Option<AiHealth> {
    let (project, score, reason) = health.iter().min_by_key(|(_, score, _)| *score)?;
    let reason = match health.len() {
        1 => reason.clone(),
        _ => format!("{}: {reason}", prompt::project_label(project)),
    };
    Some(AiHealth { score: *score, reason })
}

/// Arcs of the vault (every project's).
fn arcs_total(snapshot: &Snapshot) -> usize {
    snapshot
        .values()
        .filter(|file| file.state.generated.is_none() && file.state.arc_owner && file.state.arc.is_some())
        .count()
}

/// What the exchanges of one run cost and how they went.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Usage {
    /// Requests sent (a repair retry and a retry after a 429 count).
    pub requests: u32,
    /// A repair retry was needed.
    pub repaired: bool,
    /// Time spent waiting on `retry-after`.
    pub waited_ms: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

/// One question whose answer is a JSON document of `schema`.
pub(crate) struct Structured<'a> {
    /// The schema's name (the tool an Anthropic model must call).
    pub name: &'a str,
    pub system: &'a str,
    pub user: &'a str,
    /// Tokens of system + user under the configured counter.
    pub prompt_tokens: usize,
    pub schema: &'a serde_json::Value,
}

/// Asks `question` under the bounds of `config` (the whole exchange within `timeout_ms`, the
/// worst case of each request within what is left of `max_cost_per_tick`, an answer over the
/// output limit or cut short refused), repairs once when `parse` refuses the answer, waits
/// once on a 429 with `retry-after`; returns the parsed answer and its raw text, or why not
/// (with whatever raw text came back, for an audit record). Shared by the tick, enrichment and
/// hygiene.
pub(crate) fn ask<T>(
    config: &AiConfig,
    counter: &brain_core::tokens::TokenCounter,
    provider: &Provider,
    question: &Structured<'_>,
    parse: &dyn Fn(&str) -> Result<T, String>,
    usage: &mut Usage,
) -> Result<(T, String), (String, String)> {
    let deadline = Instant::now() + Duration::from_millis(config.timeout_ms);
    ask_until(config, counter, provider, question, parse, usage, deadline)
        .map_err(|failure| (failure.message, failure.raw))
}

/// Why [`ask_until`] has no answer.
pub(crate) struct AskFailure {
    pub message: String,
    /// Whatever raw text came back (for an audit record).
    pub raw: String,
    /// The provider failed (unreachable, an HTTP error, rate limited) or the time or cost
    /// budget is spent: another question now would fail the same way, so a run of several
    /// asks none after this one. Otherwise only this answer was unusable.
    pub exhausted: bool,
}

/// [`ask`] for one of several questions of a run that share its budgets: the run's
/// `deadline`, and `max_cost_per_tick` against everything `usage` already counts. Each
/// question gets its own repair retry and its own wait on a 429.
pub(crate) fn ask_until<T>(
    config: &AiConfig,
    counter: &brain_core::tokens::TokenCounter,
    provider: &Provider,
    question: &Structured<'_>,
    parse: &dyn Fn(&str) -> Result<T, String>,
    usage: &mut Usage,
    deadline: Instant,
) -> Result<(T, String), AskFailure> {
    let mut user = question.user.to_string();
    let (mut waited, mut repaired) = (false, false);
    let mut last_raw = String::new();
    let fail = |message: String, raw: String, exhausted: bool| Err(AskFailure { message, raw, exhausted });
    loop {
        // The worst case of the next request must fit in what is left of the cost cap.
        let worst = config.cost(question.prompt_tokens as u64 + 64, u64::from(config.max_output_tokens));
        let spent = config.cost(usage.tokens_in, usage.tokens_out);
        if spent + worst > config.max_cost_per_tick {
            return fail(
                format!(
                    "not asked: the request could cost {:.4} more, over max_cost_per_tick {:.4} (spent {:.4})",
                    worst, config.max_cost_per_tick, spent
                ),
                last_raw,
                true,
            );
        }
        let left = provider::left(deadline);
        if left.is_zero() {
            return fail("timed out: no usable answer within timeout_ms".into(), last_raw, true);
        }
        usage.requests += 1;
        let asked = Question { name: question.name, system: question.system, user: &user, schema: question.schema };
        let reply: Reply = match provider.ask(&asked, left) {
            Ok(reply) => reply,
            Err(CallError::RateLimited { retry_after: Some(wait) })
                if !waited && wait + Duration::from_millis(100) < provider::left(deadline) =>
            {
                waited = true;
                usage.waited_ms += wait.as_millis() as u64;
                std::thread::sleep(wait);
                continue;
            }
            Err(err) => return fail(format!("{} {}: {err}", provider.name(), provider.url()), last_raw, true),
        };
        usage.tokens_in += reply.input_tokens.unwrap_or(question.prompt_tokens as u64);
        let counted = counter.count(&reply.text);
        usage.tokens_out += reply.output_tokens.unwrap_or(counted as u64);
        last_raw = reply.text.clone();
        let limit = config.max_output_tokens as usize;
        if counted > limit * OUTPUT_SLACK || reply.output_tokens.is_some_and(|n| n as usize > limit * OUTPUT_SLACK) {
            return fail(
                format!("refused: the answer is {counted} tokens, over the output limit of {limit}"),
                last_raw,
                false,
            );
        }
        if reply.cut_short {
            return fail(format!("the answer was cut short at max_output_tokens ({limit})"), last_raw, false);
        }
        match parse(&reply.text) {
            Ok(answer) => return Ok((answer, last_raw)),
            Err(problem) if !repaired => {
                repaired = true;
                usage.repaired = true;
                user = format!(
                    "{}\n\nYour previous answer was rejected: {}. Answer again with only the JSON document the \
                     schema describes.\n",
                    question.user,
                    clip(&one_line(&problem), 300)
                );
            }
            Err(problem) => return fail(format!("no usable answer after one repair: {problem}"), last_raw, false),
        }
    }
}

/// Whether the answer names an arc that is not live (its rejection then says whether it is a
/// tombstone).
fn names_unknown_arcs(answer: &proposals::Answer, facts: &Facts<'_>) -> bool {
    let merges = answer.merges.iter().flat_map(|merge| std::iter::once(&merge.into).chain(merge.arcs.iter()));
    let edges = answer.edges.iter().flat_map(|edge| [&edge.from, &edge.to]);
    merges.chain(edges).any(|id| !facts.arcs.contains_key(id.as_str()))
}

/// The `cluster_id`s of the `*.merged.md` tombstones, read from their files (the index does
/// not keep them).
fn tombstones(root: &Path, snapshot: &Snapshot, max_bytes: usize) -> std::collections::HashSet<String> {
    let mut found = std::collections::HashSet::new();
    for (relpath, _) in snapshot.iter().filter(|(_, file)| file.state.merged && file.state.generated.is_none()) {
        let bytes = read_optional(&root.join(relpath)).ok().flatten().unwrap_or_default();
        let (doc, _) = brain_core::vault::parse(relpath, &bytes, max_bytes);
        if let Some(id) = doc.frontmatter.and_then(|fm| fm.cluster_id) {
            found.insert(id.trim().to_string());
        }
    }
    found
}

/// What the rules check against: live arcs and signals, from the index as phase 1 left it
/// (tombstones only when the answer needs them: [`tombstones`]).
fn facts(snapshot: &Snapshot) -> Facts<'_> {
    let mut facts = Facts::default();
    for (relpath, file) in snapshot {
        if file.state.generated.is_some() || file.state.merged {
            continue;
        }
        if let Some(arc) = file.state.arc.as_ref().filter(|_| file.state.arc_owner) {
            facts.arcs.insert(
                arc.cluster_id.as_str(),
                ArcFacts {
                    relpath: relpath.as_str(),
                    project: file.state.project.as_str(),
                    edges: &arc.edges,
                    readonly: file.state.readonly,
                },
            );
        }
        for signal in file.state.signals.iter().filter(|signal| !signal.tombstone) {
            facts.signals.entry(signal.id.as_str()).or_insert(SignalFacts {
                relpath: relpath.as_str(),
                project: file.state.project.as_str(),
                severity: signal.severity(),
                readonly: file.state.readonly,
            });
        }
    }
    facts
}

/// The audit record of one tick.
#[derive(Serialize)]
struct AuditRecord<'a> {
    timestamp: String,
    vault: String,
    #[serde(flatten)]
    report: &'a AiReport,
    /// The answer as received (redacted, at most 256 KiB).
    answer: String,
}

/// Writes what the tick's AI phases did (unless it is a dry run): `intent.md`, the AI health
/// line in `health.jsonl`, an AI section in `last-tick-diff.md`, and the audit record.
fn finish(brain: &Brain, input: &AiInput<'_>, report: &AiReport, raw: &[u8]) {
    if input.dry_run {
        return;
    }
    let feed_dir = &input.location.feed_dir;
    let stamp = brain_core::time::format_timestamp(brain.now());
    if let Some(intent) = &report.intent {
        let text = format!(
            "---\nid: intent\ntitle: Operator Intent\npriority: 7\nttl: 7200\nseverity: info\n---\n## Operator Intent\n\n{intent}\n\n_Inferred by {} ({}) at {stamp}; a recommendation, not a fact._\n",
            report.provider,
            one_line(&report.model)
        );
        let path = feed_dir.join("intent.md");
        if read_optional(&path).ok().flatten().as_deref() != Some(text.as_bytes()) {
            let _ = fsio::write_owned(&path, text.as_bytes());
        }
    }
    if let Some(health) = &report.health {
        let line = serde_json::json!({
            "timestamp": stamp, "source": "ai", "score": health.score, "reason": health.reason, "model": report.model,
        });
        append_line(&feed_dir.join("health.jsonl"), &line.to_string());
    }
    let mut diff = input.last_diff.to_string();
    if !diff.ends_with('\n') {
        diff.push('\n');
    }
    diff.push_str("\n### AI\n\n");
    for line in diff_lines(report) {
        diff.push_str(&format!("- {}\n", one_line(&line)));
    }
    let _ = fsio::write_owned(&feed_dir.join("last-tick-diff.md"), diff.as_bytes());

    let answer =
        brain_core::keeper::text::redacted(&String::from_utf8_lossy(&raw[..raw.len().min(AUDIT_ANSWER_BYTES)]))
            .into_owned();
    let record =
        AuditRecord { timestamp: stamp.clone(), vault: input.location.root.display().to_string(), report, answer };
    let path = audit_path(brain);
    if let Ok(text) = serde_json::to_string_pretty(&record)
        && fsio::write_owned(&path, text.as_bytes()).is_ok()
        && let Some(dir) = path.parent()
    {
        prune(dir);
    }
}

/// `<home>/ticks/<timestamp>.json` (the tick's `--now`, colons dropped).
fn audit_path(brain: &Brain) -> PathBuf {
    let stamp = brain_core::time::format_timestamp(brain.now()).replace(':', "");
    brain.home().join("ticks").join(format!("{stamp}.json"))
}

/// The AI section of `last-tick-diff.md`.
fn diff_lines(report: &AiReport) -> Vec<String> {
    let mut lines = vec![format!(
        "{} {}: {} prompt(s) of {} tokens ({} of {} arcs), {} request(s), {} tokens in, {} out, cost {:.4}, {:.0} ms",
        report.provider,
        report.model,
        report.prompt.prompts,
        report.prompt.tokens,
        report.prompt.arcs_shown,
        report.prompt.arcs_total,
        report.requests,
        report.tokens_in,
        report.tokens_out,
        report.cost,
        report.latency_ms
    )];
    if let Some(error) = &report.error {
        lines.push(format!("failed: {error}"));
    }
    if report.proposed > 0 {
        lines.push(format!(
            "{} proposed, {} applied, {} verified, {} rejected, {} failed",
            report.proposed, report.applied, report.verified, report.rejected, report.failed
        ));
    }
    for outcome in report.proposals.iter().take(40) {
        let why = outcome.why.as_deref().map(|why| format!(": {why}")).unwrap_or_default();
        lines.push(format!("{} {}{why}", outcome.status, outcome.proposal));
    }
    if let Some(health) = &report.health {
        lines.push(format!("health {}/10: {}", health.score, clip(&health.reason, 200)));
    }
    lines
}

fn append_line(path: &Path, line: &str) {
    use std::io::Write;
    if let Ok(mut file) = std::fs::File::options().create(true).append(true).open(path) {
        let _ = file.write_all(format!("{line}\n").as_bytes());
    }
}

/// Writes the audit record of an enrichment or hygiene run, `<home>/ai/<what>/<time>.json`
/// (the newest [`AUDIT_KEEP`] kept); its path, or `None` when it could not be written.
pub(crate) fn write_audit(brain: &Brain, what: &str, record: &impl Serialize) -> Option<String> {
    let stamp = brain_core::time::format_timestamp(brain.now()).replace(':', "");
    let path = brain.home().join("ai").join(what).join(format!("{stamp}.json"));
    let text = serde_json::to_string_pretty(record).ok()?;
    fsio::write_owned(&path, text.as_bytes()).ok()?;
    if let Some(dir) = path.parent() {
        prune(dir);
    }
    Some(path.display().to_string())
}

/// An answer as an audit record keeps it: redacted, at most 256 KiB.
pub(crate) fn audit_answer(raw: &str) -> String {
    let cut = raw.len().min(AUDIT_ANSWER_BYTES);
    let cut = (0..=cut).rev().find(|at| raw.is_char_boundary(*at)).unwrap_or(0);
    brain_core::keeper::text::redacted(&raw[..cut]).into_owned()
}

/// Keeps the newest [`AUDIT_KEEP`] records (names sort by time).
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    if names.len() <= AUDIT_KEEP {
        return;
    }
    names.sort();
    for path in &names[..names.len() - AUDIT_KEEP] {
        let _ = std::fs::remove_file(path);
    }
}
