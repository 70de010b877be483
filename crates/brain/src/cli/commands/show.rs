//! `brain show ID`: every field of one item.

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Item id (mem_…)
    pub id: String,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let item = brain.get(&args.id)?;
    let mut out = Out::new();
    if json {
        out.json(&item);
    } else {
        out.text(super::item_detail(&item));
    }
    Ok(())
}
