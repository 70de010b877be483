//! `brain embed [--dry-run]`: fills the embedding vectors of items that have none for the
//! configured model (`[embed]`), with a progress bar on a terminal; resumable (each batch is
//! committed), and a model change re-embeds.

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only count the items that need a vector
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let bar = progress::bar(None, "embedding");
    let mut on_progress = |done: u64, total: u64| progress::count(&bar, done, total);
    let report = brain.embed(args.dry_run, &mut on_progress);
    progress::finish(bar, report, json, |out, report| {
        if args.dry_run {
            out.line(format!("{} items need a vector of {}", report.pending, report.model));
        } else {
            out.line(format!(
                "embedded {} items with {} in {:.1} s ({:.0} items/s)",
                report.embedded, report.model, report.seconds, report.per_second
            ));
        }
    })?;
    Ok(())
}
