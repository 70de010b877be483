//! Store benchmarks at 100k items: bulk import (one transaction), ranked search (the store's
//! candidates and statistics, then `brain_core::search::rank`, as `brain search` runs it), list.
//! `cargo bench -p brain-store --bench store`
//!
//! Two corpora. `fixtures::generate_items` (the assembler's generator) writes from a ~60-word
//! vocabulary, so every query word occurs in about half of all items: the worst case for a
//! ranked search, kept here as `search_100k_worst_case`. Real project memory follows a
//! Zipf-like word distribution; `realistic_items` models that (a 20,000-word vocabulary,
//! Zipf exponent 1.07), and `search_100k` queries it with words picked the way people
//! search: mid-frequency words, one to three at a time.

use std::sync::LazyLock;

use brain_core::Item;
use brain_core::assemble::fixtures::SplitMix64;
use brain_store::{ItemFilter, Store};

const N: usize = 100_000;

fn items() -> &'static [Item] {
    static ITEMS: LazyLock<Vec<Item>> = LazyLock::new(|| {
        let now = "2026-11-21T10:00:00Z".parse().expect("valid timestamp");
        brain_core::assemble::fixtures::generate_items(N, 7, now)
    });
    &ITEMS
}

/// Items whose titles and content draw from a Zipf-distributed pseudo-word vocabulary.
fn realistic_items() -> &'static [Item] {
    static ITEMS: LazyLock<Vec<Item>> = LazyLock::new(|| {
        let vocabulary = vocabulary();
        let zipf = ZipfSampler::new(vocabulary.len(), 1.07);
        let mut random = SplitMix64::new(11);
        let mut items = items().to_vec();
        for item in &mut items {
            let title_words = 4 + random.below(7) as usize;
            let content_words = 20 + random.below(280) as usize;
            item.title = sentence(&vocabulary, &zipf, &mut random, title_words);
            item.content = sentence(&vocabulary, &zipf, &mut random, content_words);
        }
        items
    });
    &ITEMS
}

/// 20,000 distinct pronounceable pseudo-words, deterministic.
fn vocabulary() -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gi", "fu", "ha", "je", "bo", "ci", "wa",
        "xe", "yu", "qua", "tor", "ion", "ent", "ar", "el", "is", "on", "um", "ex",
    ];
    let mut words = Vec::with_capacity(20_000);
    let mut random = SplitMix64::new(3);
    let mut seen = std::collections::HashSet::new();
    while words.len() < 20_000 {
        let syllables = 2 + random.below(3) as usize;
        let word: String = (0..syllables).map(|_| *random.pick(SYLLABLES)).collect();
        if seen.insert(word.clone()) {
            words.push(word);
        }
    }
    words
}

/// Samples ranks 0..n with probability ∝ 1 / (rank + 1)^s by binary search on the CDF.
struct ZipfSampler {
    cumulative: Vec<f64>,
}

impl ZipfSampler {
    fn new(n: usize, exponent: f64) -> ZipfSampler {
        let mut total = 0.0;
        let cumulative = (0..n)
            .map(|rank| {
                total += 1.0 / ((rank + 1) as f64).powf(exponent);
                total
            })
            .collect::<Vec<_>>();
        ZipfSampler { cumulative: cumulative.into_iter().map(|c| c / total).collect() }
    }

    fn sample(&self, random: &mut SplitMix64) -> usize {
        let roll = random.unit();
        self.cumulative.partition_point(|&c| c < roll).min(self.cumulative.len() - 1)
    }
}

fn sentence(vocabulary: &[String], zipf: &ZipfSampler, random: &mut SplitMix64, words: usize) -> String {
    (0..words).map(|_| vocabulary[zipf.sample(random)].as_str()).collect::<Vec<_>>().join(" ")
}

struct Filled {
    _dir: tempfile::TempDir,
    store: Store,
}

fn fill(items: &[Item]) -> Filled {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_sqlite(&dir.path().join("brain.db"), true).expect("open");
    store.insert_all(items, &mut |_| {}).expect("insert");
    Filled { _dir: dir, store }
}

fn filled() -> &'static Filled {
    static FILLED: LazyLock<Filled> = LazyLock::new(|| fill(items()));
    &FILLED
}

fn filled_realistic() -> &'static Filled {
    static FILLED: LazyLock<Filled> = LazyLock::new(|| fill(realistic_items()));
    &FILLED
}

fn main() {
    divan::main();
}

/// Inserting 100k items into a fresh database in one transaction.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn import_100k(bencher: divan::Bencher) {
    let items = items();
    bencher
        .with_inputs(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = Store::open_sqlite(&dir.path().join("brain.db"), true).expect("open");
            (dir, store)
        })
        .bench_local_values(|(dir, store)| {
            store.insert_all(items, &mut |_| {}).expect("insert");
            (dir, store)
        });
}

/// Search as `brain::search::lexical` runs it for one page of 10: parse, 50 candidates with
/// the terms' statistics, rank.
fn ranked_search(store: &Store, text: &str, filter: &ItemFilter) -> usize {
    let query = brain_core::search::Query::parse(text);
    let words = query.words();
    let request = brain_core::search::CandidateRequest { words: &words, limit: 50 };
    let candidates = store.candidates(&request, filter).expect("candidates");
    let ranked = brain_core::search::rank(&query, &candidates, &brain_core::search::Ranking::default());
    ranked.len().min(10)
}

/// Vocabulary ranks of query words: one word from the head (rank 20), the rest from the
/// middle of the distribution, where people's search words sit.
const REALISTIC_QUERIES: &[&[usize]] = &[&[150], &[400, 1200], &[90, 700, 3000], &[20, 2500], &[5000]];

/// BM25 search at 100k items of realistic text, approved only, top 10 (what `brain search` does).
#[divan::bench(args = REALISTIC_QUERIES)]
fn search_100k(bencher: divan::Bencher, ranks: &[usize]) {
    let vocabulary = vocabulary();
    let query: String = ranks.iter().map(|&rank| vocabulary[rank].as_str()).collect::<Vec<_>>().join(" ");
    let store = &filled_realistic().store;
    let filter = ItemFilter { statuses: vec![brain_core::Status::Approved], ..ItemFilter::default() };
    bencher.bench_local(|| ranked_search(store, &query, &filter));
}

const WORST_CASE_QUERIES: &[&str] = &["vault", "token rotation secret sync"];

/// Queries whose words each occur in about half of the 100k items.
#[divan::bench(args = WORST_CASE_QUERIES)]
fn search_100k_worst_case(bencher: divan::Bencher, query: &str) {
    let store = &filled().store;
    let filter = ItemFilter { statuses: vec![brain_core::Status::Approved], ..ItemFilter::default() };
    bencher.bench_local(|| ranked_search(store, query, &filter));
}

/// The newest 20 items (what `brain list --limit 20` reads).
#[divan::bench]
fn list_20_of_100k(bencher: divan::Bencher) {
    let store = &filled().store;
    let filter = ItemFilter { limit: Some(20), ..ItemFilter::default() };
    bencher.bench_local(|| store.list(&filter).expect("list"));
}

/// Every item of the session's scopes as metas, in one read transaction (the listing the
/// brain document and claude-md summary start from; reads the `items_layering` index).
#[divan::bench(sample_count = 20)]
fn list_metas_100k(bencher: divan::Bencher) {
    let store = &filled().store;
    let scopes = [brain_core::Scope::Global, brain_core::Scope::Project("bench".into())];
    bencher.bench_local(|| store.read(|read| read.list_metas(&scopes)).expect("list metas"));
}

/// all-MiniLM-L6-v2's dimension.
const DIMENSIONS: usize = 384;

/// The realistic 100k store with a unit vector per item (deterministic pseudo-random: the
/// scan's cost does not depend on the values), under the model name "bench".
fn filled_with_vectors() -> &'static Filled {
    static FILLED: LazyLock<Filled> = LazyLock::new(|| {
        let filled = fill(realistic_items());
        let mut random = SplitMix64::new(5);
        for chunk in realistic_items().chunks(5_000) {
            let vectors: Vec<(String, Vec<f32>)> =
                chunk.iter().map(|item| (item.id.clone(), unit_vector(&mut random))).collect();
            filled.store.put_vectors("bench", &vectors).expect("put vectors");
        }
        filled
    });
    &FILLED
}

fn unit_vector(random: &mut SplitMix64) -> Vec<f32> {
    let vector: Vec<f32> = (0..DIMENSIONS).map(|_| random.unit() as f32 - 0.5).collect();
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    vector.into_iter().map(|x| x / norm).collect()
}

/// The semantic half of a hybrid search at 100k items (the query already embedded): the
/// 50 approved items nearest to a query vector, as `brain::search` asks for them.
#[divan::bench(sample_count = 20)]
fn nearest_50_of_100k(bencher: divan::Bencher) {
    let store = &filled_with_vectors().store;
    let filter = ItemFilter { statuses: vec![brain_core::Status::Approved], ..ItemFilter::default() };
    let query = unit_vector(&mut SplitMix64::new(9));
    bencher.bench_local(|| store.nearest("bench", &query, &filter, 50).expect("nearest").len());
}
