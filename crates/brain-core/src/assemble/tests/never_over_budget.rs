//! Property: whatever the store and the budget, the document never exceeds the budget.

use proptest::prelude::*;

use super::now;
use crate::assemble::fixtures::generate_items;
use crate::assemble::{BrainOptions, Feed, FeedSignal, HotArc, InjectBlock, brain_document, claude_md_summary};
use crate::item::{Item, Severity};
use crate::tokens::TokenCounter;

/// A random store: 0 to `max_items` generated items, some made larger than a whole layer,
/// and a feed of random size.
pub(super) fn store(max_items: usize) -> impl Strategy<Value = (Vec<Item>, Feed)> {
    (0..=max_items, any::<u64>(), 0usize..6, 0usize..4).prop_map(|(count, seed, huge, feed_size)| {
        let mut items = generate_items(count, seed, now());
        // Items near the content limit: alone larger than any layer of a default budget.
        for (position, item) in items.iter_mut().enumerate().take(huge) {
            item.content = format!("huge item {position}\n") + &"a long line of content ".repeat(850);
            item.importance = 5;
            item.title = "x".repeat(150 + position);
        }
        let feed = Feed {
            hot_arcs: (0..feed_size * 3)
                .map(|n| HotArc {
                    id: format!("arc-{n}"),
                    title: format!("Arc {n} ").repeat(n + 1),
                    heat: (n % 11) as u8,
                    region: "bridge".into(),
                    status: "active".into(),
                })
                .collect(),
            signals: (0..feed_size * 2)
                .map(|n| FeedSignal {
                    id: format!("sig-{n}"),
                    severity: if n % 2 == 0 { Severity::Critical } else { Severity::Info },
                    source: "ci".into(),
                    text: "signal text ".repeat(n * 40 + 1),
                })
                .collect(),
            injects: (0..feed_size)
                .map(|n| InjectBlock {
                    id: String::new(),
                    target: "claude.md".into(),
                    content: "inject ".repeat(n * 300 + 1),
                })
                .collect(),
        };
        (items, feed)
    })
}

fn assert_within(items: &[Item], feed: &Feed, budget: usize, counter: TokenCounter) -> Result<(), TestCaseError> {
    let options = BrainOptions::with_budget(budget);
    let doc = brain_document(items, now(), &counter, &options, feed);
    let tokens = counter.count(&doc.document);
    prop_assert_eq!(tokens, doc.token_estimate);
    prop_assert!(tokens <= budget, "{} tokens over a budget of {}", tokens, budget);
    prop_assert_eq!(doc.budget.used, tokens);
    let summary_tokens = counter.count(&doc.summary);
    prop_assert!(summary_tokens <= options.summary.token_budget);
    let with_injects = claude_md_summary(items, now(), &counter, &options, &feed.injects);
    let cap = options.summary.token_budget + if feed.injects.is_empty() { 0 } else { options.summary.inject_budget };
    prop_assert!(counter.count(&with_injects.document) <= cap);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn the_document_never_exceeds_the_budget_under_the_heuristic(
        (items, feed) in store(2000),
        budget in 50usize..=20_000,
    ) {
        assert_within(&items, &feed, budget, TokenCounter::Heuristic)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn the_document_never_exceeds_the_budget_under_o200k(
        (items, feed) in store(2000),
        budget in 50usize..=20_000,
    ) {
        assert_within(&items, &feed, budget, TokenCounter::O200k)?;
    }
}

#[test]
fn tiny_budgets_never_overflow_under_any_counter() {
    let items = generate_items(200, 3, now());
    for counter in TokenCounter::ALL {
        for budget in 0..60 {
            let doc = brain_document(&items, now(), counter, &BrainOptions::with_budget(budget), &Feed::default());
            assert!(counter.count(&doc.document) <= budget, "{counter} {budget}: {:?}", doc.document);
        }
    }
}
