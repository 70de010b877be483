//! The item commands, end to end.

use crate::Env;
use predicates::prelude::*;

#[test]
fn remember_takes_content_from_stdin_and_the_title_from_its_first_line() {
    let env = Env::new();
    let output = env
        .brain()
        .args(["remember", "--kind", "lesson", "--json"])
        .write_stdin("\n  Retry webhooks with jitter  \nBackoff doubles, capped at 30 s.\n")
        .output()
        .unwrap();
    assert!(output.status.success());
    let item: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(item["title"], "Retry webhooks with jitter");
    assert_eq!(item["kind"], "lesson");
    assert_eq!(item["scope"], "project/demo");
    assert_eq!(item["schema_key"], "root/lessons");
    assert_eq!(item["created_at"], crate::NOW);
    assert!(item["tokens"].as_u64().unwrap() > 5);
}

#[test]
fn list_filters_and_prints_json() {
    let env = Env::new();
    env.remember(&["--title", "a decision", "--kind", "decision", "--tags", "Storage"]);
    env.remember(&["--title", "a global bug", "--kind", "bug", "--scope", "global"]);
    env.remember(&["--title", "a draft", "--status", "draft"]);
    env.remember(&["--title", "another project", "--scope", "project/other"]);
    let titles = |args: &[&str]| -> Vec<String> {
        let list = env.json(&[&["list"], args].concat());
        list.as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(titles(&[]).len(), 3, "default: global + current project");
    assert_eq!(titles(&["--all-scopes"]).len(), 4);
    assert_eq!(titles(&["--kind", "decision"]), vec!["a decision"]);
    assert_eq!(titles(&["--tag", "storage"]), vec!["a decision"]);
    assert_eq!(titles(&["--status", "draft"]), vec!["a draft"]);
    assert_eq!(titles(&["--scope", "global"]), vec!["a global bug"]);
    assert_eq!(titles(&["--limit", "1"]).len(), 1);
    env.brain().arg("list").assert().success().stdout(predicate::str::contains("a decision"));
}

#[test]
fn show_prints_every_field() {
    let env = Env::new();
    let id = env.remember(&[
        "--title",
        "Use WAL",
        "--kind",
        "decision",
        "--content",
        "readers never block",
        "--rationale",
        "hooks must not wait",
        "--files",
        "src/db.rs,src/hook.rs",
        "--importance",
        "5",
    ]);
    env.brain().args(["show", &id]).assert().success().stdout(
        predicate::str::contains("hooks must not wait").and(predicate::str::contains("src/db.rs, src/hook.rs")),
    );
    assert_eq!(env.json(&["show", &id])["importance"], 5);
}

#[test]
fn edit_changes_only_the_given_fields_and_bumps_the_version() {
    let env = Env::new();
    let id = env.remember(&["--title", "Original", "--content", "body", "--importance", "2"]);
    let item = env.json(&["edit", &id, "--importance", "4", "--tags", "a,b"]);
    assert_eq!((item["importance"].as_u64(), item["version"].as_u64()), (Some(4), Some(2)));
    assert_eq!(item["title"], "Original");
    assert_eq!(item["content"], "body");
    assert_eq!(item["tags"], serde_json::json!(["a", "b"]));
    env.brain().args(["edit", &id]).assert().code(1).stderr(predicate::str::contains("nothing to change"));
}

#[test]
fn an_edit_based_on_a_stale_version_is_a_conflict() {
    let env = Env::new();
    let id = env.remember(&["--title", "Shared item"]);
    // Two editors read version 1; the first one writes.
    env.json(&["edit", &id, "--title", "first writer", "--expect-version", "1"]);
    env.brain()
        .args(["edit", &id, "--title", "second writer", "--expect-version", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("conflict on item").and(predicate::str::contains("the store has version 2")));
    assert_eq!(env.json(&["show", &id])["title"], "first writer");
}

#[test]
fn approve_deprecate_and_supersede_keep_history() {
    let env = Env::new();
    let old = env.remember(&["--title", "Use MySQL", "--kind", "decision", "--status", "draft"]);
    assert_eq!(env.json(&["approve", &old])["status"], "approved");
    let new = env.remember(&["--title", "Use PostgreSQL", "--kind", "decision"]);
    let pair = env.json(&["supersede", &old, &new]);
    assert_eq!(pair["old"]["status"], "superseded");
    assert_eq!(pair["old"]["superseded_by"], new.as_str());
    assert_eq!(pair["new"]["supersedes"], old.as_str());
    // The old one is still there, just not approved.
    assert_eq!(env.json(&["show", &old])["title"], "Use MySQL");
    env.brain().args(["approve", &old]).assert().code(1).stderr(predicate::str::contains("superseded by"));
    env.brain().args(["supersede", &new, &new]).assert().code(1);
    assert_eq!(env.json(&["deprecate", &new])["status"], "deprecated");
}

#[test]
fn forget_archives_and_hard_forget_erases() {
    let env = Env::new();
    let id = env.remember(&["--title", "Temporary"]);
    assert_eq!(env.json(&["forget", &id])["status"], "archived");
    assert_eq!(env.json(&["show", &id])["status"], "archived");
    env.brain().args(["forget", &id, "--hard"]).assert().success();
    env.brain().args(["show", &id]).assert().code(1);
}

#[test]
fn pin_sets_priority_and_expired_items_cannot_be_pinned() {
    let env = Env::new();
    let id = env.remember(&["--title", "Always load me"]);
    let item = env.json(&["pin", &id, "--priority", "7"]);
    assert_eq!((item["pinned"].as_bool(), item["pin_priority"].as_i64()), (Some(true), Some(7)));
    assert_eq!(env.json(&["unpin", &id])["pinned"], false);
    let expired = env.remember(&["--title", "Old", "--valid-until", "2026-01-01T00:00:00Z"]);
    env.brain().args(["pin", &expired]).assert().code(1).stderr(predicate::str::contains("expired"));
    let pinned = env.remember(&["--title", "Pinned at birth", "--pin", "--priority", "3"]);
    assert_eq!(env.json(&["show", &pinned])["pin_priority"], 3);
}

#[test]
fn search_ranks_by_relevance_filters_and_pages() {
    let env = Env::new();
    env.remember(&["--title", "Webhook retry policy", "--content", "retry with jitter", "--kind", "decision"]);
    env.remember(&["--title", "Login flow", "--content", "a retry happens on token expiry"]);
    env.remember(&["--title", "Unrelated", "--content", "nothing to see"]);
    env.remember(&["--title", "Retry draft", "--status", "draft"]);
    let page = env.json(&["search", "retry", "jitter"]);
    let results = page["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "drafts are not searched by default");
    assert_eq!(results[0]["title"], "Webhook retry policy");
    let first = env.json(&["search", "retry", "--limit", "1"]);
    assert_eq!(first["next_offset"], 1);
    let second = env.json(&["search", "retry", "--limit", "1", "--offset", "1"]);
    assert_eq!(second["results"][0]["title"], "Login flow");
    assert!(second["next_offset"].is_null());
    let drafts = env.json(&["search", "retry", "--status", "draft"]);
    assert_eq!(drafts["results"][0]["title"], "Retry draft");
    // Being found counts as an access.
    let id = results[0]["id"].as_str().unwrap();
    assert!(env.json(&["show", id])["access_count"].as_u64().unwrap() >= 1);
}

#[test]
fn export_then_import_then_export_is_lossless() {
    let env = Env::new();
    env.remember(&["--title", "Decision", "--kind", "decision", "--rationale", "because", "--confidence", "0.85"]);
    let pinned = env.remember(&["--title", "Pinned", "--pin", "--priority", "9", "--tags", "a,b-c"]);
    env.remember(&["--title", "Global", "--scope", "global", "--valid-until", "2027-05-01T00:00:00Z"]);
    env.remember(&["--title", "Other project", "--scope", "project/other", "--dedup-hint", "a:b:c"]);
    env.brain().args(["search", "pinned"]).assert().success();
    env.json(&["edit", &pinned, "--importance", "5"]);
    let first = env.export();
    assert_eq!(first.lines().count(), 4);
    let file = env.dir.path().join("export.jsonl");
    std::fs::write(&file, &first).unwrap();
    let fresh = Env::new();
    let report = fresh.json(&["import", file.to_str().unwrap()]);
    assert_eq!(report["imported"], 4);
    assert_eq!(fresh.export(), first);
}

#[test]
fn import_fills_defaults_for_missing_optional_fields() {
    let env = Env::new();
    let file = env.dir.path().join("min.jsonl");
    std::fs::write(&file, "{\"title\":\"Minimal\"}\n\n{\"title\":\"Bug\",\"kind\":\"bug\",\"scope\":\"global\"}\n")
        .unwrap();
    env.brain().args(["import", file.to_str().unwrap()]).assert().success().stdout("imported 2 items\n");
    let items = env.json(&["list"]);
    let minimal = items.as_array().unwrap().iter().find(|i| i["title"] == "Minimal").unwrap();
    assert_eq!(minimal["scope"], "project/demo");
    assert_eq!(minimal["status"], "approved");
    assert_eq!(minimal["confidence"], 0.7);
}

#[test]
fn secrets_are_redacted_before_they_are_stored() {
    let env = Env::new();
    let secret = "ghp_EXAMPLEexampleEXAMPLEexample012345";
    let id = env.remember(&["--title", "Deploy notes", "--content", &format!("token is {secret} keep safe")]);
    let item = env.json(&["show", &id]);
    assert!(!item["content"].as_str().unwrap().contains(secret));
    assert!(item["content"].as_str().unwrap().contains("[REDACTED:"));
    // Also on import.
    let file = env.dir.path().join("secret.jsonl");
    std::fs::write(&file, format!("{{\"title\":\"Imported\",\"content\":\"key {secret}\"}}\n")).unwrap();
    env.brain().args(["import", file.to_str().unwrap()]).assert().success();
    let db = std::fs::read(env.db()).unwrap();
    let wal = std::fs::read(env.home.join("brain.db-wal")).unwrap_or_default();
    for bytes in [db, wal] {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "secret reached the disk");
    }
}

#[test]
fn doctor_reports_a_healthy_store() {
    let env = Env::new();
    env.remember(&["--title", "one"]);
    let report = env.json(&["doctor"]);
    assert_eq!(report["items"], 1);
    assert_eq!(report["project"], "demo");
    assert_eq!(report["problems"], serde_json::json!([]));
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let env = Env::new();
    let file = env.dir.path().join("many.jsonl");
    let lines: Vec<String> = (0..3000).map(|i| format!("{{\"title\":\"item number {i}\"}}")).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    env.brain().args(["import", file.to_str().unwrap()]).assert().success();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("brain"))
        .env_clear()
        .env("BRAIN_HOME", &env.home)
        .args(["export"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
}
