//! `brain supersede OLD NEW`: OLD is kept, marked superseded by NEW.

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The item being replaced
    pub old: String,
    /// The item that replaces it
    pub new: String,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let (old, new) = brain.supersede(&args.old, &args.new)?;
    let mut out = Out::new();
    if json {
        out.json(&serde_json::json!({"old": old, "new": new}));
    } else {
        out.line(format!("{} is superseded by {}", old.id, new.id));
    }
    Ok(())
}
