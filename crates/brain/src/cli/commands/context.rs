//! `brain context --profile …`: the general entry point to every assembled context.

use brain_store::PageReads;

use crate::cli::commands::brain::BudgetArgs;
use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Profile {
    /// The layered brain document (SPEC §4.1)
    Brain,
    /// The compact CLAUDE.md summary (SPEC §4.4)
    ClaudeMd,
    /// The session-start working memory as text (SPEC §4.2)
    SessionStart,
    /// An agent's context: identity, instructions, team, recent activity, memories (SPEC §4.3)
    Agent,
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
    /// agent: the agent (`<home>/agents/<agent>/`)
    #[arg(long)]
    pub agent: Option<String>,
    /// agent: the agent's team (`<home>/teams/<team>/`)
    #[arg(long)]
    pub team: Option<String>,
    /// agent and session-start: the topic to choose memories for
    #[arg(long)]
    pub topic: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    match args.profile {
        Profile::Brain => super::brain::run(context, super::brain::Args { budget: args.budget }, json),
        Profile::ClaudeMd => {
            let brain = Brain::open_with(context, PageReads::Cached)?;
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
        Profile::SessionStart => {
            let brain = Brain::open(context)?;
            let request = brain_api::app::SessionRequest {
                topics: args.topic,
                top: 5,
                max_chars: Some(super::session_start::DEFAULT_MAX_CHARS),
                ..brain_api::app::SessionRequest::default()
            };
            let payload = brain.session_start(&request)?;
            let mut out = Out::new();
            if json {
                out.json(&payload);
            } else {
                out.text(&payload.text);
            }
            Ok(())
        }
        Profile::Agent => {
            let Some(agent) = args.agent.as_deref() else {
                return Err(brain_api::error::BrainError::user_with_hint(
                    "the agent profile needs --agent NAME",
                    "brain context --profile agent --agent reviewer [--team core] [--topic auth]",
                ));
            };
            let brain = Brain::open(context)?;
            let assembled = brain.agent_context(agent, args.team.as_deref(), args.topic.as_deref())?;
            let mut out = Out::new();
            if json {
                out.json(&assembled);
            } else {
                out.text(&assembled.document);
                eprintln!("agent: {} of {} tokens", assembled.token_estimate, assembled.budget.cap);
            }
            Ok(())
        }
    }
}
