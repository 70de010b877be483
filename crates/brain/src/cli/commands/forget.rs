//! `brain forget ID [--hard]`: archive, or erase for good.

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Item id (mem_…)
    pub id: String,
    /// Erase the item instead of archiving it (cannot be undone)
    #[arg(long)]
    pub hard: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let kept = brain.forget(&args.id, args.hard)?;
    let mut out = Out::new();
    match (json, kept) {
        (true, Some(item)) => out.json(&item),
        (true, None) => out.json(&serde_json::json!({"id": args.id, "erased": true})),
        (false, Some(item)) => out.line(format!("{} archived (erase with --hard)", item.id)),
        (false, None) => out.line(format!("{} erased", args.id)),
    }
    Ok(())
}
