//! `brain pin ID [--priority N]` and `brain unpin ID`.

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct PinArgs {
    /// Item id (mem_…)
    pub id: String,
    /// Pin priority (higher first) [default: keep the current one]
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i32>,
}

#[derive(Debug, clap::Args)]
pub struct UnpinArgs {
    /// Item id (mem_…)
    pub id: String,
}

pub fn run_pin(context: &Context, args: PinArgs, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let item = brain.pin(&args.id, args.priority)?;
    let mut out = Out::new();
    if json {
        out.json(&item);
    } else {
        out.line(format!("pinned {} (priority {})", item.id, item.pin_priority));
    }
    Ok(())
}

pub fn run_unpin(context: &Context, args: UnpinArgs, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let item = brain.unpin(&args.id)?;
    let mut out = Out::new();
    if json {
        out.json(&item);
    } else {
        out.line(format!("unpinned {}", item.id));
    }
    Ok(())
}
