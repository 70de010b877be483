//! `brain tick`: maintain the vault (phase 1, deterministic): heat, promotion and demotion,
//! graduation, signal tombstones, the brain feed and `health.jsonl`; then, when `[ai]` names
//! an LLM and `--no-ai` is not given, the AI phases 2–5 (`brain_ai`): prompt, reason, apply
//! the valid proposals, verify. Without one the tick says so and runs phase 1 only.

use std::path::PathBuf;

use brain_store::PageReads;

use crate::cli::progress;
use brain_ai::TickReport;
use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_vault::{Location, TickOptions};

/// At most this many planned changes of one kind are listed in text output (all in --json).
const SHOWN: usize = 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The vault folder [default: config `[vault] path`, else <home>/vault]
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// Where the feed files go [default: <vault>/brain-feed]
    #[arg(long, value_name = "DIR")]
    pub brain_feed: Option<PathBuf>,
    /// Deterministic phase 1 only (also the behaviour when no LLM is configured)
    #[arg(long)]
    pub no_ai: bool,
    /// Print the planned changes; write nothing anywhere
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    // Through SQLite's page cache, not the memory map: a first tick writes most of the store,
    // and every mapped page it touched would stay resident until it exits (~40 MB at 10k arcs).
    let brain = Brain::open_with(context, PageReads::Cached)?;
    let vault_flag = args.vault.map(|dir| context.cwd.join(dir));
    let feed_flag = args.brain_feed.map(|dir| context.cwd.join(dir));
    let location = Location::resolve(&brain, vault_flag.as_deref(), feed_flag.as_deref())?;
    let bar = progress::bar(None, "scanning");
    let on_progress = |done: usize, total: usize| progress::count(&bar, done as u64, total as u64);
    if brain.config().ai.enabled() && !args.no_ai {
        // Phase 2 redacts every line of its prompt and counts it with the configured tokenizer:
        // compile the redactor's patterns and load the vocabulary on another core while phase 1
        // scans, instead of after it (~12 ms, and 100–300 ms for a BPE vocabulary).
        let counter = *brain.counter();
        std::thread::spawn(move || {
            brain_core::redact::warm();
            counter.count("warm");
        });
    }
    let options =
        TickOptions { location, dry_run: args.dry_run, no_ai: args.no_ai, progress: &on_progress, before_write: None };
    let report = brain_ai::tick(&brain, &options);
    let report = progress::finish(bar, report, json, print_text)?;
    for done in &report.scan.recovered {
        eprintln!("note: interrupted graduation {} → {}: {} ({})", done.from, done.to, done.action, done.reason);
    }
    for skipped in &report.skipped {
        eprintln!("warning: {}: {}", skipped.path, skipped.reason);
    }
    Ok(())
}

fn print_text(out: &mut Out, report: &TickReport) {
    let verb = if report.dry_run { "would" } else { "did" };
    out.line(format!(
        "tick {}{}",
        report.vault,
        if report.dry_run { " (dry run: planned changes, nothing written)" } else { "" }
    ));
    for phase in &report.phases {
        if !phase.ran {
            continue;
        }
        let steps: Vec<String> = phase.steps.iter().map(|s| format!("{} {:.1}", s.name, s.ms)).collect();
        out.line(format!("phase {} {}: {:.1} ms ({})", phase.phase, phase.name, phase.ms, steps.join(", ")));
    }
    match &report.ai.report {
        None => out.line(format!("phases 2-5 skipped: {}", report.ai.reason)),
        Some(ai) => print_ai(out, ai),
    }
    out.line(format!(
        "scan: {} files ({} parsed, {} unchanged, {} touched, {} removed)",
        report.scan.files, report.scan.parsed, report.scan.unchanged, report.scan.touched, report.scan.removed
    ));
    out.line(format!(
        "arcs {}: heat changed on {}, {} promoted, {} demoted, {} graduated, {} cleared signals removed",
        report.arcs,
        report.heat_changes.len(),
        report.promotions.len(),
        report.demotions.len(),
        report.graduations.len(),
        report.tombstones.len()
    ));
    if report.dry_run {
        for change in report.heat_changes.iter().take(SHOWN) {
            let from = change.from.map_or("none".to_string(), |heat| heat.to_string());
            out.line(format!("  {verb} set heat {from} -> {} in {}", change.to, change.file));
        }
        more(out, report.heat_changes.len());
        for promotion in report.promotions.iter().take(SHOWN) {
            out.line(format!("  {verb} promote {} (heat {})", promotion.cluster_id, promotion.heat));
        }
        for demotion in report.demotions.iter().take(SHOWN) {
            out.line(format!("  {verb} demote {} (heat {})", demotion.cluster_id, demotion.heat));
        }
        for graduation in report.graduations.iter().take(SHOWN) {
            out.line(format!("  {verb} graduate {} -> {}", graduation.from, graduation.to));
        }
        for drained in report.inbox.iter().take(SHOWN) {
            out.line(format!("  {verb} drain {} -> {}", drained.from, drained.to));
        }
        for tombstone in report.tombstones.iter().take(SHOWN) {
            out.line(format!("  {verb} remove cleared signal from {}: {}", tombstone.file, tombstone.text));
        }
        for note in report.notes.iter().take(SHOWN) {
            out.line(format!("  {verb} {} {}", note.action, note.path));
        }
        more(out, report.notes.len());
    }
    if !report.inbox.is_empty() {
        out.line(format!("inbox: {} notes drained into their region folders", report.inbox.len()));
    }
    let writes = report.notes.iter().filter(|note| note.action == "write").count();
    out.line(format!("generated notes: {} written, {} removed", writes, report.notes.len() - writes));
    let feed: Vec<String> = report
        .feed_files
        .iter()
        .map(|file| format!("{}{}", file.name, if file.changed { "" } else { " (unchanged)" }))
        .collect();
    out.line(format!("feed {}: {}", report.brain_feed, feed.join(", ")));
    for result in &report.verify {
        out.line(format!("verify {} `{}`: {}", result.file, result.command, result.outcome));
    }
    out.line(format!("health {}/10: {}", report.health.score, report.health.reason));
}

fn print_ai(out: &mut Out, ai: &brain_ai::AiReport) {
    out.line(format!(
        "ai {} {}: {} prompt(s), one per project, {} tokens ({} of {} arcs, built in {:.1} ms), {} request(s), {} tokens in, {} out, cost {:.4}, {:.0} ms",
        ai.provider,
        ai.model,
        ai.prompt.prompts,
        ai.prompt.tokens,
        ai.prompt.arcs_shown,
        ai.prompt.arcs_total,
        ai.prompt.build_ms,
        ai.requests,
        ai.tokens_in,
        ai.tokens_out,
        ai.cost,
        ai.latency_ms
    ));
    if let Some(error) = &ai.error {
        out.line(format!("ai failed: {error}"));
    }
    out.line(format!(
        "ai proposals: {} proposed, {} applied, {} verified, {} rejected, {} failed",
        ai.proposed, ai.applied, ai.verified, ai.rejected, ai.failed
    ));
    for outcome in ai.proposals.iter().take(SHOWN) {
        let status = outcome.status.as_str();
        let why = outcome.why.as_deref().map(|why| format!(" ({why})")).unwrap_or_default();
        out.line(format!("  {status}: {}{why}", outcome.proposal));
    }
    more(out, ai.proposals.len());
    if let Some(intent) = &ai.intent {
        out.line(format!("intent: {intent}"));
    }
    if let Some(health) = &ai.health {
        out.line(format!("ai health {}/10: {}", health.score, health.reason));
    }
}

fn more(out: &mut Out, total: usize) {
    if total > SHOWN {
        out.line(format!("  … and {} more (all of them with --json)", total - SHOWN));
    }
}
