//! `brain remember`: add an item from flags, with the content from `--content` or stdin.

use brain_core::{Item, ItemDraft};

use crate::cli::ItemFields;
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;
use brain_remote::remote::RemoteBrain;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub fields: ItemFields,
    /// Pin the item (always loaded first at session start)
    #[arg(long)]
    pub pin: bool,
    /// Pin priority (higher first)
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i32>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let item = brain.remember(draft(args)?, "cli")?;
    render(&item, json);
    Ok(())
}

/// The same command against a `brain serve` (`--remote`): the draft is prepared here and
/// the server redacts, validates and stores it.
pub fn run_remote(remote: &RemoteBrain, args: Args, json: bool) -> BrainResult<()> {
    let item = remote.remember(&draft(args)?)?;
    render(&item, json);
    Ok(())
}

/// The draft the flags and stdin describe: content from --content or stdin, the title
/// from the first content line when --title is missing, --pin and --priority.
fn draft(args: Args) -> BrainResult<ItemDraft> {
    let content = match args.fields.content.as_deref() {
        Some("-") => Some(super::read_stdin()?),
        Some(text) => Some(text.to_string()),
        None if super::stdin_is_piped() => Some(super::read_stdin()?).filter(|text| !text.trim().is_empty()),
        None => None,
    };
    let mut draft = args.fields.to_draft(content);
    if draft.title.is_none() {
        // Without --title, the first line of the content is the title.
        let first_line = draft.content.as_deref().and_then(|c| c.lines().map(str::trim).find(|l| !l.is_empty()));
        let Some(first_line) = first_line else {
            return Err(BrainError::user_with_hint(
                "nothing to remember: no --title and no content",
                "brain remember --title \"Use WAL mode\" --content \"…\" (or pipe the content on stdin)",
            ));
        };
        // Redacted whole, then cut: a secret cut in half no longer looks like one.
        let first_line = brain_core::redact::redact_str(first_line);
        draft.title = Some(first_line.chars().take(brain_core::item::MAX_TITLE_CHARS).collect());
    }
    if args.pin {
        draft.pinned = Some(true);
    }
    draft.pin_priority = args.priority;
    Ok(draft)
}

fn render(item: &Item, json: bool) {
    let mut out = Out::new();
    if json {
        out.json(item);
    } else {
        out.line(format!("remembered {} ({}, {}, {} tokens)", item.id, item.kind, item.scope, item.tokens));
    }
}
