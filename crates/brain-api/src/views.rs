//! Response shapes shared by the CLI's `--json`, the HTTP API and MCP, so every adapter
//! prints the same fields for the same data.

use brain_core::{Kind, Status};
use brain_store::ItemFilter;

use crate::search::Hit;
use serde::Serialize;

use crate::app::Brain;
use crate::error::BrainResult;

/// One page of search results and the offset of the next page, if there is one.
#[derive(Clone, Debug)]
pub struct SearchPage {
    pub results: Vec<SearchResult>,
    pub next_offset: Option<usize>,
}

/// Searches `filter` for `query`, one page of `limit` results from `offset` (reading one
/// extra row tells whether another page exists). The CLI, HTTP and MCP page through this.
pub fn search_page(
    brain: &Brain,
    query: &str,
    filter: ItemFilter,
    limit: usize,
    offset: usize,
) -> BrainResult<SearchPage> {
    search_page_in(brain, query, filter, limit, offset, None)
}

/// `search_page` in a given mode (`None`: the configured one).
pub fn search_page_in(
    brain: &Brain,
    query: &str,
    mut filter: ItemFilter,
    limit: usize,
    offset: usize,
    mode: Option<crate::search::Mode>,
) -> BrainResult<SearchPage> {
    filter.limit = Some(limit + 1);
    filter.offset = offset;
    let mut hits = brain.search_in(query, &filter, mode)?;
    let more = hits.len() > limit;
    hits.truncate(limit);
    Ok(SearchPage {
        results: hits.iter().map(SearchResult::from_hit).collect(),
        next_offset: more.then_some(offset + limit),
    })
}

/// One search result: the item's identity, its score and the first line of its content.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchResult {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    pub scope: String,
    pub status: Status,
    /// The search score (`crate::search::Hit::score`), rounded to 3 decimals.
    pub score: f64,
    pub snippet: String,
    /// Which query words matched in which fields (and a matching date).
    #[serde(default)]
    pub why: String,
}

impl SearchResult {
    pub fn from_hit(hit: &Hit) -> SearchResult {
        SearchResult {
            id: hit.item.id.clone(),
            title: hit.item.title.clone(),
            kind: hit.item.kind,
            scope: hit.item.scope.to_string(),
            status: hit.item.status,
            score: (hit.score * 1000.0).round() / 1000.0,
            snippet: snippet(&hit.item.content),
            why: hit.why.clone(),
        }
    }
}

/// The first non-empty line of `content`, at most 120 characters (an ellipsis marks a cut).
pub fn snippet(content: &str) -> String {
    let line = content.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let mut text: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_take_the_first_non_empty_line_and_mark_cuts() {
        assert_eq!(snippet("\n\n  first line  \nsecond"), "first line");
        assert_eq!(snippet(""), "");
        let long = "é".repeat(130);
        let cut = snippet(&long);
        assert_eq!(cut.chars().count(), 121);
        assert!(cut.ends_with('…'));
    }
}
