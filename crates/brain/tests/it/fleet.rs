//! Fleet mode: the store chosen by URL (`BRAIN_DATABASE_URL`, `[store] url`,
//! `serve --database`), and the CLI on PostgreSQL. Tests marked ignored need a server:
//! `BRAIN_TEST_DATABASE_URL=postgres://… cargo test -p brain-memory --test it fleet -- --ignored`
//! (`.ci/run` does).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Env;

const NEEDS: &str = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL";

/// The PostgreSQL server under test.
pub fn test_database_url() -> String {
    std::env::var("BRAIN_TEST_DATABASE_URL").ok().filter(|url| url.starts_with("postgres")).expect(NEEDS)
}

/// A fresh schema of the test database, dropped with the guard.
pub struct Schema {
    pub url: String,
    base: String,
    name: String,
}

impl Schema {
    pub fn new(label: &str) -> Schema {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = test_database_url();
        let name = format!("t_{label}_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let separator = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{separator}options=-c%20search_path%3D{name}");
        Schema { url, base, name }
    }

    /// A raw client on the test database (for checks and for playing the operator).
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.base, postgres::NoTls).unwrap()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.base, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
        }
    }
}

/// A home whose user config points at `schema` (`[store] url`), initialised.
pub fn postgres_env(schema: &Schema) -> Env {
    let env = Env::uninitialized();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), format!("[store]\nurl = {:?}\n", schema.url)).unwrap();
    env.brain().arg("init").assert().success();
    env
}

#[test]
fn a_project_file_cannot_choose_the_database() {
    let env = Env::new();
    std::fs::write(
        env.project_dir.join(".brain.toml"),
        "project = \"demo\"\n[store]\nurl = \"postgres://attacker@evil.example/brain\"\n",
    )
    .unwrap();
    let output = env.brain().arg("list").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`store.url` is not allowed in a project file"), "{stderr}");
    assert!(stderr.contains("another database"), "{stderr}");
}

#[test]
fn an_invalid_database_url_names_where_it_came_from_and_never_the_password() {
    let env = Env::new();
    let output =
        env.brain().env("BRAIN_DATABASE_URL", "mysql://root:hunter2hunter2@db/brain").arg("list").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("BRAIN_DATABASE_URL") && stderr.contains("unsupported database scheme"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    std::fs::write(env.home.join("config.toml"), "[store]\nurl = \"postgres://u:hunter2hunter2@h:x/db\"\n").unwrap();
    let output = env.brain().arg("list").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[store] url in config.toml"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn an_unreachable_database_is_exit_2_with_a_clear_message() {
    let env = Env::new();
    let url = "postgres://brain:hunter2hunter2@127.0.0.1:1/brain?connect_timeout=2";
    let output = env.brain().env("BRAIN_DATABASE_URL", url).args(["remember", "--title", "x"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("postgres://brain@127.0.0.1:1/brain is unreachable"), "{stderr}");
    assert!(stderr.contains("running and reachable"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn the_cli_works_the_same_on_postgres() {
    let schema = Schema::new("cli");
    let env = postgres_env(&schema);
    let doctor = env.json(&["doctor"]);
    let database = doctor["database"].as_str().unwrap();
    assert!(database.starts_with("postgres://") && !database.contains("password"), "{database}");
    let id = env.remember(&["--kind", "decision", "--title", "Retry webhooks with backoff", "--content", "jitter too"]);
    env.remember(&["--title", "Login flow", "--content", "OAuth device code"]);
    let hits = env.json(&["search", "retry backoff"]);
    assert_eq!(hits["results"][0]["id"], id.as_str(), "{hits}");
    // A stale version is a conflict, never a silent overwrite.
    env.brain().args(["edit", &id, "--title", "v2", "--expect-version", "1"]).assert().success();
    let stale = env.brain().args(["edit", &id, "--title", "v3", "--expect-version", "1"]).output().unwrap();
    assert_eq!(stale.status.code(), Some(1), "{}", String::from_utf8_lossy(&stale.stderr));
    assert_eq!(env.json(&["show", &id])["title"], "v2");
    // Import is all or nothing: a line whose id is taken imports nothing.
    let export = env.export();
    let file = env.dir.path().join("again.jsonl");
    std::fs::write(&file, format!("{{\"title\":\"new one\"}}\n{export}")).unwrap();
    env.brain().args(["import", file.to_str().unwrap()]).assert().failure();
    assert_eq!(env.export(), export);
    // Export → import into a fresh PostgreSQL brain → export is lossless.
    let other_schema = Schema::new("cli_copy");
    let other = postgres_env(&other_schema);
    let exported = env.dir.path().join("all.jsonl");
    std::fs::write(&exported, &export).unwrap();
    other.brain().args(["import", exported.to_str().unwrap()]).assert().success();
    assert_eq!(other.export(), export);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn four_processes_times_fifty_remembers_on_postgres_make_exactly_200_items() {
    let schema = Schema::new("procs");
    let env = std::sync::Arc::new(postgres_env(&schema));
    crate::cli_concurrency::four_processes_remember_fifty_each(&env);
    let export = env.export();
    let mut titles: Vec<&str> = export.lines().collect();
    titles.sort();
    titles.dedup();
    assert_eq!(titles.len(), 200);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn kill_9_during_an_import_into_postgres_leaves_all_or_nothing() {
    let schema = Schema::new("kill");
    let env = postgres_env(&schema);
    let file = env.dir.path().join("big.jsonl");
    let count = 30_000;
    let lines: Vec<String> = (0..count)
        .map(|i| format!("{{\"title\":\"imported item {i}\",\"content\":\"{}\"}}", "body text ".repeat(20)))
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let mut saw_none = false;
    for delay_ms in [100u64, 300, 600, 1200, 2000] {
        kill_after(&env.home, &["import", file.to_str().unwrap()], delay_ms);
        wait_until_postgres_rolled_back(&schema);
        let items = env.export().lines().count();
        assert!(items == 0 || items == count, "after kill at {delay_ms} ms: {items} items");
        if items == count {
            break;
        }
        saw_none = true;
    }
    assert!(saw_none, "no kill landed during the import; use a bigger file");
}

#[test]
fn stored_tokens_are_shown_once_listed_without_secrets_and_revoked() {
    let env = Env::new();
    let output = env
        .brain()
        .args(["token", "create", "--name", "ci-agent", "--read", "project/*", "--write", "project/demo"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let secret = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(secret.starts_with("brain_") && secret.len() == 70, "{secret}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("shown once"));
    let listed = env.json(&["token", "list"]);
    assert_eq!(listed[0]["name"], "ci-agent");
    assert_eq!(listed[0]["active"], true);
    let text = listed.to_string();
    assert!(!text.contains(&secret) && !text.contains(&secret[6..20]), "{text}");
    // A reviewer's grant (write_policy = "draft": approving, changing approved items).
    env.brain().args(["token", "create", "--name", "lead", "--review", "project/demo"]).assert().success();
    let listed = env.json(&["token", "list"]);
    assert_eq!(
        (listed[1]["name"].clone(), listed[1]["review"].clone()),
        (serde_json::json!("lead"), serde_json::json!(["project/demo"]))
    );
    let bad_review = env.brain().args(["token", "create", "--name", "y", "--review", "nope/*"]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad_review.stderr).contains("invalid scope grant"), "{bad_review:?}");
    // Names stay taken; grants are checked; a token needs some grant.
    let again = env.brain().args(["token", "create", "--name", "ci-agent", "--read", "global"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let bad = env.brain().args(["token", "create", "--name", "x", "--read", "project/../etc"]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("invalid scope grant"), "{bad:?}");
    let none = env.brain().args(["token", "create", "--name", "x"]).output().unwrap();
    assert!(String::from_utf8_lossy(&none.stderr).contains("no grants"));
    let revoked = env.json(&["token", "revoke", "ci-agent"]);
    assert_eq!(revoked["active"], false);
    let twice = env.brain().args(["token", "revoke", "ci-agent"]).output().unwrap();
    assert!(String::from_utf8_lossy(&twice.stderr).contains("already revoked"));
    let missing = env.brain().args(["token", "revoke", "nobody"]).output().unwrap();
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no stored token"));
}

#[test]
fn a_running_server_honours_a_token_made_after_it_started_and_refuses_it_once_revoked() {
    let env = crate::serve::seeded();
    std::fs::write(env.home.join("config.toml"), "[serve]\nevents_poll_ms = 100\n").unwrap();
    let server = crate::serve::Server::start(&env, &[]);
    // Open at first (loopback, no tokens).
    assert_eq!(server.get("/api/v2/items?project=demo").status, 200);
    let output = env.brain().args(["token", "create", "--name", "reader", "--read", "project/demo"]).output().unwrap();
    let secret = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let bearer = format!("Bearer {secret}");
    let with_token = || server.request("GET", "/api/v2/items?project=demo", &[("Authorization", &bearer)], None);
    let started = std::time::Instant::now();
    // From the moment a token exists, one is required; the new one works.
    while server.get("/api/v2/items?project=demo").status != 401 {
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "the server never required a token");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(with_token().status, 200);
    env.brain().args(["token", "revoke", "reader"]).assert().success();
    let revoked = std::time::Instant::now();
    while with_token().status != 401 {
        assert!(revoked.elapsed() < std::time::Duration::from_secs(5), "the revoked token still works");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Revoking the last token does not reopen the server.
    assert_eq!(server.get("/api/v2/items?project=demo").status, 401);
}

/// A home with `count` imported items (and one vault-style value) on SQLite.
fn local_home_with_items(count: usize) -> Env {
    let env = Env::new();
    let file = env.dir.path().join("items.jsonl");
    let lines: Vec<String> = (0..count)
        .map(|i| {
            format!("{{\"title\":\"local item {i}\",\"content\":\"{}\",\"tags\":[\"t{}\"]}}", "text ".repeat(30), i % 7)
        })
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    env.brain().args(["import", file.to_str().unwrap()]).assert().success();
    env
}

#[test]
fn migrate_refuses_a_bad_target_and_the_home_s_own_store() {
    let env = Env::new();
    let bad = env.brain().args(["migrate", "--to", "mysql://root:hunter2hunter2@h/db"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&bad.stderr).contains("hunter2"));
    let own = format!("sqlite:{}", env.db().display());
    let same = env.brain().args(["migrate", "--to", &own]).output().unwrap();
    assert!(String::from_utf8_lossy(&same.stderr).contains("this home's own store"), "{same:?}");
}

#[test]
fn migrating_into_another_sqlite_file_copies_everything_once() {
    let env = local_home_with_items(50);
    let target = env.dir.path().join("copy.db");
    let to = format!("sqlite:{}", target.display());
    let first = env.json(&["migrate", "--to", &to]);
    assert_eq!((first["copied"].as_u64(), first["already_there"].as_u64()), (Some(50), Some(0)), "{first}");
    let second = env.json(&["migrate", "--to", &to]);
    assert_eq!((second["copied"].as_u64(), second["already_there"].as_u64()), (Some(0), Some(50)), "{second}");
    let export = env.export();
    let copy = env.brain().env("BRAIN_DATABASE_URL", &to).arg("export").output().unwrap();
    assert_eq!(String::from_utf8(copy.stdout).unwrap(), export);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn migrate_to_postgres_is_all_or_nothing_under_kill_9_and_idempotent() {
    let schema = Schema::new("migrate");
    let env = local_home_with_items(30_000);
    env.brain().args(["token", "create", "--name", "ci", "--read", "global"]).assert().success();
    let mut saw_none = false;
    for delay_ms in [300u64, 900, 1500, 2500] {
        kill_after(&env.home, &["migrate", "--to", &schema.url], delay_ms);
        wait_until_postgres_rolled_back(&schema);
        let copied = env.brain().env("BRAIN_DATABASE_URL", &schema.url).arg("export").output().unwrap();
        let lines = String::from_utf8(copied.stdout).unwrap().lines().count();
        assert!(lines == 0 || lines == 30_000, "after kill at {delay_ms} ms: {lines} items");
        if lines == 30_000 {
            break;
        }
        saw_none = true;
    }
    assert!(saw_none, "no kill landed during the copy");
    // Completed (or completes now); a second run copies nothing and changes nothing.
    env.json(&["migrate", "--to", &schema.url]);
    let exported = |env: &Env| {
        let output = env.brain().env("BRAIN_DATABASE_URL", &schema.url).arg("export").output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let fleet = exported(&env);
    assert_eq!(fleet, env.export(), "the fleet holds exactly the local items");
    let again = env.json(&["migrate", "--to", &schema.url]);
    assert_eq!((again["copied"].as_u64(), again["already_there"].as_u64()), (Some(0), Some(30_000)), "{again}");
    assert_eq!(again["tokens_copied"], 0);
    assert_eq!(exported(&env), fleet);
    let tokens = env.brain().env("BRAIN_DATABASE_URL", &schema.url).args(["token", "list", "--json"]).output().unwrap();
    assert!(String::from_utf8_lossy(&tokens.stdout).contains("\"ci\""));
}

#[test]
fn a_requested_tick_runs_once_per_spacing_and_its_record_is_shown() {
    let env = crate::serve::seeded();
    env.brain().args(["vault", "init"]).assert().success();
    std::fs::write(env.home.join("config.toml"), "[serve]\ntick_interval_secs = 0\ntick_request_min_secs = 3600\n")
        .unwrap();
    let server = crate::serve::Server::start(&env, &[]);
    assert_eq!(server.get("/api/v2/tick").json()["last"], serde_json::Value::Null);
    let ran = server.json("POST", "/api/v2/tick", &serde_json::json!({}));
    assert_eq!(ran.status, 200, "{}", ran.text());
    let record = ran.json();
    assert_eq!((record["ok"].as_bool(), record["trigger"].as_str()), (Some(true), Some("request")), "{record}");
    assert!(record["report"]["phases"].is_array(), "{record}");
    let again = server.json("POST", "/api/v2/tick", &serde_json::json!({}));
    assert_eq!(again.status, 429, "{}", again.text());
    assert!(again.header("retry-after").is_some_and(|after| after.parse::<u64>().unwrap() > 3000));
    let shown = server.get("/api/v2/tick").json();
    assert_eq!(shown["last"]["at"], record["at"]);
    assert_eq!(shown["thisReplicaHasVault"], true);
}

/// An open SSE stream of a server, read line by line.
pub struct EventStream {
    reader: std::io::BufReader<std::net::TcpStream>,
    pub seen: String,
}

impl EventStream {
    pub fn open(server: &crate::serve::Server, token: Option<&str>) -> EventStream {
        EventStream::open_at(server, token, "/api/v2/events")
    }

    /// The stream at `target` (`/api/v2/events?project=…`).
    pub fn open_at(server: &crate::serve::Server, token: Option<&str>, target: &str) -> EventStream {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(&server.address).unwrap();
        stream.set_read_timeout(Some(std::time::Duration::from_millis(200))).unwrap();
        let auth = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: {}\r\n{auth}Accept: text/event-stream\r\n\r\n", server.address)
            .unwrap();
        let mut events = EventStream { reader: std::io::BufReader::new(stream), seen: String::new() };
        assert!(events.wait_for("event: ready", std::time::Duration::from_secs(10)), "{}", events.seen);
        events
    }

    /// Reads until `needle` shows up or `limit` passes; whether it did.
    pub fn wait_for(&mut self, needle: &str, limit: std::time::Duration) -> bool {
        use std::io::BufRead;
        let started = std::time::Instant::now();
        while !self.seen.contains(needle) && started.elapsed() < limit {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => self.seen.push_str(&line),
                Err(_) => {} // read timeout: look again
            }
        }
        self.seen.contains(needle)
    }

    /// Reads until the server ends the stream or `limit` passes; whether it ended.
    pub fn wait_for_end(&mut self, limit: std::time::Duration) -> bool {
        use std::io::BufRead;
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => return true,
                Ok(_) => self.seen.push_str(&line),
                Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => {} // read timeout: look again
            }
        }
        false
    }
}

/// `brain token create` with a read grant; its secret.
fn create_token(env: &Env, name: &str, read: &str) -> String {
    let output = env.brain().args(["token", "create", "--name", name, "--read", read]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

#[test]
fn a_revoked_tokens_event_stream_ends_before_the_next_critical_signal() {
    let env = crate::serve::seeded();
    std::fs::write(env.home.join("config.toml"), "[serve]\nevents_poll_ms = 100\n").unwrap();
    let secret = create_token(&env, "watcher", "project/demo");
    let server = crate::serve::Server::start(&env, &[]);
    let mut stream = EventStream::open(&server, Some(&secret));
    let limit = std::time::Duration::from_secs(10);
    let signal = |title: &str| env.remember(&["--kind", "signal", "--severity", "critical", "--title", title]);
    // While the token is valid its stream carries critical signals.
    signal("Primary database is failing over");
    assert!(stream.wait_for("failing over", limit), "{}", stream.seen);
    env.brain().args(["token", "revoke", "watcher"]).assert().success();
    signal("Rotate the leaked deploy key now");
    assert!(stream.wait_for_end(limit), "the revoked token's stream stayed open: {}", stream.seen);
    assert!(!stream.seen.contains("leaked deploy key"), "a revoked token heard a signal: {}", stream.seen);
    // And it opens no new one.
    let bearer = format!("Bearer {secret}");
    assert_eq!(server.request("GET", "/api/v2/events", &[("Authorization", &bearer)], None).status, 401);
}

#[test]
fn a_store_that_had_tokens_keeps_requiring_one_until_the_operator_reopens_it() {
    let env = crate::serve::seeded();
    create_token(&env, "ci", "project/demo");
    env.brain().args(["token", "revoke", "ci"]).assert().success();
    // A server started after the last revoke still requires a token (none is valid now).
    let server = crate::serve::Server::start(&env, &[]);
    let refused = server.get("/api/v2/items?project=demo");
    assert_eq!((refused.status, refused.error_code().as_str()), (401, "unauthorized"), "{}", refused.text());
    assert_eq!(server.get("/healthz").status, 200);
    assert!(server.log().contains("bearer tokens required"), "{}", server.log());
    drop(server);
    // Reopening is explicit, refused while a token is active, and says what it does.
    create_token(&env, "ci-2", "project/demo");
    let early = env.brain().args(["token", "reopen"]).output().unwrap();
    assert_eq!(early.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&early.stderr).contains("\"ci-2\" is still active"), "{early:?}");
    env.brain().args(["token", "revoke", "ci-2"]).assert().success();
    let reopened = env.brain().args(["token", "reopen"]).output().unwrap();
    let warning = String::from_utf8_lossy(&reopened.stderr);
    assert!(reopened.status.success(), "{warning}");
    assert!(warning.contains("forgot 2 revoked tokens") && warning.contains("without a token"), "{warning}");
    assert_eq!(env.json(&["token", "list"]), serde_json::json!([]));
    let server = crate::serve::Server::start(&env, &[]);
    assert_eq!(server.get("/api/v2/items?project=demo").status, 200);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_postgres_replica_exits_0_on_sigterm_and_1_with_the_message_on_start_up_errors() {
    let schema = Schema::new("exits");
    let env = postgres_env(&schema);
    env.remember(&["--title", "Use WAL mode for SQLite", "--content", "Readers never block the writer."]);
    crate::serve::serve_exits_cleanly(&env);
}

#[test]
fn a_critical_signal_reaches_the_subscribers_who_may_read_its_scope() {
    let env = crate::serve::seeded();
    crate::serve::with_tokens(&env);
    let config = std::fs::read_to_string(env.home.join("config.toml")).unwrap();
    // A bus that is down: publishing fails, writes do not.
    std::fs::write(
        env.home.join("config.toml"),
        format!("[serve]\nevents_poll_ms = 100\nsignals_nats_url = \"nats://127.0.0.1:1\"\n{config}"),
    )
    .unwrap();
    let mut server = crate::serve::Server::start(&env, &[]);
    let mut reader = EventStream::open(&server, Some(crate::serve::READER));
    let mut writer = EventStream::open(&server, Some(crate::serve::WRITER));
    let post = |project: &str, title: &str| {
        let body = serde_json::json!({"kind": "signal", "severity": "critical", "title": title}).to_string();
        let auth = format!("Bearer {}", crate::serve::WRITER);
        let started = std::time::Instant::now();
        let response = server.request(
            "POST",
            &format!("/api/v2/items?project={project}"),
            &[("Content-Type", "application/json"), ("Authorization", &auth)],
            Some(&body),
        );
        assert_eq!(response.status, 201, "{}", response.text());
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "the down bus delayed the write");
        response.json()["id"].as_str().unwrap().to_string()
    };
    let web = post("web", "Payments webhook is down");
    let demo = post("demo", "Database failover in progress");
    let limit = std::time::Duration::from_secs(10);
    assert!(reader.wait_for(&demo, limit), "{}", reader.seen);
    assert!(writer.wait_for(&web, limit) && writer.wait_for(&demo, limit), "{}", writer.seen);
    assert!(reader.seen.contains("event: signal") && reader.seen.contains("\"severity\":\"critical\""));
    // In the one signal model's shape, as `GET /api/v2/signals` serves it.
    assert!(
        reader.seen.contains("\"origin\":\"item\"") && reader.seen.contains("\"project\":\"demo\""),
        "{}",
        reader.seen
    );
    // The reader of project/demo never hears of project/web's signal.
    assert!(!reader.seen.contains(&web), "{}", reader.seen);
    // The failed publish was logged (the server's log is complete once it has stopped).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    server.terminate(std::time::Duration::from_secs(20));
    let log = server.log();
    assert!(log.contains("cannot publish signal") && log.contains("will retry"), "{log}");
}

#[test]
fn the_next_prompt_surfaces_a_new_critical_signal_once() {
    let env = crate::serve::seeded();
    let input = serde_json::json!({"session_id": "s-signal", "cwd": env.project_dir, "prompt": "go on"}).to_string();
    env.brain().args(["hook", "session-start"]).write_stdin(input.clone()).assert().success();
    let prompt = || {
        let output = env.brain().args(["hook", "user-prompt-submit"]).write_stdin(input.clone()).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8(output.stdout).unwrap()
    };
    prompt();
    // Not critical, or another project's: nothing.
    env.remember(&["--kind", "signal", "--severity", "warning", "--title", "Disk at 80 percent"]);
    env.remember(&["--kind", "signal", "--severity", "critical", "--title", "Other outage", "--scope", "project/web"]);
    let quiet = prompt();
    assert!(!quiet.contains("URGENT"), "{quiet}");
    env.remember(&[
        "--kind",
        "signal",
        "--severity",
        "critical",
        "--title",
        "Stop deploys: the primary is failing over",
    ]);
    let alerted: serde_json::Value = serde_json::from_str(&prompt()).unwrap();
    let text = alerted["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.starts_with("URGENT") && text.contains("[critical]") && text.contains("failing over"), "{text}");
    assert!(!text.contains("Other outage"), "{text}");
    assert!(!prompt().contains("URGENT"), "shown once");
}

#[test]
fn with_remote_the_next_prompt_surfaces_a_new_critical_signal_from_the_server() {
    let env = crate::serve::seeded();
    let server = crate::serve::Server::start(&env, &[]);
    // The agent's machine: another home, talking to the server.
    let agent = Env::uninitialized();
    let url = format!("http://{}", server.address);
    let input = serde_json::json!({"session_id": "s-remote", "cwd": agent.project_dir}).to_string();
    let prompt = || {
        let output = agent
            .brain()
            .args(["--remote", &url, "hook", "user-prompt-submit"])
            .write_stdin(input.clone())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(prompt(), "", "the first look only takes note");
    let created = server.json(
        "POST",
        "/api/v2/items?project=demo",
        &serde_json::json!({"kind": "signal", "severity": "nuclear", "title": "Rotate every key now"}),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let alerted: serde_json::Value = serde_json::from_str(&prompt()).unwrap();
    let text = alerted["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.starts_with("URGENT") && text.contains("[NUCLEAR] Rotate every key now"), "{text}");
    assert_eq!(prompt(), "", "shown once");
}

/// Runs `brain ARGS` on `home` and kills it (SIGKILL) after `delay_ms`.
fn kill_after(home: &std::path::Path, args: &[&str], delay_ms: u64) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("brain"))
        .env_clear()
        .env("BRAIN_HOME", home)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(delay_ms));
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn kept_session_start_reads_follow_every_change_through_another_connection_on_postgres() {
    let schema = Schema::new("kept");
    crate::session_start::kept_reads_follow_every_change_through_another_connection(&postgres_env(&schema));
}

/// The server notices a killed client's dropped connection and rolls its transaction back:
/// waits (up to 5 s) until no `brain` session is busy.
fn wait_until_postgres_rolled_back(schema: &Schema) {
    let mut client = schema.client();
    for _ in 0..500 {
        let busy: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'brain' AND state <> 'idle'",
                &[],
            )
            .unwrap()
            .get(0);
        if busy == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
