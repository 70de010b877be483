//! The assembled contexts through the CLI: `brain brain`, `brain context`, `brain inject`.

use crate::Env;
use predicates::prelude::*;

fn demo_env() -> Env {
    let env = Env::new();
    let items = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo/items.jsonl");
    env.brain().args(["--project", "acme-api", "import", items]).assert().success();
    env
}

fn brain_json(env: &Env, extra: &[&str]) -> serde_json::Value {
    env.json(&[&["--project", "acme-api", "brain"], extra].concat())
}

#[test]
fn the_brain_document_answers_with_every_field_and_stays_in_budget() {
    let env = demo_env();
    let response = brain_json(&env, &[]);
    for key in ["document", "summary", "tokenEstimate", "itemsLoaded", "schemaKeys", "brainHash", "tree", "layers"] {
        assert!(response.get(key).is_some(), "missing {key}");
    }
    assert!(response["budget"]["cap"] == 6000 && response["overflow"].is_array());
    assert!(response["tokenEstimate"].as_u64().unwrap() <= 6000);
    assert_eq!(response["brainHash"].as_str().unwrap().len(), 16);
    assert!(response["itemsLoaded"].as_u64().unwrap() > 10);
    assert!(response["layers"]["archived"]["count"].as_u64().unwrap() >= 4, "drafts, superseded, deprecated, codemap");
    for budget in ["50", "300", "1000"] {
        let small = brain_json(&env, &["--token-budget", budget]);
        assert!(small["tokenEstimate"].as_u64().unwrap() <= budget.parse().unwrap(), "over {budget}");
    }
}

#[test]
fn the_same_store_and_clock_give_the_same_bytes_and_an_edit_changes_the_hash() {
    let env = demo_env();
    let run = || env.brain().args(["--project", "acme-api", "brain"]).output().unwrap().stdout;
    let first = run();
    assert!(!first.is_empty());
    assert_eq!(first, run());
    let before = brain_json(&env, &[]);
    let included = before["layers"]["layer1"]["items"][0].as_str().unwrap().to_string();
    env.brain().args(["--project", "acme-api", "edit", &included, "--content", "changed content"]).assert().success();
    let after = brain_json(&env, &[]);
    assert_ne!(before["brainHash"], after["brainHash"]);
}

#[test]
fn bad_budgets_are_clear_errors_and_zero_is_a_minimal_document() {
    let env = demo_env();
    env.brain().args(["--project", "acme-api", "brain", "--token-budget", "-5"]).assert().code(1);
    env.brain().args(["--project", "acme-api", "brain", "--token-budget", "lots"]).assert().code(1);
    let zero = brain_json(&env, &["--token-budget", "0"]);
    assert_eq!(zero["tokenEstimate"], 0);
    assert_eq!(zero["document"], "");
}

#[test]
fn context_profiles_share_the_engine() {
    let env = demo_env();
    let brain = env.json(&["--project", "acme-api", "context", "--profile", "brain"]);
    assert_eq!(brain["brainHash"], brain_json(&env, &[])["brainHash"]);
    let summary = env.json(&["--project", "acme-api", "context", "--profile", "claude-md"]);
    assert!(summary["tokenEstimate"].as_u64().unwrap() <= 1000);
    assert!(summary["document"].as_str().unwrap().contains("Idempotency keys"));
    env.brain().args(["context", "--profile", "nonsense"]).assert().code(1);
}

#[test]
fn inject_writes_the_block_preserves_the_rest_and_is_idempotent() {
    let env = demo_env();
    let claude = env.project_dir.join("CLAUDE.md");
    let original = "# My project\r\n\r\nHand-written rules stay.\r\nLast line without newline";
    std::fs::write(&claude, original).unwrap();
    let inject = || env.brain().args(["--project", "acme-api", "inject"]).assert().success();
    inject().stdout(predicate::str::contains("updated the brain block"));
    let first = std::fs::read_to_string(&claude).unwrap();
    assert!(first.starts_with(original), "text before the block is preserved byte for byte");
    assert!(first.contains("<!-- brain:start -->\r\n") && first.contains("<!-- brain:end -->"));
    inject().stdout(predicate::str::contains("is up to date"));
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), first);
    // Text the user adds after the block survives a later update.
    let edited = format!("{first}\r\nAfter the block.\r\n");
    std::fs::write(&claude, &edited).unwrap();
    env.brain().args(["--project", "acme-api", "--now", "2027-01-01T00:00:00Z", "inject"]).assert().success();
    let later = std::fs::read_to_string(&claude).unwrap();
    assert!(later.starts_with(original) && later.ends_with("\r\nAfter the block.\r\n"));
    assert_eq!(later.matches("<!-- brain:start -->").count(), 1);
}

#[test]
fn inject_creates_missing_files_and_rejects_unknown_targets() {
    let env = demo_env();
    env.brain().args(["--project", "acme-api", "inject", "--target", "AGENTS.md"]).assert().success();
    let agents = std::fs::read_to_string(env.project_dir.join("AGENTS.md")).unwrap();
    assert!(agents.starts_with("<!-- brain:start -->"));
    env.brain()
        .args(["inject", "--target", "../../etc/passwd"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("invalid target"));
}
