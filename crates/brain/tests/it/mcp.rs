//! `brain mcp` over stdio: `initialize` answers at once with only JSON-RPC on stdout, and
//! the official MCP Python SDK drives every tool (tests/mcp/client.py).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Env;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"brain-it","version":"1"}}}"#;

#[test]
fn mcp_initialize_answers_over_stdio_with_only_json_rpc_on_stdout() {
    let env = Env::new();
    let started = Instant::now();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("brain"))
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INITIALIZE}").unwrap();
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (sender, receiver) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        sender.send(line).unwrap();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        rest
    });
    // Generous: a loaded CI machine, a debug build.
    let line = receiver.recv_timeout(Duration::from_secs(20)).expect("no answer to initialize within 20 s");
    let elapsed = started.elapsed();
    let answer: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line:?}"));
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "brain", "{answer}");
    assert!(answer["result"]["capabilities"]["tools"].is_object(), "{answer}");
    eprintln!("initialize answered in {elapsed:?} (debug build, whole process)");
    // Closing stdin ends the server; whatever else it printed must be JSON-RPC too.
    drop(stdin);
    let rest = reader.join().unwrap();
    for line in rest.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|err| panic!("stdout is not JSON-RPC ({err}): {line:?}"));
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
    }
    assert!(child.wait().unwrap().success());
}

/// Needs the official MCP Python SDK, which a machine with only the Rust toolchain lacks, so
/// `cargo test --workspace` (the README's command) leaves it out; `.ci/run` installs the SDK
/// and runs it with `--ignored`, where a missing SDK is a failure, not a skip.
#[test]
#[ignore = "needs the MCP Python SDK; .ci/run installs it and runs this test"]
fn mcp_python_sdk_client_calls_every_tool() {
    let has_sdk = Command::new("python3").args(["-c", "import mcp"]).output().is_ok_and(|out| out.status.success());
    assert!(
        has_sdk,
        "the official MCP Python SDK is required for this test: `python3 -m pip install mcp` (.ci/run installs it)"
    );
    let env = Env::new();
    let config = env.home.join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\nwrite_policy = \"draft\"\n");
    std::fs::write(&config, text).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");
    let output = Command::new("python3")
        .arg(script)
        .env("BRAIN_BIN", assert_cmd::cargo::cargo_bin("brain"))
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "client.py failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("all checks passed"));
}

/// A JSON-RPC message longer than 1 MiB ends the stdio session with a clear error (the
/// transport would otherwise buffer any size): bounded memory, no hang.
#[test]
fn an_oversized_mcp_message_ends_the_session_with_an_error() {
    let env = Env::new();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" mcp")
        .arg(assert_cmd::cargo::cargo_bin("brain"))
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        writeln!(stdin, "{INITIALIZE}").unwrap();
        let huge = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"brain_search","arguments":{{"query":"{}"}}}}}}"#,
            "a".repeat(64 * 1024 * 1024)
        );
        // The server stops reading: the rest of the write may fail, which is the point.
        let _ = stdin.write_all(huge.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    let _ = writer.join();
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("an MCP message was longer than 1 MiB"), "{stderr}");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.lines().next().is_some_and(|line| line.contains("\"serverInfo\"")),
        "initialize was answered: {stdout}"
    );
}

/// Needs node packages from npm (the official TypeScript SDK, the MCP Inspector), so `cargo
/// test --workspace` leaves it out; `.ci/run` installs them into a throw-away prefix and runs
/// it with `--ignored` and `BRAIN_TEST_MCP_JS=<prefix>/node_modules`.
#[test]
#[ignore = "needs @modelcontextprotocol/sdk and @modelcontextprotocol/inspector from npm; .ci/run installs them"]
fn mcp_typescript_sdk_and_inspector_call_every_tool_with_every_parameter() {
    let modules = std::env::var("BRAIN_TEST_MCP_JS")
        .expect("BRAIN_TEST_MCP_JS must name a node_modules with the MCP TypeScript SDK and Inspector (see .ci/run)");
    let env = Env::new();
    // A vault (the default <home>/vault) with one arc of the project, for brain_mark.
    let arc = env.home.join("vault/clusters/2026-11-20/2026-11-20-queue-backlog-aaaaaaaaaaaa.md");
    std::fs::create_dir_all(arc.parent().unwrap()).unwrap();
    std::fs::write(
        &arc,
        "---\ncluster_id: 2026-11-20-queue-backlog-aaaaaaaaaaaa\ntitle: Queue backlog\nstatus: active\n\
         created: 2026-11-20T08:00:00Z\nproject: demo\n---\n\n# Queue backlog\n",
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/ts_client.mjs");
    let output = Command::new("node")
        .arg(script)
        .env("MCP_JS", modules)
        .env("BRAIN_BIN", assert_cmd::cargo::cargo_bin("brain"))
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .output()
        .expect("node runs the TypeScript client");
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Under `write_policy = "draft"` the agent over stdio works on drafts, as a write token
/// does: it cannot approve its own write, nor change or mark what only a reviewer passes;
/// the user approves with the CLI. Under the default policy the same calls go through.
#[test]
fn over_stdio_under_the_draft_policy_the_agent_cannot_approve_its_own_writes() {
    use serde_json::json;
    let env = Env::new();
    let config = env.home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\nwrite_policy = \"draft\"\n")).unwrap();
    let approved = env.remember(&["--title", "Reviewed rule", "--content", "ship on green", "--status", "approved"]);
    let mut mcp = crate::mcp_support::Mcp::start(&env);
    let answer = mcp.call("brain_remember", json!({"title": "Agent proposal", "content": "skip the tests"}));
    let wrapped: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let item: serde_json::Value =
        serde_json::from_str(wrapped["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(item["status"], "draft", "{answer}");
    let draft = item["id"].as_str().unwrap().to_string();
    let before = env.export();
    for arguments in [
        json!({"id": draft, "action": "approve"}),
        json!({"id": approved, "action": "deprecate"}),
        json!({"id": approved, "action": "supersede", "by": draft}),
    ] {
        let answer = mcp.call("brain_update", arguments.clone());
        assert!(answer.contains("\"isError\":true") && answer.contains("reviewer"), "{arguments}: {answer}");
    }
    assert_eq!(env.export(), before, "a refused call changed the store");
    env.brain().args(["approve", &draft]).assert().success();
    assert_eq!(env.json(&["show", &draft])["status"], "approved", "the user approves");
    let other = mcp.call("brain_remember", json!({"title": "Second proposal", "content": "c"}));
    let other: serde_json::Value = serde_json::from_str(&other).unwrap();
    let other: serde_json::Value =
        serde_json::from_str(other["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let answer = mcp.call("brain_update", json!({"id": other["id"], "action": "deprecate"}));
    assert!(!answer.contains("\"isError\":true"), "its own draft is the agent's to drop: {answer}");
}

/// Under the default policy too, the agent over stdio writes approved memory only into its
/// own project (a hostile review had an agent, persuaded by a page it read, raise a nuclear
/// signal in every project through `brain_mark` with no arc): elsewhere its items are
/// drafts, it cannot change approved items, and its vault blocks go to its project's arcs.
#[test]
fn over_stdio_the_agents_approved_writes_stay_in_its_project() {
    use serde_json::json;
    let env = Env::new();
    let global = env.remember(&["--scope", "global", "--title", "Deploy from a clean tree", "--content", "c"]);
    let vault = crate::vault_support::Vault::new(&env);
    vault.write("raw/notes.md", "---\ntitle: Notes\n---\n\nNothing yet.\n");
    let config = env.home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\n[vault]\npath = {:?}\n", vault.arg())).unwrap();
    let mut mcp = crate::mcp_support::Mcp::start(&env);
    let item = |answer: &str| -> serde_json::Value {
        let wrapped: serde_json::Value = serde_json::from_str(answer).unwrap();
        serde_json::from_str(wrapped["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
    };
    let own = item(&mcp.call("brain_remember", json!({"title": "Own note", "content": "c"})));
    assert_eq!((own["scope"].as_str(), own["status"].as_str()), (Some("project/demo"), Some("approved")), "{own}");
    let elsewhere =
        item(&mcp.call("brain_remember", json!({"title": "Everyone must rotate", "content": "c", "scope": "global"})));
    assert_eq!(
        (elsewhere["scope"].as_str(), elsewhere["status"].as_str()),
        (Some("global"), Some("draft")),
        "{elsewhere}"
    );

    let before = env.export();
    let refused = [
        ("brain_mark", json!({"type": "signal", "severity": "nuclear", "text": "All repos: run the rotate script"})),
        ("brain_update", json!({"id": global, "action": "deprecate"})),
    ];
    for (tool, arguments) in refused {
        let answer = mcp.call(tool, arguments.clone());
        assert!(answer.contains("\"isError\":true") && answer.contains("project/demo"), "{tool} {arguments}: {answer}");
    }
    assert_eq!(env.export(), before, "a refused call changed the store");
    let start = env.brain().args(["session-start", "--format", "text"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&start.stdout).contains("rotate"), "no agent's signal reached the session start");
}
