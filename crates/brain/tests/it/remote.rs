//! Remote mode (`--remote URL` / `BRAIN_URL`): the CLI wiring against a scripted HTTP
//! stub (what is sent, how answers and failures are mapped, the hook's fail-open), and
//! end to end against `brain serve` (the same output as the local commands).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use predicates::prelude::*;

use crate::Env;

const TOKEN: &str = "brn-test-7f3a9c1e5d";

/// One request as the stub received it.
#[derive(Clone, Debug)]
struct Received {
    /// `GET /api/v2/brain?project=demo&now=…`
    request_line: String,
    /// Lowercased names.
    headers: Vec<(String, String)>,
    body: String,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// What the stub does with one connection.
enum Reply {
    /// A status, a body, extra header lines.
    Answer(u16, String, Vec<String>),
    /// Accepts and never answers.
    Silence,
}

/// A scripted HTTP/1.1 server on a free loopback port: one reply per connection, in order.
struct Stub {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Stub {
    fn start(replies: Vec<Reply>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else { return };
                match reply {
                    Reply::Silence => held.push(stream),
                    Reply::Answer(status, body, headers) => {
                        if let Some(request) = read_request(&stream) {
                            log.lock().unwrap().push(request);
                        }
                        answer(stream, status, &body, &headers);
                    }
                }
            }
            // Keep silent connections open until the test process ends.
            std::thread::sleep(Duration::from_secs(600));
            drop(held);
        });
        Stub { url, received }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        request_line: request_line.trim_end().to_string(),
        headers,
        body: String::from_utf8(body).unwrap(),
    })
}

fn answer(mut stream: TcpStream, status: u16, body: &str, headers: &[String]) {
    let mut head = format!(
        "HTTP/1.1 {status} Stub\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()));
}

fn ok(body: String) -> Reply {
    Reply::Answer(200, body, Vec::new())
}

fn error(status: u16, message: &str) -> Reply {
    Reply::Answer(status, serde_json::json!({"error": {"code": "x", "message": message}}).to_string(), Vec::new())
}

/// A URL nothing listens on (a port just released).
fn closed_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

fn hooks_log(env: &Env) -> String {
    std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap_or_default()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

const EMPTY_SESSION_START: &str = r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":""}}"#;

#[test]
fn a_remote_brain_document_prints_like_the_local_one_and_carries_token_project_and_clock() {
    let env = Env::new();
    env.remember(&["--kind", "decision", "--title", "Use WAL mode", "--content", "Readers never block writers."]);
    let local = env.brain().args(["brain", "--json"]).output().unwrap();
    assert!(local.status.success());
    // The server's body is compact JSON; the CLI prints it as the local command does.
    let compact = serde_json::to_string(&serde_json::from_slice::<serde_json::Value>(&local.stdout).unwrap()).unwrap();
    let stub = Stub::start(vec![ok(compact)]);
    let remote = env
        .brain()
        .env("BRAIN_URL", format!("{}/", stub.url))
        .env("BRAIN_TOKEN", TOKEN)
        // A proxy cannot reach loopback: it is bypassed for a local server.
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("ALL_PROXY", "http://127.0.0.1:9")
        .args(["brain", "--json", "--token-budget", "3000"])
        .output()
        .unwrap();
    assert!(remote.status.success(), "{}", stderr(&remote));
    assert_eq!(stdout(&remote), stdout(&local));
    let request = &stub.received()[0];
    assert!(request.request_line.starts_with("GET /api/v2/brain?"), "{}", request.request_line);
    for part in ["project=demo", "now=2026-11-21T10%3A00%3A00Z", "tokenBudget=3000"] {
        assert!(request.request_line.contains(part), "{part} missing in {}", request.request_line);
    }
    assert_eq!(request.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

#[test]
fn remote_session_start_text_renders_the_servers_text_and_the_budget_report() {
    let env = Env::new();
    let local = env.json(&["session-start"]);
    let mut body = local.clone();
    body["text"] = serde_json::json!("# Working memory: demo\n\nrecalled memory, not instructions");
    let stub = Stub::start(vec![ok(body.to_string())]);
    let output =
        env.brain().args(["--remote", &stub.url, "session-start", "--format", "text", "--top", "3"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "# Working memory: demo\n\nrecalled memory, not instructions\n");
    assert!(stderr(&output).starts_with("session-start: "), "{}", stderr(&output));
    let line = &stub.received()[0].request_line;
    assert!(line.contains("maxChars=9500") && line.contains("top=3"), "{line}");
    // Without BRAIN_TOKEN no Authorization header is sent.
    assert_eq!(stub.received()[0].header("authorization"), None);
}

#[test]
fn remote_remember_sends_the_prepared_draft_and_prints_the_created_item() {
    let env = Env::new();
    let item = env.json(&["remember", "--title", "Stub", "--content", "x"]);
    let stub = Stub::start(vec![Reply::Answer(201, item.to_string(), vec!["Location: /api/v2/items/x".into()])]);
    let output = env
        .brain()
        .args(["--remote", &stub.url, "remember", "--kind", "lesson", "--pin", "--priority", "3", "--tags", "a,b"])
        .write_stdin("\n  Retry with jitter  \nbody line\n")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let expected = format!(
        "remembered {} ({}, {}, {} tokens)\n",
        item["id"].as_str().unwrap(),
        item["kind"].as_str().unwrap(),
        item["scope"].as_str().unwrap(),
        item["tokens"]
    );
    assert_eq!(stdout(&output), expected);
    let request = &stub.received()[0];
    assert!(request.request_line.starts_with("POST /api/v2/items?project=demo&now="), "{}", request.request_line);
    assert_eq!(request.header("content-type"), Some("application/json"));
    let draft: serde_json::Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(
        draft,
        serde_json::json!({
            "kind": "lesson", "title": "Retry with jitter", "content": "\n  Retry with jitter  \nbody line\n",
            "pinned": true, "pin_priority": 3, "tags": ["a", "b"],
        })
    );
}

#[test]
fn remote_search_turns_the_cursor_into_the_local_page_and_refuses_filters() {
    let env = Env::new();
    let body = serde_json::json!({
        "query": "wal mode",
        "results": [{"id": "mem_01JD0000000000000000000000", "title": "Use WAL mode", "kind": "decision",
                     "scope": "project/demo", "status": "approved", "score": 1.25, "snippet": "Readers never block."}],
        "nextCursor": "2",
    });
    let stub = Stub::start(vec![ok(body.to_string()), ok(body.to_string())]);
    let output = env
        .brain()
        .args(["--remote", &stub.url, "search", "wal", "mode", "--limit", "1", "--offset", "1", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let page: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(page["next_offset"], 2);
    assert_eq!(page["results"][0]["score"], 1.25);
    assert!(page.get("nextCursor").is_none());
    let line = &stub.received()[0].request_line;
    assert!(line.contains("q=wal+mode") || line.contains("q=wal%20mode"), "{line}");
    assert!(line.contains("limit=1") && line.contains("cursor=1"), "{line}");
    let text = env.brain().args(["--remote", &stub.url, "search", "wal"]).output().unwrap();
    assert_eq!(
        stdout(&text),
        "  1. [decision] Use WAL mode  (mem_01JD0000000000000000000000, score 1.25)\n     Readers never block.\n"
    );
    assert_eq!(stderr(&text), "(more: --offset 2)\n");
    env.brain()
        .args(["--remote", &stub.url, "search", "wal", "--kind", "bug", "--tag", "x"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("takes only the query, --limit and --offset (not --kind, --tag)"));
}

#[test]
fn server_errors_map_to_exit_codes_with_the_servers_message_and_never_the_token() {
    let env = Env::new();
    let stub = Stub::start(vec![
        error(401, &format!("unknown token {TOKEN}")),
        error(403, "token \"ci\" lacks read on project/demo"),
        error(500, "internal error; see the server log"),
        ok("<html>not json</html>".into()),
    ]);
    let run = || env.brain().env("BRAIN_URL", &stub.url).env("BRAIN_TOKEN", TOKEN).args(["brain"]).output().unwrap();
    let unauthorized = run();
    assert_eq!(unauthorized.status.code(), Some(1));
    assert!(stderr(&unauthorized).contains("answered 401 Unauthorized: unknown token [REDACTED:token]"));
    assert!(stderr(&unauthorized).contains("hint: the token in BRAIN_TOKEN was not accepted"));
    let forbidden = run();
    assert_eq!(forbidden.status.code(), Some(1));
    assert!(stderr(&forbidden).contains("lacks read on project/demo"), "{}", stderr(&forbidden));
    let failing = run();
    assert_eq!(failing.status.code(), Some(2));
    assert!(stderr(&failing).contains("answered 500 Internal Server Error: internal error"), "{}", stderr(&failing));
    let garbage = run();
    assert_eq!(garbage.status.code(), Some(2));
    assert!(stderr(&garbage).contains("sent a response brain cannot read"), "{}", stderr(&garbage));
    for output in [unauthorized, forbidden, failing, garbage] {
        assert!(!stderr(&output).contains(TOKEN) && output.stdout.is_empty());
    }
}

#[test]
fn a_server_that_is_not_running_is_a_user_error_with_a_hint() {
    let env = Env::new();
    let url = closed_url();
    let output = env.brain().args(["--remote", &url, "session-start"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "error: cannot connect to brain serve at {url}: connection refused\nhint: is `brain serve` running at {url}?\n"
        )
    );
}

#[test]
fn commands_remote_mode_does_not_cover_and_bad_urls_are_user_errors() {
    let env = Env::new();
    env.brain()
        .env("BRAIN_URL", "http://127.0.0.1:9")
        .args(["list"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "`brain list` does not support --remote (BRAIN_URL); remote mode covers session-start, hook session-start, search, remember and brain",
        ));
    env.brain()
        .args(["--remote", "http://127.0.0.1:9", "skill", "list"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`brain skill list` does not support --remote"));
    env.brain()
        .args(["--remote", "ftp://example.com", "brain"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unsupported scheme \"ftp\""));
    // An empty BRAIN_URL is no remote.
    env.brain().env("BRAIN_URL", "").args(["list"]).assert().success();
}

#[test]
fn the_remote_hook_fails_open_fast_when_the_server_is_down_and_logs_without_the_token() {
    let env = Env::new();
    let started = Instant::now();
    let output = env
        .brain()
        .env("BRAIN_URL", closed_url())
        .env("BRAIN_TOKEN", TOKEN)
        .args(["hook", "session-start"])
        .write_stdin(r#"{"session_id":"s1","source":"startup"}"#)
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), format!("{EMPTY_SESSION_START}\n"));
    let log = hooks_log(&env);
    assert!(log.contains("session-start: remote: cannot connect to brain serve at http://127.0.0.1:"), "{log}");
    assert!(!log.contains(TOKEN) && !stderr(&output).contains(TOKEN));
}

#[test]
fn the_remote_hook_gives_up_at_its_timeout_and_on_garbage_or_server_errors() {
    let env = Env::new();
    // The remote call gets 90% of the hook's deadline; 1,500 ms leaves a loaded machine room
    // to start the process before the remote's own timeout is the one that fires.
    std::fs::write(env.home.join("config.toml"), "[hooks]\ntimeout_ms = 1500\n").unwrap();
    let stub = Stub::start(vec![Reply::Silence, ok("{\"not\": \"a payload\"}".into()), error(503, "draining")]);
    for expected in ["did not answer within 1350 ms", "sent a response brain cannot read", "503 Service Unavailable"] {
        let started = Instant::now();
        let output = env
            .brain()
            .args(["--remote", &stub.url, "hook", "session-start"])
            .env("BRAIN_TOKEN", TOKEN)
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_millis(5000), "{expected}: {:?}", started.elapsed());
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(stdout(&output), format!("{EMPTY_SESSION_START}\n"));
        assert!(hooks_log(&env).contains(expected), "{expected}: {}", hooks_log(&env));
    }
    assert!(!hooks_log(&env).contains(TOKEN));
}

#[test]
fn remote_hooks_without_a_home_or_with_a_bad_url_still_fail_open() {
    let env = Env::uninitialized();
    let output =
        env.brain().args(["--remote", "gopher://x", "hook", "session-start"]).write_stdin("{}").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), format!("{EMPTY_SESSION_START}\n"));
    // The log folder is created for the reason: a remote-only machine has no home otherwise.
    assert!(hooks_log(&env).contains("unsupported scheme \"gopher\""), "{}", hooks_log(&env));
    let output = env
        .brain()
        .args(["--remote", "http://127.0.0.1:9", "hook", "user-prompt-submit"])
        .write_stdin(r#"{"session_id": "s-1"}"#)
        .output();
    let output = output.unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    assert!(hooks_log(&env).contains("user-prompt-submit: remote:"), "{}", hooks_log(&env));
}

// ---------------------------------------------------------------------------------------
// End to end against `brain serve` on the same home: remote output = local output.

/// The demo project (project `acme-api`, pins, decisions, bugs) in a fresh home.
fn demo_env() -> Env {
    let env = Env::new();
    let items = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo/items.jsonl");
    std::fs::write(env.project_dir.join(".brain.toml"), "project = \"acme-api\"\n").unwrap();
    env.brain().args(["import", items]).assert().success();
    env
}

/// Runs `args` locally and with `--remote URL` and asserts the same exit code, stdout and
/// stderr.
fn assert_same_output(env: &Env, url: &str, args: &[&str], stdin: &str) {
    let local = env.brain().args(args).write_stdin(stdin).output().unwrap();
    let remote = env.brain().env("BRAIN_URL", url).args(args).write_stdin(stdin).output().unwrap();
    assert!(local.status.success(), "{args:?}: {}", stderr(&local));
    assert_eq!(remote.status.code(), local.status.code(), "{args:?}: {}", stderr(&remote));
    assert_eq!(stdout(&remote), stdout(&local), "{args:?} stdout");
    assert_eq!(stderr(&remote), stderr(&local), "{args:?} stderr");
    assert!(!local.stdout.is_empty() || !local.stderr.is_empty(), "{args:?} printed nothing");
}

#[test]
fn remote_commands_print_exactly_what_the_local_ones_print() {
    let env = demo_env();
    let server = crate::serve::Server::start(&env, &[]);
    let url = format!("http://{}/", server.address);
    let cases: &[&[&str]] = &[
        &["session-start"],
        &["session-start", "--task", "webhook signature bug", "--top", "3"],
        &["session-start", "--format", "text", "--topics", "redis, money"],
        &["session-start", "--format", "text", "--max-chars", "800"],
        &["brain"],
        &["brain", "--json"],
        &["brain", "--json", "--token-budget", "2500", "--layer1", "700"],
        &["search", "webhook", "signature", "--json"],
        &["search", "redis", "--limit", "1"],
        &["search", "redis", "--limit", "1", "--offset", "1", "--json"],
        &["search", "zzzunknownzzz"],
    ];
    for args in cases {
        assert_same_output(&env, &url, args, "");
    }
    // The hook injects the same context from the server as from the local store.
    assert_same_output(&env, &url, &["hook", "session-start"], r#"{"source":"startup"}"#);
}

#[test]
fn remote_remember_creates_the_item_the_local_store_then_shows() {
    let env = demo_env();
    let server = crate::serve::Server::start(&env, &[]);
    let created = env
        .brain()
        .env("BRAIN_URL", format!("http://{}", server.address))
        .args(["remember", "--kind", "lesson", "--tags", "retries", "--pin", "--priority", "7", "--json"])
        .write_stdin("Retry webhooks with jitter\nA fixed interval synchronises the retries of all clients.\n")
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", stderr(&created));
    let item: serde_json::Value = serde_json::from_slice(&created.stdout).unwrap();
    assert_eq!(item["title"], "Retry webhooks with jitter");
    assert_eq!(
        (item["scope"].as_str(), item["pinned"].as_bool(), item["pin_priority"].as_i64()),
        (Some("project/acme-api"), Some(true), Some(7))
    );
    let shown = env.json(&["show", item["id"].as_str().unwrap()]);
    assert_eq!(shown, item);
    // The server redacts what reaches it.
    let secret = env
        .brain()
        .env("BRAIN_URL", format!("http://{}", server.address))
        .args([
            "remember",
            "--title",
            "Deploy key",
            "--content",
            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "--json",
        ])
        .output()
        .unwrap();
    let secret: serde_json::Value = serde_json::from_slice(&secret.stdout).unwrap();
    assert!(secret["content"].as_str().unwrap().contains("[REDACTED:"), "{secret}");
}

#[test]
fn the_token_travels_from_brain_token_and_the_servers_refusals_reach_the_user() {
    let env = demo_env();
    const READER: &str = "reader-token-0123456789abcdef";
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[[serve.tokens]]\nname = \"reader\"\ntoken = \"{READER}\"\nread = [\"project/acme-api\", \"global\"]\n"
        ),
    )
    .unwrap();
    let server = crate::serve::Server::start(&env, &[]);
    let url = format!("http://{}", server.address);
    let remote = |token: Option<&str>, args: &[&str]| {
        let mut command = env.brain();
        command.env("BRAIN_URL", &url).args(args);
        if let Some(token) = token {
            command.env("BRAIN_TOKEN", token);
        }
        command.output().unwrap()
    };
    let missing = remote(None, &["brain"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("answered 401 Unauthorized: missing bearer token"), "{}", stderr(&missing));
    assert!(stderr(&missing).contains("hint: set BRAIN_TOKEN"), "{}", stderr(&missing));
    let wrong = remote(Some("not-the-token-at-all-0000"), &["brain"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains("invalid bearer token") && !stderr(&wrong).contains("not-the-token"));
    let read = remote(Some(READER), &["search", "webhook", "--json"]);
    assert!(read.status.success(), "{}", stderr(&read));
    let write = remote(Some(READER), &["remember", "--title", "Not allowed", "--content", "x"]);
    assert_eq!(write.status.code(), Some(1));
    let message = stderr(&write);
    assert!(message.contains("answered 403 Forbidden: token \"reader\" may not write project/acme-api"), "{message}");
    assert!(message.contains("hint: the token in BRAIN_TOKEN needs a grant"), "{message}");
    for output in [missing, wrong, read, write] {
        assert!(!stderr(&output).contains(READER));
    }
    // The server's log never saw the token either.
    assert!(!server.log().contains(READER));
}

#[test]
fn the_remote_hook_fails_open_once_the_server_is_gone() {
    let env = demo_env();
    let mut server = crate::serve::Server::start(&env, &[]);
    let url = format!("http://{}", server.address);
    let run = || {
        env.brain()
            .env("BRAIN_URL", &url)
            .env("BRAIN_TOKEN", TOKEN)
            .args(["hook", "session-start"])
            .write_stdin("{}")
            .output()
            .unwrap()
    };
    let up = run();
    assert!(stdout(&up).contains("Working memory: acme-api"), "{}", stdout(&up));
    assert!(server.terminate(Duration::from_secs(10)).success());
    let started = Instant::now();
    let down = run();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(down.status.code(), Some(0));
    assert_eq!(stdout(&down), format!("{EMPTY_SESSION_START}\n"));
    let log = hooks_log(&env);
    assert!(log.contains(&format!("session-start: remote: cannot connect to brain serve at {url}")), "{log}");
    assert!(!log.contains(TOKEN));
}
