//! One file per subcommand; shared rendering of items for humans lives here.

pub mod brain;
pub mod brain_status;
pub mod capture;
pub mod cluster;
pub mod context;
pub mod doctor;
pub mod edit;
pub mod embed;
pub mod enrich;
pub mod export;
pub mod extract;
pub mod feedback;
pub mod forget;
pub mod hook;
pub mod hygiene;
pub mod import;
pub mod import_memory;
pub mod init;
pub mod inject;
pub mod list;
pub mod mark;
pub mod mcp;
pub mod migrate;
pub mod pin;
pub mod plugin;
pub mod project;
pub mod remember;
pub mod review;
pub mod search;
pub mod serve;
pub mod session_start;
pub mod setup;
pub mod show;
pub mod skill;
pub mod status;
pub mod supersede;
pub mod sync;
pub mod tick;
pub mod token;
pub mod vault;

use std::io::{IsTerminal, Read};

use brain_core::Item;
use brain_core::time::format_timestamp;

use brain_api::error::{BrainError, BrainResult};

/// One line per item for lists: id, kind, status, importance, confidence, scope, title.
pub fn item_line(item: &Item) -> String {
    let pin = if item.pinned { "*" } else { " " };
    format!(
        "{}{} {:<14} {:<10} i{} c{:.2} {:<20} {}",
        pin, item.id, item.kind, item.status, item.importance, item.confidence, item.scope, item.title
    )
}

/// Every field of an item, for `show`.
pub fn item_detail(item: &Item) -> String {
    let mut out = String::new();
    let mut field = |name: &str, value: String| {
        if !value.is_empty() {
            out.push_str(&format!("{name:<15}{value}\n"));
        }
    };
    let list = |values: &[String]| values.join(", ");
    let time = |value: Option<jiff::Timestamp>| value.map(format_timestamp).unwrap_or_default();
    field("id", item.id.clone());
    field("title", item.title.clone());
    field("kind", item.kind.to_string());
    field("status", item.status.to_string());
    field("scope", item.scope.to_string());
    field("schema_key", item.schema_key.clone());
    field("importance", item.importance.to_string());
    field("confidence", format!("{:.2}", item.confidence));
    field("severity", item.severity.map(|s| s.to_string()).unwrap_or_default());
    field("pinned", if item.pinned { format!("yes (priority {})", item.pin_priority) } else { String::new() });
    field("stable", if item.stable { "yes".into() } else { String::new() });
    field("strength", format!("{:.3} (decay {:.3}/day)", item.strength, item.decay_rate));
    field("tags", list(&item.tags));
    field("files", list(&item.files));
    field("evidence", list(&item.evidence));
    field("dedup_hint", item.dedup_hint.clone().unwrap_or_default());
    field("supersedes", item.supersedes.clone().unwrap_or_default());
    field("superseded_by", item.superseded_by.clone().unwrap_or_default());
    field("valid_from", time(item.valid_from));
    field("valid_until", time(item.valid_until));
    field("source", item.source.clone());
    field("created_at", format_timestamp(item.created_at));
    field("updated_at", format_timestamp(item.updated_at));
    field("last_accessed", time(item.last_accessed_at));
    field("access_count", item.access_count.to_string());
    field("review_due_at", time(item.review_due_at));
    field("tokens", item.tokens.to_string());
    field("version", item.version.to_string());
    if let Some(rationale) = &item.rationale {
        out.push_str(&format!("\nwhy:\n{rationale}\n"));
    }
    if !item.content.is_empty() {
        out.push_str(&format!("\n{}\n", item.content));
    }
    out
}

/// Reads all of stdin as UTF-8 text; non-UTF-8 input is a user error, not mojibake.
pub fn read_stdin() -> BrainResult<String> {
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes).map_err(|err| BrainError::user(format!("cannot read stdin: {err}")))?;
    String::from_utf8(bytes).map_err(|err| {
        BrainError::user(format!(
            "stdin is not valid UTF-8 (invalid byte at offset {})",
            err.utf8_error().valid_up_to()
        ))
    })
}

/// True when stdin is piped or redirected (so there may be content to read).
pub fn stdin_is_piped() -> bool {
    !std::io::stdin().is_terminal()
}
