//! `brain hygiene [--apply] [--dry-run] [--no-ai] [--limit N]`: the store's maintenance plan —
//! near-duplicates and items sharing a dedup hint superseded by the newest, stale and
//! low-confidence items into the review queue — confirmed or refined by the LLM when `[ai]` is
//! set; printed by default, applied with `--apply` (each write with the version the plan read:
//! an item edited meanwhile is a conflict, left as it is). See `brain_ai::hygiene`.

use crate::cli::progress;
use brain_ai::hygiene::{self, HygieneOptions, HygieneReport};
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

/// At most this many actions are listed in text output (all in --json).
const SHOWN: usize = 50;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Act on the plan (default: print it and change nothing)
    #[arg(long, conflicts_with = "dry_run")]
    pub apply: bool,
    /// Print the plan and change nothing (the default)
    #[arg(long)]
    pub dry_run: bool,
    /// The deterministic plan only, even when [ai] names an LLM
    #[arg(long)]
    pub no_ai: bool,
    /// At most this many actions (in plan order)
    #[arg(long, default_value_t = hygiene::DEFAULT_LIMIT, value_name = "N")]
    pub limit: usize,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    if args.limit == 0 {
        return Err(BrainError::user("--limit must be at least 1"));
    }
    let brain = Brain::open(context)?;
    let options = HygieneOptions { apply: args.apply, no_ai: args.no_ai, limit: args.limit };
    let bar = progress::bar(None, "reading");
    let mut on_progress = |stage: &'static str, done: u64, total: u64| {
        bar.set_message(stage);
        progress::count(&bar, done, total);
    };
    let report = hygiene::run(&brain, &options, &mut on_progress);
    let report = progress::finish(bar, report, json, print_text)?;
    if report.conflicts > 0 {
        eprintln!(
            "{} action(s) not applied: the item changed since the plan read it (run `brain hygiene` again)",
            report.conflicts
        );
    }
    Ok(())
}

fn print_text(out: &mut Out, report: &HygieneReport) {
    let rules: Vec<String> = report.rules.iter().map(|(rule, n)| format!("{n} {rule}")).collect();
    out.line(format!(
        "hygiene over {} item(s){}: {} action(s) found{} in {:.0} ms",
        report.items,
        if report.dry_run { " (dry run: nothing changed; --apply acts)" } else { "" },
        report.found,
        if rules.is_empty() { String::new() } else { format!(" ({})", rules.join(", ")) },
        report.plan_ms
    ));
    if let Some(ai) = &report.ai {
        match &ai.error {
            Some(error) => out.line(format!("{} {}: no verdicts, the plan stands: {error}", ai.provider, ai.model)),
            None => out.line(format!(
                "{} {}: {} of {} action(s) shown ({} tokens), {} confirmed, {} dropped, {} turned into reviews, {} verdict(s) refused; {} tokens in, {} out, cost {:.4}",
                ai.provider,
                ai.model,
                ai.actions_shown,
                report.actions.len(),
                ai.prompt_tokens,
                ai.confirmed,
                ai.dropped,
                ai.downgraded,
                ai.rejected_verdicts.len(),
                ai.usage.tokens_in,
                ai.usage.tokens_out,
                ai.cost
            )),
        }
    }
    for action in report.actions.iter().take(SHOWN) {
        let into = action.into.as_deref().map(|into| format!(" by {into}")).unwrap_or_default();
        let note = action.note.as_deref().map(|note| format!(" — {note}")).unwrap_or_default();
        out.line(format!(
            "{} {} {} {}{into} [{}: {}] {}{note}",
            action.id, action.status, action.action, action.item, action.rule, action.why, action.title
        ));
    }
    if report.actions.len() > SHOWN {
        out.line(format!("… and {} more (--json lists all)", report.actions.len() - SHOWN));
    }
    if !report.dry_run {
        out.line(format!(
            "{} applied, {} conflict(s), {} failed, {} dropped by the model",
            report.applied, report.conflicts, report.failed, report.dropped
        ));
    }
}
