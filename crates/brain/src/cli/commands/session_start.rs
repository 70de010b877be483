//! `brain session-start`: the working memory for a new agent session (SPEC §4.2).

use brain_core::assemble::session::SessionStart;

use brain_api::app::{Brain, Context, SessionRequest};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;
use brain_remote::remote::RemoteBrain;

/// Default character cap of the text form (Claude Code cuts hook context above 10,000).
pub const DEFAULT_MAX_CHARS: usize = 9500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    Text,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Topics to recall memory for (free words, comma-separated or not)
    #[arg(long)]
    pub topics: Option<String>,
    /// The task at hand, in words
    #[arg(long)]
    pub task: Option<String>,
    /// How many items to recall (1 to 50)
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// json (the payload) or text (the markdown hooks inject)
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Character cap of the text form
    #[arg(long, default_value_t = DEFAULT_MAX_CHARS)]
    pub max_chars: usize,
}

pub fn run(context: &Context, args: Args, _json: bool) -> BrainResult<()> {
    let request = request(&args)?;
    let brain = Brain::open(context)?;
    render(&brain.session_start(&request)?, args.format);
    Ok(())
}

/// The same command against a `brain serve` (`--remote`): same request, same rendering.
pub fn run_remote(remote: &RemoteBrain, args: Args) -> BrainResult<()> {
    let request = request(&args)?;
    render(&remote.session_start(&request)?, args.format);
    Ok(())
}

fn request(args: &Args) -> BrainResult<SessionRequest> {
    if !(1..=50).contains(&args.top) {
        return Err(BrainError::user(format!("--top {} is out of range (1 to 50)", args.top)));
    }
    Ok(SessionRequest {
        topics: args.topics.clone(),
        task: args.task.clone(),
        top: args.top,
        max_chars: (args.format == Format::Text).then_some(args.max_chars),
        max_bytes: None,
        token_budget: None,
    })
}

/// The payload as JSON, or its text on stdout and the budget report on stderr.
fn render(payload: &SessionStart, format: Format) {
    let mut out = Out::new();
    match format {
        Format::Json => out.json(payload),
        Format::Text => {
            out.text(&payload.text);
            if !payload.text.is_empty() && !payload.text.ends_with('\n') {
                out.text("\n");
            }
            out.flush();
            let sections: Vec<String> =
                payload.budget.sections.iter().map(|s| format!("{} {}/{}", s.name, s.used, s.cap)).collect();
            eprintln!(
                "session-start: {} of {} tokens ({}), {} characters, {} left out, hash {}",
                payload.budget.used,
                payload.budget.cap,
                sections.join(", "),
                payload.text.chars().count(),
                payload.overflow.len(),
                payload.brain_hash
            );
        }
    }
}
