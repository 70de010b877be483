//! The vault feed as an assembler input: hot arcs, active signals and inject blocks
//! (SPEC §4.1 feed section, §6.4). The vault parser and the tick produce these; here they
//! are plain data.

use serde::{Deserialize, Serialize};

use super::engine::{Entry, Group, Label, Order, Section};
use super::render::{clip, inert, one_line, push_inline_then_indented};
use crate::item::Severity;

/// What the vault contributes to assembled context. May be empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Feed {
    pub hot_arcs: Vec<HotArc>,
    pub signals: Vec<FeedSignal>,
    pub injects: Vec<InjectBlock>,
}

/// An arc with its heat (SPEC §2.2, §6.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotArc {
    pub id: String,
    pub title: String,
    pub heat: u8,
    pub region: String,
    pub status: String,
}

/// An active signal (SPEC §2.3, §6.5). `resolved` signals are never shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeedSignal {
    pub id: String,
    pub severity: Severity,
    pub source: String,
    pub text: String,
}

/// An `@inject` block for a target file (SPEC §2.3, §4.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InjectBlock {
    /// The vault-derived id, or empty.
    #[serde(default)]
    pub id: String,
    /// The target file name as written in the marker (`claude.md`, `AGENTS.md`, …).
    pub target: String,
    pub content: String,
}

impl InjectBlock {
    /// True when the block is meant for `file_name` (case-insensitive, so `claude.md`
    /// matches `CLAUDE.md`).
    pub fn targets(&self, file_name: &str) -> bool {
        self.target.trim().eq_ignore_ascii_case(file_name.trim())
    }

    fn label(&self) -> Label<'_> {
        if self.id.is_empty() { Label::Name(&self.target) } else { Label::Id(&self.id) }
    }
}

/// Most urgent first; `None` for resolved (never shown).
fn severity_rank(severity: Severity) -> Option<u8> {
    match severity {
        Severity::Nuclear => Some(0),
        Severity::Critical => Some(1),
        Severity::Warning => Some(2),
        Severity::Info => Some(3),
        Severity::Resolved => None,
    }
}

#[derive(Clone, Copy, Debug)]
enum FeedEntry {
    Signal(usize),
    Arc(usize),
    Inject(usize),
}

/// The feed section: selection order critical/nuclear signals, hot arcs (heat desc),
/// other signals, inject blocks; shown grouped as Active Signals, Hot Arcs, Inject Blocks.
pub(crate) fn feed_section<'a>(name: &str, cap: usize, feed: &'a Feed, marker: &'static str) -> Section<'a> {
    let mut signals: Vec<(u8, usize)> = feed
        .signals
        .iter()
        .enumerate()
        .filter_map(|(index, signal)| severity_rank(signal.severity).map(|rank| (rank, index)))
        .collect();
    signals.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| feed.signals[a.1].id.cmp(&feed.signals[b.1].id)));
    let mut arcs: Vec<usize> = (0..feed.hot_arcs.len()).collect();
    arcs.sort_by(|&a, &b| {
        let (a, b) = (&feed.hot_arcs[a], &feed.hot_arcs[b]);
        b.heat.cmp(&a.heat).then_with(|| a.id.cmp(&b.id))
    });

    let mut order: Vec<FeedEntry> = Vec::new();
    order.extend(signals.iter().filter(|(rank, _)| *rank <= 1).map(|&(_, index)| FeedEntry::Signal(index)));
    order.extend(arcs.iter().map(|&index| FeedEntry::Arc(index)));
    order.extend(signals.iter().filter(|(rank, _)| *rank > 1).map(|&(_, index)| FeedEntry::Signal(index)));
    order.extend((0..feed.injects.len()).map(FeedEntry::Inject));

    let entries = order
        .iter()
        .enumerate()
        .map(|(key, entry)| {
            let label = match *entry {
                FeedEntry::Signal(index) => Label::Id(&feed.signals[index].id),
                FeedEntry::Arc(index) => Label::Id(&feed.hot_arcs[index].id),
                FeedEntry::Inject(index) => feed.injects[index].label(),
            };
            Entry::new(label, key, 0.0)
        })
        .collect();
    let render_order = order.clone();
    let render = Box::new(move |key: usize| match render_order[key] {
        FeedEntry::Signal(index) => render_signal(&feed.signals[index]),
        FeedEntry::Arc(index) => render_arc(&feed.hot_arcs[index]),
        FeedEntry::Inject(index) => render_inject(&feed.injects[index]),
    });
    let group = Box::new(move |key: usize| match order[key] {
        FeedEntry::Signal(_) => Group { order: 0, heading: "### Active Signals".into() },
        FeedEntry::Arc(_) => Group { order: 1, heading: "### Hot Arcs".into() },
        FeedEntry::Inject(_) => Group { order: 2, heading: "### Inject Blocks".into() },
    });
    Section::entries(name, cap, entries, Order::AsGiven, render)
        .with_heading("## Vault Feed")
        .with_groups(group)
        .with_truncation(marker)
}

fn render_signal(signal: &FeedSignal) -> String {
    let mut out = format!("- **[{}]** ({})", signal.severity, one_line(&signal.source));
    push_inline_then_indented(&mut out, &signal.text);
    out
}

fn render_arc(arc: &HotArc) -> String {
    format!(
        "- **{}** (heat {}, {}, {})",
        inert(&clip(&one_line(&arc.title), 80)),
        arc.heat,
        one_line(&arc.region),
        one_line(&arc.status)
    )
}

pub(crate) fn render_inject(inject: &InjectBlock) -> String {
    let mut out = format!("- **[{}]**", one_line(&inject.target));
    push_inline_then_indented(&mut out, &inject.content);
    out
}
