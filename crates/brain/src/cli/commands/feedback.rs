//! `brain feedback ID --useful|--not-useful [--note TEXT]`: say whether a memory helped; it
//! decides over anything recall inferred from transcripts (`brain_api::usage`).
//! `brain why-used ID`: the decisions recorded about an item, with their evidence, and what
//! recall makes of them now.

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_api::policy::Caller;

#[derive(Debug, clap::Args)]
pub struct FeedbackArgs {
    /// The item
    pub id: String,
    /// It helped
    #[arg(long, conflicts_with = "not_useful", required_unless_present = "not_useful")]
    pub useful: bool,
    /// It did not help (it sinks in recall, whatever sessions seemed to do with it)
    #[arg(long)]
    pub not_useful: bool,
    /// A few words on why (redacted; at most 500 characters)
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct WhyUsedArgs {
    /// The item
    pub id: String,
}

pub fn feedback(context: &Context, args: FeedbackArgs, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let entry = brain.feedback_for(&Caller::Open, "cli", &args.id, args.useful, args.note.as_deref())?;
    let mut out = Out::new();
    if json {
        out.json(&entry);
    } else {
        let said = if args.useful { "useful" } else { "not useful" };
        out.line(format!("{}: recorded as {said}; it decides over what sessions seemed to do with it", args.id));
    }
    Ok(())
}

pub fn why_used(context: &Context, args: WhyUsedArgs, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let view = brain.use_of_for(&Caller::Open, &args.id)?;
    let mut out = Out::new();
    if json {
        out.json(&view);
        return Ok(());
    }
    out.line(format!("{}  {}", view.id, view.title));
    out.line(format!("recall factor {:.2}: {}", view.factor, view.why));
    if view.decisions.is_empty() {
        out.line("no session has been given it since brain began recording use");
    }
    for entry in &view.decisions {
        let when = brain_core::time::format_timestamp(entry.decided_at);
        let how = match (&entry.signal, entry.verdict.as_str()) {
            (_, "unused") => "given, not used".to_string(),
            (Some(signal), "used") => format!("used ({signal})"),
            (_, verdict) => verdict.replace('_', " "),
        };
        let mut line = format!("{when}  {:<22} {how}", entry.session);
        if !entry.evidence.is_empty() {
            line.push_str(&format!(" — {}", entry.evidence));
        }
        out.line(line);
    }
    Ok(())
}
