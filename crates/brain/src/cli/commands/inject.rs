//! `brain inject`: write the summary into the managed block of CLAUDE.md (or AGENTS.md,
//! GEMINI.md, .cursorrules), preserving everything outside the block byte for byte.

use std::path::PathBuf;

use brain_store::PageReads;

use crate::cli::commands::brain::BudgetArgs;
use brain_api::app::{Brain, Context};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

const TARGETS: &[&str] = &["CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules"];

#[derive(Debug, clap::Args)]
pub struct Args {
    /// CLAUDE.md, AGENTS.md, GEMINI.md or .cursorrules
    #[arg(long, default_value = "CLAUDE.md")]
    pub target: String,
    /// Folder holding the target [default: the project root: nearest .brain.toml, else git root, else cwd]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let Some(target) = TARGETS.iter().find(|t| t.eq_ignore_ascii_case(&args.target)) else {
        return Err(BrainError::user(format!("invalid target {:?} (allowed: {})", args.target, TARGETS.join(", "))));
    };
    let brain = Brain::open_with(context, PageReads::Cached)?;
    let dir = match &args.dir {
        Some(dir) => context.cwd.join(dir),
        None => config::project_root(&context.cwd),
    };
    if !dir.is_dir() {
        return Err(BrainError::user(format!("folder {} does not exist", dir.display())));
    }
    let path = dir.join(target);
    crate::hook::repo_files::refuse_links(&dir, &path)?;
    let mut options = brain.brain_options(&args.budget.overrides());
    if let Some(budget) = args.budget.token_budget {
        options.summary.token_budget = budget;
    }
    let outcome = brain.inject(&path, &options)?;
    let mut out = Out::new();
    if json {
        out.json(&outcome);
    } else if outcome.changed {
        out.line(format!("updated the brain block in {} ({} tokens)", outcome.path, outcome.tokens));
    } else {
        out.line(format!("{} is up to date", outcome.path));
    }
    Ok(())
}
