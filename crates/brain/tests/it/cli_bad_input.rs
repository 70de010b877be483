//! Bad input: one clear message, exit 1, and the store unchanged.

use crate::Env;
use predicates::prelude::*;

/// Runs `args`, expects exit 1 with `message` on stderr, and checks the store did not change.
fn rejects(env: &Env, args: &[&str], stdin: Option<Vec<u8>>, message: &str) {
    let before = env.export();
    let mut command = env.brain();
    command.args(args);
    if let Some(stdin) = stdin {
        command.write_stdin(stdin);
    }
    command.assert().code(1).stdout("").stderr(predicate::str::contains(message));
    assert_eq!(env.export(), before, "{args:?} changed the store");
}

#[test]
fn invalid_field_values_name_the_field_and_the_allowed_values() {
    let env = Env::new();
    env.remember(&["--title", "existing item"]);
    let cases: &[(&[&str], &str)] = &[
        (&["remember", "--title", "t", "--importance", "6"], "invalid importance: 6 is not an integer from 1 to 5"),
        (&["remember", "--title", "t", "--importance", "-1"], "invalid importance: -1"),
        (&["remember", "--title", "t", "--confidence", "1.5"], "invalid confidence: 1.5 is not between 0.0 and 1.0"),
        (&["remember", "--title", "t", "--kind", "banana"], "invalid kind \"banana\" (allowed: architecture,"),
        (&["remember", "--title", "t", "--status", "live"], "invalid status \"live\" (allowed: draft, approved,"),
        (&["remember", "--title", "t", "--scope", "planet/mars"], "allowed: global, project/<name>"),
        (&["remember", "--title", "t", "--scope", "project/../etc"], "invalid scope"),
        (&["remember", "--title", ""], "invalid title: is empty"),
        (&["remember", "--title", "t", "--valid-until", "soon"], "invalid valid_until"),
        (&["remember", "--title", "t", "--tags", "a,b,c,d,e,f,g,h,i,j,k"], "invalid tags: 11 tags given (at most 10)"),
        (&["list", "--kind", "banana"], "invalid kind"),
        (&["list", "--limit", "0"], "--limit 0 is out of range"),
        (&["search", "x", "--limit", "101"], "--limit 101 is out of range (1 to 100)"),
        (&["search", "?!"], "has no words to search for"),
    ];
    for (args, message) in cases {
        rejects(&env, args, None, message);
    }
}

#[test]
fn a_500_character_title_is_rejected_with_its_length() {
    let env = Env::new();
    let title = "x".repeat(500);
    rejects(&env, &["remember", "--title", &title], None, "invalid title: has 500 characters (1 to 200 allowed)");
}

#[test]
fn content_over_the_limit_is_rejected() {
    let env = Env::new();
    let content = "y".repeat(20_001);
    rejects(&env, &["remember", "--title", "big"], Some(content.into_bytes()), "invalid content: has 20001 characters");
}

/// Markers are longer than the short secrets they replace: a text within the limit that its
/// markers push past it is refused (nothing is cut), and the error says why.
#[test]
fn content_its_redaction_markers_push_over_the_limit_is_refused_saying_why() {
    let env = Env::new();
    let secret = "password=Xk9mQ2vL ";
    let content = format!("{}{}", secret.repeat(20), "y".repeat(20_000 - secret.len() * 20));
    assert_eq!(content.chars().count(), 20_000);
    rejects(
        &env,
        &["remember", "--title", "big"],
        Some(content.into_bytes()),
        "once redacted (1 field held secrets, each now a [REDACTED:kind] marker, and the markers count)",
    );
}

#[test]
fn non_utf8_stdin_is_rejected() {
    let env = Env::new();
    rejects(&env, &["remember", "--title", "t"], Some(vec![b'o', b'k', 0xff, 0xfe]), "stdin is not valid UTF-8");
}

#[test]
fn an_unknown_or_malformed_id_is_a_clear_error() {
    let env = Env::new();
    for command in ["show", "approve", "deprecate", "pin", "unpin", "forget"] {
        rejects(
            &env,
            &[command, "mem_01JD0000000000000000000000"],
            None,
            "item mem_01JD0000000000000000000000 not found",
        );
        rejects(&env, &[command, "../../etc/passwd"], None, "is not an item id");
    }
    rejects(&env, &["edit", "mem_01JD0000000000000000000000", "--importance", "2"], None, "not found");
    rejects(&env, &["forget", "--hard", "mem_01JD0000000000000000000000"], None, "not found");
}

#[test]
fn a_malformed_line_in_the_middle_of_an_import_fails_the_whole_import_and_names_the_line() {
    let env = Env::new();
    env.remember(&["--title", "already here"]);
    let mut lines: Vec<String> = (0..10).map(|i| format!(r#"{{"title":"item {i}","kind":"lesson"}}"#)).collect();
    lines[5] = r#"{"title": "broken", "importance": }"#.into();
    let file = env.dir.path().join("bad.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    rejects(&env, &["import", file.to_str().unwrap()], None, "line 6: invalid item JSON");
    // A valid JSON line with an invalid field is named too.
    lines[5] = r#"{"title": "bad importance", "importance": 9}"#.into();
    std::fs::write(&file, lines.join("\n")).unwrap();
    rejects(&env, &["import", file.to_str().unwrap()], None, "line 6: invalid importance: 9");
    lines[5] = r#"{"title": "typo", "importanse": 3}"#.into();
    std::fs::write(&file, lines.join("\n")).unwrap();
    rejects(&env, &["import", file.to_str().unwrap()], None, "line 6: invalid item JSON: unknown field `importanse`");
}

#[test]
fn an_import_colliding_with_an_existing_id_imports_nothing() {
    let env = Env::new();
    let id = env.remember(&["--title", "already here"]);
    let file = env.dir.path().join("dup.jsonl");
    std::fs::write(&file, format!("{{\"title\":\"new\"}}\n{{\"id\":\"{id}\",\"title\":\"clash\"}}\n")).unwrap();
    rejects(&env, &["import", file.to_str().unwrap()], None, &format!("line 2: item {id} already exists"));
}

#[test]
fn a_corrupt_database_file_is_reported_and_left_alone() {
    let env = Env::new();
    let garbage = b"definitely not an sqlite database ".repeat(200);
    std::fs::write(env.db(), &garbage).unwrap();
    for args in [&["list"][..], &["remember", "--title", "t"], &["doctor"]] {
        env.brain().args(args).assert().code(1).stderr(predicate::str::contains("is not a valid brain database"));
    }
    assert_eq!(crate::read(&env.db()), garbage);
}

/// A database file (and home) the user may not write: a write is refused with a clear
/// error and the data is kept. Root writes whatever the file modes say (`CAP_DAC_OVERRIDE`),
/// so as root brain is run from a thread that dropped that capability and its kin from its
/// bounding set: the kernel then checks the modes for brain as for anyone. (It used to run
/// as `nobody`, who cannot reach a clone in a folder only its owner may enter: issue 27.)
#[test]
fn a_read_only_database_rejects_writes_and_keeps_its_data() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.remember(&["--title", "kept"]);
    let before = env.export();
    // Checkpoint the WAL so the main file holds everything, then make it read-only.
    env.brain().arg("doctor").assert().success();
    let mode =
        |path: &std::path::Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    mode(&env.db(), 0o444).unwrap();
    mode(&env.home, 0o555).unwrap();
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("brain"));
    command.env_clear().env("BRAIN_HOME", &env.home).current_dir(&env.project_dir).args([
        "--now",
        crate::NOW,
        "remember",
        "--title",
        "new",
    ]);
    let output = std::thread::scope(|scope| scope.spawn(|| without_root_file_override(&mut command)).join().unwrap());
    mode(&env.home, 0o755).unwrap();
    match output {
        Ok(output) => {
            assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("read-only") || stderr.contains("readonly"), "{stderr}");
        }
        // The modes cannot bind this root: the write is not tried, and the test says so.
        Err(reason) => eprintln!("skipped the read-only write: {reason}"),
    }
    mode(&env.db(), 0o644).unwrap();
    assert_eq!(env.export(), before);
}

/// Runs `command` so that file modes bind it: as it is for anyone but root; for root, from
/// this thread after dropping `CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH` and `CAP_FOWNER` from
/// the thread's bounding set (the child inherits it and cannot regain them at exec). Call it
/// on a thread of its own: the bounding set stays reduced for the thread's life. `Err`
/// says why it cannot be done (root without `CAP_SETPCAP`, or not on Linux).
fn without_root_file_override(command: &mut std::process::Command) -> Result<std::process::Output, String> {
    if rustix::process::geteuid().is_root() {
        #[cfg(target_os = "linux")]
        {
            use rustix::thread::{CapabilitySet, remove_capability_from_bounding_set};
            for capability in [CapabilitySet::DAC_OVERRIDE, CapabilitySet::DAC_READ_SEARCH, CapabilitySet::FOWNER] {
                remove_capability_from_bounding_set(capability)
                    .map_err(|err| format!("root cannot drop {capability:?} here ({err})"))?;
            }
        }
        #[cfg(not(target_os = "linux"))]
        return Err("root ignores file modes and this test drops that only on Linux".into());
    }
    command.output().map_err(|err| format!("cannot run brain: {err}"))
}

#[test]
fn a_home_that_does_not_exist_points_at_init() {
    let env = Env::uninitialized();
    for args in [&["list"][..], &["remember", "--title", "t"], &["search", "x"], &["doctor"]] {
        env.brain()
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("does not exist").and(predicate::str::contains("brain init")));
    }
    assert!(!env.home.exists(), "a read or failed write must not create the home");
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let env = Env::new();
    env.brain().arg("frobnicate").assert().code(1);
    env.brain().args(["list", "--limit", "many"]).assert().code(1);
    env.brain().arg("--help").assert().code(0).stdout(predicate::str::contains("remember"));
    env.brain().args(["--now", "yesterday", "list"]).assert().code(1).stderr(predicate::str::contains("--now"));
}

#[test]
fn errors_are_json_with_json() {
    let env = Env::new();
    let output = env.brain().args(["show", "mem_01JD0000000000000000000000", "--json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let error: serde_json::Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(error["error"]["code"], "not_found");
}

/// The third hostile round: a repository can carry `.brain.toml` as a link to `/dev/zero`
/// (every command and hook read it until memory ran out: 4 GB in the CLI, 3 GB in a hook) or
/// as a file of hundreds of megabytes. A config file must be a regular file of at most
/// 256 KiB: anything else is a config error naming the file, at once.
#[cfg(unix)]
#[test]
fn a_project_config_that_is_a_device_or_huge_is_refused_at_once() {
    let env = Env::new();
    let config = env.project_dir.join(".brain.toml");
    std::fs::remove_file(&config).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
    let started = std::time::Instant::now();
    // Under a 2 GiB address-space limit: without the bound the read fails there instead of
    // taking the machine's memory.
    let output = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 2097152 && exec \"$0\" \"$@\""])
        .arg(assert_cmd::cargo::cargo_bin("brain"))
        .args(["--now", crate::NOW, "list"])
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "a device read as config: {stderr}");
    assert!(stderr.contains(".brain.toml") && stderr.contains("not a regular file"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "not refused at once: {:?}", started.elapsed());
    std::fs::remove_file(&config).unwrap();
    std::fs::write(&config, format!("project = \"demo\"\n# {}\n", "x".repeat(300 * 1024))).unwrap();
    let output = env.brain().args(["list"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0));
    assert!(stderr.contains("larger than 256 KiB"), "{stderr}");
    std::fs::write(&config, "project = \"demo\"\n").unwrap();
    env.brain().args(["list"]).assert().success();
}

/// The third hostile round: `--severity critical` on a bug was stored and ignored (only a
/// signal's severity makes it urgent), so the user believed it urgent and no session start
/// showed it so. A severity on another kind is refused, naming the kind, and nothing is stored.
#[test]
fn a_severity_on_a_kind_other_than_signal_is_refused() {
    let env = Env::new();
    env.brain()
        .args(["remember", "--kind", "bug", "--severity", "critical", "--title", "Payments double charge"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("a severity applies to signals only; this item is a bug"));
    let listed = env.json(&["list"]);
    assert_eq!(listed.as_array().unwrap().len(), 0, "nothing stored: {listed}");
    let id = env.remember(&["--kind", "signal", "--severity", "critical", "--title", "Payments double charge"]);
    let bug = env.remember(&["--kind", "bug", "--title", "Retry storm"]);
    env.brain().args(["edit", &bug, "--severity", "critical"]).assert().code(1);
    assert_eq!(env.json(&["show", &id])["severity"], "critical");
}
