//! `brain context --profile …`: the general entry point to every assembled context.

use crate::app::{Brain, Context};
use crate::cli::commands::brain::BudgetArgs;
use crate::error::BrainResult;
use crate::output::Out;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Profile {
    /// The layered brain document (SPEC §4.1)
    Brain,
    /// The compact CLAUDE.md summary (SPEC §4.4)
    ClaudeMd,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which context to assemble
    #[arg(long, value_enum)]
    pub profile: Profile,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// claude-md: the target file whose inject blocks are included
    #[arg(long, default_value = "CLAUDE.md")]
    pub target: String,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    match args.profile {
        Profile::Brain => super::brain::run(context, super::brain::Args { budget: args.budget }, json),
        Profile::ClaudeMd => {
            let brain = Brain::open(context)?;
            let mut options = brain.brain_options(&args.budget.overrides());
            if let Some(budget) = args.budget.token_budget {
                options.summary.token_budget = budget;
            }
            let summary = brain.claude_md(&options, &args.target)?;
            let mut out = Out::new();
            if json {
                out.json(&summary);
            } else {
                out.text(&summary.document);
                eprintln!("claude-md: {} of {} tokens", summary.token_estimate, summary.budget.cap);
            }
            Ok(())
        }
    }
}
