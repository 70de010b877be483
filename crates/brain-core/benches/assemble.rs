//! Benchmark: assembling context from many items (SPEC §10: the brain document from
//! 100k items in process, goal ≤ 10 ms median).
//!
//! `cargo bench -p brain-core --bench assemble`

use brain_core::Timestamp;
use brain_core::assemble::fixtures::generate_items;
use brain_core::assemble::{
    BrainOptions, Feed, ItemMeta, LeanAssembly, MissingItems, brain_document, brain_document_lean, claude_md_summary,
    text_candidates,
};
use brain_core::tokens::{TRUNCATION_MARKER, TokenCounter, truncate_to_budget};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

fn now() -> Timestamp {
    "2026-11-21T10:00:00Z".parse().expect("valid timestamp")
}

/// The brain document (with its claude-md summary, tree and reports) under the default
/// heuristic counter and the default 6000-token budget.
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 50)]
fn brain_document_heuristic(bencher: Bencher, items: usize) {
    let now = now();
    let items = generate_items(items, 42, now);
    let options = BrainOptions::default();
    let feed = Feed::default();
    bencher.bench_local(|| brain_document(black_box(&items), now, &TokenCounter::Heuristic, &options, &feed));
}

/// The same without the schema-key tree (`include_tree: false`): the tree reads the schema
/// key of every item, which is most of the memory traffic at 100k items.
#[divan::bench(args = [100_000], sample_count = 50)]
fn brain_document_heuristic_without_tree(bencher: Bencher, items: usize) {
    let now = now();
    let items = generate_items(items, 42, now);
    let options = BrainOptions { include_tree: false, ..BrainOptions::default() };
    let feed = Feed::default();
    bencher.bench_local(|| brain_document(black_box(&items), now, &TokenCounter::Heuristic, &options, &feed));
}

/// The lean path (what the application runs after listing the store): the same document
/// over 100k `ItemMeta`s, with the full items it renders given (fetched before timing).
#[divan::bench(args = [100_000], sample_count = 50)]
fn brain_document_lean_heuristic(bencher: Bencher, items: usize) {
    let now = now();
    let items = generate_items(items, 42, now);
    let options = BrainOptions::default();
    let feed = Feed::default();
    let metas: Vec<ItemMeta> = items.iter().map(ItemMeta::of).collect();
    let mut full = std::collections::HashMap::new();
    let mut wanted = text_candidates(&metas, now, &options);
    loop {
        for &index in &wanted {
            full.insert(index, items[index].clone());
        }
        match brain_document_lean(&metas, &full, now, &TokenCounter::Heuristic, &options, &feed) {
            Ok(_) => break,
            Err(MissingItems(missing)) => wanted = missing,
        }
    }
    drop(items);
    bencher.bench_local(|| {
        brain_document_lean(black_box(&metas), &full, now, &TokenCounter::Heuristic, &options, &feed)
            .expect("every rendered item is given")
    });
}

/// The whole in-process work of the application's assembly over 100k `ItemMeta`s, as
/// `Brain::brain_document` runs it: one pass (`LeanAssembly::new`), choosing the items whose
/// text may be rendered, then the document from the same pass. (The store fetches the
/// chosen rows in between; that read is in `benches/store.rs`.)
#[divan::bench(args = [100_000], sample_count = 50)]
fn brain_document_lean_app_path(bencher: Bencher, items: usize) {
    let now = now();
    let items = generate_items(items, 42, now);
    let options = BrainOptions::default();
    let feed = Feed::default();
    let metas: Vec<ItemMeta> = items.iter().map(ItemMeta::of).collect();
    let wanted = text_candidates(&metas, now, &options);
    let full: std::collections::HashMap<usize, brain_core::Item> =
        wanted.iter().map(|&index| (index, items[index].clone())).collect();
    drop(items);
    bencher.bench_local(|| {
        let lean = LeanAssembly::new(black_box(&metas), now, &options, options.include_tree);
        black_box(lean.text_candidates(&options));
        lean.brain_document(&full, &TokenCounter::Heuristic, &options, &feed)
            .expect("the candidates cover the document")
    });
}

/// The same under the exact o200k counter (vocabulary built before timing).
#[divan::bench(args = [100_000], sample_count = 30)]
fn brain_document_o200k(bencher: Bencher, items: usize) {
    let now = now();
    let items = generate_items(items, 42, now);
    let options = BrainOptions::default();
    let feed = Feed::default();
    TokenCounter::O200k.count("warm up the vocabulary");
    bencher.bench_local(|| brain_document(black_box(&items), now, &TokenCounter::O200k, &options, &feed));
}

/// The claude-md summary alone.
#[divan::bench(args = [100_000], sample_count = 50)]
fn claude_md_summary_heuristic(bencher: Bencher, items: usize) {
    let now = now();
    let items = generate_items(items, 42, now);
    let options = BrainOptions::default();
    bencher.bench_local(|| claude_md_summary(black_box(&items), now, &TokenCounter::Heuristic, &options, &[]));
}

/// Cutting a maximal (20,000-character) item to 1000 tokens.
#[divan::bench(args = [TokenCounter::Heuristic, TokenCounter::O200k])]
fn truncate_a_maximal_item(bencher: Bencher, counter: TokenCounter) {
    let text = "a line of item content with some words\n".repeat(512);
    counter.count("warm up");
    bencher.bench_local(|| truncate_to_budget(&counter, black_box(&text), 1000, TRUNCATION_MARKER));
}
