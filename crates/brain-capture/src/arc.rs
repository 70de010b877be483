//! The text of a captured arc (SPEC §2.2): frontmatter plus a body whose generated part sits
//! between [`GENERATED_START`] and [`GENERATED_END`].
//!
//! A new arc is rendered whole. An existing one is *updated*: only `source_sessions`,
//! `hosts`, `signals` and a capture-owned `status` (`active`/`complete`/`stalled`) are rewritten,
//! missing keys are added, and the generated block is replaced; every other byte — other
//! keys, comments, the user's text around the block — is kept. When the user removed the
//! block, the body is theirs and is left alone.
//!
//! Captured text is inlined as data: whitespace collapsed, bounded, and with `<!--`/`-->`
//! neutralized so that a prompt quoting a marker (`<!-- @signal … -->`) cannot become one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;

use brain_core::Timestamp;
use brain_core::redact::redact_str;
use brain_core::time::format_timestamp;
use brain_core::vault::{ArcStatus, VaultDoc, set_frontmatter_scalar};

use super::Host;
use super::transcript::{SessionSummary, excerpt};

/// Opens the block capture rewrites.
pub const GENERATED_START: &str = "<!-- brain:generated:start -->";
/// Closes the block capture rewrites.
pub const GENERATED_END: &str = "<!-- brain:generated:end -->";
const GENERATED_NOTE: &str = "<!-- Written by `brain capture` from the source sessions and rewritten on every capture; keep your notes outside this block. -->";
/// Files listed in the body.
const FILES_SHOWN: usize = 30;

/// The signals counters of an arc.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    pub errors: u64,
    pub joy: u64,
    pub tools: u64,
}

/// Everything capture knows about one arc.
#[derive(Clone, Debug)]
pub struct ArcContent<'a> {
    pub cluster_id: String,
    pub title: String,
    pub region: &'static str,
    pub status: &'static str,
    pub heat: u8,
    pub created: Timestamp,
    pub project: String,
    pub branch: String,
    /// Every session of the arc, including ones capture has no summary of.
    pub source_sessions: Vec<String>,
    /// The summaries capture has, ordered by start.
    pub sessions: Vec<&'a SessionSummary>,
    pub signals: Signals,
    /// `cluster_id`s of the arcs of the same project and time window (see
    /// `write::SIBLING_WINDOW_HOURS`): `sibling` edges of a new arc.
    pub siblings: Vec<String>,
}

/// The agent hosts of `sessions`, once each, in [`Host`] order: the arc's `hosts` key.
pub fn hosts_of(sessions: &[&SessionSummary]) -> Vec<Host> {
    let mut hosts: Vec<Host> = sessions.iter().map(|session| session.host).collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

impl ArcContent<'_> {
    fn sessions_line(&self) -> String {
        format!("source_sessions: [{}]", self.source_sessions.join(", "))
    }

    /// `hosts: [claude-code, codex]`: the agent hosts the arc's sessions ran in.
    fn hosts_line(&self) -> String {
        let hosts: Vec<&str> = hosts_of(&self.sessions).into_iter().map(Host::as_str).collect();
        format!("hosts: [{}]", hosts.join(", "))
    }

    fn signals_line(&self) -> String {
        let Signals { errors, joy, tools } = self.signals;
        format!("signals: {{errors: {errors}, joy: {joy}, tools: {tools}}}")
    }

    /// The scalar keys of a new arc, in order.
    fn scalars(&self) -> Vec<(&'static str, String)> {
        let mut scalars = vec![
            ("cluster_id", self.cluster_id.clone()),
            ("title", self.title.clone()),
            ("region", self.region.to_string()),
            ("status", self.status.to_string()),
            ("heat", self.heat.to_string()),
            ("created", format_timestamp(self.created)),
            ("project", self.project.clone()),
        ];
        if !self.branch.is_empty() {
            scalars.push(("branch", self.branch.clone()));
        }
        scalars
    }
}

/// The whole text of a new arc.
pub fn render_new(arc: &ArcContent<'_>) -> String {
    let mut text = String::from("---\n");
    for (key, value) in arc.scalars() {
        let _ = writeln!(text, "{key}: {}", yaml_scalar(&value));
    }
    let edges: Vec<String> =
        arc.siblings.iter().map(|target| format!("{{type: sibling, target: {}}}", yaml_scalar(target))).collect();
    let _ = writeln!(
        text,
        "{}\n{}\n{}\nsynthesized: false\nedges: [{}]\n---\n",
        arc.sessions_line(),
        arc.hosts_line(),
        arc.signals_line(),
        edges.join(", ")
    );
    text.push_str(&generated_block(arc, &arc.title));
    text.push_str("\n\n## Notes\n\n");
    text
}

/// `text` (an existing arc, parsed as `doc`) with capture's keys and block refreshed; an
/// error says why the file cannot be updated safely.
pub fn update(text: &str, doc: &VaultDoc, arc: &ArcContent<'_>) -> Result<String, String> {
    let frontmatter = doc.frontmatter.as_ref().ok_or("it has no frontmatter")?;
    let line_break = if text[frontmatter.span.clone()].contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut inserted = String::new();
    for (key, line) in
        [("source_sessions", arc.sessions_line()), ("hosts", arc.hosts_line()), ("signals", arc.signals_line())]
    {
        match frontmatter.get(key) {
            Some(entry) => edits.push((entry.span.clone(), line)),
            None => {
                inserted.push_str(&line);
                inserted.push_str(line_break);
            }
        }
    }
    if let Some(entry) = frontmatter.get("status")
        && frontmatter.status.is_some_and(capture_owns_status)
        && frontmatter.status.map(ArcStatus::as_str) != Some(arc.status)
    {
        edits.push((entry.value_span.clone(), arc.status.to_string()));
    }
    for (key, value) in arc.scalars() {
        if frontmatter.get(key).is_none() {
            let _ = write!(inserted, "{key}: {}{line_break}", yaml_scalar(&value));
        }
    }
    if frontmatter.get("synthesized").is_none() {
        inserted.push_str("synthesized: false");
        inserted.push_str(line_break);
    }
    if !inserted.is_empty() {
        let at = closing_line_start(text, frontmatter.span.end);
        edits.push((at..at, inserted));
    }
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = text.to_string();
    let mut body_start = frontmatter.span.end;
    for (range, replacement) in edits {
        body_start = body_start + replacement.len() - range.len();
        out.replace_range(range, &replacement);
    }
    if let Some(start) = out[body_start..].find(GENERATED_START).map(|offset| body_start + offset)
        && let Some(end) = out[start..].find(GENERATED_END).map(|offset| start + offset + GENERATED_END.len())
    {
        let title = frontmatter.title.as_deref().unwrap_or(&arc.title);
        out.replace_range(start..end, &generated_block(arc, title));
    }
    Ok(out)
}

/// Whether capture may change a status: the ones it sets from recency. `abandoned`,
/// `graduated` and `resolved` are set by a person or the tick and stay.
pub fn capture_owns_status(status: ArcStatus) -> bool {
    matches!(status, ArcStatus::Active | ArcStatus::Complete | ArcStatus::Stalled)
}

/// Start of the frontmatter's closing `---` line, `span_end` being the end of that line.
fn closing_line_start(text: &str, span_end: usize) -> usize {
    let head = &text[..span_end];
    let head = head.strip_suffix('\n').unwrap_or(head);
    let head = head.strip_suffix('\r').unwrap_or(head);
    head.rfind('\n').map_or(0, |index| index + 1)
}

/// A value as a YAML scalar: plain when that reads back as the same text, else quoted (the
/// vault crate's own rendering).
fn yaml_scalar(value: &str) -> String {
    let rendered = set_frontmatter_scalar("---\n---\n", "k", value);
    rendered
        .as_deref()
        .and_then(|text| text.strip_prefix("---\nk: "))
        .and_then(|text| text.strip_suffix("\n---\n"))
        .map_or_else(|| serde_json::Value::String(value.to_string()).to_string(), str::to_string)
}

/// Captured text as one line of markdown data: redacted, whitespace collapsed, markers
/// neutralized, at most `max` characters.
fn inline(text: &str, max: usize) -> String {
    let redacted = redact_str(text);
    let collapsed = redacted.split_whitespace().collect::<Vec<_>>().join(" ");
    let neutral = collapsed.replace("<!--", "&lt;!--").replace("-->", "--&gt;");
    excerpt(&neutral, max)
}

fn hhmm(timestamp: Timestamp) -> String {
    timestamp.to_zoned(jiff::tz::TimeZone::UTC).strftime("%Y-%m-%d %H:%M").to_string()
}

fn hours(minutes: f64) -> String {
    if minutes < 60.0 { format!("{minutes:.0} min") } else { format!("{:.1} h", minutes / 60.0) }
}

/// The generated block: what was asked, what was done, tools, files, outcome.
fn generated_block(arc: &ArcContent<'_>, title: &str) -> String {
    let sessions = &arc.sessions;
    let mut out = String::new();
    let _ = writeln!(out, "{GENERATED_START}\n{GENERATED_NOTE}\n");
    let _ = writeln!(out, "# {}\n", inline(title, 200));

    let turns: u64 = sessions.iter().map(|s| u64::from(s.turns)).sum();
    let minutes: f64 = sessions.iter().map(|s| s.duration_minutes).sum();
    let mut branches: Vec<&str> = Vec::new();
    for session in sessions {
        if !session.git_branch.is_empty() && !branches.contains(&session.git_branch.as_str()) {
            branches.push(&session.git_branch);
        }
    }
    let mut facts = vec![format!("**{}**", inline(&arc.project, 100))];
    let hosts: Vec<&str> = hosts_of(sessions).into_iter().map(Host::display_name).collect();
    if !hosts.is_empty() {
        facts.push(hosts.join(", "));
    }
    if !branches.is_empty() {
        let shown: Vec<String> = branches.iter().map(|b| format!("`{}`", inline(b, 100))).collect();
        facts.push(format!("branch {}", shown.join(", ")));
    }
    facts.push(format!("{} session(s)", arc.source_sessions.len()));
    facts.push(format!("{turns} turns"));
    facts.push(format!("{} tool calls", arc.signals.tools));
    facts.push(hours(minutes));
    let first = sessions.iter().filter_map(|s| s.start).min();
    let last = sessions.iter().filter_map(|s| s.end).max();
    if let (Some(first), Some(last)) = (first, last) {
        facts.push(format!("{} → {} UTC", hhmm(first), hhmm(last)));
    }
    let _ = writeln!(out, "{}\n", facts.join(" · "));

    let asked = sessions.iter().map(|s| s.first_prompt.as_str()).find(|p| !p.is_empty()).unwrap_or("");
    let _ = writeln!(out, "## What was asked\n");
    let _ =
        writeln!(out, "> {}\n", if asked.is_empty() { "(no prompt captured)".to_string() } else { inline(asked, 300) });

    let _ = writeln!(out, "## What was done\n");
    for session in sessions {
        let (start, end) = match (session.start, session.end) {
            // The end's date only when it differs from the start's.
            (Some(start), Some(end)) => {
                let (start, mut end) = (hhmm(start), hhmm(end));
                if start[..10] == end[..10] {
                    end = end.split_off(11);
                }
                (start, end)
            }
            _ => ("?".to_string(), "?".to_string()),
        };
        let short_id: String = session.session_id.chars().take(8).collect();
        let mut line = format!(
            "- **{start}–{end} UTC** · {} turns · {} tool calls · {}",
            session.turns,
            session.tool_calls,
            hours(session.duration_minutes)
        );
        if session.compactions > 0 {
            let _ = write!(line, " · {} compaction(s)", session.compactions);
        }
        let _ = writeln!(out, "{line} · {} session `{short_id}`", session.host.display_name());
        let shown = session.early_prompts.len() + session.late_prompts.len();
        for prompt in &session.early_prompts {
            let _ = writeln!(out, "  - {}", inline(prompt, 200));
        }
        if (session.turns as usize) > shown && !session.late_prompts.is_empty() {
            let _ = writeln!(out, "  - … {} more prompt(s) …", session.turns as usize - shown);
        }
        for prompt in &session.late_prompts {
            let _ = writeln!(out, "  - {}", inline(prompt, 200));
        }
    }
    let known: Vec<&str> = sessions.iter().map(|s| s.session_id.as_str()).collect();
    for id in arc.source_sessions.iter().filter(|id| !known.contains(&id.as_str())) {
        let _ = writeln!(out, "- session `{id}` (no summary in this brain's capture store)");
    }
    out.push('\n');

    let mut tools: BTreeMap<&str, u64> = BTreeMap::new();
    for session in sessions {
        for (name, count) in &session.tools {
            *tools.entry(name.as_str()).or_default() += u64::from(*count);
        }
    }
    let mut ranked: Vec<(&str, u64)> = tools.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(out, "## Tools\n");
    if ranked.is_empty() {
        let _ = writeln!(out, "No tool calls.\n");
    } else {
        let top: Vec<String> =
            ranked.iter().take(10).map(|(name, count)| format!("{} {count}", inline(name, 60))).collect();
        let _ = writeln!(out, "{} ({} calls)\n", top.join(" · "), arc.signals.tools);
    }

    let mut files: Vec<&str> = Vec::new();
    for session in sessions {
        for file in &session.files_touched {
            if !files.contains(&file.as_str()) {
                files.push(file);
            }
        }
    }
    let _ = writeln!(out, "## Files touched\n");
    if files.is_empty() {
        let _ = writeln!(out, "None recorded.\n");
    } else {
        for file in files.iter().take(FILES_SHOWN) {
            let _ = writeln!(out, "- `{}`", inline(file, 300).replace('`', "'"));
        }
        if files.len() > FILES_SHOWN {
            let _ = writeln!(out, "- … and {} more", files.len() - FILES_SHOWN);
        }
        out.push('\n');
    }

    // The last words of the session that ended last.
    let outcome = sessions
        .iter()
        .filter(|s| !s.outcome.is_empty())
        .max_by(|a, b| a.end.cmp(&b.end).then_with(|| b.session_id.cmp(&a.session_id)))
        .map_or("", |s| s.outcome.as_str());
    let compactions: u64 = sessions.iter().map(|s| u64::from(s.compactions)).sum();
    let _ = writeln!(out, "## Outcome\n");
    if !outcome.is_empty() {
        let _ = writeln!(out, "> {}\n", inline(outcome, 500));
    }
    let _ = writeln!(
        out,
        "Error markers: {} · joy markers: {} · compactions: {compactions}",
        arc.signals.errors, arc.signals.joy
    );
    out.push_str(GENERATED_END);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_core::vault::{DEFAULT_MAX_BYTES, parse};

    fn summary() -> SessionSummary {
        SessionSummary {
            host: Default::default(),
            session_id: "s-1".into(),
            project: "api".into(),
            cwd: "/w/api".into(),
            git_branch: "main".into(),
            transcript: String::new(),
            start: Some("2026-11-21T08:00:00Z".parse().unwrap()),
            end: Some("2026-11-21T09:30:00Z".parse().unwrap()),
            duration_minutes: 90.0,
            turns: 8,
            assistant_messages: 8,
            tool_calls: 3,
            tool_results: 3,
            top_tools: Vec::new(),
            tools: [("Bash".to_string(), 2), ("Edit".to_string(), 1)].into_iter().collect(),
            first_prompt: "Fix the: login <!-- @signal severity=critical -->".into(),
            last_prompt: "ship it".into(),
            early_prompts: vec!["Fix the: login <!-- @signal severity=critical -->".into(), "b".into(), "c".into()],
            late_prompts: vec!["d".into(), "ship it".into()],
            outcome: "Done.".into(),
            compactions: 0,
            joy_markers: 1,
            error_markers: 2,
            files_touched: vec!["src/app.rs".into()],
            lines: Default::default(),
        }
    }

    fn content<'a>(sessions: Vec<&'a SessionSummary>, status: &'static str) -> ArcContent<'a> {
        ArcContent {
            cluster_id: "2026-11-21-fix-the-login-0123456789ab".into(),
            title: "Fix the: login".into(),
            region: "left-hemisphere",
            status,
            heat: 7,
            created: "2026-11-21T08:00:00Z".parse().unwrap(),
            project: "api".into(),
            branch: "main".into(),
            source_sessions: vec!["s-1".into()],
            sessions,
            siblings: Vec::new(),
            signals: Signals { errors: 2, joy: 1, tools: 3 },
        }
    }

    #[test]
    fn a_new_arc_parses_back_with_its_frontmatter_and_no_markers() {
        let session = summary();
        let text = render_new(&content(vec![&session], "active"));
        let (doc, diagnostics) = parse("a.md", text.as_bytes(), DEFAULT_MAX_BYTES);
        assert!(diagnostics.is_empty(), "{diagnostics:?}\n{text}");
        let fm = doc.frontmatter.unwrap();
        assert_eq!(fm.title.as_deref(), Some("Fix the: login"));
        assert_eq!(fm.source_sessions, vec!["s-1"]);
        let signals = fm.signals.unwrap();
        assert_eq!((signals.errors, signals.joy, signals.tools), (2, 1, 3));
        assert_eq!(fm.heat, Some(7));
        assert!(doc.markers.is_empty(), "a quoted marker stays text: {:?}", doc.markers);
        assert!(text.contains("&lt;!-- @signal"));
        assert!(text.contains("- … 3 more prompt(s) …"));
    }

    #[test]
    fn an_update_keeps_user_text_and_user_keys() {
        let session = summary();
        let original = render_new(&content(vec![&session], "active"));
        let edited = original
            .replace("title: \"Fix the: login\"", "title: My own title # renamed")
            .replace("edges: []", "edges: []\nowner: me")
            .replace("## Notes\n", "## Notes\n\nThe real cause was DNS.\n")
            .replace("---\n\n<!-- brain", "---\n\nIntro by hand.\n\n<!-- brain");
        let mut later = summary();
        later.session_id = "s-2".into();
        later.tool_calls = 10;
        let mut arc = content(vec![&session, &later], "complete");
        arc.source_sessions.push("s-2".into());
        arc.signals.tools = 13;
        let (doc, _) = parse("a.md", edited.as_bytes(), DEFAULT_MAX_BYTES);
        let updated = update(&edited, &doc, &arc).unwrap();
        assert!(updated.contains("title: My own title # renamed\n"));
        assert!(updated.contains("owner: me\n"));
        assert!(updated.contains("The real cause was DNS."));
        assert!(updated.contains("Intro by hand."));
        assert!(updated.contains("source_sessions: [s-1, s-2]\n"));
        assert!(updated.contains("signals: {errors: 2, joy: 1, tools: 13}\n"));
        assert!(updated.contains("status: complete\n"));
        assert!(updated.contains("# My own title\n"), "the block shows the user's title");
        assert_eq!(update(&updated, &parse("a.md", updated.as_bytes(), DEFAULT_MAX_BYTES).0, &arc).unwrap(), updated);
    }

    #[test]
    fn a_status_set_by_the_user_and_a_removed_block_are_left_alone() {
        let session = summary();
        let original = render_new(&content(vec![&session], "active"));
        let mut edited = original.replace("status: active", "status: abandoned");
        let start = edited.find(GENERATED_START).unwrap();
        let end = edited.find(GENERATED_END).unwrap() + GENERATED_END.len();
        edited.replace_range(start..end, "My summary only.");
        let (doc, _) = parse("a.md", edited.as_bytes(), DEFAULT_MAX_BYTES);
        let updated = update(&edited, &doc, &content(vec![&session], "complete")).unwrap();
        assert!(updated.contains("status: abandoned"));
        assert!(updated.contains("My summary only.") && !updated.contains(GENERATED_START));
    }

    #[test]
    fn missing_keys_are_added_and_a_file_without_frontmatter_is_refused() {
        let session = summary();
        let text = "---\ncluster_id: x\n---\nbody\n";
        let (doc, _) = parse("a.md", text.as_bytes(), DEFAULT_MAX_BYTES);
        let updated = update(text, &doc, &content(vec![&session], "active")).unwrap();
        let (doc, diagnostics) = parse("a.md", updated.as_bytes(), DEFAULT_MAX_BYTES);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let fm = doc.frontmatter.unwrap();
        assert_eq!((fm.cluster_id.as_deref(), fm.source_sessions.len()), (Some("x"), 1));
        assert!(updated.ends_with("---\nbody\n"));
        let (doc, _) = parse("b.md", b"just text", DEFAULT_MAX_BYTES);
        assert!(update("just text", &doc, &content(vec![&session], "active")).is_err());
    }
}
