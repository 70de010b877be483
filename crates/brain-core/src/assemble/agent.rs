//! The `agent` profile (SPEC §4.3): an agent's identity, instructions, team files, recent
//! daily notes, team and personal memories and knowledge base, as a plan for the engine.
//!
//! Plan (total 16,000 tokens; every section capped at `min(section max, remaining)`, no
//! inflow, cut with `\n... [truncated]`):
//! | section | source | cap |
//! |---|---|---|
//! | Identity | `IDENTITY.md` | remaining; never truncated (dropped whole if it cannot fit) |
//! | Instructions | `INSTRUCTIONS.md` | remaining; never truncated |
//! | Team Goals / Team Context / Team Rules | the team's files | remaining |
//! | Recent Activity | daily files of the last 7 days, newest first, `### YYYY-MM-DD` | 3000 |
//! | Team Knowledge | top 5 team memories | 2000 |
//! | Personal Memories | top 5 agent memories | 2000 |
//! | Knowledge Base | `KNOWLEDGE.md` | 2000 |

use serde::{Deserialize, Serialize};

use super::brain::brain_hash;
use super::engine::{BudgetReport, Entry, Label, Order, Overflow, Plan, Section, assemble};
use super::render::push_inline_then_indented;
use crate::item::Item;
use crate::tokens::{AGENT_TRUNCATION_MARKER, TokenCounter};

/// The agent profile's total budget.
pub const AGENT_BUDGET: usize = 16_000;
const RECENT_ACTIVITY_CAP: usize = 3000;
const MEMORIES_CAP: usize = 2000;
const KNOWLEDGE_CAP: usize = 2000;

/// The files of an agent (and its team), as read by the caller. `None` = no such file.
#[derive(Clone, Debug, Default)]
pub struct AgentFiles {
    pub identity: Option<String>,
    pub instructions: Option<String>,
    pub knowledge: Option<String>,
    pub team_goals: Option<String>,
    pub team_context: Option<String>,
    pub team_rules: Option<String>,
    /// `(YYYY-MM-DD, text)` of the last 7 days, newest first.
    pub daily: Vec<(String, String)>,
}

/// The assembled agent context.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentContext {
    pub document: String,
    pub token_estimate: usize,
    pub brain_hash: String,
    pub budget: BudgetReport,
    pub overflow: Vec<Overflow>,
}

/// How a memory is shown: `- [<kind>] <content>` (the title when there is no content), its
/// later lines indented as the list item's (a line of it cannot open a section of brain's).
fn render_memory(item: &Item) -> String {
    let body = if item.content.trim().is_empty() { item.title.trim() } else { item.content.trim() };
    let mut out = format!("- [{}]", item.kind);
    push_inline_then_indented(&mut out, body);
    out
}

/// One file section: a heading and the file's text as a single entry.
fn file_section<'a>(label: &'static str, text: &'a str, cap: usize, truncatable: bool) -> Section<'a> {
    let section = Section::entries(
        label,
        cap,
        vec![Entry::new(Label::Name(label), 0, 0.0)],
        Order::AsGiven,
        Box::new(move |_| text.trim_end().to_string()),
    )
    .with_heading(format!("## {label}"))
    .without_inflow();
    if truncatable { section.with_truncation(AGENT_TRUNCATION_MARKER) } else { section }
}

fn memories_section<'a>(label: &'static str, memories: &'a [&'a Item], cap: usize) -> Section<'a> {
    let entries = memories.iter().enumerate().map(|(key, item)| Entry::new(Label::Id(&item.id), key, 0.0)).collect();
    Section::entries(label, cap, entries, Order::AsGiven, Box::new(move |key| render_memory(memories[key])))
        .with_heading(format!("## {label}"))
        .with_truncation(AGENT_TRUNCATION_MARKER)
        .without_inflow()
}

/// Assembles the agent context. `team_memories` and `personal_memories` are the chosen top
/// memories, best first (the caller scores them: 0.5 × relevance + 0.3 × importance/5 +
/// 0.2 × exp(−0.05 × days since last access), or the most recent without a topic).
pub fn agent_context(
    files: &AgentFiles,
    team_memories: &[&Item],
    personal_memories: &[&Item],
    counter: &TokenCounter,
    budget: usize,
) -> AgentContext {
    let remaining = usize::MAX;
    let mut sections: Vec<Section<'_>> = Vec::new();
    if let Some(text) = files.identity.as_deref().filter(|t| !t.trim().is_empty()) {
        sections.push(file_section("Identity", text, remaining, false));
    }
    if let Some(text) = files.instructions.as_deref().filter(|t| !t.trim().is_empty()) {
        sections.push(file_section("Instructions", text, remaining, false));
    }
    for (label, text) in
        [("Team Goals", &files.team_goals), ("Team Context", &files.team_context), ("Team Rules", &files.team_rules)]
    {
        if let Some(text) = text.as_deref().filter(|t| !t.trim().is_empty()) {
            sections.push(file_section(label, text, remaining, true));
        }
    }
    if !files.daily.is_empty() {
        let daily = &files.daily;
        let entries =
            daily.iter().enumerate().map(|(key, (date, _))| Entry::new(Label::Name(date), key, 0.0)).collect();
        sections.push(
            Section::entries(
                "Recent Activity",
                RECENT_ACTIVITY_CAP,
                entries,
                Order::AsGiven,
                Box::new(move |key| format!("### {}\n{}", daily[key].0, daily[key].1.trim_end())),
            )
            .with_heading("## Recent Activity")
            .with_truncation(AGENT_TRUNCATION_MARKER)
            .without_inflow(),
        );
    }
    if !team_memories.is_empty() {
        sections.push(memories_section("Team Knowledge", team_memories, MEMORIES_CAP));
    }
    if !personal_memories.is_empty() {
        sections.push(memories_section("Personal Memories", personal_memories, MEMORIES_CAP));
    }
    if let Some(text) = files.knowledge.as_deref().filter(|t| !t.trim().is_empty()) {
        sections.push(file_section("Knowledge Base", text, KNOWLEDGE_CAP, true));
    }
    let assembled = assemble(&Plan { budget, header: None, footer: None, sections, overflow_limit: 50 }, counter);
    AgentContext {
        brain_hash: brain_hash(&assembled.text),
        token_estimate: assembled.tokens,
        document: assembled.text,
        budget: assembled.budget,
        overflow: assembled.overflow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::fixtures::generate_items;

    fn files() -> AgentFiles {
        AgentFiles {
            identity: Some("I am the reviewer agent.".into()),
            instructions: Some("Review every PR for security.".into()),
            knowledge: Some("kb ".repeat(5000)),
            team_goals: Some("Ship v2.".into()),
            team_context: None,
            team_rules: Some("No force pushes.".into()),
            daily: vec![("2026-11-21".into(), "Reviewed 3 PRs.".into()), ("2026-11-20".into(), "Triage.".into())],
        }
    }

    #[test]
    fn sections_come_in_spec_order_with_headings_and_daily_dates() {
        let now = "2026-11-21T10:00:00Z".parse().unwrap();
        let items = generate_items(4, 1, now);
        let team: Vec<&Item> = items.iter().take(2).collect();
        let personal: Vec<&Item> = items.iter().skip(2).collect();
        let context = agent_context(&files(), &team, &personal, &TokenCounter::Heuristic, AGENT_BUDGET);
        let doc = &context.document;
        let order = [
            "## Identity",
            "## Instructions",
            "## Team Goals",
            "## Team Rules",
            "## Recent Activity",
            "### 2026-11-21",
            "### 2026-11-20",
            "## Team Knowledge",
            "## Personal Memories",
            "## Knowledge Base",
        ];
        let positions: Vec<usize> =
            order.iter().map(|h| doc.find(h).unwrap_or_else(|| panic!("{h} missing"))).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        assert!(doc.contains(&format!("- [{}] ", items[0].kind)));
        // The 5000-word knowledge base is cut to its 2000-token cap with the agent marker.
        assert!(doc.trim_end().ends_with("\n... [truncated]"), "{}", &doc[doc.len().saturating_sub(60)..]);
        assert!(TokenCounter::Heuristic.count(doc) <= AGENT_BUDGET);
    }

    #[test]
    fn identity_is_never_cut_only_dropped_whole_when_it_cannot_fit() {
        let mut files = files();
        files.identity = Some("identity ".repeat(400));
        let small = agent_context(&files, &[], &[], &TokenCounter::Heuristic, 200);
        assert!(!small.document.contains("identity identity"), "an identity that does not fit is dropped whole");
        assert!(small.overflow.iter().any(|o| o.section == "Identity"));
        let large = agent_context(&files, &[], &[], &TokenCounter::Heuristic, AGENT_BUDGET);
        assert!(large.document.contains(files.identity.as_deref().unwrap().trim_end()));
    }

    #[test]
    fn never_over_budget_for_any_budget() {
        let now = "2026-11-21T10:00:00Z".parse().unwrap();
        let items = generate_items(10, 2, now);
        let memories: Vec<&Item> = items.iter().collect();
        for budget in [0, 10, 100, 1000, 5000, 16_000] {
            for counter in [TokenCounter::Heuristic, TokenCounter::O200k] {
                let context = agent_context(&files(), &memories[..5], &memories[5..], &counter, budget);
                assert!(counter.count(&context.document) <= budget);
            }
        }
    }
}
