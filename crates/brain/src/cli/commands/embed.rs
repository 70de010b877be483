//! `brain embed [--dry-run]`: fills the embedding vectors of items that have none for the
//! configured model (`[embed]`), with a progress bar on a terminal; resumable (each batch is
//! committed), and a model change re-embeds.

use crate::app::{Brain, Context};
use crate::cli::progress;
use crate::error::BrainResult;
use crate::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only count the items that need a vector
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let bar = progress::bar(None, "embedding");
    let mut on_progress = |done: u64, total: u64| {
        if bar.length().is_none() {
            bar.set_length(total);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            {
                bar.set_style(style.progress_chars("=> "));
            }
        }
        bar.set_position(done);
    };
    let report = brain.embed(args.dry_run, &mut on_progress);
    bar.finish_and_clear();
    let report = report?;
    let mut out = Out::new();
    if json {
        out.json(&report);
    } else if args.dry_run {
        out.line(format!("{} items need a vector of {}", report.pending, report.model));
    } else {
        out.line(format!(
            "embedded {} items with {} in {:.1} s ({:.0} items/s)",
            report.embedded, report.model, report.seconds, report.per_second
        ));
    }
    Ok(())
}
