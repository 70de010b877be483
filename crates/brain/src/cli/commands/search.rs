//! `brain search QUERY`: ranked search over title, content, tags, files and schema key
//! (`brain_api::search`), each result with why it matched.

use brain_core::Status;
use serde::Serialize;

use crate::cli::commands::list::FilterArgs;
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;
use brain_api::views::SearchResult;
use brain_remote::remote::RemoteBrain;

pub use brain_api::search::MAX_LIMIT;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Words to search for
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Results per page (1 to 100)
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Skip this many results (the `next_offset` of the previous page)
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// lexical, hybrid or semantic (default: `[search] mode`, lexical); hybrid and semantic
    /// need `[embed]` and `brain embed`, and fall back to lexical saying why
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
}

/// One page of results: the JSON of `brain search --json` (a remote page is converted to it).
#[derive(Debug, Serialize)]
struct SearchPage {
    query: String,
    results: Vec<SearchResult>,
    next_offset: Option<usize>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    check_limit(&args)?;
    // This process embeds its query and exits: a local model reads only what it needs.
    brain_api::embed::one_shot_process();
    let brain = Brain::open(context)?;
    let query = args.query.join(" ");
    let filter = args.filter.to_filter(&brain, &[Status::Approved])?;
    let mode = args.mode.as_deref().map(brain_api::search::Mode::parse).transpose()?;
    let found = brain_api::views::search_page_in(&brain, &query, filter, args.limit, args.offset, mode)?;
    let page = SearchPage { next_offset: found.next_offset, results: found.results, query };
    render(&page, args.offset, json);
    Ok(())
}

/// The same search against a `brain serve` (`--remote`): the query, --limit and --offset
/// (the server searches the project's and the global scope, approved items).
pub fn run_remote(remote: &RemoteBrain, args: Args, json: bool) -> BrainResult<()> {
    check_limit(&args)?;
    let filter = &args.filter;
    let given: Vec<&str> = [
        ("--scope", !filter.scopes.is_empty()),
        ("--all-scopes", filter.all_scopes),
        ("--kind", !filter.kinds.is_empty()),
        ("--status", !filter.statuses.is_empty()),
        ("--tag", !filter.tags.is_empty()),
        ("--mode", args.mode.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, set)| set.then_some(flag))
    .collect();
    if !given.is_empty() {
        return Err(BrainError::user_with_hint(
            format!(
                "`brain search` with --remote takes only the query, --limit and --offset (not {})",
                given.join(", ")
            ),
            "drop the filter flags, or search the local store without --remote / BRAIN_URL",
        ));
    }
    let remote_page = remote.search(&args.query.join(" "), args.limit, args.offset)?;
    let page =
        SearchPage { query: remote_page.query, results: remote_page.results, next_offset: remote_page.next_offset };
    render(&page, args.offset, json);
    Ok(())
}

fn check_limit(args: &Args) -> BrainResult<()> {
    if !(1..=MAX_LIMIT).contains(&args.limit) {
        return Err(BrainError::user(format!("--limit {} is out of range (1 to {MAX_LIMIT})", args.limit)));
    }
    Ok(())
}

/// The page as JSON, or ranked lines on stdout with notes on stderr.
fn render(page: &SearchPage, offset: usize, json: bool) {
    let mut out = Out::new();
    if json {
        out.json(page);
        return;
    }
    if page.results.is_empty() {
        eprintln!("no results for {:?}", page.query);
    }
    for (rank, result) in page.results.iter().enumerate() {
        out.line(format!(
            "{:>3}. [{}] {}  ({}, score {:.2})",
            offset + rank + 1,
            result.kind,
            result.title,
            result.id,
            result.score
        ));
        if !result.snippet.is_empty() {
            out.line(format!("     {}", result.snippet));
        }
        if !result.why.is_empty() {
            out.line(format!("     ({})", result.why));
        }
    }
    if let Some(next) = page.next_offset {
        eprintln!("(more: --offset {next})");
    }
}
