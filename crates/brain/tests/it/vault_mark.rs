//! `brain mark`: an agent appends marker blocks to an arc or the inbox; redacted, idempotent,
//! atomic, and hostile input changes nothing.

use predicates::prelude::*;

use crate::vault_support::{HOT, HOT_ARC, Vault, fingerprint, json, standard_vault};
use crate::{Env, NOW};

const HOT_ID: &str = "2026-11-21-hot-retry-storm-aaaaaaaaaaaa";

fn mark(env: &Env, vault: &Vault, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["mark", "--vault", vault.arg()];
    all.extend_from_slice(args);
    json(env, &all)
}

#[test]
fn a_lesson_lands_in_its_arc_once_and_is_indexed_at_once() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let first = mark(&env, &vault, &["--type", "lesson", "--arc", HOT_ID, "Cap gateway retries at three."]);
    assert_eq!(first["written"], true, "{first}");
    assert_eq!(first["file"], HOT);
    assert_eq!(first["indexed"], true);
    let key = first["key"].as_str().unwrap().to_string();
    let text = vault.read(HOT);
    assert!(text.starts_with(HOT_ARC), "the arc's text is kept byte for byte, the block appended");
    assert!(
        text.ends_with(&format!("\n\n<!-- @lesson key={key} -->\nCap gateway retries at three.\n<!-- @/lesson -->\n")),
        "{text}"
    );
    // Indexed: the lesson is an item of the store at once.
    let found = json(&env, &["search", "gateway retries three", "--all-scopes", "--json"]);
    assert!(found.to_string().contains("Cap gateway retries at three."), "{found}");
    // The same block again (spacing aside) writes nothing.
    let again = mark(&env, &vault, &["--type", "lesson", "--arc", HOT_ID, "  Cap gateway retries   at three. "]);
    assert_eq!((again["written"].as_bool(), again["key"].as_str()), (Some(false), Some(key.as_str())), "{again}");
    assert_eq!(vault.read(HOT), text);
}

#[test]
fn without_an_arc_blocks_go_to_the_inbox_note_redacted_and_a_tick_feeds_a_signal() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let lesson = mark(&env, &vault, &["--type", "lesson", &format!("Rotate {secret} after the audit.")]);
    assert_eq!(lesson["file"], "raw/inbox/brain-marks.md", "{lesson}");
    let signal = mark(
        &env,
        &vault,
        &["--type", "signal", "--severity", "critical", "--source", "payments", "Payments queue is backing up."],
    );
    assert_eq!(signal["written"], true);
    let inbox = vault.read("raw/inbox/brain-marks.md");
    assert!(!inbox.contains(secret), "{inbox}");
    assert!(inbox.contains("<!-- @signal severity=critical source=payments key="), "{inbox}");
    env.brain().args(["--now", NOW, "tick", "--vault", vault.arg()]).assert().success();
    let signals = vault.read("brain-feed/signals.md");
    assert!(signals.contains("- **[critical]** (payments) Payments queue is backing up."), "{signals}");
}

#[test]
fn hostile_marks_get_a_clear_error_and_change_nothing() {
    let env = Env::new();
    let vault = standard_vault(&env);
    json(&env, &["vault", "scan", "--vault", vault.arg()]);
    let before = fingerprint(&vault.root);
    let cases: [(&[&str], &str); 7] = [
        (&["--type", "lesson", "--arc", "no-such-arc", "text"], "no arc with cluster_id"),
        (&["--type", "lesson", "--arc", "../../etc/passwd", "text"], "not a cluster_id"),
        (&["--type", "lesson", "--arc", HOT_ID, "end --> <!-- @inject -->"], "HTML comment"),
        (&["--type", "lesson", "--arc", HOT_ID, "```\nunclosed"], "code fence"),
        (&["--type", "exec", "text"], "unknown marker type"),
        (&["--type", "signal", "--severity", "doom", "text"], "unknown severity"),
        (&["--type", "lesson", "--severity", "critical", "text"], "signal blocks only"),
    ];
    for (args, message) in cases {
        let mut all = vec!["mark", "--vault", vault.arg()];
        all.extend_from_slice(args);
        env.brain().args(&all).assert().failure().stderr(predicate::str::contains(message));
    }
    let huge = "x".repeat(9 * 1024);
    env.brain()
        .args(["mark", "--vault", vault.arg(), "--type", "lesson", &huge])
        .assert()
        .failure()
        .stderr(predicate::str::contains("at most 8192"));
    assert_eq!(fingerprint(&vault.root), before, "nothing in the vault changed");
}

/// `POST /api/v2/markers`: the write grant of the arc's project, idempotent, and a hostile body
/// gets a clear 4xx and changes nothing.
#[test]
fn http_markers_need_the_arcs_write_grant_and_refuse_hostile_bodies() {
    use crate::serve::Server;
    let env = Env::new();
    let vault = standard_vault(&env);
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[vault]\npath = \"{}\"\n\n\
             [[serve.tokens]]\nname = \"demo\"\ntoken = \"demo-secret-0123456789\"\nread = [\"project/demo\"]\nwrite = [\"project/demo\"]\n\n\
             [[serve.tokens]]\nname = \"web\"\ntoken = \"web-secret-0123456789\"\nread = [\"project/web\"]\nwrite = [\"project/web\"]\n",
            vault.arg()
        ),
    )
    .unwrap();
    json(&env, &["vault", "scan", "--vault", vault.arg()]);
    let server = Server::start(&env, &[]);
    let post = |token: &str, content_type: &str, body: &str| {
        let bearer = format!("Bearer {token}");
        server.request(
            "POST",
            "/api/v2/markers",
            &[("Authorization", &bearer), ("Content-Type", content_type)],
            Some(body),
        )
    };
    const DEMO: &str = "demo-secret-0123456789";
    const JSON: &str = "application/json";
    let lesson =
        serde_json::json!({"type": "lesson", "arc": HOT_ID, "text": "Retry budgets are per tenant."}).to_string();
    let before = fingerprint(&vault.root);

    // Another project's token, and the inbox (global) for a project token: 403.
    assert_eq!(post("web-secret-0123456789", JSON, &lesson).status, 403);
    let inbox = serde_json::json!({"type": "todo", "text": "Write the runbook."}).to_string();
    let refused = post(DEMO, JSON, &inbox);
    assert_eq!((refused.status, refused.error_code()), (403, "forbidden".to_string()), "{}", refused.text());
    // Hostile bodies: a clear 4xx each.
    let huge = serde_json::json!({"type": "lesson", "arc": HOT_ID, "text": "x".repeat(9000)}).to_string();
    let cases: Vec<(String, &str, u16)> = vec![
        (huge, JSON, 400),
        (
            serde_json::json!({"type": "lesson", "arc": HOT_ID, "text": "a --> <!-- @signal severity=nuclear -->"})
                .to_string(),
            JSON,
            400,
        ),
        (serde_json::json!({"type": "lesson", "arc": "../../../etc/passwd", "text": "t"}).to_string(), JSON, 400),
        (serde_json::json!({"type": "lesson", "arc": "no-such-arc", "text": "t"}).to_string(), JSON, 404),
        (serde_json::json!({"type": "lesson", "arc": HOT_ID, "text": "t", "path": "/etc"}).to_string(), JSON, 400),
        ("\u{0}\u{1}binary{".to_string(), JSON, 400),
        ("type=lesson&text=t".to_string(), "application/x-www-form-urlencoded", 415),
        (format!("{{\"type\": \"lesson\", \"text\": \"{}\"}}", "y".repeat(3 << 20)), JSON, 413),
    ];
    for (body, content_type, status) in cases {
        let answer = post(DEMO, content_type, &body);
        assert_eq!(answer.status, status, "{}: {}", &body[..body.len().min(80)], answer.text());
        answer.error_code();
    }
    assert_eq!(fingerprint(&vault.root), before, "nothing in the vault changed");

    // The arc's project token: 201, then 200 with written: false.
    let created = post(DEMO, JSON, &lesson);
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(created.json()["file"], HOT);
    assert!(vault.read(HOT).contains("Retry budgets are per tenant."));
    let again = post(DEMO, JSON, &lesson);
    assert_eq!((again.status, again.json()["written"].as_bool()), (200, Some(false)));
}
