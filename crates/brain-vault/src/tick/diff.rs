//! `last-tick-diff.md`: what the tick changed, in capped sections.

use super::*;

pub(crate) struct DiffInput<'a> {
    pub(crate) promotions: &'a [ArcMove],
    pub(crate) demotions: &'a [ArcMove],
    pub(crate) graduations: &'a [Graduation],
    pub(crate) inbox: &'a [InboxMove],
    pub(crate) heat_changes: &'a [HeatChange],
    pub(crate) tombstones: &'a [Tombstone],
    pub(crate) active: &'a [ActiveSignal<'a>],
    pub(crate) previous_ids: Option<&'a HashSet<&'a str>>,
    pub(crate) health: &'a HealthLine,
    pub(crate) skipped: &'a [Skipped],
    pub(crate) dry_run: bool,
}

/// At most this many lines per section of `last-tick-diff.md`.
pub(crate) const DIFF_LINES: usize = 20;

pub(crate) fn capped(mut lines: Vec<String>) -> Vec<String> {
    if lines.len() > DIFF_LINES {
        let more = lines.len() - DIFF_LINES;
        lines.truncate(DIFF_LINES);
        lines.push(format!("… and {more} more"));
    }
    lines
}

pub(crate) fn diff_sections(input: DiffInput<'_>) -> Vec<(String, Vec<String>)> {
    let moves = |list: &[ArcMove], to: &str| {
        capped(
            list.iter()
                .map(|m| format!("{} ({}) → {to}, heat {}", clip(&redacted(&m.title), 80), m.cluster_id, m.heat))
                .collect(),
        )
    };
    let mut signals = vec![format!(
        "{} active ({} critical or nuclear)",
        input.active.len(),
        input
            .active
            .iter()
            .filter(|s| matches!(s.severity, brain_core::Severity::Critical | brain_core::Severity::Nuclear))
            .count()
    )];
    if let Some(previous) = input.previous_ids {
        let new: Vec<String> = input
            .active
            .iter()
            .filter(|s| !previous.contains(s.signal.id.as_str()))
            .map(|s| {
                format!(
                    "new: [{}] ({}) {}",
                    s.severity,
                    redacted(s.signal.source.as_deref().unwrap_or("unknown")),
                    clip(&one_line(&redacted(&s.signal.text)), 120)
                )
            })
            .collect();
        signals.extend(capped(new));
    }
    signals.extend(capped(
        input
            .tombstones
            .iter()
            .map(|t| format!("cleared, block removed from {}: {}", t.file, clip(&redacted(&t.text), 120)))
            .collect(),
    ));
    let mut heat = vec![format!("{} arcs changed heat", input.heat_changes.len())];
    heat.extend(capped(
        input
            .heat_changes
            .iter()
            .map(|c| format!("{}: {} → {}", c.cluster_id, c.from.map_or("none".to_string(), |h| h.to_string()), c.to))
            .collect(),
    ));
    let mut sections = vec![
        ("Promotions".to_string(), moves(input.promotions, "frontal-lobe/conscious")),
        ("Demotions".to_string(), moves(input.demotions, "frontal-lobe/unconscious")),
        (
            "Graduations".to_string(),
            capped(input.graduations.iter().map(|g| format!("{}: {} → {}", g.cluster_id, g.from, g.to)).collect()),
        ),
        ("Inbox".to_string(), capped(input.inbox.iter().map(|m| format!("{} → {}", m.from, m.to)).collect())),
        ("Heat".to_string(), heat),
        ("Signals".to_string(), signals),
        (
            "Edges".to_string(),
            vec![format!(
                "{} edges; {} orphan arcs of {}; {} duplicates",
                input.health.edges, input.health.orphans, input.health.arcs, input.health.duplicates
            )],
        ),
        (
            "Merges".to_string(),
            vec!["none in phase 1: merges come from the AI phases (see AI below when they ran)".into()],
        ),
    ];
    if !input.skipped.is_empty() {
        sections.push((
            "Skipped".to_string(),
            capped(input.skipped.iter().map(|s| format!("{}: {}", s.path, s.reason)).collect()),
        ));
    }
    if input.dry_run {
        sections.insert(0, ("Dry run".to_string(), vec!["planned changes; nothing was written".into()]));
    }
    sections
}
