//! Response shapes shared by the CLI's `--json`, the HTTP API and MCP, so every adapter
//! prints the same fields for the same data.

use brain_core::{Kind, Status};
use brain_store::SearchHit;
use serde::Serialize;

/// One search result: the item's identity, its score and the first line of its content.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchResult {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    pub scope: String,
    pub status: Status,
    /// BM25-based score, rounded to 3 decimals.
    pub score: f64,
    pub snippet: String,
}

impl SearchResult {
    pub fn from_hit(hit: &SearchHit) -> SearchResult {
        SearchResult {
            id: hit.item.id.clone(),
            title: hit.item.title.clone(),
            kind: hit.item.kind,
            scope: hit.item.scope.to_string(),
            status: hit.item.status,
            score: (hit.score * 1000.0).round() / 1000.0,
            snippet: snippet(&hit.item.content),
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
