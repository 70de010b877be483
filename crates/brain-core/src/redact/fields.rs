//! Redaction of every free-text field of an item: the one function the application's write
//! gate and the vault's derivation both call, so no field is forgotten on one path.

use std::borrow::Cow;

use super::redact_str;
use crate::item::Item;

/// What a tag or a schema-key segment that held a secret becomes: their syntax
/// (lowercase, digits, `-`) cannot carry a `[REDACTED:<kind>]` marker.
pub const REDACTED_WORD: &str = "redacted";

/// Redacts every free-text field of `item` in place and returns how many fields changed.
///
/// - `title`, `content`, `rationale`, `source` and each entry of `files` and `evidence`:
///   redacted as text (`[REDACTED:<kind>]`, `<private>` blocks dropped).
/// - `dedup_hint` (`category:topic:key`): redacted as text, its markers written
///   `[REDACTED-<kind>]` so the hint keeps its three `:`-separated parts.
/// - each tag and each `/`-separated segment of `schema_key`: one that held a secret becomes
///   `redacted` (tags are then deduplicated).
///
/// Ids, the scope, timestamps, numbers and the closed sets (kind, status, severity) are
/// validated against their syntax elsewhere and cannot hold free text.
pub fn redact_item(item: &mut Item) -> usize {
    let mut changed = 0;
    let mut scrub = |text: &mut String| {
        if let Cow::Owned(clean) = redact_str(text) {
            *text = clean;
            changed += 1;
        }
    };
    scrub(&mut item.title);
    scrub(&mut item.content);
    if let Some(rationale) = item.rationale.as_mut() {
        scrub(rationale);
    }
    scrub(&mut item.source);
    for value in item.files.iter_mut().chain(item.evidence.iter_mut()) {
        scrub(value);
    }
    if let Some(hint) = item.dedup_hint.as_mut() {
        // Read with its markers as the redactor writes them, so a marker from an earlier
        // pass counts as redacted (not as a value after a label such as `--user`): redacting
        // twice equals once.
        let marked = hint.replace("[REDACTED-", "[REDACTED:");
        if let Cow::Owned(clean) = redact_str(&marked) {
            let clean = clean.replace("[REDACTED:", "[REDACTED-");
            if clean != *hint {
                *hint = clean;
                changed += 1;
            }
        }
    }
    if item.tags.iter().any(|tag| holds_secret(tag)) {
        let mut tags: Vec<String> = Vec::with_capacity(item.tags.len());
        for tag in &item.tags {
            let tag = if holds_secret(tag) { REDACTED_WORD.to_string() } else { tag.clone() };
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        item.tags = tags;
        changed += 1;
    }
    if item.schema_key.split('/').any(holds_secret) {
        item.schema_key = item
            .schema_key
            .split('/')
            .map(|segment| if holds_secret(segment) { REDACTED_WORD } else { segment })
            .collect::<Vec<_>>()
            .join("/");
        changed += 1;
    }
    changed
}

fn holds_secret(text: &str) -> bool {
    matches!(redact_str(text), Cow::Owned(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::{Kind, Status};
    use crate::{Scope, Timestamp};

    fn item() -> Item {
        let now: Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
        Item {
            id: "mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T".into(),
            scope: Scope::Global,
            kind: Kind::Note,
            schema_key: "root/notes".into(),
            title: "t".into(),
            content: "c".into(),
            rationale: None,
            confidence: 0.7,
            importance: 3,
            status: Status::Approved,
            severity: None,
            pinned: false,
            pin_priority: 0,
            stable: false,
            strength: 1.0,
            decay_rate: 0.1,
            tags: vec![],
            files: vec![],
            evidence: vec![],
            dedup_hint: None,
            supersedes: None,
            superseded_by: None,
            valid_from: None,
            valid_until: None,
            source: "cli".into(),
            created_at: now,
            updated_at: now,
            last_accessed_at: None,
            access_count: 0,
            review_due_at: None,
            review_count: 0,
            tokens: 0,
            version: 1,
        }
    }

    const KEY: &str = "AKIAIOSFODNN7EXAMPLE";
    const GITLAB: &str = "glpat-example0example1exam";

    #[test]
    fn every_free_text_field_is_redacted_and_the_item_stays_valid() {
        let mut item = item();
        item.title = format!("key {KEY}");
        item.content = format!("content {KEY}");
        item.rationale = Some(format!("why {KEY}"));
        item.source = format!("import:{KEY}");
        item.files = vec![format!("src/{KEY}.rs")];
        item.evidence = vec![format!("https://x.example/?k={KEY}")];
        item.dedup_hint = Some(format!("aws:credentials:{KEY}"));
        item.tags = vec!["aws".into(), GITLAB.into(), "glpat-other0example1example".into()];
        item.schema_key = format!("root/{GITLAB}/x");
        assert_eq!(redact_item(&mut item), 9);
        let text = serde_json::to_string(&item).unwrap();
        assert!(!text.contains(KEY) && !text.contains("glpat-"), "{text}");
        assert_eq!(item.dedup_hint.as_deref(), Some("aws:credentials:[REDACTED-aws-access-key]"));
        assert_eq!(item.tags, ["aws", "redacted"]);
        assert_eq!(item.schema_key, "root/redacted/x");
        assert_eq!(item.title, "key [REDACTED:aws-access-key]");
        item.validate().unwrap();
        // Idempotent: a second pass finds nothing.
        assert_eq!(redact_item(&mut item), 0);
    }

    #[test]
    fn a_clean_item_is_left_alone() {
        let mut clean = item();
        clean.tags = vec!["deploy".into(), "blue-green".into()];
        clean.dedup_hint = Some("deploy:strategy:blue-green".into());
        let before = clean.clone();
        assert_eq!(redact_item(&mut clean), 0);
        assert_eq!(clean, before);
    }

    /// Found by fuzzing (`import_line`): a hint whose secret follows a label was redacted
    /// again on a second pass, because its `[REDACTED-…]` marker read as the label's value.
    #[test]
    fn a_redacted_dedup_hint_is_left_alone_by_a_second_pass() {
        let mut once = item();
        once.dedup_hint = Some("gh:tok --user enJn:AKIAIOSFODNN4EXAMPLE".into());
        assert_eq!(redact_item(&mut once), 1);
        let hint = once.dedup_hint.clone().unwrap();
        assert!(!hint.contains("AKIAIOSFODNN4EXAMPLE") && hint.contains("[REDACTED-"), "{hint}");
        let mut twice = once.clone();
        assert_eq!(redact_item(&mut twice), 0, "{:?}", twice.dedup_hint);
        assert_eq!(twice, once);
    }
}
