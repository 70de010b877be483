//! `brain vault init` and `brain vault scan`: compartments, indexing, incrementality,
//! diagnostics, path safety, and the feed reaching the brain document.

use predicates::prelude::*;

use crate::Env;
use crate::vault_support::{HOT, HOT_ARC, MID, OLD, Vault, age, json, standard_vault};

#[test]
fn vault_init_creates_the_compartments_and_is_idempotent() {
    let env = Env::new();
    let root = env.dir.path().join("my vault");
    let first = json(&env, &["vault", "init", "--vault", root.to_str().unwrap()]);
    let created: Vec<&str> = first["created"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(
        created,
        [
            "clusters",
            "frontal-lobe/conscious",
            "frontal-lobe/unconscious",
            "amygdala",
            "pineal",
            "left",
            "right",
            "brain-feed"
        ]
    );
    for compartment in &created {
        assert!(root.join(compartment).is_dir(), "{compartment}");
    }
    let second = json(&env, &["vault", "init", "--vault", root.to_str().unwrap()]);
    assert_eq!(second["created"].as_array().unwrap().len(), 0);
    assert_eq!(second["existing"].as_array().unwrap().len(), 8);
    // The default vault is <home>/vault.
    env.brain().args(["vault", "init"]).assert().success();
    assert!(env.home.join("vault/clusters").is_dir());
}

#[test]
fn a_missing_vault_is_a_clear_user_error() {
    let env = Env::new();
    let missing = env.dir.path().join("nowhere");
    for command in [&["vault", "scan"][..], &["tick"][..], &["tick", "--dry-run"][..]] {
        env.brain()
            .args(command)
            .args(["--vault", missing.to_str().unwrap()])
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(format!("vault {} does not exist", missing.display())))
            .stderr(predicate::str::contains("hint: create it with `brain vault init`"));
    }
    let file = env.dir.path().join("file.md");
    std::fs::write(&file, "x").unwrap();
    env.brain()
        .args(["vault", "init", "--vault", file.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("exists and is not a folder"));
}

fn vault_items(env: &Env) -> Vec<serde_json::Value> {
    let items = json(env, &["list", "--all-scopes", "--limit", "1000"]);
    items
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["source"].as_str().unwrap().starts_with("vault:"))
        .cloned()
        .collect()
}

fn by_kind<'a>(items: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    items.iter().filter(|item| item["kind"] == kind).collect()
}

#[test]
fn markers_and_arcs_become_read_only_approved_items() {
    let env = Env::new();
    let vault = standard_vault(&env);
    vault.write(
        "notes/todo.md",
        "<!-- @todo priority=1 -->\nShip the scan.\n<!-- @/todo -->\n<!-- @hot heat=9 -->\nRetries.\n<!-- @/hot -->\n\
         <!-- @milestone status=done -->\nv1\n<!-- @/milestone -->\n",
    );
    let report = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!(report["parsed"], 5);
    // 4 arcs minus none (the standing note has no cluster_id): 3 arcs.
    assert_eq!(report["indexed_arcs"], 3);
    let items = vault_items(&env);
    assert_eq!(by_kind(&items, "arc").len(), 3);
    assert_eq!(by_kind(&items, "lesson").len(), 1);
    assert_eq!(by_kind(&items, "decision").len(), 1);
    assert_eq!(by_kind(&items, "signal").len(), 4);
    let todo = by_kind(&items, "todo")[0];
    assert_eq!((todo["importance"].as_u64(), todo["title"].as_str()), (Some(5), Some("Ship the scan.")));
    assert_eq!(by_kind(&items, "note").len(), 2, "@hot and @milestone become notes");
    assert!(items.iter().all(|item| item["status"] == "approved" && item["id"].as_str().unwrap().starts_with("mem_v")));
    let lesson = by_kind(&items, "lesson")[0];
    assert_eq!(lesson["source"], format!("vault:{HOT}"));
    assert_eq!(lesson["scope"], "project/demo", "`project: demo` scopes the arc's items");
    assert_eq!(by_kind(&items, "decision")[0]["scope"], "global");
    // Read-only through the API.
    let id = lesson["id"].as_str().unwrap();
    env.brain()
        .args(["edit", id, "--title", "changed"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("comes from the vault and is read-only"))
        .stderr(predicate::str::contains(format!("edit the file {HOT}")));
    // Ids are content-stable: a rescan from scratch (another home) gives the same ids.
    let other = Env::new();
    json(&other, &["vault", "scan", "--vault", vault.arg()]);
    let mut ids: Vec<String> = items.iter().map(|i| i["id"].as_str().unwrap().to_string()).collect();
    let mut again: Vec<String> = vault_items(&other).iter().map(|i| i["id"].as_str().unwrap().to_string()).collect();
    ids.sort();
    again.sort();
    assert_eq!(ids, again);
}

#[test]
fn a_rescan_reads_only_what_changed_and_a_removed_marker_removes_its_item() {
    let env = Env::new();
    let vault = standard_vault(&env);
    json(&env, &["vault", "scan", "--vault", vault.arg()]);
    let before = vault_items(&env);
    let again = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!((again["parsed"].as_u64(), again["unchanged"].as_u64()), (Some(0), Some(4)));
    assert_eq!(again["items_inserted"].as_u64().unwrap() + again["items_updated"].as_u64().unwrap(), 0);

    // Same bytes, new mtime: hashed, not parsed.
    age(&vault.path(OLD), 7200);
    let touched = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!((touched["parsed"].as_u64(), touched["touched"].as_u64()), (Some(0), Some(1)));

    // The lesson marker goes: its item goes; the other items of the file keep their ids.
    let without_lesson = HOT_ARC.replace("<!-- @lesson -->\nAlways back off exponentially.\n<!-- @/lesson -->\n", "");
    vault.write(HOT, &without_lesson);
    let changed = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!((changed["parsed"].as_u64(), changed["items_deleted"].as_u64()), (Some(1), Some(1)));
    let after = vault_items(&env);
    assert!(by_kind(&after, "lesson").is_empty());
    assert_eq!(after.len(), before.len() - 1);
    let signal_id = |items: &[serde_json::Value]| {
        by_kind(items, "signal").iter().find(|s| s["severity"] == "critical").unwrap()["id"].clone()
    };
    assert_eq!(signal_id(&before), signal_id(&after));

    // A removed file takes its items and its arc with it.
    std::fs::remove_file(vault.path(MID)).unwrap();
    let removed = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!(removed["removed"], 1);
    let left = vault_items(&env);
    assert!(left.iter().all(|item| item["source"] != format!("vault:{MID}")));
    assert_eq!(by_kind(&left, "arc").len(), 2);
}

#[test]
fn bad_files_and_symlinks_out_of_the_vault_are_diagnosed_never_followed() {
    let env = Env::new();
    std::fs::write(env.home.join("config.toml"), "[vault]\nmax_file_bytes = 2000\n").unwrap();
    let vault = Vault::new(&env);
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "<!-- @lesson -->\nOUTSIDE LESSON\n<!-- @/lesson -->\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), vault.path("linked.md")).unwrap();
    std::os::unix::fs::symlink(&outside, vault.path("linked-dir")).unwrap();
    vault.write("big.md", "x".repeat(5000));
    vault.write("binary.md", b"abc\0def");
    vault.write("latin1.md", b"<!-- @lesson -->\nok before\n<!-- @/lesson -->\ncaf\xe9\n");
    vault.write("broken.md", "<!-- @lesson -->\nnever closed\n");
    let output = env.brain().args(["vault", "scan", "--vault", vault.arg()]).output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    for expected in [
        "big.md:0: warning: file is 5000 bytes, over the 2000-byte limit; not parsed",
        "binary.md:0: warning: binary file",
        "latin1.md:4: error: invalid UTF-8",
        "broken.md:1: warning:",
        "linked.md:0: warning: symlink to",
        "linked-dir:0: warning: symlink to",
        "outside the vault; not followed",
    ] {
        assert!(stderr.contains(expected), "missing {expected:?} in:\n{stderr}");
    }
    let items = vault_items(&env);
    assert!(items.iter().all(|item| !item["content"].as_str().unwrap().contains("OUTSIDE")), "{items:?}");
    assert_eq!(by_kind(&items, "lesson").len(), 1, "what parsed before the invalid byte is indexed");
    // A rescan still reports every diagnostic (they are stored with the file's state).
    let report = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!(report["parsed"], 0);
    let messages: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}:{}", d["file"].as_str().unwrap(), d["severity"].as_str().unwrap()))
        .collect();
    for expected in ["big.md:warning", "binary.md:warning", "latin1.md:error", "broken.md:warning", "linked.md:warning"]
    {
        assert!(messages.iter().any(|m| m == expected), "{expected} not in {messages:?}");
    }
}

#[test]
fn after_a_scan_the_feed_reaches_the_brain_document() {
    let env = Env::new();
    let vault = standard_vault(&env);
    env.brain().args(["vault", "scan", "--vault", vault.arg()]).assert().success();
    let output = env.brain().arg("brain").output().unwrap();
    let document = String::from_utf8(output.stdout).unwrap();
    let feed = &document[document.find("## Vault Feed").expect("a feed section")..];
    let critical =
        feed.find("**[critical]** (auth-broker) Auth broker ban rate increasing.").expect("the critical signal");
    let info = feed.find("**[info]** (rotation)").expect("the info signal");
    assert!(critical < info, "critical signals come first:\n{feed}");
    assert!(feed.contains("**Hot retry storm** (heat 10"), "{feed}");
    assert!(feed.contains("Gateway retries are capped at 3."), "{feed}");
    assert!(!feed.contains("CI flaky"), "a stale warning is not in the feed");
    assert!(!feed.contains("Vault sync lagging"), "a cleared signal is not in the feed");
    assert!(!feed.contains("Freeze deploys"), "an expired inject block is not in the feed");
    assert!(!document.contains("key id 42"), "private blocks never reach the agent");
    assert_eq!(feed.matches("Gateway").count(), 1, "inject blocks are deduplicated:\n{feed}");
    // The claude-md profile carries the inject block meant for CLAUDE.md.
    let context = env.brain().args(["context", "--profile", "claude-md"]).output().unwrap();
    assert!(String::from_utf8(context.stdout).unwrap().contains("Gateway retries are capped at 3."));
}

#[test]
fn scanning_another_vault_rebuilds_the_index_for_it() {
    let env = Env::new();
    let first = standard_vault(&env);
    json(&env, &["vault", "scan", "--vault", first.arg()]);
    let second_root = env.dir.path().join("second");
    std::fs::create_dir_all(&second_root).unwrap();
    std::fs::write(second_root.join("one.md"), "<!-- @lesson -->\nOnly lesson.\n<!-- @/lesson -->\n").unwrap();
    let report = json(&env, &["vault", "scan", "--vault", second_root.to_str().unwrap()]);
    assert_eq!(report["reindexed"], true);
    let items = vault_items(&env);
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["source"], "vault:one.md");
}

#[test]
fn a_large_first_scan_streams_its_items_and_a_lost_file_index_is_rebuilt_without_duplicates() {
    let env = Env::new();
    let vault = Vault::new(&env);
    for n in 0..150 {
        let day = 1 + n % 20;
        vault.write(
            &format!("clusters/2026-11-{day:02}/2026-11-{day:02}-arc-{n}.md"),
            format!(
                "---\ncluster_id: 2026-11-{day:02}-arc-{n}\ntitle: Arc {n}\n---\n\
                 <!-- @lesson -->\nLesson {n}.\n<!-- @/lesson -->\n<!-- @todo priority=2 -->\nTodo {n}.\n<!-- @/todo -->\n"
            ),
        );
    }
    // Two copies of one arc: whichever is parsed first, the first by path owns it.
    let copy = "---\ncluster_id: 2026-11-21-copied\ntitle: Copied arc\n---\nBody.\n";
    vault.write("zzz/copy.md", copy);
    vault.write("aaa/copy.md", copy);
    let first = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!((first["parsed"].as_u64(), first["items_inserted"].as_u64()), (Some(152), Some(451)));
    assert_eq!((first["indexed_items"].as_u64(), first["indexed_arcs"].as_u64()), (Some(451), Some(151)));
    let before = vault_items(&env);
    assert_eq!(before.len(), 451);
    let copied: Vec<&serde_json::Value> = before.iter().filter(|i| i["title"] == "Copied arc").collect();
    assert_eq!(copied.len(), 1);
    assert_eq!(copied[0]["source"], "vault:aaa/copy.md");
    let duplicate = first["diagnostics"].as_array().unwrap().iter().find(|d| d["file"] == "zzz/copy.md").unwrap();
    assert!(
        duplicate["message"].as_str().unwrap().contains("duplicate cluster_id 2026-11-21-copied (also in aaa/copy.md)")
    );
    // The file index is lost (the items stay): every file is new again, every id is taken.
    let brain = env.open_brain();
    brain.store().write(|tx| tx.clear_vault_files()).unwrap();
    drop(brain);
    let again = json(&env, &["vault", "scan", "--vault", vault.arg()]);
    assert_eq!(again["parsed"], 152);
    assert_eq!((again["items_inserted"].as_u64(), again["items_updated"].as_u64()), (Some(0), Some(0)));
    let after = vault_items(&env);
    assert_eq!(after.len(), 451, "no duplicate, no loss");
    let versions = |items: &[serde_json::Value]| items.iter().map(|i| i["version"].as_u64().unwrap()).max();
    assert_eq!(versions(&after), Some(1), "unchanged items are not rewritten");
}
