//! Benchmark: marker parsing throughput.
//!
//! Goals (SPEC §10): linear, ≥ 200 MB/s on typical arcs, 10,000 markers in one file ≤ 10 ms.
//! Run with `cargo bench -p brain-core --bench markers`.

use brain_core::vault::{DEFAULT_MAX_BYTES, derived_items, parse};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// A realistic ~2 KB arc: frontmatter, prose, a code fence and ten markers of every type.
const ARC_2K: &str = include_str!("../tests/data/vault/arc-2k.md");

/// An arc as the benchmark generator (`shared/bench/gen_vault.py`) writes it.
const GENERATED_ARC: &str = include_str!("../tests/data/vault/generated-signal.md");

/// A file with `count` block and inline markers of the known types, separated by prose.
fn many_markers(count: usize) -> String {
    let mut text =
        String::from("---\ncluster_id: 2026-04-09-many-markers-0123456789ab\ntitle: Many markers\nheat: 5\n---\n\n");
    for index in 0..count {
        match index % 6 {
            0 => text.push_str(&format!("<!-- @lesson -->\nLesson {index}: retry with backoff, never in a tight loop.\n<!-- @/lesson -->\n\n")),
            1 => text.push_str(&format!("<!-- @decision date=2026-04-10 -->\nDecision {index}: keep the parser deterministic.\n<!-- @/decision -->\n\n")),
            2 => text.push_str(&format!("<!-- @todo priority=2 -->\nTodo {index}: document the runbook.\n<!-- @/todo -->\n\n")),
            3 => text.push_str(&format!(
                "<!-- @signal severity=warning source=\"auth broker\" -->\nSignal {index}: 502s after deploy.\n<!-- @/signal -->\n\n"
            )),
            4 => text.push_str(&format!("<!-- @edge type=related target=2026-04-0{}-arc-{index} -->\n", index % 9)),
            _ => text.push_str(&format!("Some prose about step {index}, with `inline code` and a <b>tag</b>.\n\n")),
        }
    }
    text
}

#[divan::bench]
fn realistic_arc_2k(bencher: Bencher) {
    bencher
        .counter(BytesCount::of_str(ARC_2K))
        .bench(|| parse(black_box("clusters/2026-04-09/arc.md"), black_box(ARC_2K.as_bytes()), DEFAULT_MAX_BYTES));
}

#[divan::bench]
fn generated_arc(bencher: Bencher) {
    bencher.counter(BytesCount::of_str(GENERATED_ARC)).bench(|| {
        parse(black_box("clusters/2026-10-13/arc.md"), black_box(GENERATED_ARC.as_bytes()), DEFAULT_MAX_BYTES)
    });
}

#[divan::bench]
fn realistic_arc_2k_with_derived_items(bencher: Bencher) {
    bencher.counter(BytesCount::of_str(ARC_2K)).bench(|| {
        let (doc, _) = parse(black_box("clusters/2026-04-09/arc.md"), black_box(ARC_2K.as_bytes()), DEFAULT_MAX_BYTES);
        derived_items(&doc, ARC_2K.as_bytes())
    });
}

/// Marker count scaling: time per byte should stay flat (linear parsing).
#[divan::bench(args = [1_000, 10_000, 100_000])]
fn markers_in_one_file(bencher: Bencher, count: usize) {
    let text = many_markers(count);
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| parse(black_box("clusters/many.md"), black_box(text.as_bytes()), usize::MAX));
}

/// Prose without markers: the cost of walking lines and skipping `<` that open no comment.
#[divan::bench]
fn prose_1mb_without_markers(bencher: Bencher) {
    let paragraph = "The tick reads every arc, recomputes heat and rewrites `heat:` only when it changes; \
                     a <b>bold</b> claim & an a < b comparison keep the scanner honest.\n\n";
    let text = paragraph.repeat(1024 * 1024 / paragraph.len());
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| parse(black_box("clusters/prose.md"), black_box(text.as_bytes()), DEFAULT_MAX_BYTES));
}

/// The hostile note of issue 11: `depth` nested `@lesson` blocks (8,000 levels: 180 KB here).
/// Parse and derive: linear in the file, bounded output (the 280 KB note of the issue took
/// 4.8 s and 2.2 GB before nesting and derived content were bounded).
fn nested_lessons(depth: usize) -> String {
    let mut text = String::new();
    for level in 0..depth {
        text.push_str(&format!("<!-- @lesson -->\nlevel {level}\n"));
    }
    text.push_str(&"<!-- @/lesson -->\n".repeat(depth));
    text
}

#[divan::bench(args = [2_000, 8_000, 32_000])]
fn nested_blocks_parse_and_derive(bencher: Bencher, depth: usize) {
    let text = nested_lessons(depth);
    bencher.counter(BytesCount::of_str(&text)).bench(|| {
        let (doc, _) = parse(black_box("notes/nested.md"), black_box(text.as_bytes()), usize::MAX);
        derived_items(&doc, text.as_bytes())
    });
}
