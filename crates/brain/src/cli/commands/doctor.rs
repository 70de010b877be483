//! `brain doctor`: the home, the database, the search index and the config.

use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rebuild the search index when it is damaged
    #[arg(long)]
    pub repair: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let report = brain.doctor(args.repair)?;
    let mut out = Out::new();
    if json {
        out.json(&report);
    } else {
        out.line(format!("home        {}", report.home));
        out.line(format!(
            "database    {} (schema v{}, {})",
            report.database, report.schema_version, report.journal_mode
        ));
        out.line(format!("project     {}", report.project));
        out.line(format!("tokenizer   {}", report.tokenizer));
        let statuses: Vec<String> = report.by_status.iter().map(|(s, n)| format!("{s} {n}")).collect();
        out.line(format!("items       {} ({})", report.items, statuses.join(", ")));
        out.line(format!("generation  {}", report.generation));
        if report.problems.is_empty() {
            out.line("ok: no problems found");
        }
    }
    out.flush();
    if report.problems.is_empty() {
        return Ok(());
    }
    let hint = if report.locked {
        "another brain process is writing (an import, a scan, a tick?): run `brain doctor` again when it is done"
    } else if report.problems.iter().any(|problem| problem.starts_with("integrity:")) {
        "the database file is damaged: restore it from a backup, or `brain export` what is readable, move the \
         file away, `brain init` and `brain import`"
    } else if report.problems.iter().any(|problem| problem.starts_with("search index:")) {
        "run `brain doctor --repair` to rebuild the search index"
    } else {
        "fix the problems above, then run `brain doctor` again"
    };
    Err(BrainError::user_with_hint(
        format!("{} problem(s): {}", report.problems.len(), report.problems.join("; ")),
        hint,
    ))
}
