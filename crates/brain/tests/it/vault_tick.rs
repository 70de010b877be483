//! `brain tick` phase 1: heat, pointer notes, graduation, tombstones, the feed, the lock,
//! dry runs that write nothing, and user files that are never clobbered.

use std::path::Path;

use predicates::prelude::*;

use crate::vault_support::{
    HOT, HOT_ARC, MID, MID_ARC, NOTE, OLD, OLD_ARC, STANDING_NOTE, Vault, changed_files, fingerprint, json,
    standard_vault, tick_with_hook,
};
use crate::{Env, NOW};

const GRADUATED: &str = "left/2026-10-01-old-csv-export-bbbbbbbbbbbb.md";
const POINTER: &str = "frontal-lobe/conscious/2026-11-21-hot-retry-storm-aaaaaaaaaaaa.pointer.md";

fn tick(env: &Env, vault: &Vault, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["tick", "--vault", vault.arg()];
    args.extend_from_slice(extra);
    json(env, &args)
}

#[test]
fn a_tick_rewrites_heat_promotes_graduates_and_writes_the_feed() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let report = tick(&env, &vault, &[]);

    // Heat: only the `heat:` value of the hot arc changed, every other byte is as written.
    assert_eq!(vault.read(HOT), HOT_ARC.replace("heat: 2\n", "heat: 10\n"));
    // The mid arc's heat was already right: only its cleared signal block is gone.
    let tombstoned = MID_ARC.replace(
        "<!-- @signal severity=resolved source=vault-sync -->\nVault sync lagging (CLEARED: NFS cache fixed)\n<!-- @/signal -->\n",
        "",
    );
    assert_eq!(vault.read(MID), tombstoned);
    // The old arc graduated into its region folder with `status: graduated` and its heat.
    assert!(!vault.exists(OLD));
    assert_eq!(
        vault.read(GRADUATED),
        OLD_ARC.replace("status: complete\n", "status: graduated\n").replace("heat: 3\n", "heat: 0\n")
    );
    // The standing note is never edited.
    assert_eq!(vault.read(NOTE), STANDING_NOTE);

    // Promotion is a pointer note, not a copy.
    let pointer = vault.read(POINTER);
    assert!(pointer.contains("generated_by: brain-tick"), "{pointer}");
    assert!(pointer.contains("heat: 10"), "{pointer}");
    assert!(
        pointer.contains("[[clusters/2026-11-21/2026-11-21-hot-retry-storm-aaaaaaaaaaaa|Hot retry storm]]"),
        "{pointer}"
    );
    assert!(!pointer.contains("Always back off"), "no copy of the arc's body");
    // One amygdala note per active critical signal.
    let amygdala: Vec<String> = std::fs::read_dir(vault.path("amygdala"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(amygdala.len(), 1, "{amygdala:?}");
    assert!(amygdala[0].starts_with("signal-auth-broker-"), "{amygdala:?}");

    // The five feed files and health.jsonl.
    let hot_arcs = vault.read("brain-feed/hot-arcs.md");
    assert!(hot_arcs.starts_with(
        "---\nid: hot-arcs-2026-11-21\ntitle: Active Hot Arcs\npriority: 10\nttl: 3600\nseverity: info\n---\n"
    ));
    assert!(hot_arcs.contains("## Hot Arcs — 2026-11-21"));
    assert!(hot_arcs.contains("| Arc | Heat | Region | Status | What it is |"));
    assert!(hot_arcs.contains(
        "| 2026-11-21-hot-retry-storm-aaaaaaaaaaaa | 10 | left-hemisphere | active | Retry storm in the gateway, fixed by backoff |"
    ));
    // Issue 15, bug 3: an arc without a summary says what it is by its title, never "—".
    assert!(
        hot_arcs.contains(
            "| 2026-11-19-mid-token-rotation-cccccccccccc | 2 | right-hemisphere | stalled | Mid token rotation |"
        ),
        "{hot_arcs}"
    );
    assert!(!hot_arcs.contains("| — |"), "{hot_arcs}");
    assert!(!hot_arcs.contains("Old CSV export"), "graduated arcs are not hot");
    let signals = vault.read("brain-feed/signals.md");
    assert!(signals.contains("priority: 8\nttl: 3600\nseverity: critical\n"), "{signals}");
    let critical = signals.find("- **[critical]** (auth-broker) Auth broker ban rate increasing.").unwrap();
    let info = signals.find("- **[info]** (rotation) Rotation pending for review.").unwrap();
    assert!(critical < info);
    assert!(!signals.contains("CI flaky"), "stale warnings leave the feed");
    assert!(!signals.contains("Vault sync"), "cleared signals never show");
    assert!(!signals.contains("key id 42"), "private blocks never reach a feed file");
    let inject = vault.read("brain-feed/inject.md");
    assert!(inject.contains("priority: 9"));
    assert_eq!(inject.matches("**[claude.md]** Gateway").count(), 1, "deduplicated:\n{inject}");
    assert!(!inject.contains("Freeze deploys"), "expired blocks are dropped");
    assert!(vault.read("brain-feed/intent.md").contains("priority: 7"));
    let diff = vault.read("brain-feed/last-tick-diff.md");
    assert!(diff.contains("priority: 5"));
    assert!(diff.contains("### Promotions\n\n- Hot retry storm (2026-11-21-hot-retry-storm-aaaaaaaaaaaa) → frontal-lobe/conscious, heat 10"), "{diff}");
    assert!(diff.contains(&format!("2026-10-01-old-csv-export-bbbbbbbbbbbb: {OLD} → {GRADUATED}")), "{diff}");
    assert!(diff.contains("cleared, block removed from"), "{diff}");
    let health: serde_json::Value = serde_json::from_str(vault.read("brain-feed/health.jsonl").trim()).unwrap();
    let keys: Vec<&String> = health.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["timestamp", "score", "reason", "arcs", "signals", "lessons", "edges", "orphans", "duplicates"]);
    assert_eq!(
        (health["timestamp"].as_str(), health["arcs"].as_u64(), health["signals"].as_u64()),
        (Some(NOW), Some(3), Some(2))
    );
    assert_eq!(
        (health["lessons"].as_u64(), health["edges"].as_u64(), health["orphans"].as_u64()),
        (Some(1), Some(1), Some(1))
    );

    // The report: phase 1 only, with per-step timings.
    assert_eq!(report["ai"]["ran"], false);
    assert!(report["ai"]["reason"].as_str().unwrap().contains("no LLM is configured"));
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 5);
    assert_eq!((phases[0]["name"].as_str(), phases[0]["ran"].as_bool()), (Some("keeper"), Some(true)));
    let steps: Vec<&str> = phases[0]["steps"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(steps, ["scan", "heat", "plan", "verify", "feed", "apply", "write"]);
    assert!(phases[1..].iter().all(|phase| phase["ran"] == false));
    assert_eq!(report["promotions"].as_array().unwrap().len(), 1);
    assert_eq!(report["graduations"].as_array().unwrap().len(), 1);
    assert_eq!(report["tombstones"].as_array().unwrap().len(), 1);

    // The index followed: the graduated arc's items moved with it, the cleared signal is gone.
    let items = json(&env, &["list", "--all-scopes", "--limit", "1000"]);
    let items = items.as_array().unwrap();
    assert!(items.iter().any(|i| i["kind"] == "arc" && i["source"] == format!("vault:{GRADUATED}")));
    assert!(items.iter().all(|i| !i["content"].as_str().unwrap().contains("Vault sync lagging")));
    // Text output says phase 1 only.
    let text = env.brain().args(["tick", "--vault", vault.arg(), "--no-ai"]).output().unwrap();
    assert!(String::from_utf8(text.stdout).unwrap().contains("phases 2-5 skipped: phase 1 only: --no-ai"));
}

#[test]
fn a_further_tick_with_nothing_new_changes_only_health_and_the_diff() {
    let env = Env::new();
    let vault = standard_vault(&env);
    // Active and 25 days old: heat 1 (3 sessions + 2 active − 4 decay), so it graduates, and
    // as a graduate (no active bonus) its heat is 0 — written once, not changed next tick.
    let graduate = "---\ncluster_id: 2026-10-27-active-graduate-eeeeeeeeeeee\ntitle: Active graduate\nstatus: active\n\
                    created: 2026-10-27T10:00:00Z\nsource_sessions: [a, b, c]\nheat: 5\n---\nBody.\n";
    vault.write("clusters/2026-10-27/2026-10-27-active-graduate-eeeeeeeeeeee.md", graduate);
    tick(&env, &vault, &[]);
    assert_eq!(
        vault.read("left/2026-10-27-active-graduate-eeeeeeeeeeee.md"),
        graduate.replace("status: active", "status: graduated").replace("heat: 5", "heat: 0")
    );
    let before = fingerprint(&vault.root);
    let later = "2026-11-21T10:01:00Z";
    let report = json(&env, &["tick", "--vault", vault.arg(), "--now", later]);
    let after = fingerprint(&vault.root);
    assert_eq!(changed_files(&before, &after), ["brain-feed/health.jsonl", "brain-feed/last-tick-diff.md"]);
    assert_eq!(report["scan"]["parsed"], 0, "nothing is re-parsed");
    assert_eq!(report["heat_changes"].as_array().unwrap().len(), 0);
    assert_eq!(vault.read("brain-feed/health.jsonl").lines().count(), 2);
    // And once more: still nothing.
    let again = json(&env, &["tick", "--vault", vault.arg(), "--now", "2026-11-21T10:02:00Z"]);
    assert_eq!(again["scan"]["parsed"], 0);
    assert_eq!(
        changed_files(&after, &fingerprint(&vault.root)),
        ["brain-feed/health.jsonl", "brain-feed/last-tick-diff.md"]
    );
    // Feed hashing skips rendering when nothing changed, but never trusts a file someone
    // edited or deleted: both come back.
    let signals = vault.read("brain-feed/signals.md");
    std::fs::write(vault.path("brain-feed/signals.md"), "edited by hand\n").unwrap();
    std::fs::remove_file(vault.path("brain-feed/hot-arcs.md")).unwrap();
    tick(&env, &vault, &["--now", "2026-11-21T10:03:00Z"]);
    assert_eq!(vault.read("brain-feed/signals.md"), signals);
    assert!(vault.read("brain-feed/hot-arcs.md").contains("| 2026-11-21-hot-retry-storm-aaaaaaaaaaaa | 10 |"));
}

#[test]
fn a_dry_run_writes_nothing_anywhere_and_lists_the_plan() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let vault_before = fingerprint(&vault.root);
    let home_before = fingerprint(&env.home);
    let report = tick(&env, &vault, &["--dry-run"]);
    assert_eq!(changed_files(&vault_before, &fingerprint(&vault.root)), Vec::<String>::new());
    assert_eq!(changed_files(&home_before, &fingerprint(&env.home)), Vec::<String>::new());
    assert_eq!(report["dry_run"], true);
    let hot_change = report["heat_changes"].as_array().unwrap().iter().find(|c| c["file"] == HOT).unwrap().clone();
    assert_eq!((hot_change["from"].as_u64(), hot_change["to"].as_u64()), (Some(2), Some(10)));
    assert_eq!(report["graduations"][0]["to"], GRADUATED);
    assert_eq!(report["promotions"].as_array().unwrap().len(), 1);
    assert!(report["notes"].as_array().unwrap().iter().any(|n| n["path"] == POINTER && n["action"] == "write"));
    assert!(report["feed_files"].as_array().unwrap().iter().all(|f| f["changed"] == true));
    // The text form lists the planned changes too, and still writes nothing.
    let output = env.brain().args(["tick", "--dry-run", "--vault", vault.arg()]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("dry run: planned changes, nothing written"), "{text}");
    assert!(text.contains(&format!("would set heat 2 -> 10 in {HOT}")), "{text}");
    assert!(text.contains(&format!("would graduate {OLD} -> {GRADUATED}")), "{text}");
    assert_eq!(changed_files(&vault_before, &fingerprint(&vault.root)), Vec::<String>::new());
    assert_eq!(changed_files(&home_before, &fingerprint(&env.home)), Vec::<String>::new());
    // After a real tick, a dry run beside it still changes nothing (the lock file exists now).
    tick(&env, &vault, &[]);
    let (vault_before, home_before) = (fingerprint(&vault.root), fingerprint(&env.home));
    tick(&env, &vault, &["--dry-run", "--now", "2026-11-25T10:00:00Z"]);
    assert_eq!(changed_files(&vault_before, &fingerprint(&vault.root)), Vec::<String>::new());
    assert_eq!(changed_files(&home_before, &fingerprint(&env.home)), Vec::<String>::new());
}

#[test]
fn a_second_tick_while_one_runs_exits_1_with_a_clear_message() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let lock =
        std::fs::File::options().create(true).truncate(false).write(true).open(env.home.join("tick.lock")).unwrap();
    lock.lock().unwrap();
    let before = fingerprint(&vault.root);
    for args in [&["tick"][..], &["tick", "--dry-run"][..], &["vault", "scan"][..]] {
        env.brain()
            .args(args)
            .args(["--vault", vault.arg()])
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains("another brain tick or vault scan is running on this home"));
    }
    assert_eq!(changed_files(&before, &fingerprint(&vault.root)), Vec::<String>::new());
    lock.unlock().unwrap();
    env.brain().args(["tick", "--vault", vault.arg()]).assert().success();
}

#[test]
fn a_file_edited_between_read_and_write_is_left_as_the_user_wrote_it() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let brain = env.open_brain();
    let user_edit = "\nA line the user typed while the tick ran.\n";
    let hook = |path: &Path| {
        if path.ends_with(HOT) || path.ends_with(OLD) {
            let mut text = std::fs::read_to_string(path).unwrap();
            text.push_str(user_edit);
            std::fs::write(path, text).unwrap();
        }
    };
    let report = tick_with_hook(&brain, &vault, &hook);
    // Both edits were refused: the files hold exactly what the user wrote.
    assert_eq!(vault.read(HOT), format!("{HOT_ARC}{user_edit}"));
    assert_eq!(vault.read(OLD), format!("{OLD_ARC}{user_edit}"));
    assert!(!vault.exists(GRADUATED), "the graduation was rolled back");
    let skipped: Vec<(&str, &str)> = report.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
    assert!(skipped.contains(&(HOT, "left alone: the file changed while the tick was updating it")), "{skipped:?}");
    assert!(skipped.contains(&(OLD, "left alone: the file changed while the tick was updating it")), "{skipped:?}");
    assert!(report.heat_changes.iter().all(|change| change.file != HOT));
    assert!(report.graduations.is_empty());
    // The other edit went through.
    assert!(!vault.read(MID).contains("Vault sync lagging"));
    assert!(vault.read("brain-feed/last-tick-diff.md").contains("### Skipped"));
    // The next tick starts from the user's version.
    drop(brain);
    tick(&env, &vault, &[]);
    assert_eq!(vault.read(HOT), format!("{}{user_edit}", HOT_ARC.replace("heat: 2\n", "heat: 10\n")));
}

#[test]
fn a_file_edited_after_the_scan_is_not_touched() {
    let env = Env::new();
    let vault = standard_vault(&env);
    let brain = env.open_brain();
    let location = brain_vault::Location::resolve(&brain, Some(&vault.root), None).unwrap();
    // The edit lands after the scan read the file and before the tick reads it for its edit.
    let progress = |done: usize, total: usize| {
        if done == total {
            std::fs::write(vault.path(HOT), "user rewrote everything\n").unwrap();
        }
    };
    let options =
        brain_vault::TickOptions { location, dry_run: false, no_ai: true, progress: &progress, before_write: None };
    let report = brain_ai::tick(&brain, &options).unwrap();
    assert_eq!(vault.read(HOT), "user rewrote everything\n");
    assert!(
        report.skipped.iter().any(|s| s.path == HOT && s.reason.contains("changed since the scan")),
        "{:?}",
        report.skipped
    );
}

#[test]
fn verify_commands_run_only_when_allowed_and_never_through_a_shell() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let marker = env.dir.path().join("verified");
    vault.write(
        "clusters/2026-11-21/2026-11-21-verify-dddddddddddd.md",
        format!(
            "---\ncluster_id: 2026-11-21-verify-dddddddddddd\ntitle: Verify\ncreated: 2026-11-21T09:00:00Z\n---\n\
             <!-- @signal severity=critical source=db date=2026-11-21T09:30:00Z verify=\"touch {}\" -->\nDB down.\n<!-- @/signal -->\n\
             <!-- @signal severity=critical source=shell verify=\"exit 0\" -->\nShell builtin.\n<!-- @/signal -->\n",
            marker.display()
        ),
    );
    let report = tick(&env, &vault, &[]);
    assert!(!marker.exists(), "not executed without allow_verify_commands");
    let outcomes: Vec<&str> =
        report["verify"].as_array().unwrap().iter().map(|v| v["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["not run: allow_verify_commands is off", "not run: allow_verify_commands is off"]);
    let dry = tick(&env, &vault, &["--dry-run"]);
    assert!(!marker.exists());
    assert_eq!(dry["verify"][0]["outcome"], "not run: allow_verify_commands is off");

    std::fs::write(env.home.join("config.toml"), "[vault]\nallow_verify_commands = true\nverify_timeout_secs = 5\n")
        .unwrap();
    let dry = tick(&env, &vault, &["--dry-run"]);
    assert!(!marker.exists(), "a dry run runs nothing");
    assert_eq!(dry["verify"][0]["outcome"], "not run: dry run");
    let report = tick(&env, &vault, &[]);
    assert!(marker.exists(), "allowed: the command ran");
    let outcomes: Vec<&str> =
        report["verify"].as_array().unwrap().iter().map(|v| v["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes[0], "passed");
    assert!(outcomes[1].starts_with("cannot run \"exit\" (no shell is used)"), "{outcomes:?}");
}

/// Issue 15, bug 1: the blocks of an arc are identified by its `cluster_id`, so graduation
/// (a move) keeps every id: the amygdala note is not renamed or rewritten, the diff lists no
/// signal as new, and the index keeps the items.
#[test]
fn a_graduating_arc_keeps_the_ids_of_its_signals_and_their_amygdala_note() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let relpath = "clusters/2026-10-01/2026-10-01-old-outage-dddddddddddd.md";
    vault.write(
        relpath,
        "---\ncluster_id: 2026-10-01-old-outage-dddddddddddd\ntitle: Old outage\nregion: left-hemisphere\n\
         status: complete\nheat: 0\ncreated: 2026-10-01T12:00:00Z\n---\n\n\
         <!-- @signal severity=critical source=billing -->\nBilling webhooks dropped.\n<!-- @/signal -->\n\n\
         <!-- @lesson -->\nReplay from the queue.\n<!-- @/lesson -->\n",
    );
    env.json(&["vault", "scan", "--vault", vault.arg()]);
    let ids_before = vault_item_ids(&env);
    assert_eq!(ids_before.len(), 3, "{ids_before:?}");
    let report = tick(&env, &vault, &[]);
    assert_eq!(report["graduations"][0]["to"], "left/2026-10-01-old-outage-dddddddddddd.md", "{report}");
    assert_eq!(vault_item_ids(&env), ids_before, "the move keeps every id");
    let amygdala = files_in(&vault, "amygdala");
    assert_eq!(amygdala.len(), 1, "{amygdala:?}");
    let note = vault.read(&format!("amygdala/{}", amygdala[0]));
    assert!(
        note.contains("From [[left/2026-10-01-old-outage-dddddddddddd]]"),
        "the note links where the arc went:\n{note}"
    );
    // The next tick finds the same signal: no note renamed or rewritten, nothing new.
    let second = tick(&env, &vault, &[]);
    assert_eq!(second["notes"].as_array().unwrap().len(), 0, "{second}");
    assert_eq!(files_in(&vault, "amygdala"), amygdala);
    let diff = vault.read("brain-feed/last-tick-diff.md");
    assert!(!diff.contains("new: "), "{diff}");
    assert_eq!(vault_item_ids(&env), ids_before);
}

/// A `created:` with a fraction of a second: the items of its file are stored to the second,
/// so an edit that re-parses the file (a cleared signal removed) finds them unchanged and
/// leaves them as they were; a move in the same tick re-sources them, text intact.
#[test]
fn an_edit_of_an_arc_dated_to_a_fraction_of_a_second_leaves_its_items_as_they_were() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let stays = "clusters/2026-11-19/2026-11-19-fraction-dddddddddddd.md";
    let moves = "clusters/2026-10-01/2026-10-01-fraction-old-eeeeeeeeeeee.md";
    let body = "<!-- @signal severity=resolved source=ci -->\nCI red (CLEARED: fixed)\n<!-- @/signal -->\n\n\
                <!-- @lesson -->\nPin the runner image.\n<!-- @/lesson -->\n";
    vault.write(
        stays,
        format!(
            "---\ncluster_id: 2026-11-19-fraction-dddddddddddd\ntitle: Fraction\nregion: left-hemisphere\n\
             status: stalled\nheat: 2\ncreated: 2026-11-19T10:00:00.250+00:00\nsource_sessions: [s1]\n---\n\n{body}"
        ),
    );
    vault.write(
        moves,
        format!(
            "---\ncluster_id: 2026-10-01-fraction-old-eeeeeeeeeeee\ntitle: Fraction old\nregion: left-hemisphere\n\
             status: complete\nheat: 0\ncreated: 2026-10-01T12:00:00.750+00:00\n---\n\n{}",
            body.replace("runner image", "base image")
        ),
    );
    let report = tick(&env, &vault, &[]);
    assert_eq!(report["tombstones"].as_array().unwrap().len(), 2, "{report}");
    assert_eq!(report["graduations"][0]["to"], "left/2026-10-01-fraction-old-eeeeeeeeeeee.md", "{report}");
    let items = json(&env, &["list", "--all-scopes", "--limit", "1000"]);
    let lesson = |text: &str| {
        items.as_array().unwrap().iter().find(|item| item["content"].as_str() == Some(text)).cloned().unwrap()
    };
    let kept = lesson("Pin the runner image.");
    assert_eq!(kept["created_at"], "2026-11-19T10:00:00Z", "{kept}");
    assert_eq!(kept["version"], 1, "the edit found the lesson unchanged: {kept}");
    let moved = lesson("Pin the base image.");
    assert_eq!(moved["source"], "vault:left/2026-10-01-fraction-old-eeeeeeeeeeee.md", "{moved}");
    let found = json(&env, &["search", "base image", "--all-scopes", "--json"]);
    assert!(found.to_string().contains("Pin the base image."), "still found by its text: {found}");
    // Nothing is rewritten by the next tick.
    let before = json(&env, &["list", "--all-scopes", "--limit", "1000"]);
    tick(&env, &vault, &[]);
    assert_eq!(json(&env, &["list", "--all-scopes", "--limit", "1000"]), before);
}

/// Ids of the vault's items in the index.
fn vault_item_ids(env: &Env) -> Vec<String> {
    let items = json(env, &["list", "--all-scopes", "--limit", "1000"]);
    let mut ids: Vec<String> = items
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["source"].as_str().unwrap().starts_with("vault:"))
        .map(|item| item["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn files_in(vault: &Vault, folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(vault.path(folder))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Issue 15, bug 4: an inject block ends with the work it steered (its arc resolved, complete
/// or graduated) and after 30 days whatever its `ttl=`; an arc's `mitigates:` takes the
/// signal it names (by source) out of the feed and its amygdala note away.
#[test]
fn injects_of_finished_or_old_arcs_expire_and_mitigates_clears_the_named_signal() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let arc = |slug: &str, status: &str, created: &str, body: &str| {
        let cluster_id = format!("{}-{slug}-eeeeeeeeeeee", &created[..10]);
        vault.write(
            &format!("clusters/{}/{cluster_id}.md", &created[..10]),
            format!(
                "---\ncluster_id: {cluster_id}\ntitle: {slug}\nregion: left-hemisphere\nstatus: {status}\n\
                 created: {created}\n---\n\n{body}"
            ),
        );
    };
    let inject =
        |text: &str, attrs: &str| format!("<!-- @inject target=claude.md{attrs} -->\n{text}\n<!-- @/inject -->\n");
    arc("live", "active", "2026-11-20T08:00:00Z", &inject("Live rule stays.", ""));
    arc("done", "complete", "2026-11-20T08:00:00Z", &inject("Rule of a complete arc.", ""));
    arc("fixed", "resolved", "2026-11-20T08:00:00Z", &inject("Rule of a resolved arc.", ""));
    arc("old", "active", "2026-11-20T08:00:00Z", &inject("Rule from October.", " date=2026-10-01 ttl=90"));
    arc(
        "outage",
        "active",
        "2026-11-20T08:00:00Z",
        "<!-- @signal severity=critical source=auth-broker -->\nAuth broker ban rate increasing.\n<!-- @/signal -->\n\
         <!-- @signal severity=critical source=billing -->\nBilling webhooks dropped.\n<!-- @/signal -->\n",
    );
    tick(&env, &vault, &[]);
    let injects = vault.read("brain-feed/inject.md");
    assert!(injects.contains("Live rule stays."), "{injects}");
    for gone in ["Rule of a complete arc.", "Rule of a resolved arc.", "Rule from October."] {
        assert!(!injects.contains(gone), "{gone:?} should have expired:\n{injects}");
    }
    let signals = vault.read("brain-feed/signals.md");
    assert!(signals.contains("Auth broker ban rate increasing."), "{signals}");
    assert_eq!(files_in(&vault, "amygdala").len(), 2);

    // A fix names the signal it resolves: it leaves the feed, its amygdala note goes.
    arc("ban-fix", "resolved", "2026-11-21T08:00:00Z", "Rate limiter fixed.\n");
    let fix = "clusters/2026-11-21/2026-11-21-ban-fix-eeeeeeeeeeee.md";
    let text = vault.read(fix).replace("status: resolved\n", "status: resolved\nmitigates: [auth-broker]\n");
    vault.write(fix, text);
    tick(&env, &vault, &[]);
    let signals = vault.read("brain-feed/signals.md");
    assert!(!signals.contains("Auth broker ban rate increasing."), "{signals}");
    assert!(signals.contains("Billing webhooks dropped."), "other signals stay:\n{signals}");
    let amygdala = files_in(&vault, "amygdala");
    assert_eq!(amygdala.len(), 1, "{amygdala:?}");
    assert!(amygdala[0].contains("billing"), "{amygdala:?}");
}

#[test]
fn a_tick_removes_the_temp_files_of_dead_writers_and_leaves_everything_else() {
    let env = Env::new();
    let vault = standard_vault(&env);
    tick(&env, &vault, &[]);
    // No process has pid 4194305 (above Linux's largest); this test's own pid is alive.
    let dead = [
        "clusters/2026-11-21/.2026-11-21-hot-retry-storm-aaaaaaaaaaaa.md.brain-4194305-7.tmp",
        "brain-feed/.hot-arcs.md.brain-4194305-8.tmp",
        ".index.md.brain-4194305-9.tmp",
    ];
    let alive = format!("clusters/2026-11-21/.note.md.brain-{}-1.tmp", std::process::id());
    let kept = ["clusters/2026-11-21/.hidden-user-file.tmp", ".obsidian/workspace.json"];
    for relpath in dead.iter().chain(&kept).copied().chain([alive.as_str()]) {
        vault.write(relpath, "partial");
    }
    tick(&env, &vault, &["--dry-run"]);
    assert!(dead.iter().all(|relpath| vault.exists(relpath)), "a dry run removes nothing");
    tick(&env, &vault, &[]);
    for relpath in dead {
        assert!(!vault.exists(relpath), "{relpath}: a dead writer's temp file stays");
    }
    for relpath in kept.iter().copied().chain([alive.as_str()]) {
        assert!(vault.exists(relpath), "{relpath} was removed");
    }
}

/// The mid arc without its cleared signal, its `heat:` one digit off what the tick computes
/// (2): the tick's only edit of it is that digit.
fn mid_arc_one_digit_off() -> String {
    MID_ARC
        .replace(
            "<!-- @signal severity=resolved source=vault-sync -->\nVault sync lagging (CLEARED: NFS cache fixed)\n<!-- @/signal -->\n",
            "",
        )
        .replace("heat: 2\n", "heat: 5\n")
}

#[test]
fn a_one_digit_heat_change_is_written_into_the_file_itself() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    let vault = standard_vault(&env);
    let arc = mid_arc_one_digit_off();
    vault.write(MID, &arc);
    // A second name for the file (a hard link, as some sync tools keep) and its inode.
    std::fs::hard_link(vault.root.join(MID), env.home.join("mid-link.md")).unwrap();
    let inode = std::fs::metadata(vault.root.join(MID)).unwrap().ino();
    let report = tick(&env, &vault, &[]);
    let change = report["heat_changes"].as_array().unwrap().iter().find(|c| c["file"] == MID).cloned();
    assert_eq!(change.map(|c| (c["from"].clone(), c["to"].clone())), Some((5.into(), 2.into())));
    let expected = arc.replace("heat: 5\n", "heat: 2\n");
    assert_eq!(vault.read(MID), expected);
    assert_eq!(std::fs::metadata(vault.root.join(MID)).unwrap().ino(), inode, "the same file, edited in place");
    assert_eq!(std::fs::read_to_string(env.home.join("mid-link.md")).unwrap(), expected, "the link sees the edit");
    // The index learned the new bytes: the next tick neither parses nor edits it.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let next = tick(&env, &vault, &[]);
    assert_eq!(next["scan"]["parsed"], 0, "{}", next["scan"]);
    assert!(next["heat_changes"].as_array().unwrap().is_empty());
    assert_eq!(vault.read(MID), expected);
}

#[test]
fn a_one_digit_heat_change_is_refused_when_the_file_changed_or_was_replaced_meanwhile() {
    for replace in [false, true] {
        let env = Env::new();
        let vault = standard_vault(&env);
        vault.write(MID, mid_arc_one_digit_off());
        let brain = env.open_brain();
        // The user's version keeps `heat: 5` at the same offset: only the check can tell.
        let user = format!("{}\nA line the user typed while the tick ran.\n", mid_arc_one_digit_off());
        let hook = |path: &Path| {
            if path.ends_with(MID) {
                if replace {
                    // An editor's atomic save: a new file renamed over the old one.
                    let temp = path.with_extension("swp");
                    std::fs::write(&temp, &user).unwrap();
                    std::fs::rename(&temp, path).unwrap();
                } else {
                    std::fs::write(path, &user).unwrap();
                }
            }
        };
        let report = tick_with_hook(&brain, &vault, &hook);
        assert_eq!(vault.read(MID), user, "replace: {replace}");
        let skipped: Vec<(&str, &str)> = report.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
        assert!(skipped.contains(&(MID, "left alone: the file changed while the tick was updating it")), "{skipped:?}");
        assert!(report.heat_changes.iter().all(|change| change.file != MID));
        // The next tick edits the user's version.
        drop(brain);
        tick(&env, &vault, &[]);
        assert_eq!(vault.read(MID), user.replace("heat: 5\n", "heat: 2\n"), "replace: {replace}");
    }
}

/// Issue 27, item 10: a generated note the user copied among their own notes (say, a pointer
/// kept as a bookmark, an amygdala note kept as a record) is theirs: no tick rewrites or
/// removes it, whatever happens to the arc it names. The tick owns only its own folders.
#[test]
fn copies_of_generated_notes_outside_the_ticks_folders_are_never_removed() {
    let env = Env::new();
    let vault = standard_vault(&env);
    tick(&env, &vault, &[]);
    let pointer = vault.read(POINTER);
    let signal_note = files_in(&vault, "amygdala").into_iter().next().unwrap();
    let signal = vault.read(&format!("amygdala/{signal_note}"));
    vault.write("notes/kept-pointer.md", &pointer);
    vault.write("notes/kept-signal.md", &signal);
    // The hot arc goes: its pointer and signal note go with it, the copies stay.
    std::fs::remove_file(vault.path(crate::vault_support::HOT)).unwrap();
    let report = tick(&env, &vault, &[]);
    assert!(!vault.exists(POINTER), "{report}");
    assert!(!vault.exists(&format!("amygdala/{signal_note}")), "{report}");
    assert_eq!(vault.read("notes/kept-pointer.md"), pointer, "{report}");
    assert_eq!(vault.read("notes/kept-signal.md"), signal, "{report}");
}
