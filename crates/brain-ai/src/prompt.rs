//! Phase 2: the prompts. One per project (the arcs without a `project:` are one more): a
//! compressed, redacted, bounded view of that project's part of the vault — never the whole
//! vault, never another project's text: its arc table (hottest first, each with its edges),
//! its active signals by stable id, its recent lessons and the lines of the last tick's diff
//! that name its arcs. A text of one project (a captured session's words in an arc) can then
//! only sway an answer about that project, and the rules refuse any proposal of that answer
//! that reaches into another (see `proposals`).
//!
//! Instructions are fixed and never cut; the data sections share what the token budget
//! leaves (signals, then arcs, then lessons, then the diff; a section's unused share flows to
//! the next), line by line, counted with the configured tokenizer. Every free text (titles,
//! summaries, signal texts, lessons, the diff) goes through the redactor before it is counted.

use std::collections::{BTreeMap, HashSet};

use brain_core::tokens::TokenCounter;
use brain_core::{Kind, Scope, Timestamp};

use brain_core::keeper::feed::ActiveSignal;
use brain_core::keeper::text::{clip, one_line, redacted};
use brain_vault::scan::Snapshot;

/// What the model is told, always in full.
pub(crate) const INSTRUCTIONS: &str = "You maintain a vault of work arcs (markdown notes of past coding sessions) \
for brain, a memory system for coding agents. Deterministic code already computed heat, promotions and the feed. \
Your job is to recommend, never to rewrite: code validates every recommendation and applies only valid ones. \
You see one project's arcs and signals; a recommendation that names anything else is refused.

Answer with ONE JSON document matching the schema brain_tick_proposals and nothing else:
- edges: missing links between arcs ({from, to, type, reason}); type is parent, child, sibling, unblocks, \
supersedes or related. Only between two different arcs of the table; never one that is already listed.
- merges: arcs that describe the same work ({into, arcs, reason}); `into` survives, each of `arcs` becomes a \
tombstone pointing at it. Only arcs of one project; never an arc twice; no chains.
- signals: changes of active signals by their id ({signal, action, severity, reason}): action escalate with a \
higher severity (warning, critical, nuclear), or clear (severity resolved) when the work shows it is fixed.
- intent: one short paragraph, what the operator is working towards now.
- health: {score 0-10, reason}: how well the vault reflects the work.
Use only ids that appear below. Propose nothing rather than guess; empty lists are a good answer.";

/// Shares of the data budget, in order (unused budget flows to the next section).
const SHARES: [(&str, usize); 4] = [("signals", 20), ("arcs", 50), ("lessons", 10), ("last tick diff", 20)];

/// The longest summary or signal text shown (characters).
const FIELD_CHARS: usize = 160;
/// The most lessons read from the index.
const LESSONS: usize = 20;

/// The prompt of one tick and its figures.
pub(crate) struct Prompt {
    pub system: String,
    pub user: String,
    /// Tokens of system + user under the configured counter.
    pub tokens: usize,
    pub arcs_shown: usize,
    pub signals_shown: usize,
}

/// The data a prompt is built from.
pub(crate) struct PromptInput<'a> {
    pub snapshot: &'a Snapshot,
    /// The project the prompt is about (empty: the arcs without a project); only its arcs
    /// and signals are shown.
    pub project: &'a str,
    /// The active signals of the vault (the prompt keeps its project's).
    pub active: &'a [ActiveSignal<'a>],
    /// The active signal items (the one signal model, `brain_api::signals`): shown after the
    /// vault's as context; proposals name vault signals only.
    pub item_signals: &'a [brain_core::Signal],
    /// Lesson texts, newest first.
    pub lessons: &'a [String],
    /// `last-tick-diff.md` as phase 1 wrote it.
    pub last_diff: &'a str,
    pub now: Timestamp,
}

/// How a project is named in prompts, reports and refusals.
pub(crate) fn project_label(project: &str) -> String {
    if project.is_empty() { "no project".to_string() } else { format!("project {project}") }
}

/// The projects to ask about, hottest first (then by name): each with two arcs or more (an
/// edge or a merge needs two) or an active signal; a project with neither has nothing to
/// change. The arcs without a project count as one more (the empty name).
pub(crate) fn projects(snapshot: &Snapshot, active: &[ActiveSignal<'_>]) -> Vec<String> {
    // project → (arcs, hottest heat, active signals)
    let mut seen: BTreeMap<&str, (usize, u8, usize)> = BTreeMap::new();
    for file in snapshot.values().filter(|file| file.state.generated.is_none() && file.state.arc_owner) {
        if let Some(arc) = file.state.arc.as_deref() {
            let entry = seen.entry(file.state.project.as_str()).or_default();
            entry.0 += 1;
            entry.1 = entry.1.max(arc.heat.unwrap_or(0));
        }
    }
    for signal in active {
        seen.entry(signal.project).or_default().2 += 1;
    }
    let mut projects: Vec<(&str, u8)> = seen
        .into_iter()
        .filter(|(_, (arcs, _, signals))| *arcs >= 2 || *signals > 0)
        .map(|(project, (_, heat, _))| (project, heat))
        .collect();
    projects.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    projects.into_iter().map(|(project, _)| project.to_string()).collect()
}

/// Lessons of `project`'s part of the vault (global ones for the empty name) from the index,
/// newest first, at most [`LESSONS`].
pub(crate) fn recent_lessons(brain: &brain_api::app::Brain, project: &str) -> Vec<String> {
    let scope = if project.is_empty() { Scope::Global } else { Scope::Project(project.to_string()) };
    let filter = brain_store::ItemFilter {
        scopes: Some(vec![scope]),
        kinds: vec![Kind::Lesson],
        source_prefix: Some(brain_core::keeper::state::SOURCE_PREFIX.to_string()),
        limit: Some(LESSONS),
        ..brain_store::ItemFilter::default()
    };
    // The store lists newest first (`updated_at`, then id).
    brain.list(&filter).unwrap_or_default().into_iter().map(|item| item.content).collect()
}

/// Builds the prompt about `input.project` within `max_tokens` (instructions + data).
pub(crate) fn build(input: &PromptInput<'_>, counter: &TokenCounter, max_tokens: usize) -> Prompt {
    let system = INSTRUCTIONS.to_string();
    let system_tokens = counter.count(&system);
    let header = format!(
        "Now: {}\nProject: {} (the arcs and signals below are all of it)\n",
        brain_core::time::format_timestamp(input.now),
        if input.project.is_empty() { "none (arcs without a project)" } else { input.project }
    );
    let data_budget = max_tokens.saturating_sub(system_tokens + counter.count(&header));

    let mut arcs: Vec<(&str, &brain_core::keeper::state::ArcState, &str)> = input
        .snapshot
        .iter()
        .filter(|(_, file)| file.state.generated.is_none() && file.state.arc_owner)
        .filter(|(_, file)| file.state.project == input.project)
        .filter_map(|(relpath, file)| Some((relpath.as_str(), file.state.arc.as_deref()?, file.state.project.as_str())))
        .collect();
    let active: Vec<&ActiveSignal<'_>> = input.active.iter().filter(|signal| signal.project == input.project).collect();
    let arcs_total = arcs.len();
    arcs.sort_by(|a, b| {
        b.1.heat.unwrap_or(0).cmp(&a.1.heat.unwrap_or(0)).then(b.1.created.cmp(&a.1.created)).then(a.0.cmp(b.0))
    });
    let arc_of_file = |relpath: &str| {
        input.snapshot.get(relpath).and_then(|file| file.state.arc.as_ref()).map(|arc| arc.cluster_id.as_str())
    };

    // Lines are produced lazily: a 10k-arc vault renders only the arcs that fit.
    let signal_lines = active.iter().map(|signal| {
        format!(
            "- {} | {} | {} | arc {} | {}",
            signal.signal.id,
            signal.severity.as_str(),
            clip(&one_line(&redacted(signal.signal.source.as_deref().unwrap_or("-"))), 60),
            arc_of_file(signal.relpath).unwrap_or("-"),
            clip(&one_line(&redacted(&signal.signal.text)), FIELD_CHARS),
        )
    });
    // An edge to another project's arc is left out: its id names that project's work, and
    // no answer to this prompt may add one anyway.
    let own_ids: HashSet<&str> = arcs.iter().map(|(_, arc, _)| arc.cluster_id.as_str()).collect();
    // Signal items of the project, and global ones, as read-only context.
    let item_signals: Vec<&brain_core::Signal> = input
        .item_signals
        .iter()
        .filter(|signal| signal.project.as_deref().is_none_or(|project| project == input.project))
        .collect();
    let item_signal_lines = item_signals.iter().map(|signal| {
        format!(
            "- {} | {} | {} | item, read-only | {}",
            signal.id,
            signal.severity.as_str(),
            clip(&one_line(&redacted(&signal.source)), 60),
            clip(&one_line(&redacted(&format!("{}: {}", signal.title, signal.detail()))), FIELD_CHARS),
        )
    });
    let signal_lines = signal_lines.chain(item_signal_lines);
    let arc_lines = arcs.iter().map(|(_, arc, project)| {
        let summary = arc.summary.as_deref().map(|s| clip(&one_line(&redacted(s)), FIELD_CHARS).into_owned());
        let own_edges: Vec<&str> =
            arc.edges.iter().map(String::as_str).filter(|target| own_ids.contains(target)).collect();
        let edges = if own_edges.is_empty() { "-".to_string() } else { own_edges.join(", ") };
        format!(
            "- {} | heat {} | {} | {} | {} | {}{} | edges: {}",
            arc.cluster_id,
            arc.heat.unwrap_or(0),
            arc.status.as_deref().unwrap_or("active"),
            arc.region.as_deref().unwrap_or("-"),
            if project.is_empty() { "-" } else { project },
            clip(&one_line(&redacted(&arc.title)), 100),
            summary.map(|s| format!(" — {s}")).unwrap_or_default(),
            edges,
        )
    });
    let lesson_lines =
        input.lessons.iter().map(|lesson| format!("- {}", clip(&one_line(&redacted(lesson)), FIELD_CHARS)));
    let names: Vec<&str> = arcs.iter().flat_map(|(relpath, arc, _)| [*relpath, arc.cluster_id.as_str()]).collect();
    let diff_lines = project_diff_lines(strip_frontmatter(input.last_diff), &names).into_iter();

    let mut user = header;
    let mut carry = 0usize;
    let mut shown = [0usize; 4];
    let mut sections: [Box<dyn Iterator<Item = String>>; 4] =
        [Box::new(signal_lines), Box::new(arc_lines), Box::new(lesson_lines), Box::new(diff_lines)];
    for (index, ((name, share), lines)) in SHARES.iter().zip(sections.iter_mut()).enumerate() {
        let budget = data_budget * share / 100 + carry;
        let heading = format!("\n## {name}\n");
        let mut used = counter.count(&heading);
        let mut body = String::new();
        for line in lines.by_ref() {
            let cost = counter.count(&line) + 1;
            if used + cost > budget {
                break;
            }
            used += cost;
            body.push_str(&line);
            body.push('\n');
            shown[index] += 1;
        }
        if shown[index] == 0 {
            carry = budget;
            continue;
        }
        carry = budget.saturating_sub(used);
        user.push_str(&heading);
        user.push_str(&body);
    }
    user.push_str(&format!(
        "\n({} of {} arcs shown, hottest first; {} of {} active signals.)\n",
        shown[1],
        arcs_total,
        shown[0],
        active.len() + item_signals.len()
    ));
    // A counter that is not subadditive (BPE) may count the whole above the sum of its lines:
    // data lines go from the end until it fits; the instructions are never cut.
    let mut tokens = system_tokens + counter.count(&user);
    while tokens > max_tokens {
        let Some(cut) = user.trim_end_matches('\n').rfind('\n') else { break };
        user.truncate(cut + 1);
        tokens = system_tokens + counter.count(&user);
    }
    Prompt { system, user, tokens, arcs_shown: shown[1], signals_shown: shown[0] }
}

/// The lines of the last tick's diff that name one of `names` (the project's arcs, by
/// `cluster_id` or path), each under its section's heading: the rest is about other projects
/// (or vault-wide counts, which say nothing of this project). Redacted and clipped.
fn project_diff_lines(diff: &str, names: &[&str]) -> Vec<String> {
    let names: HashSet<&str> = names.iter().copied().filter(|name| !name.is_empty()).collect();
    let mut lines = Vec::new();
    let mut heading: Option<&str> = None;
    for line in diff.lines().filter(|line| !line.trim().is_empty()) {
        if line.starts_with('#') {
            heading = Some(line);
            continue;
        }
        if !names.iter().any(|name| line.contains(name)) {
            continue;
        }
        if let Some(heading) = heading.take() {
            lines.push(clip(&redacted(heading), 200).into_owned());
        }
        lines.push(clip(&redacted(line), 200).into_owned());
    }
    lines
}

fn strip_frontmatter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else { return text };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + 5..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_core::keeper::state::{ArcState, FileState};
    use brain_vault::scan::IndexedFile;

    fn vault(arcs: usize) -> Snapshot {
        let mut snapshot = Snapshot::new();
        for n in 0..arcs {
            let arc = ArcState {
                cluster_id: format!("2026-11-{:02}-arc-{n:05}", n % 28 + 1),
                title: format!("Arc number {n} about the gateway"),
                heat: Some((n % 11) as u8),
                created: 1_700_000_000 + n as i64,
                summary: Some(format!(
                    "Summary {n}: password=hunter2hunter2 and ghp_EXAMPLE0example1EXAMPLE0example1EXAM"
                )),
                edges: vec![format!("2026-11-01-arc-{:05}", (n + 1) % arcs)],
                ..ArcState::default()
            };
            let state = FileState { arc: Some(Box::new(arc)), arc_owner: true, ..FileState::default() };
            snapshot.insert(format!("clusters/a/{n}.md"), IndexedFile { state, ..IndexedFile::default() });
        }
        snapshot
    }

    #[test]
    fn the_prompt_stays_within_its_budget_hottest_first_redacted_with_the_instructions_whole() {
        let snapshot = vault(3000);
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let lessons = vec!["Always back off.".to_string()];
        let input = PromptInput {
            snapshot: &snapshot,
            project: "",
            active: &[],
            item_signals: &[],
            lessons: &lessons,
            last_diff: "---\nid: x\n---\n## Last Tick\n### Heat\n- 2 arcs changed heat\n- 2026-11-01-arc-00000: 1 → 2\n- 2026-11-05-elsewhere: 0 → 3\n",
            now,
        };
        for counter in [TokenCounter::Heuristic, TokenCounter::O200k] {
            for budget in [1000, 6000] {
                let prompt = build(&input, &counter, budget);
                assert!(prompt.tokens <= budget, "{counter:?} {budget}: {}", prompt.tokens);
                assert_eq!(prompt.tokens, counter.count(&prompt.system) + counter.count(&prompt.user));
                assert_eq!(prompt.system, INSTRUCTIONS);
                assert!(prompt.arcs_shown > 0 && prompt.arcs_shown < 3000, "{}", prompt.arcs_shown);
                assert!(prompt.user.contains(" of 3000 arcs shown"), "{}", prompt.user);
                assert!(!prompt.user.contains("hunter2") && !prompt.user.contains("ghp_EXAMPLE"), "redacted");
                // Hottest first: the first arc line has heat 10.
                let first = prompt.user.lines().find(|line| line.starts_with("- 2026")).unwrap();
                assert!(first.contains("| heat 10 |"), "{first}");
            }
        }
        // A small vault fits whole, lessons and the diff (without its frontmatter) included.
        let small = vault(3);
        let input = PromptInput { snapshot: &small, ..input };
        let prompt = build(&input, &TokenCounter::Heuristic, 6000);
        assert_eq!(prompt.arcs_shown, 3);
        assert!(prompt.user.contains("## lessons\n- Always back off.\n"), "{}", prompt.user);
        // Of the diff, only what names an arc shown (under its heading).
        assert!(
            prompt.user.contains("## last tick diff\n### Heat\n- 2026-11-01-arc-00000: 1 → 2\n"),
            "{}",
            prompt.user
        );
        assert!(
            !prompt.user.contains("id: x") && !prompt.user.contains("elsewhere") && !prompt.user.contains("2 arcs")
        );
    }

    #[test]
    fn a_prompt_shows_one_projects_arcs_and_the_hottest_project_is_asked_first() {
        // Arcs 0 and 1 (heat 0, 1) are alpha's, 2 and 3 (heat 2, 3) beta's, 4 (heat 4) gamma's.
        let mut snapshot = vault(5);
        for (n, file) in snapshot.values_mut().enumerate() {
            file.state.project = ["alpha", "alpha", "beta", "beta", "gamma"][n].into();
        }
        let ids = |project: &str| -> Vec<String> {
            snapshot
                .values()
                .filter(|file| file.state.project == project)
                .map(|file| file.state.arc.as_ref().unwrap().cluster_id.clone())
                .collect()
        };
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let input = PromptInput {
            snapshot: &snapshot,
            project: "alpha",
            active: &[],
            item_signals: &[],
            lessons: &[],
            last_diff: "",
            now,
        };
        let prompt = build(&input, &TokenCounter::Heuristic, 6000);
        assert!(prompt.user.contains("Project: alpha"), "{}", prompt.user);
        assert!(prompt.arcs_shown == 2 && prompt.user.contains("(2 of 2 arcs shown"), "{}", prompt.user);
        assert!(ids("alpha").iter().all(|id| prompt.user.contains(&format!("- {id} |"))), "{}", prompt.user);
        for other in ["beta", "gamma"] {
            assert!(!ids(other).iter().any(|id| prompt.user.contains(&format!("- {id} |"))), "{}", prompt.user);
        }
        // The hottest project first; gamma, one arc and no signal, has nothing to change.
        assert_eq!(projects(&snapshot, &[]), ["beta", "alpha"]);
    }

    #[test]
    fn signal_items_are_shown_beside_the_vaults_signals_as_read_only_context() {
        let snapshot = vault(3);
        let item = brain_core::Signal {
            id: "mem_01JDEMO".into(),
            origin: brain_core::SignalOrigin::Item,
            severity: brain_core::Severity::Nuclear,
            scope: brain_core::Scope::Global,
            project: None,
            source: "cli".into(),
            title: "Prod DB is read-only".into(),
            text: "Failover in progress".into(),
            created_at: None,
            file: None,
        };
        let input = PromptInput {
            snapshot: &snapshot,
            project: "",
            active: &[],
            item_signals: std::slice::from_ref(&item),
            lessons: &[],
            last_diff: "",
            now: Timestamp::from_second(1_800_000_000).unwrap(),
        };
        let prompt = build(&input, &TokenCounter::Heuristic, 6000);
        let line = "- mem_01JDEMO | nuclear | cli | item, read-only | Prod DB is read-only: Failover in progress\n";
        assert!(prompt.user.contains(&format!("## signals\n{line}")), "{}", prompt.user);
        assert_eq!(prompt.signals_shown, 1);
        assert!(prompt.user.contains("1 of 1 active signals"), "{}", prompt.user);
    }
}
