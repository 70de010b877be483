//! `brain export`: every item as JSONL, the form `brain import` reads back losslessly.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::commands::list::FilterArgs;
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write to this file (atomically) instead of stdout
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

pub fn run(context: &Context, args: Args, _json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    // Export everything unless scopes are named: a backup must not silently skip a project.
    let mut filter_args = args.filter;
    if filter_args.scopes.is_empty() {
        filter_args.all_scopes = true;
    }
    let filter = filter_args.to_filter(&brain, &[])?;
    match &args.output {
        None => {
            let stdout = std::io::stdout();
            let mut writer = std::io::BufWriter::new(stdout.lock());
            match brain.export(&filter, &mut writer) {
                Err(BrainError::Internal { message }) if message.contains("Broken pipe") => Ok(()),
                other => other.map(|_| ()),
            }
        }
        Some(path) => {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
            let temp = dir.join(format!(".{}.tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("export")));
            let file = std::fs::File::create(&temp)
                .map_err(|err| BrainError::user(format!("cannot write {}: {err}", temp.display())))?;
            let mut writer = std::io::BufWriter::new(file);
            let count = brain.export(&filter, &mut writer)?;
            writer.flush()?;
            writer.get_ref().sync_all()?;
            std::fs::rename(&temp, path)
                .map_err(|err| BrainError::user(format!("cannot write {}: {err}", path.display())))?;
            eprintln!("exported {count} items to {}", path.display());
            Ok(())
        }
    }
}
