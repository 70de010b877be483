//! `brain setup` and `brain import-memory`: the hosts found here wired (hooks, MCP), the
//! project's memory files imported as drafts (count, kinds, evidence, redaction, nothing
//! twice, brain's own blocks left out), and bad input refused with nothing changed. The run
//! with the real Claude Code, Codex and Gemini CLI is ignored here and run by `.ci/run`'s
//! real-hosts stage.

use std::path::{Path, PathBuf};
use std::process::Command;

use predicates::prelude::*;
use serde_json::Value;

use crate::Env;

/// A GitHub token planted in AGENTS.md: it must be stored redacted.
const TOKEN: &str = "ghp_Zq8vW2mK5xN7pL4rT9bY3cH6jD1fG0sA2eU8";

/// The memory files of the fixture project and the 14 drafts they hold (see
/// [`assert_fixture_drafts`]); one AGENTS.md line repeats CLAUDE.md, the managed block is
/// brain's own.
fn write_memory_files(project: &Path) {
    let files: &[(&str, String)] = &[
        (
            "CLAUDE.md",
            "# Acme API\n\nA payments API written in Rust.\n\n## Conventions\n- Never commit directly to main\n- Always run `cargo test` before pushing\n- We decided to use sqlx, not an ORM\n\n## Commands\n- `make dev` starts the stack\n\n<!-- brain:start -->\n- Use sqlx for everything (from brain's own block)\n<!-- brain:end -->\n".into(),
        ),
        (
            "AGENTS.md",
            format!("# Agents\n\n- Never commit directly to main.\n- TODO: migrate the webhooks to the queue\n- The CI deploy token is {TOKEN}\n"),
        ),
        (".cursorrules", "You are an expert in Rust and TypeScript.\n\n- Prefer small pure functions\n- Use snake_case for file names\n".into()),
        (
            "memory-bank/systemPatterns.md",
            "# System Patterns\n\n- The gateway talks to workers over NATS\n- Lesson: retries need jitter, we learned the hard way\n".into(),
        ),
        ("memory-bank/progress.md", "## What's left\n- [ ] Rate limits per tenant\n\n## What works\n- [x] Webhook signatures are verified\n".into()),
    ];
    for (name, text) in files {
        let path = project.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The drafts of the fixture: (kind, evidence, title), in file and line order.
const FIXTURE_DRAFTS: &[(&str, &str, &str)] = &[
    ("note", "CLAUDE.md:3", "A payments API written in Rust."),
    ("convention", "CLAUDE.md:6", "Never commit directly to main"),
    ("convention", "CLAUDE.md:7", "Always run cargo test before pushing"),
    ("decision", "CLAUDE.md:8", "We decided to use sqlx, not an ORM"),
    ("implementation", "CLAUDE.md:11", "make dev starts the stack"),
    ("todo", "AGENTS.md:4", "TODO: migrate the webhooks to the queue"),
    ("note", "AGENTS.md:5", "The CI deploy token is [REDACTED:github-token]"),
    ("convention", ".cursorrules:1", "You are an expert in Rust and TypeScript."),
    ("convention", ".cursorrules:3", "Prefer small pure functions"),
    ("convention", ".cursorrules:4", "Use snake_case for file names"),
    ("todo", "memory-bank/progress.md:2", "Rate limits per tenant"),
    ("context", "memory-bank/progress.md:5", "Webhook signatures are verified"),
    ("architecture", "memory-bank/systemPatterns.md:3", "The gateway talks to workers over NATS"),
    ("lesson", "memory-bank/systemPatterns.md:4", "Lesson: retries need jitter, we learned the hard way"),
];

/// The store holds exactly the fixture's drafts: kinds, evidence, titles, the draft status,
/// the project scope, and the token redacted.
fn assert_fixture_drafts(items: &Value) {
    let items = items.as_array().unwrap();
    let mut found: Vec<(String, String, String)> = items
        .iter()
        .map(|item| {
            assert_eq!(item["status"], "draft", "{item}");
            assert_eq!(item["scope"], "project/demo", "{item}");
            assert!(item["tags"].as_array().unwrap().contains(&Value::from("imported")), "{item}");
            assert!(item["dedup_hint"].as_str().unwrap().starts_with("import:memory:"), "{item}");
            let evidence = item["evidence"].as_array().unwrap();
            assert_eq!(evidence.len(), 1, "{item}");
            (
                item["kind"].as_str().unwrap().to_string(),
                evidence[0].as_str().unwrap().to_string(),
                item["title"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    let mut expected: Vec<(String, String, String)> =
        FIXTURE_DRAFTS.iter().map(|(k, e, t)| (k.to_string(), e.to_string(), t.to_string())).collect();
    expected.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(found, expected);
    let all = items.iter().map(|item| item.to_string()).collect::<String>();
    assert!(!all.contains(TOKEN), "the token was stored");
    assert!(!all.contains("brain's own block"), "brain's managed block was imported back");
}

fn drafts(env: &Env) -> Value {
    env.json(&["list", "--status", "draft", "--limit", "1000"])
}

fn user_home(env: &Env) -> PathBuf {
    env.dir.path().to_path_buf()
}

/// Every file under `dir` with its bytes (what "nothing changed" compares).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                files.push((entry.path(), std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn setup_wires_the_hosts_found_and_imports_the_memory_files_once() {
    let env = Env::uninitialized();
    let home = user_home(&env);
    // Claude Code and Cursor are "installed": their settings folders exist.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    write_memory_files(&env.project_dir);

    // A dry run shows every change and writes nothing.
    let before = snapshot(env.dir.path());
    let output = env.brain().args(["setup", "--dry-run"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let plan = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "brain home: ",
        "(will be created)",
        "Claude Code (found: ~/.claude)",
        "hooks SessionStart, UserPromptSubmit, Stop, SessionEnd → ~/.claude/settings.json",
        "MCP server brain → ~/.claude.json",
        "Cursor (found: ~/.cursor)",
        "MCP server brain → ~/.cursor/mcp.json",
        "not found here: Codex, Gemini CLI",
        "CLAUDE.md: 5 facts, 5 new",
        "AGENTS.md: 3 facts, 2 new, 1 already known",
        "1 of them held a secret: stored redacted",
        "would import 14 drafts (5 convention, 2 note, 2 todo, 1 architecture, 1 context, 1 decision, 1 implementation, 1 lesson)",
        "  decision       CLAUDE.md:8                  We decided to use sqlx, not an ORM",
        "+    \"brain\": {",
    ] {
        assert!(plan.contains(expected), "{expected:?} missing from:\n{plan}");
    }
    assert!(!plan.contains(TOKEN));
    assert!(String::from_utf8_lossy(&output.stderr).contains("dry run: nothing was written"));
    assert_eq!(snapshot(env.dir.path()), before, "the dry run wrote something");
    assert!(!env.home.exists());

    // Without a terminal, setup needs --yes.
    env.brain()
        .arg("setup")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("stdin is not a terminal").and(predicate::str::contains("brain setup --yes")));
    assert_eq!(snapshot(env.dir.path()), before);

    let output = env.brain().args(["setup", "--yes"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let done = String::from_utf8(output.stdout).unwrap();
    assert!(done.contains("imported 14 drafts"), "{done}");
    assert!(env.home.join("brain.db").is_file());

    let settings: Value = serde_json::from_slice(&std::fs::read(home.join(".claude/settings.json")).unwrap()).unwrap();
    let session_start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(session_start.ends_with(&format!("--home {} hook session-start", env.home.display())), "{session_start}");
    let claude: Value = serde_json::from_slice(&std::fs::read(home.join(".claude.json")).unwrap()).unwrap();
    let server = &claude["mcpServers"]["brain"];
    assert_eq!(server["type"], "stdio");
    assert_eq!(server["args"], serde_json::json!(["--home", env.home.to_str().unwrap(), "mcp"]));
    assert!(Path::new(server["command"].as_str().unwrap()).is_absolute());
    let cursor: Value = serde_json::from_slice(&std::fs::read(home.join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(cursor["mcpServers"]["brain"]["args"], server["args"]);
    assert!(home.join(".cursor/hooks.json").is_file());
    assert!(!home.join(".codex").exists() && !home.join(".gemini").exists(), "hosts not found are not wired");
    // Cursor's rule is brain's own file: written into the project, never imported back.
    assert!(env.project_dir.join(".cursor/rules/brain.mdc").is_file());
    assert_fixture_drafts(&drafts(&env));

    // A second run changes nothing: no draft, no settings byte.
    let before = snapshot(env.dir.path());
    let export = env.export();
    let output = env.brain().args(["setup", "--yes"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let again = String::from_utf8(output.stdout).unwrap();
    assert!(again.contains(".cursor/rules/brain.mdc: left out (written by brain)"), "{again}");
    assert!(again.contains("CLAUDE.md: 5 facts, 0 new, 5 already known"), "{again}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("nothing to do"));
    assert_eq!(env.export(), export);
    let after = snapshot(env.dir.path());
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(path, bytes)| !before.iter().any(|(p, b)| p == path && b == bytes))
        .map(|(path, _)| path)
        .filter(|path| !path.starts_with(&env.home))
        .collect();
    assert!(changed.is_empty(), "a second setup changed {changed:?}");
}

#[test]
fn import_memory_adds_nothing_twice_and_reads_claude_codes_auto_memory() {
    let env = Env::new();
    write_memory_files(&env.project_dir);
    // Claude Code's auto-memory of this project: its folder is the path with every other
    // character than letters and digits as `-`.
    let dir_name: String =
        env.project_dir.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let memory = user_home(&env).join(".claude/projects").join(dir_name).join("memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(memory.join("MEMORY.md"), "- [Testing](testing.md) — how tests run\n").unwrap();
    std::fs::write(
        memory.join("testing.md"),
        "---\nname: testing\ndescription: how the user wants tests run\ntype: feedback\n---\nThe integration tests run against a real PostgreSQL, not mocks.\n",
    )
    .unwrap();
    // Something the store already knows, in other words and case.
    env.remember(&["--title", "prefer SMALL pure functions!", "--kind", "convention"]);

    let output = env.brain().args(["import-memory", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["report"]["imported"], 14, "{report}");
    let list = drafts(&env);
    let auto =
        list.as_array().unwrap().iter().find(|item| item["tags"][1] == "claude-memory").expect("the auto-memory");
    assert_eq!(auto["kind"], "convention");
    assert!(auto["evidence"][0].as_str().unwrap().starts_with("~/.claude/projects/"), "{auto}");
    assert!(auto["evidence"][0].as_str().unwrap().ends_with("/memory/testing.md:6"), "{auto}");
    assert!(!list.to_string().contains("Prefer small pure functions"), "known to the store already");

    let export = env.export();
    env.brain().arg("import-memory").assert().success().stdout(
        predicate::str::contains("nothing new to import").and(predicate::str::contains("AGENTS.md: 3 facts, 0 new")),
    );
    assert_eq!(env.export(), export, "a second import wrote something");

    // A file named on the command line, even one the project's discovery does not know.
    std::fs::write(env.project_dir.join("NOTES.md"), "- We chose PostgreSQL over MySQL\n").unwrap();
    env.brain()
        .args(["import-memory", "NOTES.md", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("decision       NOTES.md:1"));
    assert_eq!(env.export(), export, "a dry run wrote something");
}

#[test]
fn bad_memory_files_get_a_clear_message_and_change_nothing() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    type Plant = Box<dyn Fn(&Path)>;
    let mut cases: Vec<(&str, Plant, String)> = vec![
        (
            "binary",
            Box::new(|project| std::fs::write(project.join("CLAUDE.md"), b"# x\n\0\x01\x02binary").unwrap()),
            "CLAUDE.md is a binary file (a NUL byte at offset 4), not text".into(),
        ),
        (
            "not UTF-8",
            Box::new(|project| std::fs::write(project.join("AGENTS.md"), b"- caf\xe9 rules\n").unwrap()),
            "AGENTS.md is not UTF-8 text (invalid byte at offset 5)".into(),
        ),
        (
            "100 MB",
            Box::new(|project| {
                let file = std::fs::File::create(project.join("CLAUDE.md")).unwrap();
                file.set_len(100 * 1024 * 1024).unwrap();
            }),
            "CLAUDE.md is 100.0 MiB; a memory file may be at most 1 MiB".into(),
        ),
        (
            "a link out of the repository",
            {
                let target = outside.path().join("id_ed25519");
                Box::new(move |project| {
                    std::fs::create_dir_all(project.join("memory-bank")).unwrap();
                    std::os::unix::fs::symlink(&target, project.join("memory-bank/keys.md")).unwrap();
                })
            },
            "memory-bank/keys.md is a symbolic link leading out of".into(),
        ),
        (
            "not a regular file",
            Box::new(|project| std::fs::create_dir_all(project.join(".cursorrules/x")).unwrap()),
            ".cursorrules is not a regular file".into(),
        ),
        (
            "a dangling link",
            Box::new(|project| std::os::unix::fs::symlink("gone.md", project.join("GEMINI.md")).unwrap()),
            "cannot read GEMINI.md: No such file or directory".into(),
        ),
    ];
    // Root reads any file whatever its mode: the unreadable case needs another user.
    if !rustix::process::geteuid().is_root() {
        cases.push((
            "unreadable",
            Box::new(|project| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::write(project.join("CLAUDE.md"), "- x y\n").unwrap();
                std::fs::set_permissions(project.join("CLAUDE.md"), std::fs::Permissions::from_mode(0o000)).unwrap();
            }),
            "cannot read CLAUDE.md: Permission denied".into(),
        ));
    }
    for (what, plant, message) in cases {
        let env = Env::new();
        std::fs::write(env.project_dir.join("AGENTS.md"), "- Never push on Fridays\n").unwrap();
        plant(&env.project_dir);
        let export = env.export();
        env.brain()
            .arg("import-memory")
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(&message).and(predicate::str::contains("nothing was changed")));
        assert_eq!(env.export(), export, "{what}: the store changed");

        // setup stops before wiring anything, too.
        std::fs::create_dir_all(user_home(&env).join(".claude")).unwrap();
        let outside_home = |env: &Env| {
            let mut files = snapshot(env.dir.path());
            files.retain(|(path, _)| !path.starts_with(&env.home));
            files
        };
        let before = outside_home(&env);
        env.brain()
            .args(["setup", "--yes"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(&message).and(predicate::str::contains("setup cannot go ahead")));
        assert_eq!(outside_home(&env), before, "{what}: setup changed a file");
        assert_eq!(env.export(), export, "{what}: setup changed the store");
        // --no-import leaves the memory files alone: the hosts are wired.
        env.brain().args(["setup", "--yes", "--no-import"]).assert().success();
        assert!(user_home(&env).join(".claude/settings.json").is_file(), "{what}");
    }
}

#[test]
fn setup_finds_hosts_by_their_cli_on_the_path_and_takes_host_choices() {
    let env = Env::uninitialized();
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for program in ["codex", "gemini"] {
        std::fs::write(bin.join(program), "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join(program), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Not executable: not a CLI.
    std::fs::write(bin.join("claude"), "").unwrap();
    let output = env.brain().env("PATH", &bin).args(["setup", "--dry-run", "--no-import", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    let hosts: Vec<&str> =
        plan["hosts"].as_array().unwrap().iter().map(|host| host["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["codex", "gemini"]);
    assert!(plan["hosts"][0]["found"][0].as_str().unwrap().starts_with("codex on the PATH ("), "{plan}");
    assert_eq!(plan["import"], Value::Null);

    // --host wires a host not found, and only it.
    let output = env
        .brain()
        .env("PATH", &bin)
        .args(["setup", "--yes", "--no-import", "--host", "claude-code"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(user_home(&env).join(".claude/settings.json").is_file());
    assert!(!user_home(&env).join(".codex/hooks.json").exists());
    env.brain()
        .args(["setup", "--host", "vim"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown agent host \"vim\""));
    // The Codex config keeps the user's text and gains one table.
    std::fs::create_dir_all(user_home(&env).join(".codex")).unwrap();
    std::fs::write(user_home(&env).join(".codex/config.toml"), "# mine\nmodel = \"o4\"\n").unwrap();
    env.brain().env("PATH", &bin).args(["setup", "--yes", "--no-import", "--host", "codex"]).assert().success();
    let config = std::fs::read_to_string(user_home(&env).join(".codex/config.toml")).unwrap();
    assert!(config.starts_with("# mine\nmodel = \"o4\"\n\n[mcp_servers.brain]\ncommand = "), "{config}");
}

/// Setup registers brain's MCP server with Qwen Code, Copilot CLI, OpenCode and Cline too,
/// each in its own file and shape, next to their hooks; a second run changes nothing.
#[test]
fn setup_registers_the_mcp_server_with_the_newer_hosts() {
    let env = Env::uninitialized();
    let home = user_home(&env);
    for folder in [".qwen", ".copilot", ".config/opencode/plugins", ".cline"] {
        std::fs::create_dir_all(home.join(folder)).unwrap();
    }
    let output = env.brain().args(["setup", "--yes", "--no-import"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let done = String::from_utf8(output.stdout).unwrap();
    for file in [
        "~/.qwen/settings.json",
        "~/.copilot/mcp-config.json",
        "~/.config/opencode/opencode.json",
        "~/.cline/data/settings/cline_mcp_settings.json",
    ] {
        assert!(done.contains(&format!("MCP server brain added to {file}")), "{file}: {done}");
    }
    let read = |file: &str| -> Value { serde_json::from_slice(&std::fs::read(home.join(file)).unwrap()).unwrap() };
    let args = serde_json::json!(["--home", env.home.to_str().unwrap(), "mcp"]);
    let qwen = read(".qwen/settings.json");
    assert_eq!(
        (&qwen["mcpServers"]["brain"]["args"], &qwen["mcpServers"]["brain"]["trust"]),
        (&args, &Value::Bool(true))
    );
    assert!(qwen["hooks"]["UserPromptSubmit"].is_array(), "the hooks too: {qwen}");
    let copilot = read(".copilot/mcp-config.json");
    assert_eq!(copilot["mcpServers"]["brain"]["type"], "local");
    assert_eq!(copilot["mcpServers"]["brain"]["args"], args);
    let opencode = read(".config/opencode/opencode.json");
    let line = opencode["mcp"]["brain"]["command"].as_array().unwrap();
    assert_eq!((line.len(), &line[1..]), (4, &args.as_array().unwrap()[..]));
    let cline = read(".cline/data/settings/cline_mcp_settings.json");
    assert_eq!(cline["mcpServers"]["brain"]["transport"]["args"], args);
    assert!(home.join(".cline/hooks/TaskStart").is_file());
    let before = snapshot(env.dir.path());
    let output = env.brain().args(["setup", "--yes", "--no-import"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(snapshot(env.dir.path()), before, "a second setup changed something");
}

#[test]
fn cursors_managed_marker_is_the_one_the_import_skips() {
    assert_eq!(brain::hook::rule::MARKER, brain_api::memory_import::MANAGED_FILE_MARKER);
}

/// The "done when" with the real hosts: `brain setup --yes` in a fresh HOME wires
/// Claude Code, Codex and Gemini CLI (each runs brain's hooks against the fake model, and
/// lists brain's MCP server as connected) and the newer hosts on the PATH (Qwen Code, Copilot
/// CLI and Cline list brain's MCP server), imports the fixture's drafts, and adds nothing on a
/// second run.
#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn setup_wires_the_real_hosts() {
    let stage = crate::real_hosts::Stage::new();
    write_memory_files(&stage.env.project_dir);
    let setup = || {
        let output = Command::new(&stage.brain_bin)
            .env_clear()
            .env("HOME", &stage.user_home)
            .env("PATH", &stage.path)
            .current_dir(&stage.env.project_dir)
            .arg("--home")
            .arg(&stage.brain_home)
            .args(["setup", "--yes"])
            .output()
            .unwrap();
        assert!(output.status.success(), "setup: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let done = setup();
    for host in ["Claude Code (claude on the PATH (", "Codex (codex on the PATH (", "Gemini CLI (gemini on the PATH ("]
    {
        assert!(done.contains(host), "{host}: {done}");
    }
    assert!(done.contains("imported 14 drafts"), "{done}");
    // Gemini CLI offline: key auth, as in `real_hosts` (setup wrote its hooks and MCP server).
    let gemini_settings = stage.user_home.join(".gemini/settings.json");
    let mut settings: Value = serde_json::from_slice(&std::fs::read(&gemini_settings).unwrap()).unwrap();
    settings["security"] = serde_json::json!({"auth": {"selectedType": "gemini-api-key"}});
    std::fs::write(&gemini_settings, settings.to_string()).unwrap();
    stage.ask(&["claude", "codex", "gemini"]);
    stage.assert_context_reached_the_model(&["/v1/messages", "/v1/responses", ":streamGenerateContent"]);
    // Each host reads brain's MCP server from what setup wrote, and starts it.
    let claude = stage.host("claude", &["mcp", "list"], &[]);
    assert!(claude.contains("brain: ") && claude.contains("Connected"), "{claude}");
    let codex = stage.host("codex", &["mcp", "list"], &[]);
    assert!(codex.contains("brain") && codex.contains("mcp"), "{codex}");
    let gemini = stage.host("gemini", &["mcp", "list"], &[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert!(gemini.contains("brain") && gemini.contains("Connected"), "{gemini}");
    // The newer hosts list it from the files setup wrote (Qwen Code also starts it).
    let qwen = stage.host("qwen", &["mcp", "list"], &[]);
    assert!(qwen.contains("brain") && qwen.contains("Connected"), "{qwen}");
    let copilot =
        stage.host("copilot", &["mcp", "list"], &[("COPILOT_OFFLINE", "true"), ("COPILOT_AUTO_UPDATE", "false")]);
    assert!(copilot.contains("brain (local)"), "{copilot}");
    let cline = stage.host("cline", &["config", "mcp"], &[("CLINE_NO_AUTO_UPDATE", "1"), ("TERM", "dumb")]);
    assert!(cline.contains("brain [stdio]"), "{cline}");

    let list = Command::new(&stage.brain_bin)
        .env_clear()
        .env("HOME", &stage.user_home)
        .current_dir(&stage.env.project_dir)
        .arg("--home")
        .arg(&stage.brain_home)
        .args(["list", "--status", "draft", "--limit", "1000", "--json"])
        .output()
        .unwrap();
    assert_fixture_drafts(&serde_json::from_slice(&list.stdout).unwrap());
    let before = snapshot(&stage.user_home.join(".claude"));
    let again = setup();
    assert!(again.contains("no new memory to import") || again.contains("CLAUDE.md: 5 facts, 0 new"), "{again}");
    assert_eq!(snapshot(&stage.user_home.join(".claude")), before, "a second setup changed Claude Code's settings");
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Hostile review of setup, finding 1: a backup of a private file (`~/.claude.json` holds an
/// OAuth token) was 0644 — the mode of a new file, not the original's.
#[test]
fn setup_backups_are_as_private_as_the_file() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::uninitialized();
    let home = user_home(&env);
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let claude = home.join(".claude.json");
    std::fs::write(&claude, "{\"oauthAccount\":{\"token\":\"sk-ant-SECRET\"}}\n").unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o600)).unwrap();
    let settings = home.join(".claude/settings.json");
    std::fs::write(&settings, "{\"theme\": \"dark\"}\n").unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o640)).unwrap();
    let output = env.brain().args(["setup", "--yes", "--no-import", "--host", "claude-code"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let backup = home.join(".claude.json.brain-backup");
    assert!(std::fs::read_to_string(&backup).unwrap().contains("sk-ant-SECRET"));
    assert_eq!(mode(&backup), 0o600, "the backup of a private file is readable by others");
    assert_eq!(mode(&claude), 0o600, "the file keeps its mode");
    assert_eq!(mode(&home.join(".claude/settings.json.brain-backup")), 0o640);
    assert_eq!(mode(&settings), 0o640);
}

/// Finding 2: a settings file that is a link into the user's dotfiles was replaced by a
/// regular file (the dotfiles copy left as it was). It is written through, the link kept,
/// and the plan says so.
#[test]
fn setup_writes_through_a_linked_settings_file_and_keeps_the_link() {
    let env = Env::uninitialized();
    let home = user_home(&env);
    let dotfiles = home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let target = dotfiles.join("claude-settings.json");
    std::fs::write(&target, "{\"theme\": \"dark\"}\n").unwrap();
    let link = home.join(".claude/settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let output = env.brain().args(["setup", "--dry-run", "--no-import", "--host", "claude-code"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let plan = String::from_utf8(output.stdout).unwrap();
    assert!(
        plan.contains("~/.claude/settings.json (a symbolic link: written through to ~/dotfiles/claude-settings.json"),
        "{plan}"
    );
    let output = env.brain().args(["setup", "--yes", "--no-import", "--host", "claude-code"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("written through to ~/dotfiles/claude-settings.json"));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    let settings: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(settings["theme"], "dark");
    assert!(settings["hooks"]["SessionStart"].is_array(), "the dotfiles copy was not written: {settings}");
    assert_eq!(
        std::fs::read_to_string(home.join(".claude/settings.json.brain-backup")).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
}

/// Finding 3: a second setup that changes a file again overwrote the only backup of the
/// file as it was before brain with an already rewritten one. Backups are numbered now.
#[test]
fn setup_never_overwrites_a_backup() {
    let env = Env::uninitialized();
    let home = user_home(&env);
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    let original = "{\"mcpServers\": {\"docs\": {\"command\": \"docs\"}}}\n";
    let mcp = home.join(".cursor/mcp.json");
    std::fs::write(&mcp, original).unwrap();
    let setup = |brain_home: &Path| {
        let output = env
            .brain()
            .args(["--home"])
            .arg(brain_home)
            .args(["setup", "--yes", "--no-import", "--host", "cursor"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    setup(&env.home);
    let backup = home.join(".cursor/mcp.json.brain-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    let first_run = std::fs::read_to_string(&mcp).unwrap();
    // Another home: the MCP entry changes, so the file is rewritten again.
    setup(&env.dir.path().join("other-home"));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original, "the first backup was overwritten");
    assert_eq!(std::fs::read_to_string(home.join(".cursor/mcp.json.brain-backup.1")).unwrap(), first_run);
}

/// Finding 4: a `.git` file (an archive can carry one) naming a folder whose `info` links
/// out of the repository made `setup --host cursor` rewrite the exclude list it led to.
#[test]
fn setup_never_follows_a_forged_git_file_out_of_the_repository() {
    let env = Env::uninitialized();
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("exclude"), "precious line\n").unwrap();
    let repo = &env.project_dir;
    std::fs::create_dir_all(repo.join("g")).unwrap();
    std::fs::write(repo.join("g/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("g/info")).unwrap();
    // Named through a link to the repository (the review used /proc/self/cwd), so the
    // exclude path does not start with the project root.
    let alias = env.dir.path().join("alias");
    std::os::unix::fs::symlink(repo, &alias).unwrap();
    std::fs::write(repo.join(".git"), format!("gitdir: {}\n", alias.join("g").display())).unwrap();
    let output = env.brain().args(["setup", "--yes", "--host", "cursor", "--no-import"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(outside.join("exclude")).unwrap(), "precious line\n");
    // A forged pointer back does not help: the link on the way is refused.
    std::fs::write(repo.join("g/gitdir"), "../.git\n").unwrap();
    std::fs::remove_file(repo.join(".cursor/rules/brain.mdc")).unwrap();
    let output = env.brain().args(["setup", "--yes", "--host", "cursor", "--no-import"]).output().unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("is a symbolic link"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(outside.join("exclude")).unwrap(), "precious line\n");
}

/// Finding 6: a file name holding a line feed forged a line of the plan (and of the prompt
/// before `go ahead?`): every name setup prints keeps to its line.
#[test]
fn setup_escapes_line_feeds_in_the_names_it_prints() {
    let env = Env::new();
    let rules = env.project_dir.join(".cursor/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("x\nINJECTED: ok.mdc"), "- rule a\n").unwrap();
    let output = env.brain().args(["setup", "--dry-run", "--host", "cursor"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let plan = String::from_utf8(output.stdout).unwrap();
    assert!(!plan.lines().any(|line| line.starts_with("INJECTED")), "{plan}");
    assert!(plan.contains(".cursor/rules/x\\u000aINJECTED: ok.mdc: 1 facts, 1 new"), "{plan}");
    assert!(plan.contains(".cursor/rules/x\\u000aINJECTED: ok.mdc:1"), "{plan}");
}

/// Every entry under `dir` (folders too) with its bytes and permissions: what "wrote nothing
/// at all" compares.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut entries = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let metadata = std::fs::symlink_metadata(entry.path()).unwrap();
            let bytes = metadata.is_file().then(|| std::fs::read(entry.path()).unwrap());
            if metadata.is_dir() {
                stack.push(entry.path());
            }
            entries.push((entry.path(), bytes, metadata.permissions().mode()));
        }
    }
    entries.sort();
    entries
}

/// Finding 7: in a git repository with an AGENTS.md and an existing home, `setup --dry-run`
/// wrote `<home>/project-folders.json` (opening the store tied the project to the folder).
#[test]
fn a_setup_dry_run_writes_nothing_under_the_home() {
    let env = Env::new();
    // A git repository named by its folder (no .brain.toml): its first use would tie it.
    let repo = env.dir.path().join("work/acme");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(repo.join("AGENTS.md"), "- Never push on Fridays\n").unwrap();
    std::fs::create_dir_all(user_home(&env).join(".claude")).unwrap();
    let before = tree(env.dir.path());
    let output = env.brain().current_dir(&repo).args(["setup", "--dry-run"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("AGENTS.md: 1 facts, 1 new"));
    let after = tree(env.dir.path());
    let changed: Vec<&PathBuf> =
        after.iter().filter(|entry| !before.contains(entry)).map(|(path, _, _)| path).collect();
    let gone: Vec<&PathBuf> = before.iter().filter(|entry| !after.contains(entry)).map(|(path, _, _)| path).collect();
    assert!(changed.is_empty() && gone.is_empty(), "the dry run wrote {changed:?}, removed {gone:?}");
}

/// The review's minor findings: `--home FILE --dry-run` said "(will be created)" and exited
/// 0, and `--project ../x --no-import` was accepted; both are refused as the real run would.
#[test]
fn setup_refuses_a_home_that_is_a_file_and_a_bad_project_name_even_in_a_dry_run() {
    let env = Env::uninitialized();
    let file = env.dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for args in [&["setup", "--dry-run", "--no-import"][..], &["setup", "--yes", "--no-import"]] {
        env.brain()
            .arg("--home")
            .arg(&file)
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("exists and is not a folder"));
        env.brain()
            .args(["--project", "../x"])
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("invalid project name \"../x\""));
    }
    assert!(!env.home.exists());
    assert!(!user_home(&env).join(".claude").exists());
}
