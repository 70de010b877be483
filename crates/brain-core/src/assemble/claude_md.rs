//! The `claude-md` profile (SPEC §4.4): a compact summary — project brief, recent
//! decisions, known issues — plus the vault's inject blocks for the target file, as a plan
//! for the engine; and the managed block that `brain inject` writes into CLAUDE.md,
//! AGENTS.md, GEMINI.md or .cursorrules.
//!
//! Plan (default 1000 tokens for the summary, +500 when inject blocks are given):
//! header `## Project Memory (brain)`; `brief` (40 %: the Layer 0 brief), `decisions`
//! (30 %: decisions updated in the last 30 days, by score, not already in the brief),
//! `issues` (the rest: active bugs and unresolved signal items, by score), `inject` (the
//! inject budget: blocks in the given order, identical ones once); unused budget flows on.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::brain::brief_section;
use super::classify::{Analysis, Rows};
use super::engine::{BudgetReport, Entry, Label, Order, Overflow, Plan, Section, assemble};
use super::feed::{InjectBlock, render_inject};
use super::render::{clip, first_line, inert, title};
use crate::item::{Item, Kind};
use crate::time::Timestamp;
use crate::tokens::{TRUNCATION_MARKER, TokenCounter};

use super::brain::BrainOptions;

/// Opens the managed block.
pub const BLOCK_START: &str = "<!-- brain:start -->";
/// Closes the managed block.
pub const BLOCK_END: &str = "<!-- brain:end -->";

/// "Recent decisions" are decisions updated within this many days.
const RECENT_DECISION_DAYS: f64 = 30.0;

/// Budgets of the claude-md profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClaudeMdOptions {
    /// The summary (brief, decisions, issues); SPEC: ~1000 tokens.
    pub token_budget: usize,
    /// Added for the target's inject blocks when there are any.
    pub inject_budget: usize,
}

impl Default for ClaudeMdOptions {
    fn default() -> Self {
        ClaudeMdOptions { token_budget: 1000, inject_budget: 500 }
    }
}

/// The summary and its accounting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaudeMdSummary {
    /// The block body (markdown, ends with a newline unless empty).
    pub document: String,
    pub token_estimate: usize,
    pub budget: BudgetReport,
    pub overflow: Vec<Overflow>,
}

/// The claude-md summary of `items` at `now`, with the inject blocks meant for the target
/// (filter them with [`InjectBlock::targets`]). Uses `options.summary` for the budgets,
/// `options.thresholds` for the archive and `options.list_limit` for the overflow list.
pub fn claude_md_summary(
    items: &[Item],
    now: Timestamp,
    counter: &TokenCounter,
    options: &BrainOptions,
    injects: &[InjectBlock],
) -> ClaudeMdSummary {
    let analysis = Analysis::new(Rows::Items(items), now, &options.thresholds, false);
    summary_from_analysis(&analysis, counter, &options.summary, injects, options.list_limit)
}

pub(crate) fn summary_from_analysis(
    analysis: &Analysis<'_>,
    counter: &TokenCounter,
    options: &ClaudeMdOptions,
    injects: &[InjectBlock],
    list_limit: usize,
) -> ClaudeMdSummary {
    let plan = summary_plan(analysis, options, injects, list_limit);
    let assembled = assemble(&plan, counter);
    ClaudeMdSummary {
        document: assembled.text,
        token_estimate: assembled.tokens,
        budget: assembled.budget,
        overflow: assembled.overflow,
    }
}

fn summary_plan<'a>(
    analysis: &'a Analysis<'a>,
    options: &ClaudeMdOptions,
    injects: &'a [InjectBlock],
    list_limit: usize,
) -> Plan<'a> {
    let total = options.token_budget;
    let brief_cap = total * 2 / 5;
    let decisions_cap = total * 3 / 10;
    let issues_cap = total - brief_cap - decisions_cap;
    let in_brief = &analysis.brief.decisions;

    // One pass over the live items for both ranked sections.
    let mut decisions = Vec::new();
    let mut issues = Vec::new();
    for live in &analysis.live {
        let entry = || Entry::new(Label::Id(live.id), live.index, live.score);
        if live.kind == Kind::Decision && live.age_days <= RECENT_DECISION_DAYS && !in_brief.contains(&live.index) {
            decisions.push(entry());
        } else if live.is_known_issue() {
            issues.push(entry());
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut inject_entries = Vec::new();
    for (key, inject) in injects.iter().enumerate() {
        let content = inject.content.trim();
        if content.is_empty() || seen.contains(&content) {
            continue;
        }
        seen.push(content);
        let label = if inject.id.is_empty() { Label::Name(&inject.target) } else { Label::Id(&inject.id) };
        inject_entries.push(Entry::new(label, key, 0.0));
    }

    let mut sections = vec![
        brief_section("brief", brief_cap, analysis).with_heading("### Project Brief"),
        Section::entries(
            "decisions",
            decisions_cap,
            decisions,
            Order::ByRank,
            Box::new(move |index| analysis.full(index).map_or_else(String::new, |item| render_one_liner(item, false))),
        )
        .with_heading("### Recent Decisions"),
        Section::entries(
            "issues",
            issues_cap,
            issues,
            Order::ByRank,
            Box::new(move |index| analysis.full(index).map_or_else(String::new, |item| render_one_liner(item, true))),
        )
        .with_heading("### Known Issues"),
    ];
    let mut budget = total;
    if !inject_entries.is_empty() {
        budget = budget.saturating_add(options.inject_budget);
        sections.push(
            Section::entries(
                "inject",
                options.inject_budget,
                inject_entries,
                Order::AsGiven,
                Box::new(move |key| render_inject(&injects[key])),
            )
            .with_heading("### From the Vault")
            .with_truncation(TRUNCATION_MARKER),
        );
    }
    Plan {
        budget,
        header: Some("## Project Memory (brain)".into()),
        footer: Some(
            "_Generated by `brain inject`; full memory: `brain brain`, search: `brain search <query>`._".into(),
        ),
        sections,
        overflow_limit: list_limit,
    }
}

fn render_one_liner(item: &Item, with_kind: bool) -> String {
    let mut out = format!("- **{}**", title(item, 160));
    if with_kind {
        let _ = write!(out, " ({}, importance {})", item.kind, item.importance);
    }
    let summary = first_line(&item.content);
    if !summary.is_empty() {
        let _ = write!(out, ": {}", inert(&clip(summary, 160)));
    }
    out
}

/// Replaces the managed block of `existing` (the text from [`BLOCK_START`] to
/// [`BLOCK_END`]) with one holding `block_body`, or appends the block after a blank line
/// when there is none. Every byte outside the block is preserved; a file with CRLF line
/// endings gets CRLF inside the block; a file without a trailing newline keeps having
/// none; running it twice gives the same text as running it once.
///
/// The block is the first start marker followed by an end marker (the start marker
/// closest to that end marker wins), so a stray marker elsewhere is left alone. Marker
/// text inside `block_body` is neutralised so it cannot end the block early.
pub fn upsert_managed_block(existing: &str, block_body: &str) -> String {
    let crlf = uses_crlf(existing);
    let newline = if crlf { "\r\n" } else { "\n" };
    let block = render_block(block_body, newline);

    if let Some((start, end)) = find_block(existing) {
        let mut out = String::with_capacity(existing.len() + block.len());
        out.push_str(&existing[..start]);
        out.push_str(&block);
        out.push_str(&existing[end..]);
        return out;
    }
    if existing.is_empty() {
        return format!("{block}{newline}");
    }
    let mut out = String::with_capacity(existing.len() + block.len() + 4);
    out.push_str(existing);
    let ends_with_newline = existing.ends_with('\n');
    if !ends_with_newline {
        out.push_str(newline);
    }
    if !(existing.ends_with("\n\n") || existing.ends_with("\n\r\n")) {
        out.push_str(newline);
    }
    out.push_str(&block);
    if ends_with_newline {
        out.push_str(newline);
    }
    out
}

/// CRLF when the first line ending of the text is CRLF.
fn uses_crlf(text: &str) -> bool {
    text.find('\n').is_some_and(|position| text[..position].ends_with('\r'))
}

/// `start marker, newline, body lines, end marker` — no newline after the end marker.
fn render_block(body: &str, newline: &str) -> String {
    let body = body
        .replace("\r\n", "\n")
        .replace(BLOCK_START, "<!-- brain:start (quoted) -->")
        .replace(BLOCK_END, "<!-- brain:end (quoted) -->");
    let body = body.trim_end_matches('\n');
    let mut block = String::with_capacity(body.len() + 64);
    block.push_str(BLOCK_START);
    block.push_str(newline);
    for line in body.split('\n') {
        if body.is_empty() {
            break;
        }
        block.push_str(line);
        block.push_str(newline);
    }
    block.push_str(BLOCK_END);
    block
}

/// Byte range of the managed block, markers included.
fn find_block(text: &str) -> Option<(usize, usize)> {
    let first_start = text.find(BLOCK_START)?;
    let after_start = first_start + BLOCK_START.len();
    let end = after_start + text[after_start..].find(BLOCK_END)?;
    let start = text[..end].rfind(BLOCK_START)?;
    Some((start, end + BLOCK_END.len()))
}
