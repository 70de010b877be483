//! `brain brain`: the layered brain document (SPEC §4.1).

use brain_core::assemble::BrainDocument;
use brain_store::PageReads;

use brain_api::app::{Brain, BudgetOverrides, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_remote::remote::RemoteBrain;

/// Budget flags shared by the context commands.
#[derive(Debug, Default, clap::Args)]
pub struct BudgetArgs {
    /// Total token budget [default: config, 6000]; layers not given scale with it
    #[arg(long)]
    pub token_budget: Option<usize>,
    /// Layer 0 (project brief) budget
    #[arg(long)]
    pub layer0: Option<usize>,
    /// Layer 1 (active knowledge) budget
    #[arg(long)]
    pub layer1: Option<usize>,
    /// Layer 2 (reference knowledge) budget
    #[arg(long)]
    pub layer2: Option<usize>,
}

impl BudgetArgs {
    pub fn overrides(&self) -> BudgetOverrides {
        BudgetOverrides {
            token_budget: self.token_budget,
            layer0: self.layer0,
            layer1: self.layer1,
            layer2: self.layer2,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub budget: BudgetArgs,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open_with(context, PageReads::Cached)?;
    let options = brain.brain_options(&args.budget.overrides());
    render(&brain.brain_document(&options)?, json);
    Ok(())
}

/// The same command against a `brain serve` (`--remote`): its config supplies the budgets
/// the flags leave unset.
pub fn run_remote(remote: &RemoteBrain, args: Args, json: bool) -> BrainResult<()> {
    render(&remote.brain_document(&args.budget.overrides())?, json);
    Ok(())
}

/// The document (or its JSON) on stdout, the budget report on stderr.
fn render(document: &BrainDocument, json: bool) {
    let mut out = Out::new();
    if json {
        out.json(document);
        return;
    }
    out.text(&document.document);
    eprintln!(
        "brain: {} of {} tokens, {} items loaded, {} archived, hash {}",
        document.token_estimate,
        document.budget.cap,
        document.items_loaded,
        document.layers.archived.count,
        document.brain_hash
    );
}
