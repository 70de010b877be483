//! `brain search QUERY`: BM25 over title, content, tags, files and schema key.

use brain_core::Status;
use serde::Serialize;

use crate::app::{Brain, Context};
use crate::cli::commands::list::FilterArgs;
use crate::error::{BrainError, BrainResult};
use crate::output::Out;

/// Most results one page may hold (SPEC §5: bounded in every interface).
pub const MAX_LIMIT: usize = 100;

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
}

#[derive(Serialize)]
struct SearchPage<'a> {
    query: &'a str,
    results: Vec<SearchResult<'a>>,
    next_offset: Option<usize>,
}

#[derive(Serialize)]
struct SearchResult<'a> {
    id: &'a str,
    title: &'a str,
    kind: brain_core::Kind,
    scope: String,
    status: Status,
    score: f64,
    snippet: String,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    if !(1..=MAX_LIMIT).contains(&args.limit) {
        return Err(BrainError::user(format!("--limit {} is out of range (1 to {MAX_LIMIT})", args.limit)));
    }
    let brain = Brain::open(context)?;
    let query = args.query.join(" ");
    let mut filter = args.filter.to_filter(&brain, &[Status::Approved])?;
    // One extra row tells whether another page exists.
    filter.limit = Some(args.limit + 1);
    filter.offset = args.offset;
    let mut hits = brain.search(&query, &filter)?;
    let more = hits.len() > args.limit;
    hits.truncate(args.limit);
    let page = SearchPage {
        query: &query,
        next_offset: more.then_some(args.offset + args.limit),
        results: hits
            .iter()
            .map(|hit| SearchResult {
                id: &hit.item.id,
                title: &hit.item.title,
                kind: hit.item.kind,
                scope: hit.item.scope.to_string(),
                status: hit.item.status,
                score: (hit.score * 1000.0).round() / 1000.0,
                snippet: snippet(&hit.item.content),
            })
            .collect(),
    };
    let mut out = Out::new();
    if json {
        out.json(&page);
        return Ok(());
    }
    if page.results.is_empty() {
        eprintln!("no results for {query:?}");
    }
    for (rank, result) in page.results.iter().enumerate() {
        out.line(format!(
            "{:>3}. [{}] {}  ({}, score {:.2})",
            args.offset + rank + 1,
            result.kind,
            result.title,
            result.id,
            result.score
        ));
        if !result.snippet.is_empty() {
            out.line(format!("     {}", result.snippet));
        }
    }
    if let Some(next) = page.next_offset {
        eprintln!("(more: --offset {next})");
    }
    Ok(())
}

/// The first line of content, at most 120 characters.
fn snippet(content: &str) -> String {
    let line = content.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let mut text: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        text.push('…');
    }
    text
}
