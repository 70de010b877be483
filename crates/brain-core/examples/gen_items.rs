//! Writes N deterministic, realistic items as JSONL (the `brain import` format), for
//! benchmarks and large fixtures: `cargo run --release --example gen_items -- 100000 7 > items.jsonl`.

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let project = args.next().unwrap_or_else(|| "bench".to_string());
    let now = "2026-11-21T10:00:00Z".parse().expect("valid timestamp");
    let mut items = brain_core::assemble::fixtures::generate_items(n, seed, now);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for item in &mut items {
        if item.scope != brain_core::Scope::Global {
            item.scope = brain_core::Scope::Project(project.clone());
        }
        let line = serde_json::to_string(item).expect("items serialize");
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}
