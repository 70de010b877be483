//! Vault content per project (issue 15): a session of one project sees its own arcs, inject
//! blocks and signals, those of files without a project, and the signals shared with every
//! project (`scope=global`, or at or above `[vault] shared_signal_severity`); never another
//! project's arc titles or signals.

use crate::Env;
use crate::serve_security::{BETA_ONLY, two_project_vault};

fn text(env: &Env, args: &[&str]) -> String {
    let output = env.brain().args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn session_start_and_the_brain_document_show_one_projects_vault_content() {
    let env = Env::new();
    let vault = two_project_vault(&env);
    std::fs::write(env.home.join("config.toml"), format!("[vault]\npath = {:?}\n", vault.arg())).unwrap();
    for args in [
        vec!["--project", "alpha", "session-start", "--format", "text"],
        vec!["--project", "alpha", "brain"],
        vec!["--project", "alpha", "context", "--profile", "session-start"],
    ] {
        let out = text(&env, &args);
        for wanted in ["Alpha checkout rewrite", "Team standup notes"] {
            assert!(out.contains(wanted), "{args:?} lacks {wanted:?}:\n{out}");
        }
        for leaked in BETA_ONLY {
            assert!(!out.contains(leaked), "{args:?} shows beta's {leaked:?}:\n{out}");
        }
    }
    let alpha = text(&env, &["--project", "alpha", "session-start", "--format", "text"]);
    assert!(alpha.contains("Alpha cache warms slowly") && alpha.contains("Shared runner pool is degraded"), "{alpha}");
    let claude_md = text(&env, &["--project", "alpha", "context", "--profile", "claude-md"]);
    assert!(claude_md.contains("Alpha inject: run the checkout suite"), "{claude_md}");
    assert!(!claude_md.contains("Beta inject"), "alpha's CLAUDE.md gets beta's block:\n{claude_md}");
    let beta = text(&env, &["--project", "beta", "session-start", "--format", "text"]);
    for wanted in ["Beta billing migration", "Beta ledger drift detected", "Shared runner pool", "Team standup notes"] {
        assert!(beta.contains(wanted), "beta lacks {wanted:?}:\n{beta}");
    }
    assert!(!beta.contains("Alpha"), "beta's session shows alpha's content:\n{beta}");
    // The feed files of the tick still cover the whole vault (the user's own folder).
    let signals = vault.read("brain-feed/signals.md");
    assert!(signals.contains("Alpha cache") && signals.contains("Beta ledger drift"), "{signals}");

    // A severity at or above `shared_signal_severity` reaches every project; an arc's
    // title never does.
    std::fs::write(
        env.home.join("config.toml"),
        format!("[vault]\npath = {:?}\nshared_signal_severity = \"critical\"\n", vault.arg()),
    )
    .unwrap();
    let shared = text(&env, &["--project", "alpha", "session-start", "--format", "text"]);
    assert!(shared.contains("Beta ledger drift detected"), "a critical signal is shared:\n{shared}");
    assert!(!shared.contains("Beta billing migration") && !shared.contains("Beta inject"), "{shared}");
}

#[test]
fn captured_arcs_carry_the_project_of_their_session_into_its_feed_only() {
    let env = Env::new();
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/transcripts/projects");
    let projects = env.dir.path().join("projects");
    for entry in walk(&source) {
        let target = projects.join(entry.strip_prefix(&source).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &target).unwrap();
    }
    env.json(&["capture", "--projects-dir", projects.to_str().unwrap()]);
    env.brain().args(["vault", "scan"]).assert().success();
    let api = text(&env, &["--project", "api", "session-start", "--format", "text"]);
    let web = text(&env, &["--project", "web", "session-start", "--format", "text"]);
    let login = "Fix the login flow";
    assert!(api.contains(login), "api's captured arc is in api's feed:\n{api}");
    assert!(!web.contains(login), "api's captured arc leaks into web's feed:\n{web}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

#[test]
fn mcp_tools_give_a_session_its_own_projects_vault_content() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let env = Env::new();
    let vault = two_project_vault(&env);
    std::fs::write(env.home.join("config.toml"), format!("[vault]\npath = {:?}\n", vault.arg())).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("brain"))
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .args(["--now", crate::NOW, "--project", "alpha", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel::<String>();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let answer = |stdin: &mut std::process::ChildStdin, id: u64, message: String| -> String {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = receiver.recv_timeout(std::time::Duration::from_secs(30)).expect("an MCP answer");
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return line;
            }
        }
    };
    answer(
        &mut stdin,
        1,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.into(),
    );
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    let call = |id: u64, tool: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        )
    };
    for (id, tool, arguments) in [
        (2, "brain_session_start", "{}"),
        (3, "brain_get_memory", "{}"),
        (4, "brain_context_pack", r#"{"task":"billing ledger invoices","token_budget":4000}"#),
    ] {
        let line = answer(&mut stdin, id, call(id, tool, arguments));
        assert!(line.contains("Alpha checkout rewrite"), "{tool} lacks alpha's arc: {line}");
        for leaked in BETA_ONLY {
            assert!(!line.contains(leaked), "{tool} shows beta's {leaked:?}: {line}");
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
