//! `brain migrate --to URL`: copy this home's store into another (a fleet's PostgreSQL),
//! all or nothing, with a progress bar on a terminal; running it again copies nothing.

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The target store: postgres://USER[:PASSWORD]@HOST:5432/DATABASE (or sqlite:PATH); a
    /// password given here shows in the process list while the copy runs
    #[arg(long, value_name = "URL")]
    pub to: String,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let bar = progress::bar(None, "copying");
    let mut on_progress = |done: usize, total: usize| progress::count(&bar, done as u64, total as u64);
    let report = brain.migrate_to(&args.to, &mut on_progress);
    progress::finish(bar, report, json, |out, report| {
        out.line(format!(
            "copied {} of {} items into {} ({} already there, kept as they are); vault: {} files, {} values; {} tokens",
            report.copied,
            report.items,
            report.to,
            report.already_there,
            report.vault_files_copied,
            report.vault_values_copied,
            report.tokens_copied
        ));
    })?;
    if !json {
        eprintln!(
            "to use it from this home: set BRAIN_DATABASE_URL, or [store] url in {}",
            context.home.join(brain_api::config::USER_CONFIG_FILE).display()
        );
    }
    Ok(())
}
