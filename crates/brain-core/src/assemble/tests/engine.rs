//! The engine on hand-made plans: flow, dropping, truncation, continuation, limits.

use std::fmt::Write;

use expect_test::{Expect, expect};

use crate::assemble::engine::{Entry, Group, Label, Order, Plan, Section, assemble};
use crate::tokens::TokenCounter;

/// Entries named by `texts`; each renders as its own text (key = position).
fn entries(texts: &'static [&'static str]) -> Vec<Entry<'static>> {
    texts.iter().enumerate().map(|(key, text)| Entry::new(Label::Name(text), key, 0.0)).collect()
}

fn section(name: &str, cap: usize, texts: &'static [&'static str]) -> Section<'static> {
    Section::entries(name, cap, entries(texts), Order::AsGiven, Box::new(move |key| texts[key].to_string()))
}

fn plan(budget: usize, sections: Vec<Section<'static>>) -> Plan<'static> {
    Plan { budget, header: None, footer: None, sections, overflow_limit: 10 }
}

fn check(plan: &Plan<'_>, expect: Expect) {
    let assembled = assemble(plan, &TokenCounter::Heuristic);
    assert!(assembled.tokens <= plan.budget);
    assert_eq!(assembled.tokens, TokenCounter::Heuristic.count(&assembled.text));
    let mut out = assembled.text.clone();
    let _ = writeln!(out, "==== budget {}/{}", assembled.budget.used, assembled.budget.cap);
    for row in &assembled.budget.sections {
        let _ = writeln!(out, "{}: {}/{} +{} -{}", row.name, row.used, row.cap, row.included, row.excluded);
    }
    for row in &assembled.overflow {
        let label = row.id.as_deref().or(row.name.as_deref()).unwrap_or("?");
        let _ = writeln!(out, "overflow: {label} [{}] {}", row.section, row.reason);
    }
    expect.assert_eq(&out);
}

#[test]
fn unused_budget_of_a_section_flows_to_the_next() {
    // "aaaa" costs 2 tokens with its newline; section a leaves 8 of its 10 to section b.
    let plan =
        plan(30, vec![section("a", 10, &["aaaa"]), section("b", 5, &["bbbbbbbbbbb", "bbbbbbbbbbb", "bbbbbbbbbbb"])]);
    check(
        &plan,
        expect![[r#"
            aaaa
            bbbbbbbbbbb
            bbbbbbbbbbb
            bbbbbbbbbbb
            ==== budget 11/30
            a: 2/10 +1 -0
            b: 9/13 +3 -0
        "#]],
    );
}

#[test]
fn a_section_without_inflow_keeps_its_own_cap() {
    let plan = plan(
        30,
        vec![
            section("a", 10, &["aaaa"]),
            section("b", 5, &["bbbbbbbbbbb", "bbbbbbbbbbb", "bbbbbbbbbbb"]).without_inflow(),
        ],
    );
    check(
        &plan,
        expect![[r#"
            aaaa
            bbbbbbbbbbb
            ==== budget 5/30
            a: 2/10 +1 -0
            b: 3/5 +1 -2
            overflow: bbbbbbbbbbb [b] over section budget
            overflow: bbbbbbbbbbb [b] over section budget
        "#]],
    );
}

#[test]
fn entries_that_do_not_fit_are_dropped_whole_and_smaller_ones_fill_the_gap() {
    let plan = plan(8, vec![section("a", 8, &["first entry", "a much longer second entry", "third"])]);
    check(
        &plan,
        expect![[r#"
            first entry
            third
            ==== budget 5/8
            a: 5/8 +2 -1
            overflow: a much longer second entry [a] over section budget
        "#]],
    );
}

#[test]
fn an_entry_alone_over_its_section_is_cut_with_the_marker_only_when_truncatable() {
    const LONG: &[&str] = &["line one of a long entry\nline two of a long entry\nline three of a long entry"];
    check(
        &plan(16, vec![section("cut", 16, LONG).with_truncation("… [truncated]")]),
        expect![[r#"
            line one of a long entry
            line two of a long entry… [truncated]
            ==== budget 16/16
            cut: 16/16 +1 -0
        "#]],
    );
    check(
        &plan(16, vec![section("whole", 16, LONG)]),
        expect![[r#"
            ==== budget 0/16
            whole: 0/16 +0 -1
            overflow: line one of a long entry
            line two of a long entry
            line three of a long entry [whole] over section budget
        "#]],
    );
}

#[test]
fn leftovers_get_a_second_chance_in_the_earlier_sections_place() {
    let plan = plan(
        40,
        vec![
            section("main", 6, &["main one", "main two", "main three"]).with_heading("## Main"),
            section("other", 6, &["other"]).with_heading("## Other"),
            Section::continuation("main-overflow", 0, 0),
        ],
    );
    check(
        &plan,
        expect![[r#"
            ## Main
            main one

            ## Other
            other
            ==== budget 9/40
            main: 6/6 +1 -2
            other: 5/6 +1 -0
            main-overflow: 0/1 +0 -2
            overflow: main two [main] over section budget
            overflow: main three [main] over section budget
        "#]],
    );
}

#[test]
fn ranked_entries_come_best_first_with_ties_by_label() {
    const TEXTS: &[&str] = &["low", "tie-b", "high", "tie-a"];
    let ranks = [0.1, 0.5, 0.9, 0.5];
    let entries =
        TEXTS.iter().zip(ranks).enumerate().map(|(key, (text, rank))| Entry::new(Label::Id(text), key, rank)).collect();
    let plan =
        plan(7, vec![Section::entries("ranked", 7, entries, Order::ByRank, Box::new(|key| TEXTS[key].to_string()))]);
    check(
        &plan,
        expect![[r#"
            high
            tie-a
            tie-b
            low
            ==== budget 6/7
            ranked: 7/7 +4 -0
        "#]],
    );
}

#[test]
fn groups_are_shown_in_their_order_each_heading_once() {
    const TEXTS: &[&str] = &["- b1", "- a1", "- b2", "- a2"];
    let group = |key: usize| {
        let (order, heading) = if TEXTS[key].starts_with("- a") { (0, "### A") } else { (1, "### B") };
        Group { order, heading: heading.into() }
    };
    let plan = plan(100, vec![section("grouped", 100, TEXTS).with_heading("## Grouped").with_groups(Box::new(group))]);
    check(
        &plan,
        expect![[r#"
            ## Grouped

            ### A
            - a1
            - a2

            ### B
            - b1
            - b2
            ==== budget 12/100
            grouped: 15/100 +4 -0
        "#]],
    );
}

#[test]
fn the_overflow_list_names_a_limited_number_per_section_and_counts_the_rest() {
    let mut plan = plan(0, vec![section("s", 0, &["one", "two", "three", "four"])]);
    plan.overflow_limit = 2;
    check(
        &plan,
        expect![[r#"
            ==== budget 0/0
            s: 0/0 +0 -4
            overflow: one [s] over section budget
            overflow: two [s] over section budget
            overflow: 2 more [s] over section budget
        "#]],
    );
}

#[test]
fn header_and_footer_are_reserved_first_and_left_out_when_they_do_not_fit() {
    let build = |budget| Plan {
        budget,
        header: Some("# Title".into()),
        footer: Some("footer".into()),
        sections: vec![section("s", budget, &["body text"])],
        overflow_limit: 10,
    };
    check(
        &build(12),
        expect![[r#"
            # Title
            body text

            footer
            ==== budget 7/12
            header: 2/2 +1 -0
            s: 3/8 +1 -0
            footer: 2/2 +1 -0
        "#]],
    );
    // A footer is only reserved when it takes at most a quarter of the budget.
    check(
        &build(5),
        expect![[r#"
            # Title
            body text
            ==== budget 5/5
            header: 2/2 +1 -0
            s: 3/3 +1 -0
            footer: 0/2 +0 -1
            overflow: footer [footer] over total budget
        "#]],
    );
    check(
        &build(1),
        expect![[r#"
            ==== budget 0/1
            header: 0/2 +0 -1
            s: 0/1 +0 -1
            footer: 0/2 +0 -1
            overflow: header [header] over total budget
            overflow: footer [footer] over total budget
            overflow: body text [s] over section budget
        "#]],
    );
}
