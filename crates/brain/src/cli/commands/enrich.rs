//! `brain enrich [--since TIME] [--max-sessions N] [--dry-run]`: the configured LLM proposes
//! memory items (decisions, bugs and fixes, conventions, lessons, todos) from the captured
//! sessions of a window; the ones that pass the rules are written as drafts to review
//! (`brain review --drafts`, `brain approve ID`, the dashboard). See `brain_ai::enrich`.

use brain_ai::enrich::{self, EnrichOptions, EnrichReport};
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sessions that ended at or after this time (RFC 3339) [default: where the last run
    /// stopped, else 7 days ago]
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// At most this many sessions (oldest first; the rest wait for the next run)
    #[arg(long, default_value_t = enrich::DEFAULT_MAX_SESSIONS, value_name = "N")]
    pub max_sessions: usize,
    /// Ask and check, but write no draft (and do not move the window)
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let since = match args.since.as_deref() {
        None => None,
        Some(text) => Some(
            brain_core::time::parse_timestamp(text)
                .map_err(|message| BrainError::user(format!("invalid --since {text:?}: {message}")))?,
        ),
    };
    let options = EnrichOptions { since, dry_run: args.dry_run, max_sessions: args.max_sessions };
    let report = enrich::run(&brain, &options)?;
    let mut out = Out::new();
    if json {
        out.json(&report);
    } else {
        print_text(&mut out, &report);
    }
    match &report.error {
        Some(error) if report.sessions_shown > 0 => Err(BrainError::user(format!("enrichment failed: {error}"))),
        Some(error) => {
            eprintln!("{error}");
            Ok(())
        }
        None => Ok(()),
    }
}

fn print_text(out: &mut Out, report: &EnrichReport) {
    out.line(format!(
        "enrich since {}{}: {} session(s) in the window, {} shown, {} left for the next run; {} arc(s) as context",
        report.since,
        if report.dry_run { " (dry run: nothing written)" } else { "" },
        report.sessions_in_window,
        report.sessions_shown,
        report.sessions_left,
        report.arcs_shown
    ));
    out.line(format!(
        "{} {}: {} prompt(s), one per project, {} tokens (at most {} each; {} chars, built in {:.1} ms), {} request(s), {} tokens in, {} out, cost {:.4}, {:.0} ms",
        report.provider,
        report.model,
        report.prompts,
        report.prompt_tokens,
        report.prompt_max_tokens,
        report.prompt_chars,
        report.prompt_build_ms,
        report.usage.requests,
        report.usage.tokens_in,
        report.usage.tokens_out,
        report.cost,
        report.latency_ms
    ));
    out.line(format!(
        "{} proposed, {} written as drafts, {} rejected",
        report.proposed, report.written, report.rejected
    ));
    for proposal in &report.proposals {
        let why = proposal.why.as_deref().map(|why| format!(": {why}")).unwrap_or_default();
        let id = proposal.id.as_deref().map(|id| format!(" {id}")).unwrap_or_default();
        out.line(format!(
            "{}{id} [{} c{:.2} {}] {}{why}",
            proposal.status, proposal.kind, proposal.confidence, proposal.dedup_hint, proposal.title
        ));
    }
    if report.written > 0 {
        out.line("review them with `brain review --drafts`, then `brain approve ID` or `brain forget ID`");
    }
}
