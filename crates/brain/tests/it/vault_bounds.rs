//! Vault files under hostile input (issue 11 item 2): thousands of nested markers, more
//! markers than a file may hold. A scan and a tick must finish with bounded memory (checked
//! under `ulimit -v`), store a bounded amount, and say what they left out.

use std::process::{Command, Stdio};

use crate::vault_support::Vault;
use crate::{Env, NOW};

/// Address space allowed to `brain vault scan` and `brain tick` (KiB). A scan of a small
/// vault runs in far less (the store's map, a few threads' stacks); the 280 KB nested note
/// alone took 2.2 GB before its blocks were bounded.
const ULIMIT_KB: u64 = 400 * 1024;

/// `depth` nested `@lesson` blocks, each level one line of text.
fn nested_lessons(depth: usize) -> String {
    let mut text = String::from("---\ntitle: Nested\n---\n");
    for level in 0..depth {
        text.push_str(&format!("<!-- @lesson -->\nlevel {level} of the hostile note\n"));
    }
    for _ in 0..depth {
        text.push_str("<!-- @/lesson -->\n");
    }
    text
}

/// `brain … ARGS` under `ulimit -v`, with the test's home and clock.
fn brain_limited(env: &Env, args: &[&str]) -> std::process::Output {
    let binary = assert_cmd::cargo::cargo_bin("brain");
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ULIMIT_KB} && exec \"$0\" \"$@\""))
        .arg(binary)
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .args(["--now", NOW])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_note_of_thousands_of_nested_blocks_is_scanned_and_ticked_in_bounded_memory() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let small = nested_lessons(8_000);
    let large = nested_lessons(20_000);
    assert!(small.len() > 280_000 && large.len() > 700_000, "{} / {}", small.len(), large.len());
    vault.write("notes/nested.md", &small);
    vault.write("notes/nested-large.md", &large);
    let output = brain_limited(&env, &["vault", "scan", "--vault", vault.arg(), "--json"]);
    assert!(output.status.success(), "scan failed under ulimit: {}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // The outer levels derive items until the per-file content budget (4 MiB) is spent: 7
    // of the 450 KB note, 3 of the 1.1 MB one; the rest is reported, never silently lost.
    assert_eq!(report["indexed_items"], 10, "{report}");
    let messages: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}: {}", d["file"].as_str().unwrap(), d["message"].as_str().unwrap()))
        .collect();
    for expected in [
        "notes/nested.md: 7992 blocks nested inside 8 or more other blocks derive no item (the first on this line)",
        "notes/nested.md: 1 blocks not indexed: the blocks of one file derive at most 4194304 bytes of content",
        "notes/nested-large.md: 19992 blocks nested inside 8 or more other blocks derive no item (the first on this line)",
        "notes/nested-large.md: 5 blocks not indexed: the blocks of one file derive at most 4194304 bytes of content",
    ] {
        assert!(messages.iter().any(|message| message == expected), "{expected} not in {messages:#?}");
    }
    // What is stored is bounded by the notes (the issue saw a 438 MB database).
    let stored: u64 = std::fs::read_dir(&env.home)
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("brain.db"))
        .map(|entry| entry.metadata().unwrap().len())
        .sum();
    assert!(stored < 40 * 1024 * 1024, "the store holds {stored} bytes");
    // A tick over the same vault (one note changed): bounded too, and it edits neither note.
    std::fs::write(vault.path("notes/nested.md"), format!("{small}\n")).unwrap();
    let output = brain_limited(&env, &["tick", "--no-ai", "--vault", vault.arg(), "--json"]);
    assert!(output.status.success(), "tick failed under ulimit: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(vault.read("notes/nested-large.md"), large);
    assert_eq!(vault.read("notes/nested.md"), format!("{small}\n"));
}

#[test]
fn a_vault_file_with_more_blocks_than_the_bound_is_indexed_up_to_it() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let todos: String = (0..10_050).map(|n| format!("<!-- @todo -->task {n}<!-- @/todo -->\n")).collect();
    vault.write("notes/todos.md", todos);
    let report = env.json(&["vault", "scan", "--vault", vault.arg()]);
    assert_eq!(report["indexed_items"], 10_000, "{report}");
    let diagnostics = report["diagnostics"].to_string();
    assert!(
        diagnostics.contains("50 more blocks not indexed: at most 10000 items are derived per file"),
        "{diagnostics}"
    );
}
