//! A Claude Code transcript read by capture (`brain_capture::transcript::scan`), watched for the
//! use of a few given items: any bytes give a session summary, never a panic, and every string
//! in it (the evidence of use included) is redacted.
#![no_main]

use std::io::Write;
use std::sync::{Arc, OnceLock};

use brain_core::redact::redact_str;
use libfuzzer_sys::fuzz_target;

/// One file per process, rewritten for each input (the public entry point reads a path);
/// in memory (`/dev/shm`) where there is one: a disk file costs 8× the executions.
fn path() -> &'static std::path::Path {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
        dir.join(format!("brain-fuzz-transcript-{}.jsonl", std::process::id()))
    })
}

/// Given items to watch for: generated ones, whose titles, files and commands a fuzzed
/// transcript can name (the same for every input).
fn watch() -> Arc<brain_core::usage::Watch> {
    static WATCH: OnceLock<Arc<brain_core::usage::Watch>> = OnceLock::new();
    WATCH
        .get_or_init(|| {
            let now = "2026-11-01T00:00:00Z".parse().expect("a timestamp");
            let items = brain_core::assemble::fixtures::generate_items(8, 7, now);
            Arc::new(brain_core::usage::Watch::new(&items))
        })
        .clone()
}

fn assert_redacted(value: &serde_json::Value) {
    match value {
        serde_json::Value::String(text) => assert_eq!(redact_str(text), text.as_str(), "left unredacted"),
        serde_json::Value::Array(items) => items.iter().for_each(assert_redacted),
        serde_json::Value::Object(map) => map.values().for_each(assert_redacted),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut file = std::fs::File::create(path()).expect("the temp folder is writable");
    file.write_all(data).expect("write");
    drop(file);
    let budget = brain_capture::transcript::ReadBudget::default();
    let host = brain_capture::Host::ClaudeCode;
    let state = brain_capture::transcript::scan(path(), host, "fuzz", None, &mut |_| "fuzz".to_string(), &budget, Some(watch()))
        .expect("a regular file is read");
    assert_redacted(&serde_json::to_value(&state).expect("a state serializes"));
});
