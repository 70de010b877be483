//! Tests of the assembler: small inline fixtures, inline snapshots through one `check`
//! helper per output (document + budget report + overflow + layers).

mod brain;
mod claude_md;
mod engine;
mod layers;
mod lean;
mod never_over_budget;

use std::fmt::Write;

use expect_test::Expect;

use super::{BrainDocument, BrainOptions, Feed, brain_document};
use crate::item::{Item, Kind, Severity, Status};
use crate::scope::Scope;
use crate::time::Timestamp;
use crate::tokens::TokenCounter;

/// The fixed "now" of every test.
pub(super) fn now() -> Timestamp {
    "2026-11-21T10:00:00Z".parse().unwrap()
}

/// An approved item updated `1` day ago with importance 3, confidence 0.8, no content.
pub(super) fn item(id: &str, kind: Kind, title: &str) -> Item {
    let updated_at = now() - jiff::SignedDuration::from_hours(24);
    let (strength, decay_rate) = kind.default_strength();
    Item {
        id: id.to_string(),
        scope: Scope::Project("demo".into()),
        kind,
        schema_key: kind.default_schema_key(),
        title: title.to_string(),
        content: String::new(),
        rationale: None,
        confidence: 0.8,
        importance: 3,
        status: Status::Approved,
        severity: None,
        pinned: false,
        pin_priority: 0,
        stable: false,
        strength,
        decay_rate,
        tags: Vec::new(),
        files: Vec::new(),
        evidence: Vec::new(),
        dedup_hint: None,
        supersedes: None,
        superseded_by: None,
        valid_from: None,
        valid_until: None,
        source: "cli".into(),
        created_at: updated_at,
        updated_at,
        last_accessed_at: None,
        access_count: 0,
        review_due_at: None,
        review_count: 0,
        tokens: 0,
        version: 1,
    }
}

/// Fluent edits of a fixture item.
pub(super) trait Edit {
    fn age(self, days: f64) -> Item;
    fn importance(self, importance: u8) -> Item;
    fn confidence(self, confidence: f32) -> Item;
    fn tags(self, tags: &[&str]) -> Item;
    fn status(self, status: Status) -> Item;
    fn content(self, content: &str) -> Item;
    fn hint(self, hint: &str) -> Item;
    fn files(self, files: &[&str]) -> Item;
    fn key(self, schema_key: &str) -> Item;
    fn expired(self) -> Item;
    fn rationale(self, rationale: &str) -> Item;
    fn severity(self, severity: Severity) -> Item;
}

impl Edit for Item {
    fn age(mut self, days: f64) -> Item {
        self.updated_at = now() - jiff::SignedDuration::from_secs((days * 86_400.0) as i64);
        self.created_at = self.updated_at;
        self
    }
    fn importance(mut self, importance: u8) -> Item {
        self.importance = importance;
        self
    }
    fn confidence(mut self, confidence: f32) -> Item {
        self.confidence = confidence;
        self
    }
    fn tags(mut self, tags: &[&str]) -> Item {
        self.tags = tags.iter().map(|tag| tag.to_string()).collect();
        self
    }
    fn status(mut self, status: Status) -> Item {
        self.status = status;
        self
    }
    fn content(mut self, content: &str) -> Item {
        self.content = content.to_string();
        self
    }
    fn hint(mut self, hint: &str) -> Item {
        self.dedup_hint = Some(hint.to_string());
        self
    }
    fn files(mut self, files: &[&str]) -> Item {
        self.files = files.iter().map(|file| file.to_string()).collect();
        self
    }
    fn key(mut self, schema_key: &str) -> Item {
        self.schema_key = schema_key.to_string();
        self
    }
    fn expired(mut self) -> Item {
        self.valid_until = Some(now() - jiff::SignedDuration::from_hours(1));
        self
    }
    fn rationale(mut self, rationale: &str) -> Item {
        self.rationale = Some(rationale.to_string());
        self
    }
    fn severity(mut self, severity: Severity) -> Item {
        self.severity = Some(severity);
        self
    }
}

/// Renders a brain document for a snapshot: the document, then the budget report, the
/// overflow list and the layer membership.
pub(super) fn render(doc: &BrainDocument) -> String {
    let mut out = doc.document.clone();
    let _ = writeln!(out, "==== budget {}/{} (tokenEstimate {})", doc.budget.used, doc.budget.cap, doc.token_estimate);
    for row in &doc.budget.sections {
        let _ = writeln!(out, "{}: {}/{} +{} -{}", row.name, row.used, row.cap, row.included, row.excluded);
    }
    if !doc.overflow.is_empty() {
        let _ = writeln!(out, "==== overflow");
        for row in &doc.overflow {
            let label = row.id.as_deref().or(row.name.as_deref()).unwrap_or("?");
            let _ = writeln!(out, "{label} [{}] {}", row.section, row.reason);
        }
    }
    let layers = &doc.layers;
    let _ = writeln!(
        out,
        "==== layers: L0 {}t | L1 {}t {:?} | L2 {}t {:?} | archived {} {:?}",
        layers.layer0.tokens,
        layers.layer1.tokens,
        layers.layer1.items,
        layers.layer2.tokens,
        layers.layer2.items,
        layers.archived.count,
        layers.archived.items
    );
    out
}

/// Assembles `items` with `options` and `feed` under the heuristic counter and compares
/// the rendering with the snapshot.
pub(super) fn check_with(items: &[Item], options: &BrainOptions, feed: &Feed, expect: Expect) {
    let doc = brain_document(items, now(), &TokenCounter::Heuristic, options, feed);
    assert!(doc.token_estimate <= options.token_budget);
    assert_eq!(TokenCounter::Heuristic.count(&doc.document), doc.token_estimate);
    expect.assert_eq(&render(&doc));
}

/// [`check_with`] with default options and no feed.
pub(super) fn check(items: &[Item], expect: Expect) {
    check_with(items, &BrainOptions::default(), &Feed::default(), expect);
}
