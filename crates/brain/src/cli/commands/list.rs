//! `brain list`: items newest first, filtered.

use brain_core::{Kind, Scope, Status};
use brain_store::ItemFilter;

use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

/// Filters shared by `list`, `search` and `export`.
#[derive(Debug, Default, clap::Args)]
pub struct FilterArgs {
    /// Only this scope (repeatable) [default: global and the current project]
    #[arg(long = "scope")]
    pub scopes: Vec<String>,
    /// Every scope
    #[arg(long, conflicts_with = "scopes")]
    pub all_scopes: bool,
    /// Only this kind (repeatable)
    #[arg(long = "kind")]
    pub kinds: Vec<String>,
    /// Only this status (repeatable)
    #[arg(long = "status")]
    pub statuses: Vec<String>,
    /// Only items with this tag (repeatable: all must match)
    #[arg(long = "tag")]
    pub tags: Vec<String>,
}

impl FilterArgs {
    /// The store filter; `default_statuses` applies when no --status is given.
    pub fn to_filter(&self, brain: &Brain, default_statuses: &[Status]) -> BrainResult<ItemFilter> {
        let scopes = if self.all_scopes {
            None
        } else if self.scopes.is_empty() {
            Some(brain.visible_scopes())
        } else {
            Some(self.scopes.iter().map(|s| Scope::parse(s).map_err(BrainError::user)).collect::<Result<_, _>>()?)
        };
        let kinds = self.kinds.iter().map(|k| k.parse::<Kind>().map_err(BrainError::user)).collect::<Result<_, _>>()?;
        let mut statuses: Vec<Status> =
            self.statuses.iter().map(|s| s.parse::<Status>().map_err(BrainError::user)).collect::<Result<_, _>>()?;
        if statuses.is_empty() {
            statuses = default_statuses.to_vec();
        }
        let tags = brain_core::item::normalize_tags(&self.tags);
        Ok(ItemFilter { scopes, kinds, statuses, tags, ..ItemFilter::default() })
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// At most this many items (1 to 1000)
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Skip this many items (pagination)
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    if !(1..=1000).contains(&args.limit) {
        return Err(BrainError::user(format!("--limit {} is out of range (1 to 1000)", args.limit)));
    }
    let brain = Brain::open(context)?;
    let mut filter = args.filter.to_filter(&brain, &[])?;
    filter.limit = Some(args.limit);
    filter.offset = args.offset;
    let items = brain.list(&filter)?;
    let mut out = Out::new();
    if json {
        out.json(&items);
        return Ok(());
    }
    if items.is_empty() {
        eprintln!("no items (try --all-scopes, or add one with `brain remember`)");
    }
    for item in &items {
        out.line(super::item_line(item));
    }
    if items.len() == args.limit {
        eprintln!("(more may follow: --offset {})", args.offset + args.limit);
    }
    Ok(())
}
