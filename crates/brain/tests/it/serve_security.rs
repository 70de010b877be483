//! `brain serve` against a hostile browser and hostile sockets: DNS rebinding (a foreign
//! `Host`), cross-site pages (`Origin`, `Sec-Fetch-Site`, form posts), and the security
//! matrix of every documented route.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use crate::Env;
use crate::serve::{Server, metric, request_bytes, seeded};

/// A draft item in project `demo`; returns its id.
fn draft(env: &Env) -> String {
    env.remember(&["--title", "Rotate the signing key", "--content", "Every 90 days.", "--status", "draft"])
}

#[test]
fn a_rebinding_page_or_a_cross_site_form_can_neither_read_nor_write() {
    let env = seeded();
    let id = draft(&env);
    let before = env.export();
    let server = Server::start(&env, &[]);
    let port = server.address.rsplit(':').next().unwrap().to_string();
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://evil.example:{port}");
    let approve = format!("/api/v2/items/{id}/approve");

    // DNS rebinding: the page at evil.example now resolves to 127.0.0.1, so its requests
    // are same-origin to the browser; only the Host header gives them away. Every route.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let rebound: Vec<(&str, &str, Option<&str>)> = vec![
        ("GET", "/", None),
        ("GET", "/assets/app.js", None),
        ("GET", "/healthz", None),
        ("GET", "/metrics", None),
        ("GET", "/openapi.json", None),
        ("GET", "/api/v2/events", None),
        ("GET", "/api/v2/brain?project=demo", None),
        ("GET", "/no/such/route", None),
        ("POST", &approve, Some("{}")),
        ("POST", "/mcp", Some(init)),
    ];
    for (method, path, body) in rebound {
        let response = server.request(
            method,
            path,
            &[
                ("Host", &evil_host),
                ("Origin", &evil_origin),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            body,
        );
        assert_eq!(response.status, 421, "{method} {path}: {}", response.text());
        assert_eq!(response.error_code(), "host_not_allowed", "{method} {path}");
        assert!(response.json()["error"]["hint"].as_str().unwrap().contains("allowed_hosts"));
    }

    // A cross-site page on another origin: a form post (no preflight) and a fetch.
    let form = server.request(
        "POST",
        &approve,
        &[
            ("Origin", "http://evil.example"),
            ("Sec-Fetch-Site", "cross-site"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some("a=b"),
    );
    assert_eq!((form.status, form.error_code().as_str()), (403, "cross_origin"), "{}", form.text());
    let read = server.request("GET", "/api/v2/brain?project=demo", &[("Origin", "http://evil.example")], None);
    assert_eq!((read.status, read.error_code().as_str()), (403, "cross_origin"));
    // An <img> or <script> tag sends no Origin, but fetch metadata says where it came from.
    let tag = server.request(
        "GET",
        "/api/v2/session-start?project=demo",
        &[("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "no-cors")],
        None,
    );
    assert_eq!(tag.status, 403);
    // A browser that sends neither header: the content type still keeps forms out.
    for content_type in ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"] {
        let blind = server.request("POST", &approve, &[("Content-Type", content_type)], Some("{}"));
        assert_eq!((blind.status, blind.error_code().as_str()), (415, "unsupported_media_type"), "{content_type}");
        let created = server.request(
            "POST",
            "/api/v2/items?project=demo",
            &[("Content-Type", content_type)],
            Some(&json!({"title": "planted", "content": "by a form"}).to_string()),
        );
        assert_eq!(created.status, 415, "{content_type}");
    }
    let bare = server.request("POST", &approve, &[], None);
    assert_eq!(bare.status, 415, "a POST without a content type");
    assert_eq!(env.export(), before, "a refused request changed the store");

    // A link from another site still opens the dashboard page.
    let navigation =
        server.request("GET", "/", &[("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "navigate")], None);
    assert_eq!(navigation.status, 200);
    // The dashboard's own request (same origin, as chromium sends it) goes through.
    let own_origin = format!("http://{}", server.address);
    let own = server.request(
        "POST",
        &approve,
        &[("Origin", &own_origin), ("Sec-Fetch-Site", "same-origin"), ("Content-Type", "application/json")],
        None,
    );
    assert_eq!((own.status, own.json()["status"].as_str()), (200, Some("approved")), "{}", own.text());
    let localhost = server.request("GET", "/healthz", &[("Host", &format!("localhost:{port}"))], None);
    assert_eq!(localhost.status, 200, "localhost names a loopback server");
}

#[test]
fn configured_names_and_origins_are_accepted_and_bad_entries_refused_at_start() {
    let env = seeded();
    std::fs::write(
        env.home.join("config.toml"),
        "[serve]\nallowed_hosts = [\"brain.test\"]\nallowed_origins = [\"https://app.example\"]\n",
    )
    .unwrap();
    let server = Server::start(&env, &[]);
    let named = server.request("GET", "/api/v2/brain?project=demo", &[("Host", "brain.test:7077")], None);
    assert_eq!(named.status, 200, "{}", named.text());
    let created = server.request(
        "POST",
        "/api/v2/items?project=demo",
        &[("Origin", "https://app.example"), ("Content-Type", "application/json")],
        Some(&json!({"title": "From the team app", "content": "allowed origin"}).to_string()),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(created.header("access-control-allow-origin"), Some("https://app.example"), "the app may read it");
    let other = server.request("GET", "/healthz", &[("Origin", "https://app.example:8443")], None);
    assert_eq!(other.status, 403, "another port is another origin");
    // The browser's preflight for a JSON write with a token, answered without a token.
    let preflight = server.request(
        "OPTIONS",
        "/api/v2/items?project=demo",
        &[
            ("Origin", "https://app.example"),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "authorization,content-type"),
        ],
        None,
    );
    assert!(preflight.status < 300, "{} {}", preflight.status, preflight.text());
    assert_eq!(preflight.header("access-control-allow-origin"), Some("https://app.example"));
    let methods = preflight.header("access-control-allow-methods").unwrap_or("");
    let headers = preflight.header("access-control-allow-headers").unwrap_or("").to_ascii_lowercase();
    assert!(methods.contains("POST") && headers.contains("authorization") && headers.contains("content-type"));
    let foreign = server.request(
        "OPTIONS",
        "/api/v2/items?project=demo",
        &[("Origin", "https://evil.example"), ("Access-Control-Request-Method", "POST")],
        None,
    );
    assert_eq!(foreign.status, 403, "no preflight for an origin not listed");
    assert!(foreign.header("access-control-allow-origin").is_none());
    drop(server);

    std::fs::write(env.home.join("config.toml"), "[serve]\nallowed_hosts = [\"two words\"]\n").unwrap();
    let refused = env.brain().args(["serve", "--listen", "127.0.0.1:0"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("allowed_hosts") && stderr.contains("two words"), "{stderr}");
    // Like every [serve] key, not from a project file.
    std::fs::remove_file(env.home.join("config.toml")).unwrap();
    std::fs::write(
        env.project_dir.join(".brain.toml"),
        "project = \"demo\"\n[serve]\nallowed_hosts = [\"evil.example\"]\n",
    )
    .unwrap();
    let project_file = env.brain().args(["serve", "--listen", "127.0.0.1:0"]).output().unwrap();
    assert_eq!(project_file.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&project_file.stderr).contains("not allowed in a project file"));
}

/// Whether the server closes `stream` (EOF or reset) before `limit`, reading and discarding
/// whatever it sends first.
fn closed_by_server(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(err) if err.kind() == ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn partial_headers_and_idle_sockets_cannot_starve_a_server_with_few_files() {
    let env = seeded();
    std::fs::write(env.home.join("config.toml"), "[serve]\nheader_timeout_secs = 2\n").unwrap();
    // 256 files: fewer than the sockets below, as in the report (368 sockets against 256).
    let server = Server::start_with_file_limit(&env, &[], 256);
    let partial = format!("GET /api/v2/brain?project=demo HTTP/1.1\r\nHost: {}\r\nX-Slow: ", server.address);
    let mut held: Vec<TcpStream> = (0..400)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.address).unwrap();
            stream.write_all(partial.as_bytes()).unwrap();
            stream
        })
        .collect();
    // A normal client is served at once: idle connections make room for it.
    let served = server.get("/api/v2/brain?project=demo");
    assert_eq!(served.status, 200, "{}", served.text());
    let metrics = server.get("/metrics").text();
    assert!(metric(&metrics, "brain_http_connections_closed_total{reason=\"evicted\"}") >= 144.0, "{metrics}");
    let open = metric(&metrics, "brain_http_connections ");
    assert!(open <= 180.0, "more connections than the file limit leaves room for: {open}");
    // The newest partial head is closed once its deadline passes, no request ever made.
    let newest = held.last_mut().unwrap();
    assert!(closed_by_server(newest, Duration::from_secs(30)), "a partial head was kept open");
    let metrics = server.get("/metrics").text();
    assert!(metric(&metrics, "brain_http_connections_closed_total{reason=\"header_timeout\"}") >= 1.0, "{metrics}");

    // An idle keep-alive connection is closed the same way after its last response.
    let mut idle = TcpStream::connect(&server.address).unwrap();
    write!(idle, "GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", server.address).unwrap();
    let mut reader = BufReader::new(idle.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(closed_by_server(&mut idle, Duration::from_secs(30)), "an idle keep-alive connection was kept open");
    assert_eq!(server.get("/healthz").status, 200);
}

/// Writes `bytes` on a fresh connection and parses what comes back before the server closes
/// it (or stops sending for 10 s).
fn raw_exchange(address: &str, bytes: &[u8]) -> crate::serve::Response {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The server may answer and close before it has read everything: ignore write errors.
    let _ = stream.write_all(bytes);
    let mut raw = Vec::new();
    let mut buffer = [0u8; 8192];
    while let Ok(count) = stream.read(&mut buffer) {
        if count == 0 {
            break;
        }
        raw.extend_from_slice(&buffer[..count]);
    }
    crate::serve::parse_response(&raw)
}

#[test]
fn malformed_and_oversized_requests_get_json_errors_even_from_the_http_layer() {
    let env = seeded();
    let before = env.export();
    let server = Server::start(&env, &[]);
    let host = server.address.clone();
    let head = |target: &str, extra: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n").into_bytes()
    };
    let many_headers: String = (0..150).map(|i| format!("X-Header-{i}: v\r\n")).collect();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("a request line that is not HTTP", b"GARBAGE\r\n\r\n".to_vec(), 400, "malformed_request"),
        ("a header line without a colon", head("/healthz", "Bad Header\r\n"), 400, "malformed_request"),
        (
            "a Content-Length that is not a number",
            head("/healthz", "Content-Length: many\r\n"),
            400,
            "malformed_request",
        ),
        ("a URI over 16 KiB", head(&format!("/healthz?{}", "a".repeat(20_000)), ""), 414, "uri_too_long"),
        (
            "a query over 16 KiB",
            head(&format!("/api/v2/search?project=demo&q={}", "wal+".repeat(5_000)), ""),
            414,
            "uri_too_long",
        ),
        (
            "a header of 100 KiB",
            head("/healthz", &format!("X-Big: {}\r\n", "v".repeat(100_000))),
            431,
            "headers_too_large",
        ),
        ("150 headers", head("/healthz", &many_headers), 431, "headers_too_large"),
    ];
    for (what, bytes, status, code) in cases {
        let response = raw_exchange(&server.address, &bytes);
        assert_eq!(response.status, status, "{what}: {}", response.text());
        assert_eq!(response.header("content-type"), Some("application/json"), "{what}");
        assert_eq!(response.error_code(), code, "{what}");
    }
    // A bad request after a good one on the same connection: both answered, the second in JSON.
    let keep_alive = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes();
    let pipelined = [keep_alive, b"NOT HTTP AT ALL\r\n\r\n".to_vec()].concat();
    let mut stream = TcpStream::connect(&server.address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(&pipelined).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let second = text.find("HTTP/1.1 400").unwrap_or_else(|| panic!("no 400 after the 200: {text}"));
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert_eq!(crate::serve::parse_response(&raw[second..]).error_code(), "malformed_request");

    // JSON nested 100,000 deep (100 KB, under the body limit): refused, not a stack overflow.
    let deep = format!("{{\"title\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let response =
        server.request("POST", "/api/v2/items?project=demo", &[("Content-Type", "application/json")], Some(&deep));
    assert_eq!((response.status, response.error_code().as_str()), (400, "invalid_body"), "{}", response.text());
    let too_big = format!("{{\"title\": \"x\", \"content\": \"{}\"}}", "a".repeat(1_100_000));
    let response =
        server.request("POST", "/api/v2/items?project=demo", &[("Content-Type", "application/json")], Some(&too_big));
    assert_eq!((response.status, response.error_code().as_str()), (413, "body_too_large"));
    assert_eq!(env.export(), before, "a refused request changed the store");
    assert_eq!(server.get("/healthz").status, 200, "the server survived");
}

/// One request on a fresh connection: the status and, for an error, its code. An event
/// stream is not read past its head (it never ends).
fn exchange(address: &str, method: &str, target: &str, headers: &[(&str, &str)], body: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(&request_bytes(address, method, target, headers, body)).unwrap();
    let mut raw = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let count = stream.read(&mut buffer).unwrap();
        raw.extend_from_slice(&buffer[..count]);
        let head_done = raw.windows(4).any(|window| window == b"\r\n\r\n");
        let streaming = head_done && String::from_utf8_lossy(&raw).to_ascii_lowercase().contains("text/event-stream");
        if count == 0 || streaming {
            break;
        }
    }
    let response = crate::serve::parse_response(&raw);
    let code = if response.status >= 400 { response.error_code() } else { String::new() };
    (response.status, code)
}

/// One row of the matrix: a route of the table, a concrete request for it, the token that
/// owns it and the status of every column.
struct Row<'a> {
    method: &'static str,
    path: &'static str,
    target: String,
    body: Option<&'a str>,
    own: &'static str,
    cells: [u16; 6],
}

fn row<'a>(
    method: &'static str,
    path: &'static str,
    target: impl Into<String>,
    body: Option<&'a str>,
    own: &'static str,
    cells: [u16; 6],
) -> Row<'a> {
    Row { method, path, target: target.into(), body, own, cells }
}

/// The columns of the matrix: who calls, and how.
const COLUMNS: [&str; 6] =
    ["no token", "wrong token", "token of another scope", "foreign Host", "cross-site Origin", "own token"];

/// The error code each refusal must carry, by column (the own-token column states its own).
fn refusal_code(column: usize, status: u16) -> Option<&'static str> {
    match (column, status) {
        (0 | 1, 401) => Some("unauthorized"),
        (2, 403) => Some("forbidden"),
        (3, 421) => Some("host_not_allowed"),
        (4, 403) => Some("cross_origin"),
        _ => None,
    }
}

/// Every route of the table (`openapi::ROUTES`) × every column, with the status each cell
/// must answer. A route in the table without a row here fails the test (a new route cannot
/// be forgotten), and so does a row for a route the table does not have. The server has
/// three tokens: reader (read project/demo), writer (write project/*), other (project/web).
#[test]
fn the_security_matrix_of_every_route() {
    use crate::serve::{OTHER, READER, WRITER, with_tokens};
    let env = seeded();
    with_tokens(&env);
    let item =
        |title: &str, status: &str| env.remember(&["--title", title, "--content", "matrix item", "--status", status]);
    let read_id = item("Read me", "approved");
    let patch_id = item("Patch me", "approved");
    let delete_id = item("Archive me", "approved");
    let approve_id = item("Approve me", "draft");
    let deprecate_id = item("Deprecate me", "approved");
    let server = Server::start(&env, &[]);
    let port = server.address.rsplit(':').next().unwrap().to_string();
    let foreign_host = format!("evil.example:{port}");
    let draft = json!({"title": "Matrix", "content": "created by the matrix"}).to_string();
    let patch = json!({"importance": 5}).to_string();
    let marker = json!({"type": "lesson", "text": "a lesson for the inbox"}).to_string();
    // A deletion of an item the server never had: accepted, nothing to write.
    let push = json!({"changes": [{"id": "mem_01JD0000000000000000000000", "scope": "project/demo", "version": 1, "baseVersion": 0, "item": null}]}).to_string();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let item_path = |id: &str, action: &str| format!("/api/v2/items/{id}{action}");
    // (method, table path, target, body, own token, [statuses by column])
    let rows: Vec<Row> = vec![
        row("get", "/api/v2/brain", "/api/v2/brain?project=demo", None, READER, [401, 401, 403, 421, 403, 200]),
        row(
            "get",
            "/api/v2/session-start",
            "/api/v2/session-start?project=demo",
            None,
            READER,
            [401, 401, 403, 421, 403, 200],
        ),
        row(
            "get",
            "/api/v2/context-pack",
            "/api/v2/context-pack?project=demo&task=wal",
            None,
            READER,
            [401, 401, 403, 421, 403, 200],
        ),
        row("get", "/api/v2/search", "/api/v2/search?project=demo&q=wal", None, READER, [401, 401, 403, 421, 403, 200]),
        row("get", "/api/v2/items", "/api/v2/items?project=demo", None, READER, [401, 401, 403, 421, 403, 200]),
        row(
            "post",
            "/api/v2/items",
            "/api/v2/items?project=demo",
            Some(&draft),
            WRITER,
            [401, 401, 403, 421, 403, 201],
        ),
        row("get", "/api/v2/items/{id}", item_path(&read_id, ""), None, READER, [401, 401, 403, 421, 403, 200]),
        row(
            "patch",
            "/api/v2/items/{id}",
            item_path(&patch_id, ""),
            Some(&patch),
            WRITER,
            [401, 401, 403, 421, 403, 200],
        ),
        row("delete", "/api/v2/items/{id}", item_path(&delete_id, ""), None, WRITER, [401, 401, 403, 421, 403, 200]),
        row(
            "post",
            "/api/v2/items/{id}/approve",
            item_path(&approve_id, "/approve"),
            None,
            WRITER,
            [401, 401, 403, 421, 403, 200],
        ),
        row(
            "post",
            "/api/v2/items/{id}/deprecate",
            item_path(&deprecate_id, "/deprecate"),
            None,
            WRITER,
            [401, 401, 403, 421, 403, 200],
        ),
        row("get", "/api/v2/arcs", "/api/v2/arcs?project=demo", None, READER, [401, 401, 403, 421, 403, 200]),
        row("get", "/api/v2/use", "/api/v2/use?project=demo", None, READER, [401, 401, 403, 421, 403, 200]),
        // No vault in this home: the reader is let through to a 404.
        row("get", "/api/v2/feed/{name}", "/api/v2/feed/hot-arcs.md", None, READER, [401, 401, 403, 421, 403, 404]),
        row("get", "/api/v2/events", "/api/v2/events", None, READER, [401, 401, 403, 421, 403, 200]),
        row("get", "/healthz", "/healthz", None, READER, [200, 200, 200, 421, 403, 200]),
        row("get", "/readyz", "/readyz", None, READER, [200, 200, 200, 421, 403, 200]),
        // The tick record is global (any valid token reads global); running one needs a write
        // grant on global, which no token of the matrix has.
        row("get", "/api/v2/tick", "/api/v2/tick", None, READER, [401, 401, 200, 421, 403, 200]),
        row("get", "/api/v2/signals", "/api/v2/signals?project=demo", None, READER, [401, 401, 403, 421, 403, 200]),
        row("post", "/api/v2/tick", "/api/v2/tick", Some("{}"), WRITER, [401, 401, 403, 421, 403, 403]),
        // A block for the inbox needs a write grant on global, which no token of the matrix has
        // (an arc's block needs its project's: tests/it/vault_mark.rs).
        row("post", "/api/v2/markers", "/api/v2/markers", Some(&marker), WRITER, [401, 401, 403, 421, 403, 403]),
        // Sync pushes need the write grant on each change's scope, pulls the read grant on each
        // scope named (wildcards are narrowed to the grants).
        row("post", "/api/v2/sync/push", "/api/v2/sync/push", Some(&push), WRITER, [401, 401, 403, 421, 403, 200]),
        row(
            "get",
            "/api/v2/sync/pull",
            "/api/v2/sync/pull?scopes=project/demo",
            None,
            READER,
            [401, 401, 403, 421, 403, 200],
        ),
        // Any valid token may read the metrics (they hold no store text).
        row("get", "/metrics", "/metrics", None, READER, [401, 401, 200, 421, 403, 200]),
        row("get", "/openapi.json", "/openapi.json", None, READER, [200, 200, 200, 421, 403, 200]),
        // MCP needs the read grant on the server's project; each tool checks its own scopes and
        // items (mcp_tools_over_http_apply_the_tokens_grants_to_every_scope_and_item).
        row("post", "/mcp", "/mcp", Some(init), WRITER, [401, 401, 403, 421, 403, 200]),
        // Without a session id, rmcp refuses the stream and the session end.
        row("get", "/mcp", "/mcp", None, WRITER, [401, 401, 403, 421, 403, 400]),
        row("delete", "/mcp", "/mcp", None, WRITER, [401, 401, 403, 421, 403, 400]),
        row("get", "/", "/", None, READER, [200, 200, 200, 421, 403, 200]),
        row("get", "/assets/app.js", "/assets/app.js", None, READER, [200, 200, 200, 421, 403, 200]),
        row("get", "/assets/style.css", "/assets/style.css", None, READER, [200, 200, 200, 421, 403, 200]),
        row("get", "/favicon.svg", "/favicon.svg", None, READER, [200, 200, 200, 421, 403, 200]),
    ];
    let table: Vec<(&str, &str)> =
        brain_serve::openapi::ROUTES.iter().map(|route| (route.method, route.path)).collect();
    for (method, path) in &table {
        assert!(
            rows.iter().any(|row| (row.method, row.path) == (*method, *path)),
            "{method} {path} is routed but the security matrix has no row for it: add one with the status of every column"
        );
    }
    for row in &rows {
        assert!(
            table.contains(&(row.method, row.path)),
            "the matrix has a row for {} {}, which is not in the table",
            row.method,
            row.path
        );
    }

    let call = |row: &Row, column: usize| {
        let own = format!("Bearer {}", row.own);
        let other = format!("Bearer {OTHER}");
        let mut headers: Vec<(&str, &str)> =
            vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
        match column {
            0 => {}
            1 => headers.push(("Authorization", "Bearer wrong-token-0123456789")),
            2 => headers.push(("Authorization", &other)),
            3 => headers.extend([("Authorization", own.as_str()), ("Host", foreign_host.as_str())]),
            4 => headers.extend([("Authorization", own.as_str()), ("Origin", "http://evil.example")]),
            _ => headers.push(("Authorization", &own)),
        }
        exchange(&server.address, &row.method.to_uppercase(), &row.target, &headers, row.body)
    };
    let mut failures = Vec::new();
    let before = env.export();
    // Every refusal first: none may change the store. Then the own token, which may.
    for (column, name) in COLUMNS.iter().enumerate() {
        if column == COLUMNS.len() - 1 {
            assert_eq!(env.export(), before, "a refused request changed the store");
        }
        for row in &rows {
            let expected = row.cells[column];
            let (status, code) = call(row, column);
            let code_ok = refusal_code(column, status).is_none_or(|wanted| wanted == code);
            if status != expected || !code_ok {
                failures
                    .push(format!("{} {} with {name}: {status} {code:?}, expected {expected}", row.method, row.target));
            }
        }
    }
    assert!(failures.is_empty(), "cells that differ:\n{}", failures.join("\n"));

    // No other method is served on a documented path.
    let mut paths: Vec<&str> = rows.iter().map(|row| row.path).collect();
    paths.dedup();
    for path in paths {
        let target = rows.iter().find(|row| row.path == path).map(|row| row.target.clone()).unwrap();
        let own = format!("Bearer {WRITER}");
        let headers = [("Authorization", own.as_str()), ("Content-Type", "application/json")];
        let (status, _) = exchange(&server.address, "PUT", &target, &headers, Some("{}"));
        assert_eq!(status, 405, "PUT {path}");
    }
}

#[test]
fn mcp_answers_bad_bodies_with_json_rpc_errors_and_checks_origin() {
    let env = seeded();
    std::fs::write(env.home.join("config.toml"), "[serve]\nmax_body_bytes = 300000\n").unwrap();
    let server = Server::start(&env, &[]);
    let post = |body: &str, extra: &[(&str, &str)]| {
        let mut headers = vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
        headers.extend_from_slice(extra);
        server.request("POST", "/mcp", &headers, Some(body))
    };
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"brain_search","arguments":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases = [
        (r#"{"jsonrpc":"2.0","id":1,"method":"#.to_string(), -32700, "truncated JSON"),
        ("not json at all".to_string(), -32700, "not JSON"),
        (deep, -32700, "JSON nested 100,000 deep"),
        (r#"{"hello":"world"}"#.to_string(), -32600, "JSON that is no JSON-RPC message"),
    ];
    for (body, code, what) in cases {
        let response = post(&body, &[]);
        assert_eq!(response.status, 400, "{what}: {}", response.text());
        assert_eq!(response.header("content-type"), Some("application/json"), "{what}");
        let answer = response.json();
        assert_eq!(
            (answer["jsonrpc"].as_str(), answer["error"]["code"].as_i64()),
            (Some("2.0"), Some(code)),
            "{what}: {answer}"
        );
        assert!(answer["id"].is_null() && answer["error"]["message"].is_string(), "{what}: {answer}");
    }
    let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(400_000));
    let too_big = post(&big, &[]);
    assert_eq!((too_big.status, too_big.error_code().as_str()), (413, "body_too_large"));
    let plain = server.request("POST", "/mcp", &[("Content-Type", "text/plain")], Some(r#"{"jsonrpc":"2.0"}"#));
    assert_eq!(plain.status, 415);

    // Origin, as the MCP transport spec asks: a foreign one is 403, the server's own passes.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    for origin in ["http://evil.example", "null", "http://localhost:1"] {
        let refused = post(init, &[("Origin", origin)]);
        assert_eq!((refused.status, refused.error_code().as_str()), (403, "cross_origin"), "{origin}");
    }
    let own = format!("http://{}", server.address);
    let accepted = post(init, &[("Origin", &own)]);
    assert_eq!(accepted.status, 200, "{}", accepted.text());
    assert!(accepted.text().contains("\"serverInfo\""), "{}", accepted.text());
    assert_eq!(server.get("/healthz").status, 200);
}

/// A vault shared by two projects: alpha's arc, beta's arc (a critical signal, one marked
/// `scope=global`), and a note without a project.
pub fn two_project_vault(env: &Env) -> crate::vault_support::Vault {
    let vault = crate::vault_support::Vault::new(env);
    vault.write(
        "clusters/2026-11-20/2026-11-20-alpha-checkout-aaaaaaaaaaaa.md",
        "---\ncluster_id: 2026-11-20-alpha-checkout-aaaaaaaaaaaa\ntitle: Alpha checkout rewrite\nstatus: active\n\
         created: 2026-11-20T09:00:00Z\nsummary: Alpha carts move to the new service\nproject: alpha\n---\n\n\
         <!-- @lesson -->\nAlpha lesson: carts expire after an hour.\n<!-- @/lesson -->\n\n\
         <!-- @signal severity=warning source=alpha-ci -->\nAlpha cache warms slowly.\n<!-- @/signal -->\n\n\
         <!-- @inject target=claude.md -->\nAlpha inject: run the checkout suite.\n<!-- @/inject -->\n",
    );
    vault.write(
        "clusters/2026-11-20/2026-11-20-beta-billing-bbbbbbbbbbbb.md",
        "---\ncluster_id: 2026-11-20-beta-billing-bbbbbbbbbbbb\ntitle: Beta billing migration\nstatus: active\n\
         created: 2026-11-20T08:00:00Z\nsummary: Beta invoices move to the ledger\nproject: beta\n---\n\n\
         <!-- @lesson -->\nBeta lesson: invoices are immutable.\n<!-- @/lesson -->\n\n\
         <!-- @signal severity=critical source=ledger -->\nBeta ledger drift detected.\n<!-- @/signal -->\n\n\
         <!-- @signal severity=warning source=ops scope=global -->\nShared runner pool is degraded.\n<!-- @/signal -->\n\n\
         <!-- @inject target=claude.md -->\nBeta inject: freeze invoices.\n<!-- @/inject -->\n",
    );
    vault.write(
        "clusters/2026-11-19/2026-11-19-team-standup-cccccccccccc.md",
        "---\ncluster_id: 2026-11-19-team-standup-cccccccccccc\ntitle: Team standup notes\nstatus: active\n\
         created: 2026-11-19T09:00:00Z\n---\n\nEveryone's arc.\n",
    );
    env.brain().args(["vault", "scan", "--vault", vault.arg()]).assert().success();
    env.brain().args(["tick", "--vault", vault.arg(), "--no-ai"]).assert().success();
    vault
}

/// Text of project beta that a reader of project alpha must never get.
pub const BETA_ONLY: [&str; 5] =
    ["Beta billing migration", "Beta ledger drift", "Beta inject", "Beta lesson", "Beta invoices move"];

/// Issue 11 item 7: vault content is authorized against the data's project. A token of
/// project alpha gets alpha's arcs, blocks and signals (and those of everyone) on every route
/// and never a title or signal text of beta's; the whole-vault feed files need grants on
/// every project; a token of beta reads beta's feed.
#[test]
fn a_token_of_one_project_never_reads_another_projects_vault_content() {
    const ALPHA: &str = "alpha-reader-0123456789";
    const BETA: &str = "beta-reader-01234567890";
    const ALL: &str = "all-projects-0123456789";
    let env = seeded();
    let vault = two_project_vault(&env);
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[vault]\npath = {:?}\n\n\
             [[serve.tokens]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nread = [\"project/alpha\"]\n\n\
             [[serve.tokens]]\nname = \"beta\"\ntoken = \"{BETA}\"\nread = [\"project/beta\"]\n\n\
             [[serve.tokens]]\nname = \"all\"\ntoken = \"{ALL}\"\nread = [\"project/*\"]\n",
            vault.arg()
        ),
    )
    .unwrap();
    let server = Server::start(&env, &[]);
    let get = |token: &str, path: &str| {
        let auth = format!("Bearer {token}");
        let response = server.request("GET", path, &[("Authorization", &auth)], None);
        (response.status, response.text())
    };
    let beta_signal = env
        .json(&["list", "--scope", "project/beta", "--kind", "signal"])
        .as_array()
        .and_then(|items| items.iter().find(|item| item["title"].as_str().unwrap_or("").contains("ledger")).cloned())
        .unwrap_or_else(|| panic!("beta's signal is indexed"))["id"]
        .as_str()
        .unwrap()
        .to_string();

    // Every route that carries vault text, for alpha.
    let routes = [
        ("/api/v2/arcs?project=alpha", vec!["Alpha checkout rewrite", "Team standup notes"]),
        // hot-arcs.md names arcs by cluster_id and says what they are (summary, else title).
        (
            "/api/v2/feed/hot-arcs.md?project=alpha",
            vec!["2026-11-20-alpha-checkout-aaaaaaaaaaaa", "Alpha carts move to the new service", "Team standup notes"],
        ),
        ("/api/v2/feed/signals.md?project=alpha", vec!["Alpha cache warms slowly", "Shared runner pool is degraded"]),
        ("/api/v2/feed/inject.md?project=alpha", vec!["Alpha inject: run the checkout suite"]),
        (
            "/api/v2/session-start?project=alpha",
            vec!["Alpha checkout rewrite", "Alpha cache warms slowly", "Shared runner pool is degraded"],
        ),
        ("/api/v2/brain?project=alpha", vec!["Alpha checkout rewrite"]),
        ("/api/v2/context-pack?project=alpha&task=billing%20ledger%20invoices", vec!["Alpha checkout rewrite"]),
        ("/api/v2/search?project=alpha&q=beta%20billing%20ledger%20invoices%20lesson", vec![]),
        ("/api/v2/items?project=alpha&limit=100", vec!["Alpha lesson", "Shared runner pool is degraded"]),
        ("/api/v2/signals?project=alpha", vec![]),
    ];
    for (path, wanted) in &routes {
        let (status, body) = get(ALPHA, path);
        assert_eq!(status, 200, "{path}: {body}");
        for text in wanted {
            assert!(body.contains(text), "{path} lacks {text:?}: {body}");
        }
        for text in BETA_ONLY {
            assert!(!body.contains(text), "{path} shows alpha's token beta's {text:?}: {body}");
        }
    }
    // hot-arcs.md names arcs by cluster_id: beta's never shows in alpha's.
    let (_, hot) = get(ALPHA, "/api/v2/feed/hot-arcs.md?project=alpha");
    assert!(!hot.contains("beta-billing"), "{hot}");
    // Asking for beta's, or for the whole vault's files, is refused; so is the item by id.
    for path in [
        "/api/v2/arcs?project=beta",
        "/api/v2/feed/signals.md?project=beta",
        "/api/v2/feed/hot-arcs.md",
        "/api/v2/feed/last-tick-diff.md?project=alpha",
        "/api/v2/feed/health.jsonl?project=alpha",
        "/api/v2/session-start?project=beta",
        "/api/v2/brain?project=beta",
        "/api/v2/tick",
        &format!("/api/v2/items/{beta_signal}"),
    ] {
        let (status, body) = get(ALPHA, path);
        assert_eq!(status, 403, "{path}: {body}");
        for text in BETA_ONLY {
            assert!(!body.contains(text), "{path} refused but showed {text:?}: {body}");
        }
    }

    // Beta's token reads beta's feed: authorized against the data's project, not the
    // server's default project (demo).
    let (status, signals) = get(BETA, "/api/v2/feed/signals.md?project=beta");
    assert_eq!(status, 200, "{signals}");
    assert!(signals.contains("Beta ledger drift detected") && signals.contains("Shared runner pool"), "{signals}");
    assert!(!signals.contains("Alpha cache"), "{signals}");
    let (status, arcs) = get(BETA, "/api/v2/arcs?project=beta");
    assert_eq!(status, 200, "{arcs}");
    let arcs: serde_json::Value = serde_json::from_str(&arcs).unwrap();
    let titles: Vec<(&str, &str)> = arcs["arcs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arc| (arc["title"].as_str().unwrap(), arc["project"].as_str().unwrap_or("-")))
        .collect();
    assert_eq!(titles, [("Beta billing migration", "beta"), ("Team standup notes", "-")]);
    let (status, signals) = get(BETA, "/api/v2/signals?project=beta");
    assert_eq!(status, 200);
    assert!(signals.contains("Beta ledger drift detected"), "beta's critical signal reaches beta: {signals}");
    // A grant on every project reads the whole-vault files.
    let (status, diff) = get(ALL, "/api/v2/feed/last-tick-diff.md?project=alpha");
    assert_eq!(status, 200, "{diff}");
    let (status, record) = get(ALL, "/api/v2/tick");
    assert_eq!(status, 200, "{record}");
}

/// The event stream follows the same rule: a new critical signal of beta's arc reaches the
/// streams that may read beta, never alpha's; a tick record (the whole vault) reaches only a
/// stream with a grant on every project.
#[test]
fn vault_signals_and_tick_records_reach_only_the_streams_that_may_read_them() {
    use crate::fleet::EventStream;
    const ALPHA: &str = "alpha-reader-0123456789";
    const ADMIN: &str = "admin-everything-0123456";
    let env = seeded();
    let vault = two_project_vault(&env);
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[serve]\nevents_poll_ms = 100\ntick_interval_secs = 0\n\n[vault]\npath = {:?}\n\n\
             [[serve.tokens]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nread = [\"project/alpha\"]\n\n\
             [[serve.tokens]]\nname = \"admin\"\ntoken = \"{ADMIN}\"\nwrite = [\"*\"]\n",
            vault.arg()
        ),
    )
    .unwrap();
    let server = Server::start(&env, &[]);
    // A token of alpha subscribes for alpha (not the server's default project).
    let refused = server.request("GET", "/api/v2/events", &[("Authorization", &format!("Bearer {ALPHA}"))], None);
    assert_eq!(refused.status, 403, "{}", refused.text());
    let mut alpha = EventStream::open_at(&server, Some(ALPHA), "/api/v2/events?project=alpha");
    let mut admin = EventStream::open(&server, Some(ADMIN));
    let beta = "clusters/2026-11-20/2026-11-20-beta-billing-bbbbbbbbbbbb.md";
    let text = vault.read(beta);
    vault.write(
        beta,
        format!("{text}\n<!-- @signal severity=critical source=ledger -->\nBeta ledger is read-only now.\n<!-- @/signal -->\n"),
    );
    env.brain().args(["vault", "scan", "--vault", vault.arg()]).assert().success();
    let limit = Duration::from_secs(10);
    assert!(admin.wait_for("Beta ledger is read-only now", limit), "{}", admin.seen);
    let ran = server.request(
        "POST",
        "/api/v2/tick",
        &[("Authorization", &format!("Bearer {ADMIN}")), ("Content-Type", "application/json")],
        Some("{}"),
    );
    assert_eq!(ran.status, 200, "{}", ran.text());
    assert!(admin.wait_for("event: tick", limit), "{}", admin.seen);
    assert!(!alpha.wait_for("event: tick", Duration::from_secs(2)), "alpha hears of the tick: {}", alpha.seen);
    for text in BETA_ONLY.iter().chain(&["Beta ledger is read-only"]) {
        assert!(!alpha.seen.contains(text), "alpha's stream carries beta's {text:?}: {}", alpha.seen);
    }
}

/// A client of `/mcp` over streamable HTTP with one bearer token: initialize, then tool calls
/// in that session.
struct McpHttp<'a> {
    server: &'a Server,
    bearer: String,
    session: String,
    next_id: u64,
}

/// The JSON-RPC message of an MCP answer, whether sent as JSON or as one server-sent event.
fn mcp_message(response: &crate::serve::Response) -> serde_json::Value {
    let text = response.text();
    let body = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| data.starts_with('{'))
        .unwrap_or(text.as_str())
        .to_string();
    serde_json::from_str(&body).unwrap_or_else(|err| panic!("not an MCP message ({err}): {text}"))
}

impl<'a> McpHttp<'a> {
    fn connect(server: &'a Server, token: &str) -> McpHttp<'a> {
        let bearer = format!("Bearer {token}");
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}"#;
        let response = server.request("POST", "/mcp", &McpHttp::headers(&bearer, None), Some(init));
        assert_eq!(response.status, 200, "initialize: {}", response.text());
        let session = response.header("mcp-session-id").expect("a session id").to_string();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let response = server.request("POST", "/mcp", &McpHttp::headers(&bearer, Some(&session)), Some(initialized));
        assert!(response.status < 300, "initialized: {} {}", response.status, response.text());
        McpHttp { server, bearer, session, next_id: 2 }
    }

    fn headers<'h>(bearer: &'h str, session: Option<&'h str>) -> Vec<(&'h str, &'h str)> {
        let mut headers = vec![
            ("Authorization", bearer),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
        }
        headers
    }

    /// Calls `tool`: Ok(its text content) or Err(the tool error's text).
    fn call(&mut self, tool: &str, arguments: serde_json::Value) -> Result<String, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
            .to_string();
        let response =
            self.server.request("POST", "/mcp", &McpHttp::headers(&self.bearer, Some(&self.session)), Some(&body));
        assert_eq!(response.status, 200, "{tool}: {}", response.text());
        let message = mcp_message(&response);
        let result = &message["result"];
        let text: String =
            result["content"].as_array().into_iter().flatten().filter_map(|block| block["text"].as_str()).collect();
        if result["isError"] == json!(true) { Err(text) } else { Ok(text) }
    }

    fn tool_names(&mut self) -> Vec<String> {
        let body = json!({"jsonrpc": "2.0", "id": 999, "method": "tools/list"}).to_string();
        let response =
            self.server.request("POST", "/mcp", &McpHttp::headers(&self.bearer, Some(&self.session)), Some(&body));
        let message = mcp_message(&response);
        message["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().into())
            .collect()
    }
}

/// Issue 27 item 1: every MCP tool over HTTP applies the token's grants to every scope it
/// reads or writes and every item it touches, through the same checks REST uses
/// (`brain_api::policy`). The server's project is `demo`; `demo-writer` may write (and so read)
/// `project/demo` only, `demo-reader` may read it only. Each tool is called with another
/// scope and with an item of another scope (and, where it writes, by the reader): every such
/// call is refused as forbidden and changes nothing, and the same calls on the caller's own
/// scope succeed. A tool without a row fails the test.
#[test]
fn mcp_tools_over_http_apply_the_tokens_grants_to_every_scope_and_item() {
    const DEMO_WRITER: &str = "demo-writer-secret-0123456789";
    const DEMO_READER: &str = "demo-reader-secret-0123456789";
    const DEMO_ARC: &str = "2026-11-20-demo-arc-aaaaaaaaaaaa";
    const BETA_ARC: &str = "2026-11-20-beta-arc-aaaaaaaaaaaa";
    let env = Env::new();
    let vault = crate::vault_support::Vault::new(&env);
    for project in ["demo", "beta"] {
        vault.write(
            &format!("clusters/2026-11-20/2026-11-20-{project}-arc-aaaaaaaaaaaa.md"),
            format!(
                "---\ncluster_id: 2026-11-20-{project}-arc-aaaaaaaaaaaa\ntitle: {project} arc\nstatus: active\n\
                 created: 2026-11-20T09:00:00Z\nproject: {project}\n---\n\nWork of {project}.\n"
            ),
        );
    }
    env.brain().args(["vault", "scan", "--vault", vault.arg()]).assert().success();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[vault]\npath = {:?}\n\n\
             [[serve.tokens]]\nname = \"demo-writer\"\ntoken = \"{DEMO_WRITER}\"\nwrite = [\"project/demo\"]\n\n\
             [[serve.tokens]]\nname = \"demo-reader\"\ntoken = \"{DEMO_READER}\"\nread = [\"project/demo\"]\n",
            vault.arg()
        ),
    )
    .unwrap();
    let item = |title: &str, scope: &str, status: &str| {
        env.remember(&["--title", title, "--content", "beacon matrix text", "--scope", scope, "--status", status])
    };
    let beta_draft = item("Beta draft beacon", "project/beta", "draft");
    let beta_item = item("Beta approved beacon", "project/beta", "approved");
    let global_item = item("Global beacon", "global", "approved");
    let demo_draft = item("Demo draft beacon", "project/demo", "draft");
    let demo_item = item("Demo approved beacon", "project/demo", "approved");
    let demo_other = item("Demo second beacon", "project/demo", "approved");
    let server = Server::start(&env, &[]);
    let mut writer = McpHttp::connect(&server, DEMO_WRITER);

    let remember = |scope: &str| json!({"title": "Planted", "content": "planted by the matrix", "scope": scope});
    let update = |id: &str, action: &str| json!({"id": id, "action": action});
    // (who, tool, arguments): each must be refused as forbidden.
    let refused: Vec<(&str, &str, serde_json::Value)> = vec![
        ("writer", "brain_remember", remember("global")),
        ("writer", "brain_remember", remember("project/beta")),
        ("writer", "brain_remember", remember("agent/bob")),
        ("writer", "brain_remember", remember("team/core")),
        ("reader", "brain_remember", remember("project/demo")),
        ("reader", "brain_remember", json!({"title": "Planted", "content": "no scope: the project"})),
        ("writer", "brain_update", update(&beta_draft, "approve")),
        ("writer", "brain_update", update(&beta_item, "deprecate")),
        ("writer", "brain_update", update(&global_item, "deprecate")),
        ("writer", "brain_update", json!({"id": beta_item, "action": "supersede", "by": demo_item})),
        ("writer", "brain_update", json!({"id": demo_item, "action": "supersede", "by": beta_item})),
        ("reader", "brain_update", update(&demo_draft, "approve")),
        ("reader", "brain_update", update(&demo_item, "deprecate")),
        ("reader", "brain_mark", json!({"type": "lesson", "text": "a reader's lesson", "arc": DEMO_ARC})),
        ("writer", "brain_feedback", json!({"id": beta_item, "useful": false})),
        ("writer", "brain_feedback", json!({"id": global_item, "useful": true})),
        ("reader", "brain_feedback", json!({"id": demo_item, "useful": true})),
        ("writer", "brain_get_memory", json!({"id": beta_item})),
        ("reader", "brain_get_memory", json!({"id": beta_draft})),
        ("writer", "brain_mark", json!({"type": "lesson", "text": "into beta's arc", "arc": BETA_ARC})),
        ("writer", "brain_mark", json!({"type": "lesson", "text": "into the global inbox"})),
    ];
    let before = env.export();
    // The writer's calls first, then the reader's (before issue 27, a writer's calls reached
    // every scope, and a reader could not open an MCP session at all).
    let refuse_all = |client: &mut McpHttp, who: &str| {
        let mut failures = Vec::new();
        for (_, tool, arguments) in refused.iter().filter(|row| row.0 == who) {
            match client.call(tool, arguments.clone()) {
                Err(text) if text.contains("(forbidden)") => {}
                other => failures.push(format!("{who} {tool} {arguments}: {other:?}")),
            }
        }
        assert!(failures.is_empty(), "calls that were not refused as forbidden:\n{}", failures.join("\n"));
    };
    refuse_all(&mut writer, "writer");
    let mut reader = McpHttp::connect(&server, DEMO_READER);
    refuse_all(&mut reader, "reader");
    assert_eq!(env.export(), before, "a refused MCP call changed the store");

    // Reads see the project and global, never another project's items.
    for client in [&mut writer, &mut reader] {
        let found = client.call("brain_search", json!({"query": "beacon", "limit": 50})).unwrap();
        assert!(found.contains(&demo_item) && found.contains(&global_item), "{found}");
        assert!(!found.contains(&beta_item) && !found.contains(&beta_draft), "{found}");
        let status = client.call("brain_status", json!({})).unwrap();
        let status: serde_json::Value = serde_json::from_str(&status).unwrap();
        // demo: one draft, two approved items and its arc; global: one approved. Beta's two
        // items and its arc are not counted.
        assert_eq!(
            (status["by_status"]["draft"].clone(), status["by_status"]["approved"].clone()),
            (json!(1), json!(4))
        );
        // The server's folders are not a token holder's business.
        assert!(status.get("home").is_none(), "{status}");
        assert!(!status.to_string().contains(&env.home.display().to_string()), "{status}");
        for tool in ["brain_session_start", "brain_get_memory", "brain_refresh"] {
            let text = client.call(tool, json!({})).unwrap();
            assert!(!text.contains("Beta approved beacon"), "{tool}: {text}");
        }
        let pack = client.call("brain_context_pack", json!({"task": "beacon", "token_budget": 2000})).unwrap();
        assert!(!pack.contains("Beta approved beacon"), "{pack}");
    }

    // The writer's own scope: the same tools succeed.
    let planted = writer.call("brain_remember", remember("project/demo")).unwrap();
    assert!(planted.contains("\"scope\":\"project/demo\""), "{planted}");
    writer.call("brain_update", update(&demo_draft, "approve")).unwrap();
    writer.call("brain_update", json!({"id": demo_item, "action": "supersede", "by": demo_other})).unwrap();
    let opened = writer.call("brain_get_memory", json!({"id": demo_item})).unwrap();
    assert!(opened.contains(&demo_item), "{opened}");
    let said = writer.call("brain_feedback", json!({"id": demo_item, "useful": true, "note": "it helped"})).unwrap();
    assert!(said.contains("\"verdict\":\"useful\""), "{said}");
    let marked = writer.call("brain_mark", json!({"type": "lesson", "text": "a lesson of demo", "arc": DEMO_ARC}));
    assert!(marked.is_ok(), "{marked:?}");
    assert!(vault.read(&format!("clusters/2026-11-20/{DEMO_ARC}.md")).contains("a lesson of demo"));
    assert!(!vault.read(&format!("clusters/2026-11-20/{BETA_ARC}.md")).contains("lesson"));

    // Every tool has a refused or read row above: a tool added later cannot be forgotten.
    let covered = [
        "brain_remember",
        "brain_update",
        "brain_mark",
        "brain_search",
        "brain_status",
        "brain_session_start",
        "brain_get_memory",
        "brain_refresh",
        "brain_context_pack",
        "brain_feedback",
    ];
    for tool in writer.tool_names() {
        assert!(covered.contains(&tool.as_str()), "{tool} has no row in the MCP grants matrix: add one");
    }
}

/// One write policy for every agent write (issue 27 item 1): with `write_policy = "draft"`, a
/// REST `POST /api/v2/items` lands as a draft like MCP's `brain_remember`, and asking for
/// `approved` is refused with nothing stored (it was stored approved before).
#[test]
fn the_write_policy_is_the_same_for_rest_and_mcp() {
    let env = Env::new();
    std::fs::write(env.home.join("config.toml"), "write_policy = \"draft\"\n").unwrap();
    let server = Server::start(&env, &[]);
    let headers = [("Content-Type", "application/json")];
    let before = env.export();
    let approved = json!({"title": "Sneaky", "content": "asks to skip review", "status": "approved"}).to_string();
    let refused = server.request("POST", "/api/v2/items?project=demo", &headers, Some(&approved));
    assert_eq!((refused.status, refused.error_code().as_str()), (403, "forbidden"), "{}", refused.text());
    assert_eq!(env.export(), before);
    let plain = json!({"title": "Plain", "content": "no status asked"}).to_string();
    let created = server.request("POST", "/api/v2/items?project=demo", &headers, Some(&plain));
    assert_eq!((created.status, created.json()["status"].clone()), (201, json!("draft")), "{}", created.text());
}

/// MCP sessions over HTTP are bounded (each holds a worker until closed or idle for five
/// minutes; without a bound one token opened thousands and the server grew by gigabytes):
/// one token opens at most a quarter of `[serve] max_mcp_sessions` (429, a JSON error naming
/// the setting), another token still opens its own, a closed session makes room again, and a
/// session answers only the token that opened it — another token naming its id gets 404.
#[test]
fn mcp_sessions_are_bounded_per_token_and_belong_to_the_token_that_opened_them() {
    const ALPHA: &str = "alpha-agent-secret-0123456789";
    const BETA: &str = "beta-agent-secret-0123456789";
    let env = Env::new();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[serve]\nmax_mcp_sessions = 8\n\n\
             [[serve.tokens]]\nname = \"alpha\"\ntoken = \"{ALPHA}\"\nread = [\"project/demo\"]\n\n\
             [[serve.tokens]]\nname = \"beta\"\ntoken = \"{BETA}\"\nread = [\"project/demo\"]\n"
        ),
    )
    .unwrap();
    let server = Server::start(&env, &[]);
    let mut alpha: Vec<McpHttp<'_>> = (0..2).map(|_| McpHttp::connect(&server, ALPHA)).collect();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let alpha_bearer = format!("Bearer {ALPHA}");
    let refused = server.request("POST", "/mcp", &McpHttp::headers(&alpha_bearer, None), Some(init));
    assert_eq!(refused.status, 429, "a third session of one token: {}", refused.text());
    let error: serde_json::Value = serde_json::from_str(&refused.text()).unwrap();
    assert_eq!(error["error"]["code"], "too_many_sessions", "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("max_mcp_sessions"), "{error}");
    assert!(refused.header("retry-after").is_some(), "a refusal says when to retry");

    // Another token has its own share, and its tools work.
    let mut beta = McpHttp::connect(&server, BETA);
    assert!(beta.tool_names().contains(&"brain_search".to_string()));

    // Beta cannot use or close alpha's session by its id.
    let stolen = alpha[0].session.clone();
    let beta_bearer = format!("Bearer {BETA}");
    let list = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
    let response = server.request("POST", "/mcp", &McpHttp::headers(&beta_bearer, Some(&stolen)), Some(list));
    assert_eq!(response.status, 404, "another token's session: {}", response.text());
    let response = server.request("DELETE", "/mcp", &McpHttp::headers(&beta_bearer, Some(&stolen)), None);
    assert_eq!(response.status, 404, "closing another token's session: {}", response.text());
    assert!(alpha[0].tool_names().contains(&"brain_search".to_string()), "alpha's session lives on");

    // Alpha closes one of its sessions: it may open another.
    let closed = alpha.pop().unwrap();
    let response = server.request("DELETE", "/mcp", &McpHttp::headers(&alpha_bearer, Some(&closed.session)), None);
    assert!(response.status < 300, "closing its own session: {} {}", response.status, response.text());
    let mut again = McpHttp::connect(&server, ALPHA);
    assert!(again.tool_names().contains(&"brain_search".to_string()));
}

/// The third hostile round: a write naming a `vault:` source made an item read-only
/// everywhere (the rule for items the vault indexer derives from files), so an agent could
/// plant a pinned item nobody could edit, deprecate or unpin — only `forget --hard` removed
/// it. REST create and edit and a sync push refuse such a source, and nothing is written.
#[test]
fn an_agents_write_cannot_claim_a_vault_source() {
    let env = Env::new();
    let server = Server::start(&env, &[]);
    let planted = server.json(
        "POST",
        "/api/v2/items?project=demo",
        &json!({"title": "Planted pin", "content": "obey", "pinned": true, "source": "vault:notes/fake.md"}),
    );
    assert_eq!(planted.status, 400, "{}", planted.text());
    assert!(planted.text().contains("reserved"), "{}", planted.text());
    assert!(!server.get("/api/v2/items?project=demo").text().contains("Planted pin"), "nothing was written");

    let created = server.json("POST", "/api/v2/items?project=demo", &json!({"title": "Honest note", "content": "c"}));
    assert_eq!(created.status, 201, "{}", created.text());
    let item = created.json();
    let id = item["id"].as_str().unwrap().to_string();
    let patched = server.json("PATCH", &format!("/api/v2/items/{id}"), &json!({"source": "vault:notes/fake.md"}));
    assert_eq!(patched.status, 400, "{}", patched.text());
    let stored = server.get(&format!("/api/v2/items/{id}")).json();
    assert_ne!(stored["source"], "vault:notes/fake.md", "{stored}");

    let mut pushed = stored.clone();
    pushed["id"] = json!("mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T");
    pushed["source"] = json!("vault:notes/fake.md");
    pushed["pinned"] = json!(true);
    let scope = pushed["scope"].as_str().unwrap().to_string();
    let change = json!({"changes": [{"id": "mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T", "scope": scope, "version": 1,
                                     "baseVersion": 0, "item": pushed}]});
    let response = server.json("POST", "/api/v2/sync/push?project=demo", &change);
    assert!(response.text().contains("reserved"), "{} {}", response.status, response.text());
    assert_eq!(server.get("/api/v2/items/mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T").status, 404, "nothing was written");
}

/// The third hostile round: a hard DELETE with a wrong `If-Match` answered 412 with the
/// stored version before it checked the caller's grant, so a token that may not read an item
/// learned its version. The grant is checked first: 403, and no version.
#[test]
fn a_hard_delete_of_an_item_the_caller_may_not_touch_tells_it_nothing_of_the_version() {
    const READER: &str = "demo-reader-secret-0123456789";
    let env = Env::new();
    std::fs::write(
        env.home.join("config.toml"),
        format!("[[serve.tokens]]\nname = \"demo-reader\"\ntoken = \"{READER}\"\nread = [\"project/demo\"]\n"),
    )
    .unwrap();
    let beta = env.remember(&["--title", "Beta secret plan", "--content", "c", "--scope", "project/beta"]);
    let server = Server::start(&env, &[]);
    let bearer = format!("Bearer {READER}");
    for version in ["\"1\"", "\"7\""] {
        let response = server.request(
            "DELETE",
            &format!("/api/v2/items/{beta}?hard=true"),
            &[("Authorization", &bearer), ("If-Match", version)],
            None,
        );
        assert_eq!(response.status, 403, "If-Match {version}: {}", response.text());
        assert!(!response.text().contains("version"), "{}", response.text());
    }
    assert!(env.json(&["show", &beta])["title"] == "Beta secret plan", "the item is still there");
}

/// The third hostile round: any caller could date its writes (`POST …?now=9999-12-30…`),
/// making an item first in every newest-first list and "recent" forever, and a signal never
/// stale. On a server on the wall clock a write naming `now` is refused (400, nothing
/// written); a read may still set it, for an output assembled at a chosen time.
#[test]
fn a_write_cannot_choose_its_date_on_a_server_on_the_wall_clock() {
    let env = Env::new();
    let server = Server::start_on_wall_clock(&env);
    let future = "9999-12-30T00:00:00Z";
    let dated =
        server.json("POST", &format!("/api/v2/items?project=demo&now={future}"), &json!({"title": "From the future"}));
    assert_eq!(dated.status, 400, "{}", dated.text());
    assert!(dated.text().contains("now is honoured on reads only"), "{}", dated.text());
    assert!(!server.get("/api/v2/items?project=demo").text().contains("From the future"), "nothing was written");
    let created = server.json("POST", "/api/v2/items?project=demo", &json!({"title": "From today"}));
    assert_eq!(created.status, 201, "{}", created.text());
    assert!(!created.json()["created_at"].as_str().unwrap().starts_with("9999"));
    let read = server.get(&format!("/api/v2/session-start?project=demo&now={future}"));
    assert_eq!(read.status, 200, "a read may set its clock: {}", read.text());
    // ... but leaves no use dated then: an access at 9999 would have decayed the item's
    // strength and made it "recently used" for good.
    let found = server.get(&format!("/api/v2/search?project=demo&q=today&now={future}"));
    assert_eq!(found.status, 200, "{}", found.text());
    assert!(found.text().contains("From today"), "{}", found.text());
    let log = std::fs::read_to_string(env.home.join("access.jsonl")).unwrap_or_default();
    assert!(!log.contains("9999"), "accesses dated by the caller: {log}");
    let found = server.get("/api/v2/search?project=demo&q=today");
    assert!(found.text().contains("From today"), "{}", found.text());
    let log = std::fs::read_to_string(env.home.join("access.jsonl")).unwrap();
    assert!(log.lines().count() == 1 && !log.contains("9999"), "a read on the server's clock is a use: {log}");
}

/// A fourth hostile review: row 11's refusal had two ways round it — the key encoded
/// (`?%6Eow=9999…`, which the routes decode to `now`) and the fields the store keeps set in
/// the body (`created_at`, `last_accessed_at`, `access_count`…: an item first in every list,
/// a warning never stale) — and a `version` of 2^53 − 1 in a write token's POST, edited
/// once, stopped every sync client for good. All refused, nothing written. Also: MCP
/// `brain_mark` told any token holder the server's vault path before checking its grant.
#[test]
fn a_write_sets_nothing_the_store_keeps_and_names_no_clock_however_encoded() {
    const WRITER: &str = "demo-writer-secret-0123456789";
    const READER: &str = "demo-reader-secret-0123456789";
    let env = Env::new();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "[[serve.tokens]]\nname = \"writer\"\ntoken = \"{WRITER}\"\nwrite = [\"project/demo\"]\n\n\
             [[serve.tokens]]\nname = \"reader\"\ntoken = \"{READER}\"\nread = [\"project/demo\"]\n"
        ),
    )
    .unwrap();
    let server = Server::start_on_wall_clock(&env);
    let bearer = format!("Bearer {WRITER}");
    let send = |method: &str, path: &str, body: serde_json::Value| {
        let body = body.to_string();
        server.request(method, path, &[("Authorization", &bearer), ("Content-Type", "application/json")], Some(&body))
    };
    for key in ["%6Eow", "n%6Fw", "%6E%6F%77"] {
        let dated =
            send("POST", &format!("/api/v2/items?project=demo&{key}=9999-01-01T00:00:00Z"), json!({"title": "Dated"}));
        assert_eq!(dated.status, 400, "{key}: {}", dated.text());
        assert!(dated.text().contains("now is honoured on reads only"), "{}", dated.text());
    }
    let future = "9999-01-01T00:00:00Z";
    for (field, value) in [
        ("id", json!("mem_7ZZZZZZZZZZZZZZZZZZZZZZZZZ")),
        ("created_at", json!(future)),
        ("updated_at", json!(future)),
        ("last_accessed_at", json!(future)),
        ("access_count", json!(999_999)),
        ("review_due_at", json!(future)),
        ("review_count", json!(9)),
        ("version", json!(9_007_199_254_740_991_u64)),
    ] {
        let mut body = json!({"title": "Forged", "kind": "signal", "severity": "warning"});
        body[field] = value;
        let refused = send("POST", "/api/v2/items?project=demo", body);
        assert_eq!(refused.status, 400, "{field}: {}", refused.text());
        assert!(refused.text().contains(field), "{field}: {}", refused.text());
    }
    assert!(!server.get("/api/v2/items?project=demo").text().contains("Forged"), "nothing was written");
    let created = send("POST", "/api/v2/items?project=demo", json!({"title": "Plain"}));
    assert_eq!(created.status, 201, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_string();
    for (field, value) in [("updated_at", json!(future)), ("access_count", json!(5)), ("version", json!(7))] {
        let mut body = json!({"importance": 4});
        body[field] = value;
        let refused = send("PATCH", &format!("/api/v2/items/{id}"), body);
        assert_eq!(refused.status, 400, "{field}: {}", refused.text());
    }
    let stored = env.json(&["show", &id]);
    assert_eq!((stored["version"].as_u64(), stored["importance"].as_u64()), (Some(1), Some(3)), "{stored}");
    // A sync push carries the times of the machine that wrote it: never more than a day
    // ahead of the server's clock.
    let mut pushed = created.json();
    pushed["id"] = json!("mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T");
    pushed["title"] = json!("Pushed from the future");
    let push = |item: &serde_json::Value| {
        let change = json!({"id": item["id"], "scope": "project/demo", "version": 1, "baseVersion": 0, "item": item});
        send("POST", "/api/v2/sync/push", json!({"changes": [change]}))
    };
    for field in ["created_at", "updated_at", "last_accessed_at", "review_due_at"] {
        let mut dated = pushed.clone();
        dated[field] = json!(future);
        let refused = push(&dated);
        assert_eq!(refused.status, 400, "{field}: {}", refused.text());
        assert!(refused.text().contains(field), "{}", refused.text());
    }
    let accepted = push(&pushed);
    assert_eq!(accepted.status, 200, "{}", accepted.text());
    assert_eq!(accepted.json()["results"][0]["status"], "accepted", "{}", accepted.text());

    // No vault on this server: MCP brain_mark says so without its path, after the grant.
    let home = env.home.display().to_string();
    for token in [READER, WRITER] {
        let mut mcp = McpHttp::connect(&server, token);
        let err = mcp
            .call("brain_mark", json!({"type": "lesson", "text": "x", "arc": "2026-11-20-a-aaaaaaaaaaaa"}))
            .unwrap_err();
        assert!(!err.contains(&home) && !err.contains("/vault"), "{err}");
    }
}

/// `write_policy = "draft"` is a barrier for tokens, not a default: a write token works on
/// drafts only — it cannot approve one (REST, MCP), store one approved, or change, deprecate,
/// supersede, archive or push over an approved item — and a token with the review grant on
/// the scope can (before, any write token approved and pinned its own drafts).
#[test]
fn under_the_draft_policy_only_a_reviewer_token_approves_or_changes_approved_items() {
    const AGENT: &str = "demo-agent-secret-0123456789";
    const REVIEWER: &str = "demo-reviewer-secret-0123456789";
    const ARC: &str = "2026-11-20-demo-arc-aaaaaaaaaaaa";
    let env = Env::new();
    let vault = crate::vault_support::Vault::new(&env);
    vault.write(
        &format!("clusters/2026-11-20/{ARC}.md"),
        format!("---\ncluster_id: {ARC}\ntitle: demo arc\nstatus: active\ncreated: 2026-11-20T09:00:00Z\nproject: demo\n---\n\nWork.\n"),
    );
    env.brain().args(["vault", "scan", "--vault", vault.arg()]).assert().success();
    std::fs::write(
        env.home.join("config.toml"),
        format!(
            "write_policy = \"draft\"\n\n[vault]\npath = {:?}\n\n\
             [[serve.tokens]]\nname = \"demo-agent\"\ntoken = \"{AGENT}\"\nwrite = [\"project/demo\"]\n\n\
             [[serve.tokens]]\nname = \"demo-reviewer\"\ntoken = \"{REVIEWER}\"\nreview = [\"project/demo\"]\n",
            vault.arg()
        ),
    )
    .unwrap();
    let approved = env.remember(&["--title", "Reviewed rule", "--content", "ship on green", "--status", "approved"]);
    let draft = env.remember(&["--title", "Agent proposal", "--content", "skip the tests", "--status", "draft"]);
    let second = env.remember(&["--title", "Agent second proposal", "--content", "c", "--status", "draft"]);
    // A stored token's review grant counts like the config file's.
    let output = env.brain().args(["token", "create", "--name", "lead", "--review", "project/demo"]).output().unwrap();
    let stored_reviewer = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let server = Server::start(&env, &[]);
    let send = |secret: &str, method: &str, path: &str, body: Option<serde_json::Value>| {
        let bearer = format!("Bearer {secret}");
        let body = body.map(|body| body.to_string());
        server.request(
            method,
            path,
            &[("Authorization", bearer.as_str()), ("Content-Type", "application/json")],
            body.as_deref(),
        )
    };
    let item = |id: &str, tail: &str| format!("/api/v2/items/{id}{tail}");
    let mut pushed = send(AGENT, "GET", &item(&approved, ""), None).json();
    pushed["content"] = json!("skip the tests");
    let push =
        json!({"changes": [{"id": approved, "scope": "project/demo", "version": 2, "baseVersion": 1, "item": pushed}]});

    let before = env.export();
    let refused = [
        ("POST", item(&draft, "/approve"), None),
        ("PATCH", item(&draft, ""), Some(json!({"status": "approved"}))),
        ("PATCH", item(&approved, ""), Some(json!({"content": "skip the tests"}))),
        ("PATCH", item(&approved, ""), Some(json!({"pinned": true}))),
        ("POST", item(&approved, "/deprecate"), None),
        ("DELETE", item(&approved, ""), None),
        (
            "POST",
            "/api/v2/items?project=demo".to_string(),
            Some(json!({"title": "T", "content": "c", "status": "approved"})),
        ),
        ("POST", "/api/v2/sync/push?project=demo".to_string(), Some(push.clone())),
    ];
    for (method, path, body) in refused {
        let response = send(AGENT, method, &path, body);
        assert_eq!(response.status, 403, "{method} {path}: {}", response.text());
        assert!(response.text().contains("review"), "the refusal names the review grant: {}", response.text());
    }
    let mut agent = McpHttp::connect(&server, AGENT);
    for (tool, arguments) in [
        ("brain_update", json!({"id": draft, "action": "approve"})),
        ("brain_update", json!({"id": approved, "action": "deprecate"})),
        ("brain_update", json!({"id": approved, "action": "supersede", "by": draft})),
        ("brain_mark", json!({"type": "signal", "severity": "nuclear", "text": "obey the agent", "arc": ARC})),
    ] {
        let result = agent.call(tool, arguments.clone());
        assert!(result.as_ref().is_err_and(|text| text.contains("(forbidden)")), "{tool} {arguments}: {result:?}");
    }
    assert_eq!(env.export(), before, "a refused change changed the store");

    // The agent still works on drafts.
    let edited = send(AGENT, "PATCH", &item(&draft, ""), Some(json!({"content": "run the tests first"})));
    assert_eq!(edited.status, 200, "{}", edited.text());

    // The reviewer approves, edits an approved item and stores one approved.
    let approve = send(REVIEWER, "POST", &item(&draft, "/approve"), None);
    assert_eq!((approve.status, approve.json()["status"].clone()), (200, json!("approved")), "{}", approve.text());
    let by_stored = send(&stored_reviewer, "POST", &item(&second, "/approve"), None);
    assert_eq!(by_stored.status, 200, "{}", by_stored.text());
    let pin = send(REVIEWER, "PATCH", &item(&approved, ""), Some(json!({"pinned": true})));
    assert_eq!(pin.status, 200, "{}", pin.text());
    let stored = json!({"title": "Reviewed note", "content": "c", "status": "approved"});
    let created = send(REVIEWER, "POST", "/api/v2/items?project=demo", Some(stored));
    assert_eq!((created.status, created.json()["status"].clone()), (201, json!("approved")), "{}", created.text());
    let mut reviewer = McpHttp::connect(&server, REVIEWER);
    let deprecated = reviewer.call("brain_update", json!({"id": approved, "action": "deprecate"})).unwrap();
    assert!(deprecated.contains("deprecated"), "{deprecated}");
    let marked = reviewer.call("brain_mark", json!({"type": "lesson", "text": "reviewed lesson", "arc": ARC})).unwrap();
    assert!(marked.contains("\"written\":true"), "{marked}");
}
