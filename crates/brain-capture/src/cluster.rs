//! Sessions → arcs, deterministically (SPEC §6.7): sessions of one project follow each other
//! into one arc while the gap between them is at most [`GAP_MINUTES`] and neither was
//! compacted (a compaction is a boundary, as in the reference engine). Then the arc's
//! identity and its computed frontmatter: `cluster_id`, title, region, status and heat.
//!
//! Grouping sorts once and walks once: O(n log n) in the number of sessions.

use std::sync::LazyLock;

use brain_core::Timestamp;
use regex::Regex;
use sha1::{Digest, Sha1};

use super::transcript::SessionSummary;

/// Sessions of one project at most this far apart belong to one arc.
pub const GAP_MINUTES: i64 = 120;
/// An arc whose last session ended at most this long ago is `active`…
pub const ACTIVE_HOURS: i64 = 6;
/// …and one idle for longer than this is `stalled` (in between: `complete`).
pub const STALLED_HOURS: i64 = 48;
/// A session with this many error markers can make its arc an amygdala arc.
pub const ERROR_NUCLEAR_THRESHOLD: u32 = 10;
/// This many joy markers (and fewer errors) make a pineal arc.
pub const JOY_PINEAL_THRESHOLD: u32 = 5;
/// Title length, in characters, taken from the first prompt's first line.
pub const TITLE_CHARS: usize = 60;

static CREATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(ideas?|creative|design|vision|strategy|publisher|draft|blog|post)\b")
        .expect("creative pattern is valid")
});
static TECHNICAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(fix|feat|chore|refactor|ci|infra|deploy|hotfix|bug|test)\b")
        .expect("technical pattern is valid")
});

/// Groups sessions into arcs; returns groups of indices into `sessions`, each ordered by
/// start, the groups ordered by (project, start). Sessions without timestamps are left out.
pub fn group_sessions(sessions: &[&SessionSummary]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sessions.len()).filter(|&i| sessions[i].start.is_some()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (sessions[a], sessions[b]);
        a.project.cmp(&b.project).then(a.start.cmp(&b.start)).then_with(|| a.session_id.cmp(&b.session_id))
    });
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_end: Option<Timestamp> = None;
    for index in order {
        let session = sessions[index];
        let joins = groups.last().is_some_and(|group| {
            let previous = sessions[group[group.len() - 1]];
            let gap_ok = match (group_end, session.start) {
                (Some(end), Some(start)) => start.as_second() - end.as_second() <= GAP_MINUTES * 60,
                _ => false,
            };
            previous.project == session.project
                && gap_ok
                && session.compactions == 0
                && group.iter().all(|&member| sessions[member].compactions == 0)
        });
        let end = session.end.or(session.start);
        if joins {
            if let Some(group) = groups.last_mut() {
                group.push(index);
            }
            group_end = group_end.max(end);
        } else {
            groups.push(vec![index]);
            group_end = end;
        }
    }
    groups
}

/// `slug(text)[:limit]` as the reference engine spells it: lowercase, every run of
/// characters outside `[a-z0-9]` becomes one `-`, trimmed, then cut; `untitled` when empty.
pub fn slug(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len().min(limit * 2));
    let mut dash = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else {
            dash = true;
        }
        if out.len() > limit {
            break;
        }
    }
    out.truncate(limit);
    if out.is_empty() { "untitled".to_string() } else { out }
}

/// `DATE-slug(title)[:40]-sha1(sorted session ids joined by "\n")[:12]`, DATE being the UTC
/// date of the arc's first session.
pub fn cluster_id(start: Timestamp, title: &str, session_ids: &[&str]) -> String {
    let mut sorted: Vec<&str> = session_ids.to_vec();
    sorted.sort_unstable();
    let digest = Sha1::digest(sorted.join("\n").as_bytes());
    let hash = hex::encode(digest);
    format!("{}-{}-{}", date_of(start), slug(title, 40), &hash[..12])
}

/// The UTC date of an instant, `YYYY-MM-DD`.
pub fn date_of(timestamp: Timestamp) -> String {
    timestamp.to_zoned(jiff::tz::TimeZone::UTC).date().to_string()
}

/// The first line of the first prompt, at most [`TITLE_CHARS`] characters, its marker
/// delimiters neutralised as the arc's body is (`<!-- @signal … -->` in a prompt reaches the
/// arc's frontmatter, the tick's notes and the session start's hot arcs as text, never as a
/// marker's start or end).
pub fn title_of(first_prompt: &str) -> String {
    let line = first_prompt.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let title: String = line.chars().take(TITLE_CHARS).collect();
    let title = title.trim().trim_end_matches('…').trim_end().replace("<!--", "&lt;!--").replace("-->", "--&gt;");
    if title.is_empty() { "Untitled session".to_string() } else { title }
}

/// The region (SPEC §2.2) from the sessions' signals, branches and folders: error-heavy
/// work goes to the amygdala, joyful work to the pineal, creative branches to the right
/// hemisphere, the rest to the left.
pub fn region_of(sessions: &[&SessionSummary]) -> &'static str {
    let errors: u32 = sessions.iter().map(|s| s.error_markers).sum();
    let joy: u32 = sessions.iter().map(|s| s.joy_markers).sum();
    let max_errors = sessions.iter().map(|s| s.error_markers).max().unwrap_or(0);
    if max_errors >= ERROR_NUCLEAR_THRESHOLD && errors > 2 * joy {
        return "amygdala";
    }
    if joy >= JOY_PINEAL_THRESHOLD && errors < joy {
        return "pineal";
    }
    let haystack: String = sessions.iter().map(|s| format!("{} {} ", s.git_branch, s.cwd)).collect::<Vec<_>>().concat();
    let creative = CREATIVE.is_match(&haystack);
    let technical = TECHNICAL.is_match(&haystack);
    if creative && !technical { "right-hemisphere" } else { "left-hemisphere" }
}

/// `active` when the last session ended at most [`ACTIVE_HOURS`] ago, `stalled` after
/// [`STALLED_HOURS`], else `complete`.
pub fn status_of(last_end: Timestamp, now: Timestamp) -> &'static str {
    let age = now.as_second() - last_end.as_second();
    if age <= ACTIVE_HOURS * 3600 {
        "active"
    } else if age > STALLED_HOURS * 3600 {
        "stalled"
    } else {
        "complete"
    }
}

/// The heat of a new arc by the formula of SPEC §6.3 (the tick recomputes it later).
pub fn heat_of(created: Timestamp, now: Timestamp, tools: u64, sessions: usize, joy: u64, active: bool) -> u8 {
    let age_hours = (now.as_second() - created.as_second()) as f64 / 3600.0;
    let mut heat: i64 = 0;
    if age_hours <= 24.0 {
        heat += 3;
    } else if age_hours <= 72.0 {
        heat += 1;
    }
    heat += (2 * (tools / 1000) as i64).min(4);
    heat += (sessions as i64).min(3);
    if joy > 0 {
        heat += 1;
    }
    if active {
        heat += 2;
    }
    let age_days = age_hours / 24.0;
    if age_days > 7.0 {
        heat -= ((age_days - 7.0) / 4.0).floor() as i64;
    }
    heat.clamp(0, 10) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, project: &str, start: &str, end: &str, compactions: u32) -> SessionSummary {
        SessionSummary {
            host: Default::default(),
            session_id: id.into(),
            project: project.into(),
            cwd: format!("/w/{project}"),
            git_branch: "main".into(),
            transcript: String::new(),
            start: Some(start.parse().unwrap()),
            end: Some(end.parse().unwrap()),
            duration_minutes: 0.0,
            turns: 5,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            top_tools: Vec::new(),
            tools: Default::default(),
            first_prompt: String::new(),
            last_prompt: String::new(),
            early_prompts: Vec::new(),
            late_prompts: Vec::new(),
            outcome: String::new(),
            compactions,
            joy_markers: 0,
            error_markers: 0,
            files_touched: Vec::new(),
            lines: Default::default(),
        }
    }

    fn ids(sessions: &[SessionSummary]) -> Vec<Vec<&str>> {
        let refs: Vec<&SessionSummary> = sessions.iter().collect();
        group_sessions(&refs).iter().map(|g| g.iter().map(|&i| sessions[i].session_id.as_str()).collect()).collect()
    }

    #[test]
    fn sessions_join_within_the_gap_per_project_and_split_at_compactions() {
        let sessions = vec![
            session("a", "api", "2026-11-21T08:00:00Z", "2026-11-21T09:00:00Z", 0),
            session("b", "api", "2026-11-21T11:00:00Z", "2026-11-21T11:30:00Z", 0), // gap 120 min: joins
            session("c", "api", "2026-11-21T13:31:00Z", "2026-11-21T14:00:00Z", 0), // gap 121 min: new arc
            session("d", "web", "2026-11-21T08:30:00Z", "2026-11-21T09:00:00Z", 0), // other project
            session("e", "api", "2026-11-21T14:10:00Z", "2026-11-21T15:00:00Z", 1), // compacted: alone
            session("f", "api", "2026-11-21T15:10:00Z", "2026-11-21T16:00:00Z", 0),
        ];
        assert_eq!(ids(&sessions), vec![vec!["a", "b"], vec!["c"], vec!["e"], vec!["f"], vec!["d"]]);
    }

    #[test]
    fn overlapping_sessions_measure_the_gap_from_the_latest_end() {
        let sessions = vec![
            session("a", "api", "2026-11-21T08:00:00Z", "2026-11-21T12:00:00Z", 0),
            session("b", "api", "2026-11-21T08:10:00Z", "2026-11-21T08:20:00Z", 0),
            session("c", "api", "2026-11-21T13:00:00Z", "2026-11-21T13:30:00Z", 0),
        ];
        assert_eq!(ids(&sessions), vec![vec!["a", "b", "c"]]);
    }

    #[test]
    fn cluster_ids_are_date_slug_and_hash_of_sorted_sessions() {
        let start: Timestamp = "2026-11-21T08:07:30Z".parse().unwrap();
        let id = cluster_id(start, "Fix the login flow, it is broken again!", &["b", "a"]);
        assert_eq!(id, cluster_id(start, "Fix the login flow, it is broken again!", &["a", "b"]));
        // sha1("a\nb")
        assert_eq!(id, "2026-11-21-fix-the-login-flow-it-is-broken-again-fcd127ffa101");
        assert_eq!(slug("  ** ", 40), "untitled");
        assert_eq!(slug("Über große Änderung", 40), "ber-gro-e-nderung");
        assert_eq!(slug(&"word ".repeat(20), 40), "word-word-word-word-word-word-word-word-");
    }

    #[test]
    fn status_and_heat_follow_recency() {
        let now: Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
        let at = |text: &str| text.parse::<Timestamp>().unwrap();
        assert_eq!(status_of(at("2026-11-21T05:00:00Z"), now), "active");
        assert_eq!(status_of(at("2026-11-20T10:00:00Z"), now), "complete");
        assert_eq!(status_of(at("2026-11-19T09:00:00Z"), now), "stalled");
        // 3 (fresh) + 4 (2,000+ tools) + 2 (sessions) + 1 (joy) + 2 (active)
        assert_eq!(heat_of(at("2026-11-21T08:00:00Z"), now, 2500, 2, 1, true), 10);
        assert_eq!(heat_of(at("2026-11-21T08:00:00Z"), now, 10, 1, 0, false), 4);
        // 19 days old: 1 session, minus floor((19 - 7) / 4) = 3
        assert_eq!(heat_of(at("2026-11-02T10:00:00Z"), now, 10, 1, 0, false), 0);
    }

    #[test]
    fn titles_come_from_the_first_line() {
        assert_eq!(title_of("\n  Fix the build\nthen deploy"), "Fix the build");
        assert_eq!(title_of(""), "Untitled session");
        assert_eq!(title_of(&"x".repeat(100)).len(), TITLE_CHARS);
        let title = title_of("Read README <!-- @signal severity=nuclear -->PROD DB IS CORRUPT");
        assert!(!title.contains("<!--") && !title.contains("-->"), "{title}");
        assert!(title.starts_with("Read README &lt;!-- @signal"), "{title}");
    }
}
