//! Property: the lean assembly — metas of every item plus the full items it asks for —
//! equals the assembly over every item in full, byte for byte, whatever the order of the
//! metas, the budget and the counter.

use std::collections::HashMap;

use proptest::prelude::*;

use super::never_over_budget::store;
use super::{Edit, item, now};
use crate::assemble::fixtures::{SplitMix64, generate_items};
use crate::assemble::{
    BrainOptions, Feed, ItemMeta, MissingItems, brain_document, brain_document_lean, claude_md_summary,
    claude_md_summary_lean, text_candidates,
};
use crate::item::{Item, Kind};
use crate::tokens::TokenCounter;

/// `items` in a shuffled order (the store lists metas in storage order).
fn shuffled(items: &[Item], seed: u64) -> Vec<Item> {
    let mut random = SplitMix64::new(seed);
    let mut shuffled = items.to_vec();
    for position in (1..shuffled.len()).rev() {
        let other = random.below(position as u64 + 1) as usize;
        shuffled.swap(position, other);
    }
    shuffled
}

/// Runs a lean assembly the way the application does: the candidates first, then whatever
/// the assembly reports missing, until it succeeds. Returns the result and the number of
/// full items it needed.
fn lean<T>(
    items: &[Item],
    options: &BrainOptions,
    with_candidates: bool,
    assemble: impl Fn(&[ItemMeta], &HashMap<usize, Item>) -> Result<T, MissingItems>,
) -> (T, usize) {
    let metas: Vec<ItemMeta> = items.iter().map(ItemMeta::of).collect();
    let mut full = HashMap::new();
    let mut wanted = if with_candidates { text_candidates(&metas, now(), options) } else { Vec::new() };
    loop {
        for &index in &wanted {
            full.insert(index, items[index].clone());
        }
        match assemble(&metas, &full) {
            Ok(result) => return (result, full.len()),
            Err(MissingItems(missing)) => {
                assert!(!missing.is_empty() && missing.iter().all(|index| !full.contains_key(index)));
                wanted = missing;
            }
        }
    }
}

fn assert_lean_equals_full(
    items: &[Item],
    order_seed: u64,
    options: &BrainOptions,
    feed: &Feed,
    counter: TokenCounter,
) {
    let expected = brain_document(items, now(), &counter, options, feed);
    let listed = shuffled(items, order_seed);
    for with_candidates in [true, false] {
        let (document, _) = lean(&listed, options, with_candidates, |metas, full| {
            brain_document_lean(metas, full, now(), &counter, options, feed)
        });
        assert_eq!(document, expected);
        let expected = claude_md_summary(items, now(), &counter, options, &feed.injects);
        let (summary, _) = lean(&listed, options, with_candidates, |metas, full| {
            claude_md_summary_lean(metas, full, now(), &counter, options, &feed.injects)
        });
        assert_eq!(summary, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn the_lean_document_equals_the_full_one(
        (items, feed) in store(1500),
        budget in 50usize..=20_000,
        order_seed in any::<u64>(),
        include_tree in any::<bool>(),
    ) {
        let options = BrainOptions { include_tree, ..BrainOptions::with_budget(budget) };
        assert_lean_equals_full(&items, order_seed, &options, &feed, TokenCounter::Heuristic);
    }
}

#[test]
fn the_lean_document_equals_the_full_one_under_every_counter() {
    let items = generate_items(800, 11, now());
    for counter in TokenCounter::ALL {
        for budget in [300, 6000] {
            assert_lean_equals_full(&items, 5, &BrainOptions::with_budget(budget), &Feed::default(), *counter);
        }
    }
}

#[test]
fn consolidated_items_and_ties_are_the_same_in_the_lean_document() {
    // Equal scores (ties by id), a dedup group whose members are listed in either order,
    // fixed bugs and done todos (classified from the metas' tags).
    let items = vec![
        item("mem_b", Kind::Decision, "Tied B").hint("h"),
        item("mem_a", Kind::Decision, "Tied A").hint("h"),
        item("mem_c", Kind::Decision, "Tied C"),
        item("mem_d", Kind::Bug, "Fixed bug").tags(&["fixed"]).age(40.0),
        item("mem_e", Kind::Bug, "Live bug").tags(&["flaky"]),
        item("mem_f", Kind::Todo, "Done todo").tags(&["done"]),
        item("mem_g", Kind::Todo, "Pending todo"),
    ];
    for seed in 0..6 {
        assert_lean_equals_full(&items, seed, &BrainOptions::default(), &Feed::default(), TokenCounter::Heuristic);
    }
}

#[test]
fn the_candidates_usually_cover_what_a_big_store_renders() {
    let items = generate_items(20_000, 42, now());
    let options = BrainOptions::default();
    let (document, fetched) = lean(&items, &options, true, |metas, full| {
        brain_document_lean(metas, full, now(), &TokenCounter::Heuristic, &options, &Feed::default())
    });
    assert_eq!(document, brain_document(&items, now(), &TokenCounter::Heuristic, &options, &Feed::default()));
    let metas: Vec<ItemMeta> = items.iter().map(ItemMeta::of).collect();
    assert_eq!(fetched, text_candidates(&metas, now(), &options).len(), "one round: the guess covered everything");
    assert!(fetched < 2000, "a few hundred full items of 20,000, not {fetched}");
}
