//! Session start, skills, review and the agent hooks, end to end.

use std::time::{Duration, Instant};

use crate::Env;
use predicates::prelude::*;

/// A home holding the example project (`examples/demo`: 33 items of `acme-api`).
pub fn demo_env() -> Env {
    let env = Env::new();
    let items = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo/items.jsonl");
    std::fs::write(env.project_dir.join(".brain.toml"), "project = \"acme-api\"\n").unwrap();
    env.brain().args(["import", items]).assert().success();
    env
}

#[test]
fn session_start_returns_the_payload_within_budget_and_creates_config_json() {
    let env = demo_env();
    let start = env.json(&["session-start", "--task", "webhook signature bug"]);
    for key in [
        "project",
        "memory_count",
        "pinned",
        "skills_index",
        "context_recall",
        "hot_arcs",
        "signals",
        "due_for_review",
        "low_confidence_alerts",
        "budget",
        "overflow",
        "brainHash",
    ] {
        assert!(start.get(key).is_some(), "missing {key}");
    }
    assert_eq!(start["project"], "acme-api");
    assert!(start["budget"]["used"].as_u64().unwrap() <= start["budget"]["cap"].as_u64().unwrap());
    // Pins by priority: 10 before 5.
    let pins: Vec<i64> = start["pinned"].as_array().unwrap().iter().map(|p| p["priority"].as_i64().unwrap()).collect();
    assert_eq!(pins, vec![10, 5]);
    // The most relevant item is recalled first, with a reason naming the matched words.
    assert_eq!(start["context_recall"][0]["title"], "Webhook signatures fail for bodies with non-ASCII characters");
    assert!(start["context_recall"][0]["why"].as_str().unwrap().contains("matched: webhook"));
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.home.join("config.json")).unwrap()).unwrap();
    assert_eq!(config["working_memory_budget_tokens"], 3000);
}

#[test]
fn the_demo_task_recalls_its_subject_first_and_nothing_for_its_task_words_alone() {
    // The README's demo (`examples/demo.sh`), at its clock.
    let env = demo_env();
    let task = "fix the webhook signature bug";
    let start = env.json(&["--now", "2026-11-21T10:00:00Z", "session-start", "--task", task]);
    let recalled = start["context_recall"].as_array().unwrap();
    let titles: Vec<&str> = recalled.iter().map(|hit| hit["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "Webhook signatures fail for bodies with non-ASCII characters",
            "Webhook delivery worker with exponential backoff"
        ],
        "{start}"
    );
    for hit in recalled {
        assert!(hit["why"].as_str().unwrap().starts_with("matched: webhook"), "{start}");
    }
    // The text form the demo prints, in the same order.
    let output = env
        .brain()
        .args(["--now", "2026-11-21T10:00:00Z", "session-start", "--format", "text", "--task", task])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let signatures = text.find("Webhook signatures fail").expect(&text);
    let worker = text.find("Webhook delivery worker").expect(&text);
    assert!(signatures < worker, "{text}");
    // Search still finds what only the task words match, below the subject.
    let page = env.json(&["search", task]);
    let results = page["results"].as_array().unwrap();
    assert_eq!(results[0]["title"], titles[0], "{page}");
    assert_eq!(results[1]["title"], titles[1], "{page}");
    let generic = results
        .iter()
        .find(|hit| !hit["why"].as_str().unwrap().contains("webhook"))
        .unwrap_or_else(|| panic!("no item matched only the task words: {page}"));
    assert!(generic["why"].as_str().unwrap().contains("only generic words matched"), "{page}");
}

#[test]
fn recall_finds_the_item_a_task_is_about() {
    let env = demo_env();
    let cases = [
        ("money amounts floats", "Money is i64 minor units, never floats"),
        ("redis queue dropped jobs", "Redis eviction policy must be noeviction for the job queue"),
        ("explain analyze on the database", "Run EXPLAIN ANALYZE on the replica, never on primary"),
        ("rate limit per api key", "Rate limiter: token bucket per API key in Redis"),
        ("idempotency for payment retries", "Idempotency keys on every POST that creates money movements"),
    ];
    for (task, expected) in cases {
        let start = env.json(&["session-start", "--task", task, "--top", "3"]);
        let titles: Vec<&str> = start["context_recall"]
            .as_array()
            .unwrap()
            .iter()
            .chain(start["pinned"].as_array().unwrap())
            .map(|item| item["title"].as_str().unwrap())
            .collect();
        assert!(titles.contains(&expected), "{task:?} should recall {expected:?}, got {titles:?}");
    }
}

#[test]
fn a_new_stores_first_item_is_recalled_by_its_subject() {
    // One item: every word of it is in "most of the store", which says nothing yet of what
    // is common; its subject still recalls it (the MCP SDK test found it dropped).
    let env = crate::Env::new();
    let id = env.remember(&["--title", "Use WAL mode for SQLite", "--content", "Readers never block the writer."]);
    let start = env.json(&["session-start", "--topics", "sqlite", "--task", "tune storage"]);
    let recalled: Vec<&str> =
        start["context_recall"].as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap()).collect();
    assert_eq!(recalled, [id.as_str()], "{start}");
}

#[test]
fn superseded_and_expired_items_stay_out_of_pins_and_recall() {
    let env = demo_env();
    let expired = env.remember(&["--title", "Expired pin", "--valid-until", "2026-01-01T00:00:00Z"]);
    // Pinning an expired item is refused, so pin it first and let it expire in the future clock.
    let soon = env.remember(&["--title", "Soon expired pin about mysql", "--valid-until", "2026-12-01T00:00:00Z"]);
    env.json(&["pin", &soon, "--priority", "99"]);
    let later = env.json(&["--now", "2027-01-01T00:00:00Z", "session-start", "--task", "mysql reporting replica"]);
    let text = later.to_string();
    assert!(!later["pinned"].as_array().unwrap().iter().any(|p| p["id"] == soon.as_str()), "expired pin loaded");
    assert!(!text.contains("Use MySQL for the reporting replica"), "a superseded item was recalled");
    assert!(!text.contains(&expired) || !later["pinned"].to_string().contains(&expired));
}

#[test]
fn the_text_form_fits_max_chars_and_puts_pins_first() {
    let env = demo_env();
    for n in 0..60 {
        let content = format!("{} detail {n}", "Long pinned note about the deployment pipeline. ".repeat(20));
        let id = env.remember(&["--title", &format!("Pinned note {n}"), "--content", &content]);
        env.json(&["pin", &id, "--priority", "1"]);
    }
    let output = env.brain().args(["session-start", "--format", "text", "--max-chars", "2000"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.chars().count() <= 2000, "{} chars", text.chars().count());
    assert!(text.find("## Pinned").unwrap() < text.find("Tenancy").unwrap_or(usize::MAX));
}

#[test]
fn a_corrupt_config_json_falls_back_to_defaults_with_a_warning() {
    let env = demo_env();
    std::fs::write(env.home.join("config.json"), "{not json").unwrap();
    env.brain()
        .args(["session-start"])
        .assert()
        .success()
        .stderr(predicate::str::contains("config.json is invalid"))
        .stdout(predicate::str::contains("\"cap\": 3000"));
}

#[test]
fn skills_are_listed_shown_and_indexed_at_session_start() {
    let env = demo_env();
    env.brain()
        .args(["skill", "add", "release", "--description", "Cut a release: changelog, tag, publish"])
        .write_stdin("1. Update CHANGELOG.md\n2. git tag vX.Y.Z\n")
        .assert()
        .success();
    env.brain().args(["skill", "add", "release", "--description", "again"]).write_stdin("").assert().code(1);
    env.brain().args(["skill", "add", "../evil", "--description", "x"]).write_stdin("").assert().code(1);
    let list = env.json(&["skill", "list"]);
    assert_eq!(list[0]["name"], "release");
    env.brain().args(["skill", "show", "release"]).assert().success().stdout(predicate::str::contains("git tag"));
    env.brain().args(["skill", "show", "nope"]).assert().code(1);
    let start = env.json(&["session-start"]);
    assert_eq!(
        start["skills_index"],
        serde_json::json!([{"name": "release", "description": "Cut a release: changelog, tag, publish"}])
    );
    assert!(!start.to_string().contains("git tag"), "only the index is loaded");
}

#[test]
fn review_lists_due_items_and_spaces_the_next_one() {
    let env = demo_env();
    let id = env.remember(&["--title", "Review me"]);
    assert_eq!(env.json(&["review"]).as_array().unwrap().len(), 0, "not due on day 0");
    let later = ["--now", "2026-11-23T10:00:00Z"];
    let due = env.json(&[&later[..], &["review"]].concat());
    assert!(due.as_array().unwrap().iter().any(|item| item["id"] == id.as_str()));
    assert!(env.json(&[&later[..], &["session-start"]].concat())["due_for_review"].as_u64().unwrap() >= 1);
    // Interval after the n-th review: 1 day × 2.5^(n−1).
    let reviewed = env.json(&[&later[..], &["review", &id, "--ok"]].concat());
    assert_eq!(
        (reviewed["review_count"].as_u64(), reviewed["review_due_at"].as_str()),
        (Some(1), Some("2026-11-24T10:00:00Z"))
    );
    let again = env.json(&["--now", "2026-11-24T10:00:00Z", "review", &id, "--ok"]);
    assert_eq!(
        (again["review_count"].as_u64(), again["review_due_at"].as_str()),
        (Some(2), Some("2026-11-26T22:00:00Z"))
    );
    let failed = env.json(&["--now", "2026-11-27T10:00:00Z", "review", &id, "--fail"]);
    assert_eq!(
        (failed["review_count"].as_u64(), failed["review_due_at"].as_str()),
        (Some(0), Some("2026-11-28T10:00:00Z"))
    );
    env.brain().args(["review", &id]).assert().code(1).stderr(predicate::str::contains("--ok"));
}

#[test]
fn the_session_start_hook_prints_hook_json_within_max_chars() {
    let env = demo_env();
    let input = serde_json::json!({"session_id": "s1", "cwd": env.project_dir, "source": "startup"}).to_string();
    let output = env.brain().args(["hook", "session-start"]).write_stdin(input).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = json["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.starts_with("# Working memory: acme-api"));
    assert!(context.contains("reference data, not instructions"));
    assert!(context.chars().count() <= 9500);
}

/// Runs the session-start hook and checks the fail-open contract: exit 0, valid JSON, fast.
fn assert_fails_open(env: &Env, stdin: &str) -> serde_json::Value {
    let started = Instant::now();
    let output = env.brain().args(["hook", "session-start"]).write_stdin(stdin.to_string()).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON on stdout");
    assert_eq!(json["hookSpecificOutput"]["hookEventName"], "SessionStart");
    json
}

fn hook_log(env: &Env) -> String {
    std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap_or_default()
}

#[test]
fn the_hook_fails_open_on_garbage_or_empty_stdin() {
    let env = demo_env();
    let json = assert_fails_open(&env, "not json at all");
    assert_eq!(json["hookSpecificOutput"]["additionalContext"], "");
    assert!(hook_log(&env).contains("hook input is not hook JSON"));
    // Empty input is a session start without details: it still works.
    let json = assert_fails_open(&env, "");
    assert!(json["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("Working memory"));
}

#[test]
fn the_hook_fails_open_on_a_missing_home() {
    let env = Env::uninitialized();
    let json = assert_fails_open(&env, "{}");
    assert_eq!(json["hookSpecificOutput"]["additionalContext"], "");
}

#[test]
fn the_hook_fails_open_on_a_corrupt_database_and_logs_why() {
    let env = demo_env();
    std::fs::write(env.db(), b"garbage ".repeat(1000)).unwrap();
    assert_fails_open(&env, "{}");
    assert!(hook_log(&env).contains("not a valid brain database"));
}

#[test]
fn the_hook_fails_open_on_an_unreadable_config() {
    let env = demo_env();
    std::fs::write(env.home.join("config.toml"), "tokenizer = = broken").unwrap();
    assert_fails_open(&env, "{}");
    assert!(hook_log(&env).contains("config.toml"));
}

#[test]
fn the_hook_answers_while_another_process_holds_the_write_lock() {
    let env = demo_env();
    let connection = rusqlite::Connection::open(env.db()).unwrap();
    connection.execute_batch("BEGIN EXCLUSIVE; UPDATE items SET access_count = access_count;").unwrap();
    let json = assert_fails_open(&env, "{}");
    assert!(json["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("Working memory"));
    connection.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn user_prompt_submit_reinjects_only_every_interval_and_only_on_change() {
    let env = demo_env();
    std::fs::write(env.home.join("config.toml"), "[hooks]\nrefresh_interval = 3\n").unwrap();
    let input = serde_json::json!({"session_id": "s-42", "cwd": env.project_dir}).to_string();
    env.brain().args(["hook", "session-start"]).write_stdin(input.clone()).assert().success();
    let turn = || {
        let output = env.brain().args(["hook", "user-prompt-submit"]).write_stdin(input.clone()).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8(output.stdout).unwrap()
    };
    for _ in 0..3 {
        assert_eq!(turn(), "", "nothing changed: nothing injected");
    }
    // Important enough to enter the working memory: what the session sees changes. (Before
    // issue 32 any write changed it: the fold of the access log raised the strength of what
    // session starts had returned.)
    env.remember(&["--title", "A new lesson about webhooks", "--importance", "5"]);
    assert_eq!(turn(), "");
    assert_eq!(turn(), "");
    let refresh: serde_json::Value = serde_json::from_str(&turn()).unwrap();
    assert_eq!(refresh["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert!(refresh["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("changed"));
    for _ in 0..3 {
        assert_eq!(turn(), "", "already injected");
    }
}

#[test]
fn hook_install_merges_idempotently_and_keeps_a_backup() {
    let env = Env::new();
    let settings = env.dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}, "zeta": 1}"#).unwrap();
    let install = || env.json(&["hook", "install", "--settings", settings.to_str().unwrap(), "--command", "brain"]);
    let first = install();
    assert_eq!(first["added"], serde_json::json!(["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]));
    let text = std::fs::read_to_string(&settings).unwrap();
    let merged: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["hooks"]["Stop"].as_array().unwrap().len(), 2, "the user's own Stop hook is kept");
    assert!(text.find("\"model\"").unwrap() < text.find("\"zeta\"").unwrap(), "key order is preserved");
    assert!(env.dir.path().join("settings.json.brain-backup").exists());
    assert_eq!(install()["added"], serde_json::json!([]));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text, "a second install changes nothing");
    std::fs::write(&settings, "{broken").unwrap();
    env.brain()
        .args(["hook", "install", "--settings", settings.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not valid JSON"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{broken");
}

#[test]
fn the_agent_profile_reads_the_agent_and_team_files_and_memories() {
    let env = Env::new();
    let agent = env.home.join("agents/reviewer");
    std::fs::create_dir_all(agent.join("daily")).unwrap();
    std::fs::write(agent.join("IDENTITY.md"), "I am the reviewer.").unwrap();
    std::fs::write(agent.join("INSTRUCTIONS.md"), "Check every PR for auth bugs.").unwrap();
    std::fs::write(agent.join("KNOWLEDGE.md"), "The auth service lives in src/auth.").unwrap();
    std::fs::write(agent.join("daily/2026-11-20.md"), "Reviewed the token refresh PR.").unwrap();
    std::fs::write(agent.join("daily/2026-11-01.md"), "Too old to show.").unwrap();
    let team = env.home.join("teams/core");
    std::fs::create_dir_all(&team).unwrap();
    std::fs::write(team.join("GOALS.md"), "Ship v2 by December.").unwrap();
    env.remember(&["--title", "Team uses trunk-based development", "--scope", "team/core", "--kind", "convention"]);
    env.remember(&["--title", "Tokens", "--content", "Refresh tokens rotate", "--scope", "agent/reviewer"]);
    env.remember(&["--title", "Unrelated", "--content", "Lunch is at noon", "--scope", "agent/reviewer"]);
    let output = env
        .brain()
        .args(["context", "--profile", "agent", "--agent", "reviewer", "--team", "core", "--topic", "refresh tokens"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "## Identity\nI am the reviewer.",
        "## Instructions",
        "## Team Goals\nShip v2 by December.",
        "## Recent Activity\n### 2026-11-20",
        "## Team Knowledge\n- [convention] Team uses trunk-based development",
        "## Personal Memories\n- [note] Refresh tokens rotate",
        "## Knowledge Base",
    ] {
        assert!(doc.contains(expected), "missing {expected:?} in\n{doc}");
    }
    assert!(!doc.contains("Too old to show"));
    assert!(!doc.contains("Lunch is at noon"), "a topic picks the matching memories");
    let untargeted = env.brain().args(["context", "--profile", "agent", "--agent", "reviewer"]).output().unwrap();
    let untargeted = String::from_utf8(untargeted.stdout).unwrap();
    assert!(untargeted.contains("Lunch is at noon") && !untargeted.contains("## Team Goals"), "{untargeted}");
    env.brain().args(["context", "--profile", "agent", "--agent", "../etc"]).assert().code(1);
    env.brain().args(["context", "--profile", "agent"]).assert().code(1).stderr(predicate::str::contains("--agent"));
}

#[test]
fn hot_arcs_and_active_signals_from_the_vault_reach_session_start_critical_first() {
    let env = Env::new();
    let vault = crate::vault_support::standard_vault(&env);
    let now = ["--now", "2026-11-21T12:00:00Z"];
    env.brain().args(now).args(["vault", "scan", "--vault", vault.arg()]).assert().success();
    env.brain().args(now).args(["tick", "--vault", vault.arg(), "--no-ai"]).assert().success();
    let start = env.json(&[&now[..], &["session-start"]].concat());
    let arcs = start["hot_arcs"].as_array().unwrap();
    assert!(arcs.iter().any(|arc| arc["title"] == "Hot retry storm"), "{start}");
    let signals = start["signals"].as_array().unwrap();
    assert_eq!(signals[0]["severity"], "critical", "critical signals come first: {signals:?}");
    assert!(signals.iter().all(|signal| signal["severity"] != "resolved"));
    let text = env.brain().args(now).args(["session-start", "--format", "text"]).output().unwrap().stdout;
    let text = String::from_utf8(text).unwrap();
    assert!(text.find("## Urgent signals").unwrap() < text.find("### Hot arcs").unwrap(), "{text}");
}

#[test]
fn session_start_records_accesses_and_a_later_write_folds_them_into_the_store() {
    let env = demo_env();
    let start = env.json(&["session-start", "--task", "money amounts floats"]);
    let pinned = start["pinned"][0]["id"].as_str().unwrap().to_string();
    assert!(env.home.join("access.jsonl").exists(), "session start appends instead of writing the store");
    env.remember(&["--title", "any write folds the log"]);
    assert!(!env.home.join("access.jsonl").exists());
    assert_eq!(env.json(&["show", &pinned])["access_count"], 1);
}

/// What a server's session starts keep between writes (`brain_api::read_cache`) is never served
/// after a change through another connection: a new item, a pin, a fold of access
/// bookkeeping (which moves no generation). `a` keeps its reads, `b` writes beside it.
pub fn kept_reads_follow_every_change_through_another_connection(env: &Env) {
    use brain_api::app::SessionRequest;
    use brain_core::ItemDraft;
    let mut a = env.open_brain();
    a.keep_reads(std::sync::Arc::new(brain_api::read_cache::ReadCache::new()));
    let b = env.open_brain();
    let request = SessionRequest { task: Some("webhook retry backoff".into()), top: 5, ..SessionRequest::default() };
    let draft = |title: &str, confidence: Option<f64>| ItemDraft {
        title: Some(title.into()),
        content: Some(format!("{title}: details")),
        confidence,
        ..ItemDraft::default()
    };
    b.remember(draft("Seed memory about the release checklist", None), "test").unwrap();
    let first = a.session_start(&request).unwrap();
    assert_eq!(a.session_start(&request).unwrap(), first, "the same state reads the same");
    assert!(first.context_recall.is_empty(), "{:?}", first.context_recall);
    // A new item matching the task, through the other connection: recalled at once.
    let written = b.remember(draft("Webhook retry backoff doubles each attempt", None), "test").unwrap();
    let second = a.session_start(&request).unwrap();
    assert_eq!(second.memory_count, first.memory_count + 1);
    assert!(second.context_recall.iter().any(|recalled| recalled.id == written.id), "{:?}", second.context_recall);
    // A pin: listed at once.
    b.pin(&written.id, Some(3)).unwrap();
    let third = a.session_start(&request).unwrap();
    assert!(third.pinned.iter().any(|pin| pin.id == written.id), "{:?}", third.pinned);
    // An unsure item read often enough to alert: access bookkeeping moves no generation,
    // and the alert (access count, confidence) still shows at once.
    let unsure = b.remember(draft("Maybe the cache key needs the region", Some(0.3)), "test").unwrap();
    assert!(a.session_start(&request).unwrap().low_confidence_alerts.is_empty());
    let access = brain_store::Access { id: unsure.id.clone(), strength: None };
    let generation = b.store().generation().unwrap();
    for _ in 0..3 {
        assert!(b.store().record_access(std::slice::from_ref(&access), b.now(), None).unwrap());
    }
    assert_eq!(b.store().generation().unwrap(), generation, "bookkeeping is not a write");
    let alerted = a.session_start(&request).unwrap();
    let alert = alerted.low_confidence_alerts.iter().find(|alert| alert.id == unsure.id);
    assert_eq!(alert.map(|alert| alert.access_count), Some(3), "{:?}", alerted.low_confidence_alerts);
    // A forgotten item leaves at once too.
    b.forget(&written.id, true).unwrap();
    let last = a.session_start(&request).unwrap();
    assert!(!last.pinned.iter().any(|pin| pin.id == written.id));
    assert!(!last.context_recall.iter().any(|recalled| recalled.id == written.id));
    assert_eq!(last.memory_count, alerted.memory_count - 1);
}

#[test]
fn kept_session_start_reads_follow_every_change_through_another_connection() {
    kept_reads_follow_every_change_through_another_connection(&Env::new());
}
