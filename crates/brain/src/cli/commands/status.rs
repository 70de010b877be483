//! `brain approve ID` and `brain deprecate ID`.

use brain_core::Status;

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Item id (mem_…)
    pub id: String,
}

pub fn run(context: &Context, args: Args, status: Status, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let item = brain.set_status(&args.id, status)?;
    let mut out = Out::new();
    if json {
        out.json(&item);
    } else {
        out.line(format!("{} is now {}", item.id, item.status));
    }
    Ok(())
}
