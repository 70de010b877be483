//! Session capture end to end: `brain extract`, `brain cluster`, `brain capture` and the
//! `stop`/`session-end` hooks on the fixtures of `tests/data/transcripts/` (written by its
//! `make_fixtures.py`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::Env;

/// The secrets planted in the fixtures (see `make_fixtures.py`).
const PLANTED: &[&str] = &[
    "AKIAPLANTEDKEY00042X",
    "ghp_Pl4ntedGithubT0kenAbCdEfGh1234567890",
    "sk-proj-Pl4ntedOpenAiKey9x8y7z6W5v4U3t2S1",
    "sk-ant-api03-Pl4ntedAnthropicKey0123456789abcdef",
    "PlantedDbPassw0rd77",
    "planted-diary-zebra",
    "xoxb-123456789012-Pl4ntedSlackT0ken",
];

/// A copy of the fixture projects folder inside the test's temp dir.
fn projects(env: &Env) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/transcripts/projects");
    let target = env.dir.path().join("projects");
    copy_dir(&source, &target);
    target
}

fn copy_dir(source: &Path, target: &Path) {
    std::fs::create_dir_all(target).unwrap();
    for entry in std::fs::read_dir(source).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &target.join(entry.file_name()));
        } else {
            std::fs::copy(&path, target.join(entry.file_name())).unwrap();
        }
    }
}

fn age(path: &Path, days: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(days * 86_400)).unwrap();
}

fn arcs(env: &Env) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(&env.home.join("vault/clusters"), &mut found);
    found.retain(|path| path.extension().is_some_and(|ext| ext == "md"));
    found.sort();
    found
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, found);
        } else {
            found.push(path);
        }
    }
}

fn arc_with(env: &Env, needle: &str) -> (PathBuf, String) {
    arcs(env)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .find(|(_, text)| text.contains(needle))
        .unwrap_or_else(|| panic!("no arc contains {needle:?}"))
}

fn session<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["sessions"].as_array().unwrap().iter().find(|s| s["session_id"] == id).unwrap()
}

#[test]
fn extract_counts_prompts_tools_compactions_and_skips_bad_lines() {
    let env = Env::new();
    let projects = projects(&env);
    let report = env.json(&["extract", "--projects-dir", projects.to_str().unwrap()]);
    assert_eq!(report["files"]["found"], 7);
    assert_eq!(report["files"]["read"], 7);
    // api-short has 2 prompts; api-old is from August.
    assert_eq!(
        (report["skipped"]["too_short"].as_u64(), report["skipped"]["outside_window"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(report["sessions_returned"], 5);
    // One line that is not JSON in api-one and one in api-old; one unknown record type; api-one's cut last line.
    assert_eq!(report["lines"]["bad_json"], 2);
    assert_eq!(report["lines"]["unknown_type"], 1);
    assert_eq!(report["lines"]["truncated"], 1);

    let one = session(&report, "api-one");
    assert_eq!(one["turns"], 7, "tool results are not prompts");
    assert_eq!(one["tool_calls"], 5);
    assert_eq!(one["top_tools"][0], serde_json::json!({"name": "Bash", "count": 2}));
    assert_eq!(one["files_touched"], serde_json::json!(["src/login.rs", "config/dev.toml"]));
    assert_eq!(one["first_prompt"], "Fix the login flow, it returns 502 since the deploy");
    assert_eq!(
        (one["project"].as_str(), one["git_branch"].as_str(), one["cwd"].as_str()),
        (Some("api"), Some("fix/login"), Some("/w/api"))
    );
    assert_eq!((one["error_markers"].as_u64(), one["joy_markers"].as_u64()), (Some(1), Some(1)));
    assert!(one["outcome"].as_str().unwrap().starts_with("Done: the login flow works again"));
    assert_eq!(
        (one["start"].as_str(), one["end"].as_str()),
        (Some("2026-11-21T06:03:00Z"), Some("2026-11-21T06:57:00Z"))
    );

    let compact = session(&report, "api-compact");
    assert_eq!((compact["compactions"].as_u64(), compact["turns"].as_u64()), (Some(1), Some(6)));

    // The global --project keeps only matching project folders.
    let web = env.json(&["extract", "--projects-dir", projects.to_str().unwrap(), "--project", "web"]);
    assert_eq!((web["files"]["found"].as_u64(), web["sessions_returned"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn files_older_than_the_window_are_not_read() {
    let env = Env::new();
    let projects = projects(&env);
    age(&projects.join("-w-api/api-old.jsonl"), 30);
    let report = env.json(&["extract", "--projects-dir", projects.to_str().unwrap()]);
    assert_eq!((report["files"]["found"].as_u64(), report["files"]["skipped_old"].as_u64()), (Some(7), Some(1)));
    // Its bad line was not seen, so the file was not opened.
    assert_eq!(report["lines"]["bad_json"], 1);
    assert_eq!(report["skipped"]["outside_window"], 0);
    // A wider window reads it again.
    let report = env.json(&["extract", "--projects-dir", projects.to_str().unwrap(), "--since", "2026-07-01"]);
    assert_eq!((report["files"]["skipped_old"].as_u64(), report["sessions_returned"].as_u64()), (Some(0), Some(6)));
}

#[test]
fn bad_windows_and_folders_are_user_errors() {
    let env = Env::new();
    let projects = projects(&env);
    let dir = projects.to_str().unwrap();
    for (args, message) in [
        (vec!["extract", "--projects-dir", dir, "--since", "banana"], "invalid --since \"banana\""),
        (vec!["extract", "--projects-dir", dir, "--until", "tomorrow-ish"], "invalid --until"),
        (vec!["extract", "--projects-dir", dir, "--since", "1h", "--until", "2h"], "the window is empty"),
        (vec!["extract", "--projects-dir", "/does/not/exist"], "projects dir /does/not/exist does not exist"),
        (vec!["capture", "--projects-dir", "/does/not/exist"], "does not exist"),
        (vec!["cluster"], "nothing to cluster"),
    ] {
        let output = env.brain().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let bundle = env.dir.path().join("bundle.json");
    std::fs::write(&bundle, "[1, 2]").unwrap();
    let output = env.brain().args(["cluster", "--bundle", bundle.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not an extract"));
}

#[test]
fn capture_writes_one_arc_per_group_and_recapture_changes_nothing() {
    let env = Env::new();
    let projects = projects(&env);
    let report = env.json(&["capture", "--projects-dir", projects.to_str().unwrap()]);
    assert_eq!(report["cluster"]["created"], 4, "{report:#}");
    let arcs_before = arcs(&env);
    assert_eq!(arcs_before.len(), 4);

    let (path, text) = arc_with(&env, "source_sessions: [api-one, api-two]");
    // DATE-slug(title)[:40]-sha1("api-one\napi-two")[:12], as the reference engine computes it.
    assert_eq!(path.file_name().unwrap(), "2026-11-21-fix-the-login-flow-it-returns-502-since--89fc0d921574.md");
    assert!(text.contains("cluster_id: 2026-11-21-fix-the-login-flow-it-returns-502-since--89fc0d921574\n"));
    assert!(path.parent().unwrap().ends_with("vault/clusters/2026-11-21"));
    for line in [
        "title: Fix the login flow, it returns 502 since the deploy\n",
        "region: left-hemisphere\n",
        "status: active\n",
        "project: api\n",
        "signals: {errors: 1, joy: 2, tools: 10}\n",
        "synthesized: false\n",
        "created: 2026-11-21T06:03:00Z\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    for section in ["## What was asked", "## What was done", "## Tools", "## Files touched", "## Outcome"] {
        assert!(text.contains(section), "missing {section} in\n{text}");
    }
    assert!(text.contains("- `src/login.rs`") && text.contains("- `tests/login.rs`"));
    let (_, web) = arc_with(&env, "project: web");
    assert!(web.contains("region: right-hemisphere"), "{web}");
    let (_, compacted) = arc_with(&env, "source_sessions: [api-compact]");
    assert!(compacted.contains("compactions: 1"));

    let bytes: Vec<Vec<u8>> = arcs_before.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let again = env.json(&["capture", "--projects-dir", projects.to_str().unwrap()]);
    assert_eq!((again["cluster"]["unchanged"].as_u64(), again["cluster"]["created"].as_u64()), (Some(4), Some(0)));
    assert_eq!(again["extract"]["files"]["unchanged"], 7, "unchanged transcripts are not read again");
    assert_eq!(arcs(&env), arcs_before);
    assert_eq!(arcs_before.iter().map(|p| std::fs::read(p).unwrap()).collect::<Vec<_>>(), bytes);

    // extract | cluster gives the same arcs.
    let bundle =
        env.brain().args(["extract", "--json", "--projects-dir", projects.to_str().unwrap()]).output().unwrap();
    assert!(bundle.status.success());
    let clustered =
        env.brain().args(["cluster", "--json", "--bundle", "-"]).write_stdin(bundle.stdout).output().unwrap();
    let clustered: Value = serde_json::from_slice(&clustered.stdout).unwrap();
    assert_eq!(clustered["unchanged"], 4, "{clustered:#}");
}

#[test]
fn recapture_keeps_what_the_user_wrote_and_extends_the_same_arc() {
    let env = Env::new();
    let projects = projects(&env);
    let dir = projects.to_str().unwrap();
    env.json(&["capture", "--projects-dir", dir]);
    let (path, text) = arc_with(&env, "source_sessions: [api-one, api-two]");
    let edited = text
        .replace("title: Fix the login flow, it returns 502 since the deploy", "title: Login outage")
        .replace("## Notes\n", "## Notes\n\nRoot cause: the retry budget. Written by hand.\n")
        .replace("synthesized: false", "synthesized: false\nowner: alice # set by hand");
    std::fs::write(&path, &edited).unwrap();

    // The second session goes on, with a prompt typed later.
    let mut file = std::fs::File::options().append(true).open(projects.join("-w-api/api-two.jsonl")).unwrap();
    writeln!(
        file,
        r#"{{"type":"user","cwd":"/w/api","timestamp":"2026-11-21T08:50:00.000Z","message":{{"content":"One more: tag the release"}}}}"#
    )
    .unwrap();
    writeln!(
        file,
        r#"{{"type":"assistant","timestamp":"2026-11-21T08:51:00.000Z","message":{{"content":[{{"type":"tool_use","name":"Bash","input":{{}}}}]}}}}"#
    )
    .unwrap();
    drop(file);

    let report = env.json(&["capture", "--projects-dir", dir]);
    assert_eq!(report["cluster"]["updated"], 1, "{report:#}");
    assert_eq!(arcs(&env).len(), 4, "no duplicate arc");
    let updated = std::fs::read_to_string(&path).unwrap();
    assert!(updated.contains("title: Login outage\n"));
    assert!(updated.contains("# Login outage\n"), "the generated block follows the user's title");
    assert!(updated.contains("Root cause: the retry budget. Written by hand."));
    assert!(updated.contains("owner: alice # set by hand\n"));
    assert!(updated.contains("signals: {errors: 1, joy: 2, tools: 11}\n"), "{updated}");
    assert!(updated.contains("One more: tag the release"));
}

#[test]
fn no_planted_secret_reaches_the_home_or_the_vault() {
    let env = Env::new();
    let projects = projects(&env);
    let dir = projects.to_str().unwrap();
    let extract = env.brain().args(["extract", "--json", "--projects-dir", dir]).output().unwrap();
    assert!(extract.status.success());
    env.json(&["capture", "--projects-dir", dir]);
    let hook_input = serde_json::json!({
        "session_id": "api-one",
        "transcript_path": projects.join("-w-api/api-one.jsonl"),
        "cwd": "/w/api",
        "hook_event_name": "Stop",
    });
    env.brain().args(["hook", "stop"]).write_stdin(hook_input.to_string()).assert().success();

    let mut files = Vec::new();
    walk(&env.home, &mut files);
    for path in &files {
        for secret in PLANTED {
            assert!(!path.to_string_lossy().contains(secret), "{secret} leaked into the file name {path:?}");
        }
    }
    assert!(files.iter().any(|p| p.to_string_lossy().contains("vault/clusters")), "{files:?}");
    let mut texts: Vec<(String, Vec<u8>)> =
        files.iter().map(|path| (path.display().to_string(), std::fs::read(path).unwrap())).collect();
    texts.push(("extract stdout".into(), extract.stdout));
    for (name, bytes) in &texts {
        for secret in PLANTED {
            let found = bytes.windows(secret.len()).any(|window| window == secret.as_bytes());
            assert!(!found, "{secret} leaked into {name}");
        }
    }
    let (_, arc) = arc_with(&env, "source_sessions: [api-one, api-two]");
    assert!(arc.contains("[REDACTED:aws-access-key]") && arc.contains("[REDACTED:github-token]"), "{arc}");
    let (_, paths) = arc_with(&env, "source_sessions: [secret-paths]");
    assert!(paths.contains("project: REDACTED-aws-access-key--repo"), "{paths}");
    assert!(!paths.contains("line one"), "the private block is dropped whole: {paths}");
}

#[test]
fn the_stop_hook_captures_incrementally_prints_nothing_and_never_fails() {
    let env = Env::new();
    let projects = projects(&env);
    let transcript = projects.join("-w-api/api-one.jsonl");
    let stop = |path: &Path| {
        let input = serde_json::json!({"session_id": "api-one", "transcript_path": path, "cwd": "/w/api"});
        let output = env.brain().args(["hook", "stop"]).write_stdin(input.to_string()).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(output.stdout.is_empty(), "stdout: {}", String::from_utf8_lossy(&output.stdout));
    };
    stop(&transcript);
    let (path, text) = arc_with(&env, "source_sessions: [api-one]");
    assert!(text.contains("tools: 5}"), "{text}");

    // The session goes on: its cut last line is completed, then another turn.
    let mut file = std::fs::File::options().append(true).open(&transcript).unwrap();
    writeln!(file, r#"ort"}},"timestamp":"2026-11-21T07:00:00.000Z"}}"#).unwrap();
    writeln!(
        file,
        r#"{{"type":"assistant","timestamp":"2026-11-21T07:01:00.000Z","message":{{"content":[{{"type":"tool_use","name":"Read","input":{{"file_path":"/w/api/README.md"}}}}]}}}}"#
    )
    .unwrap();
    drop(file);
    stop(&transcript);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("tools: 6}"), "{text}");
    assert!(text.contains("cut sh"), "the completed last line is a prompt now: {text}");
    assert_eq!(arcs(&env).len(), 1);

    // The session that starts later in the same project joins the same arc.
    let input = serde_json::json!({"transcript_path": projects.join("-w-api/api-two.jsonl")});
    env.brain().args(["hook", "session-end"]).write_stdin(input.to_string()).assert().success().stdout("");
    assert_eq!(arcs(&env), vec![path.clone()], "the arc keeps its id and path");
    assert!(std::fs::read_to_string(&path).unwrap().contains("source_sessions: [api-one, api-two]"));

    // Bad input: exit 0, nothing on stdout, a line in the hook log.
    for input in ["not json", "{}"] {
        env.brain().args(["hook", "stop"]).write_stdin(input).assert().success().stdout("");
    }
    let log = std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(log.contains("hook input is not hook JSON") && log.contains("no transcript_path"), "{log}");
    // A transcript that does not exist yet (`claude -p`, `claude mcp list`) is nothing to
    // capture: no error, no log line.
    env.brain()
        .args(["hook", "stop"])
        .write_stdin(r#"{"session_id": "s9", "transcript_path": "/nope/missing.jsonl"}"#)
        .assert()
        .success()
        .stdout("");
    assert_eq!(std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap(), log);
}

#[test]
fn new_arcs_of_one_project_and_day_link_to_each_other_as_siblings() {
    let env = Env::new();
    let projects = projects(&env);
    env.json(&["capture", "--projects-dir", projects.to_str().unwrap()]);
    let cluster_id = |text: &str| text.lines().find_map(|line| line.strip_prefix("cluster_id: ")).unwrap().to_string();
    let (_, login) = arc_with(&env, "source_sessions: [api-one, api-two]");
    let (_, compacted) = arc_with(&env, "source_sessions: [api-compact]");
    let (_, web) = arc_with(&env, "project: web");
    let (login_id, compacted_id) = (cluster_id(&login), cluster_id(&compacted));
    // Each names the other once, as a sibling edge the vault parser reads.
    assert!(login.contains(&format!("{{type: sibling, target: {compacted_id}}}")), "{login}");
    assert_eq!(login.matches(&compacted_id).count(), 1, "{login}");
    assert!(compacted.contains(&format!("{{type: sibling, target: {login_id}}}")), "{compacted}");
    assert!(!login.contains(&format!("target: {login_id}")), "never itself:\n{login}");
    // Another project's arc is no sibling.
    assert!(web.contains("edges: []"), "{web}");
    assert!(!login.contains(&cluster_id(&web)));
    // The vault parser reads them as edges (no diagnostic about them).
    let scan = env.json(&["vault", "scan"]);
    let diagnostics = scan["diagnostics"].as_array().unwrap();
    assert!(diagnostics.iter().all(|d| !d["message"].as_str().unwrap().contains("edges")), "{scan}");
}

#[test]
fn a_session_in_a_repository_with_an_invalid_project_file_is_not_captured_under_another_project() {
    let env = Env::new();
    let projects = projects(&env);
    std::fs::write(env.project_dir.join(".brain.toml"), "project = \"api\"\nno_such_key = 1\n").unwrap();
    let input = serde_json::json!({
        "session_id": "api-one",
        "transcript_path": projects.join("-w-api/api-one.jsonl"),
        "cwd": env.project_dir,
    });
    env.brain().args(["hook", "stop"]).write_stdin(input.to_string()).assert().success().stdout("");
    assert!(arcs(&env).is_empty(), "captured under the folder's project: {:?}", arcs(&env));
    let log = std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap();
    assert!(log.contains("no_such_key") && log.contains("the session was not captured"), "{log}");
}

/// Node's `JSON.stringify` writes a lone UTF-16 surrogate escape (`\ud83d`) for a string cut
/// inside an emoji. A transcript whose every prompt holds one is captured, with U+FFFD where
/// the cut was, and a hook input holding one is read.
#[test]
fn prompts_cut_inside_an_emoji_are_captured_and_read_by_the_hooks() {
    let env = Env::new();
    let transcript = env.dir.path().join("cut.jsonl");
    let lines: Vec<String> = (0..6)
        .map(|turn| {
            format!(
                r#"{{"type":"user","cwd":"/w/cut","timestamp":"2026-11-21T08:{:02}:00.000Z","message":{{"role":"user","content":"Prompt {turn} cut inside an emoji \ud83d"}}}}"#,
                turn * 3
            )
        })
        .collect();
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let stop = serde_json::json!({"session_id": "cut", "cwd": "/w/cut", "transcript_path": transcript});
    env.brain().args(["hook", "stop"]).write_stdin(stop.to_string()).assert().success().stdout("");
    let (_, arc) = arc_with(&env, "source_sessions: [cut]");
    assert!(arc.contains("Prompt 0 cut inside an emoji \u{fffd}"), "{arc}");

    let prompt = r#"{"session_id":"cut","hook_event_name":"UserPromptSubmit","prompt":"deploy now \ud83d"}"#;
    env.brain().args(["hook", "user-prompt-submit"]).write_stdin(prompt).assert().success();
    let log = std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap_or_default();
    assert!(!log.contains("not hook JSON"), "{log}");
}
