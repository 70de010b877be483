//! `brain review [ID --ok|--fail]`: spaced review of memories (SPEC §5.4); `--drafts` lists
//! the drafts waiting for approval (agents' writes under `write_policy = "draft"`, `brain
//! enrich`'s proposals), newest first.

use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

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
    /// List the drafts waiting for approval instead (`brain approve ID` / `brain forget ID`)
    #[arg(long, conflicts_with_all = ["id", "ok", "fail"])]
    pub drafts: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let mut out = Out::new();
    if args.drafts {
        let drafts = brain.list(&brain_store::ItemFilter {
            scopes: Some(brain.visible_scopes()),
            statuses: vec![brain_core::Status::Draft],
            limit: Some(args.limit),
            ..brain_store::ItemFilter::default()
        })?;
        if json {
            out.json(&drafts);
        } else if drafts.is_empty() {
            eprintln!("no draft waits for approval");
        } else {
            for item in &drafts {
                out.line(super::item_line(item));
                let evidence: Vec<&str> = item.evidence.iter().chain(item.files.iter()).map(String::as_str).collect();
                if !evidence.is_empty() {
                    out.line(format!("    evidence: {}", evidence.join(", ")));
                }
            }
            eprintln!("approve one with `brain approve ID`, drop it with `brain forget ID`");
        }
        return Ok(());
    }
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
        let drafts = brain.count(&brain_store::ItemFilter {
            scopes: Some(brain.visible_scopes()),
            statuses: vec![brain_core::Status::Draft],
            ..brain_store::ItemFilter::default()
        })?;
        if drafts > 0 {
            eprintln!("{drafts} draft(s) wait for approval: `brain review --drafts`");
        }
        // Items changed on two machines wait for a decision too (stderr: the list stays data).
        let conflicts = brain.sync_conflicts()?;
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
