//! `brain init`: create the home, its database and a commented config.

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(context: &Context, _args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::init(context)?;
    let mut out = Out::new();
    if json {
        out.json(&serde_json::json!({"home": brain.home().display().to_string(), "project": brain.project()}));
    } else {
        out.line(format!("brain home ready at {} (project: {})", brain.home().display(), brain.project()));
    }
    Ok(())
}
