//! `brain import FILE.jsonl`: all or nothing, with a progress bar on a terminal.

use std::io::BufReader;
use std::path::PathBuf;

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSONL file, one item per line (`-` for stdin)
    pub file: PathBuf,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let bar = progress::bar(None, "parsing");
    let mut on_progress = |done: usize, total: usize| {
        if total > 0 && bar.length().is_none() {
            bar.set_message("importing");
        }
        progress::count(&bar, done as u64, total as u64);
    };
    let report = if args.file.as_os_str() == "-" {
        brain.import(std::io::stdin().lock(), &mut on_progress)
    } else {
        let file = std::fs::File::open(&args.file)
            .map_err(|err| BrainError::user(format!("cannot open {}: {err}", args.file.display())))?;
        brain.import(BufReader::with_capacity(1 << 20, file), &mut on_progress)
    };
    let report = progress::finish(bar, report, json, |out, report| {
        out.line(format!("imported {} items", report.imported));
    })?;
    if !json && report.redacted_fields > 0 {
        eprintln!("note: redacted secrets in {} fields before storing", report.redacted_fields);
    }
    Ok(())
}
