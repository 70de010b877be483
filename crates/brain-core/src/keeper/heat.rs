//! Heat (SPEC §6.3) and the vault health score: plain arithmetic over indexed arcs, no IO.
//! (Candidates for `brain-core` once a second caller needs them.)

use crate::Timestamp;
use crate::time::age_days;

/// What the heat of one arc depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatInputs {
    /// `created:`, else the date in `cluster_id`, else the file's modification time.
    pub created: Timestamp,
    /// `signals.tools`.
    pub tools: u32,
    /// Number of `source_sessions`.
    pub sessions: u32,
    /// `signals.joy`.
    pub joy: u32,
    /// `status: active`.
    pub active: bool,
    /// Arcs created in the last 14 days that name this one in `replayed_from`.
    pub replays: u32,
}

/// Heat, 0 to 10 (SPEC §6.3): `+3` if created ≤ 24 h ago, else `+1` if ≤ 72 h;
/// `+min(4, 2 × floor(tools / 1000))`; `+min(3, sessions)`; `+1` if joy > 0; `+2` if active;
/// `+1` per replay; minus `floor((age_days − 7) / 4)` once older than 7 days; clamped.
/// `age_days` is fractional (an arc 10.5 days old loses `floor(0.875)` = 0).
pub fn heat(inputs: &HeatInputs, now: Timestamp) -> u8 {
    let age = age_days(inputs.created, now);
    let mut heat: i64 = 0;
    if age <= 1.0 {
        heat += 3;
    } else if age <= 3.0 {
        heat += 1;
    }
    heat += (2 * i64::from(inputs.tools / 1000)).min(4);
    heat += i64::from(inputs.sessions).min(3);
    if inputs.joy > 0 {
        heat += 1;
    }
    if inputs.active {
        heat += 2;
    }
    heat += i64::from(inputs.replays);
    if age > 7.0 {
        heat -= ((age - 7.0) / 4.0).floor() as i64;
    }
    heat.clamp(0, 10) as u8
}

/// The counts the health score is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HealthInputs {
    /// Arcs (one per `cluster_id`).
    pub arcs: usize,
    /// Arcs with a `summary:` or `synthesized: true`.
    pub covered: usize,
    /// Age in days of the newest arc.
    pub newest_age_days: Option<f64>,
    /// Arcs with no edge to or from another indexed arc.
    pub orphans: usize,
    /// Arcs whose title (case and spacing ignored) repeats an earlier arc's, plus extra files
    /// sharing one `cluster_id`.
    pub duplicates: usize,
}

/// A health score from 1 to 10 and the reason for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    pub score: u8,
    pub reason: String,
}

/// The health score, deterministic (SPEC §6.4, `health.jsonl`). Four components in 0..1:
///
/// - coverage = covered / arcs: how much of the vault is synthesized (has a summary);
/// - freshness = 1 when the newest arc is at most 1 day old, falling linearly to 0 at 14
///   days: is the brain still being fed;
/// - connectivity = 1 − orphans / arcs: arcs linked into the graph by edges;
/// - uniqueness = 1 − duplicates / arcs: no arc told twice;
///
/// `score = round(1 + 9 × (0.3·coverage + 0.2·freshness + 0.3·connectivity + 0.2·uniqueness))`,
/// clamped to 1..10. An empty vault scores 1. The reason names the components below 0.7,
/// worst first, or says all are fine.
pub fn health(inputs: &HealthInputs) -> Health {
    if inputs.arcs == 0 {
        return Health { score: 1, reason: "no arcs in the vault".into() };
    }
    let arcs = inputs.arcs as f64;
    let coverage = (inputs.covered as f64 / arcs).clamp(0.0, 1.0);
    let freshness = match inputs.newest_age_days {
        Some(age) => (1.0 - (age - 1.0).max(0.0) / 13.0).clamp(0.0, 1.0),
        None => 0.0,
    };
    let connectivity = (1.0 - inputs.orphans as f64 / arcs).clamp(0.0, 1.0);
    let uniqueness = (1.0 - inputs.duplicates as f64 / arcs).clamp(0.0, 1.0);
    let weighted = 0.3 * coverage + 0.2 * freshness + 0.3 * connectivity + 0.2 * uniqueness;
    let score = (1.0 + 9.0 * weighted).round().clamp(1.0, 10.0) as u8;
    let mut weak: Vec<(f64, String)> = Vec::new();
    if coverage < 0.7 {
        weak.push((coverage, format!("{:.0}% of arcs synthesized", coverage * 100.0)));
    }
    if freshness < 0.7 {
        let age = inputs.newest_age_days.unwrap_or(0.0);
        weak.push((freshness, format!("newest arc {age:.0} days old")));
    }
    if connectivity < 0.7 {
        weak.push((connectivity, format!("{} orphan arcs (no edges)", inputs.orphans)));
    }
    if uniqueness < 0.7 {
        weak.push((uniqueness, format!("{} duplicate arcs", inputs.duplicates)));
    }
    weak.sort_by(|a, b| a.0.total_cmp(&b.0));
    let reason = if weak.is_empty() {
        format!(
            "healthy: {:.0}% synthesized, {} orphans, {} duplicates",
            coverage * 100.0,
            inputs.orphans,
            inputs.duplicates
        )
    } else {
        weak.into_iter().map(|(_, text)| text).collect::<Vec<_>>().join(", ")
    };
    Health { score, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-21T10:00:00Z";

    fn inputs(hours_old: i64) -> HeatInputs {
        let now: Timestamp = NOW.parse().unwrap();
        HeatInputs {
            created: now - jiff::SignedDuration::from_hours(hours_old),
            tools: 0,
            sessions: 0,
            joy: 0,
            active: false,
            replays: 0,
        }
    }

    fn check(inputs: HeatInputs, expected: u8) {
        assert_eq!(heat(&inputs, NOW.parse().unwrap()), expected, "{inputs:?}");
    }

    #[test]
    fn heat_follows_the_spec_formula_term_by_term() {
        check(inputs(2), 3); // created within 24 h
        check(inputs(24), 3);
        check(inputs(25), 1); // within 72 h
        check(inputs(72), 1);
        check(inputs(73), 0);
        check(HeatInputs { tools: 999, ..inputs(100) }, 0);
        check(HeatInputs { tools: 1000, ..inputs(100) }, 2);
        check(HeatInputs { tools: 5000, ..inputs(100) }, 4); // capped at 4
        check(HeatInputs { sessions: 7, ..inputs(100) }, 3); // capped at 3
        check(HeatInputs { joy: 2, ..inputs(100) }, 1);
        check(HeatInputs { active: true, ..inputs(100) }, 2);
        check(HeatInputs { replays: 2, ..inputs(100) }, 2);
        // Decay: floor((age − 7) / 4) once older than 7 days.
        check(HeatInputs { active: true, sessions: 3, ..inputs(24 * 10) }, 5);
        check(HeatInputs { active: true, sessions: 3, ..inputs(24 * 11) }, 4);
        check(HeatInputs { active: true, sessions: 3, ..inputs(24 * 60) }, 0); // clamped at 0
        check(HeatInputs { tools: 9000, sessions: 5, joy: 1, active: true, replays: 4, ..inputs(1) }, 10);
    }

    #[test]
    fn health_weighs_coverage_freshness_connectivity_and_uniqueness() {
        let perfect = HealthInputs { arcs: 10, covered: 10, newest_age_days: Some(0.5), orphans: 0, duplicates: 0 };
        assert_eq!(health(&perfect).score, 10);
        assert!(health(&perfect).reason.starts_with("healthy"));
        let stale = HealthInputs { newest_age_days: Some(30.0), ..perfect };
        assert_eq!(health(&stale).score, 8); // 1 + 9 × 0.8 = 8.2
        let poor = HealthInputs { arcs: 10, covered: 2, newest_age_days: Some(20.0), orphans: 9, duplicates: 5 };
        let result = health(&poor);
        // 1 + 9 × (0.3·0.2 + 0 + 0.3·0.1 + 0.2·0.5) = 2.71
        assert_eq!(result.score, 3);
        assert_eq!(
            result.reason,
            "newest arc 20 days old, 9 orphan arcs (no edges), 20% of arcs synthesized, 5 duplicate arcs"
        );
        assert_eq!(health(&HealthInputs::default()).score, 1);
    }
}
