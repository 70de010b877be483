//! `brain edit ID`: change the given fields; the rest stays.

use crate::cli::ItemFields;
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Item id (mem_…)
    pub id: String,
    #[command(flatten)]
    pub fields: ItemFields,
    /// Pin priority (higher first)
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i32>,
    /// Fail with a conflict unless the stored version is this one (from `show --json`)
    #[arg(long, value_name = "VERSION")]
    pub expect_version: Option<u64>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let content = match args.fields.content.as_deref() {
        Some("-") => Some(super::read_stdin()?),
        other => other.map(str::to_string),
    };
    let mut draft = args.fields.to_draft(content);
    draft.pin_priority = args.priority;
    if draft == brain_core::ItemDraft::default() {
        return Err(BrainError::user_with_hint(
            "nothing to change",
            "pass at least one field flag, e.g. --importance 4",
        ));
    }
    let item = brain.edit(&args.id, &draft, args.expect_version)?;
    let mut out = Out::new();
    if json {
        out.json(&item);
    } else {
        out.line(format!("updated {} (version {})", item.id, item.version));
    }
    Ok(())
}
