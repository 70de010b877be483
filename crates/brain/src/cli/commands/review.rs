//! `brain review [ID --ok|--fail]`: spaced review of memories (SPEC §5.4).

use crate::app::{Brain, Context};
use crate::error::{BrainError, BrainResult};
use crate::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The item reviewed (without it: list the items due)
    pub id: Option<String>,
    /// It is still right: review it again later
    #[arg(long, conflicts_with = "fail", requires = "id")]
    pub ok: bool,
    /// It is wrong or stale: review it again soon
    #[arg(long, requires = "id")]
    pub fail: bool,
    /// At most this many due items
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let mut out = Out::new();
    let Some(id) = args.id else {
        let due = brain.review_due(args.limit)?;
        if json {
            out.json(&due);
        } else if due.is_empty() {
            eprintln!("nothing is due for review");
        } else {
            for item in &due {
                out.line(super::item_line(item));
            }
            eprintln!("review one with `brain review ID --ok` or `--fail`");
        }
        // Items changed on two machines wait for a decision too (stderr: the list stays data).
        let conflicts = brain.store().read(|tx| tx.sync_conflicts())?;
        if !conflicts.is_empty() {
            eprintln!(
                "{} sync conflict(s) wait: `brain sync --status` shows both versions, \
                 `brain sync resolve ID --keep local|remote` settles one",
                conflicts.len()
            );
        }
        return Ok(());
    };
    if !args.ok && !args.fail {
        return Err(BrainError::user_with_hint("say how the review went", "brain review ID --ok (or --fail)"));
    }
    let item = brain.review(&id, args.ok)?;
    if json {
        out.json(&item);
    } else {
        let due = item.review_due_at.map(brain_core::time::format_timestamp).unwrap_or_default();
        out.line(format!("{} reviewed; next review {due}", item.id));
    }
    Ok(())
}
