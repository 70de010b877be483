//! Replicas of `brain serve` over one PostgreSQL database, on loopback: a write through one
//! is read, 304-invalidated and evented through the other; concurrent writers across both
//! lose nothing; a replica killed with SIGKILL loses no acknowledged write; a PostgreSQL
//! restart gives clear 503s, then the replicas recover by themselves. Need a server:
//! `BRAIN_TEST_DATABASE_URL=postgres://… cargo test -p brain-memory --test it fleet -- --ignored`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::str::FromStr;

use serde_json::json;

use crate::Env;
use crate::fleet::{Schema, postgres_env};
use crate::serve::Server;

/// A second home on the same database (another replica's machine).
fn replica_env(url: &str) -> Env {
    let env = Env::uninitialized();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), format!("[store]\nurl = {url:?}\n")).unwrap();
    env
}

/// One request that may fail to connect (a killed replica): `Err` instead of a panic.
fn try_request(address: &str, method: &str, path: &str, body: Option<&str>) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nHost: {address}\r\n");
    if let Some(body) = body {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if let Some(body) = body {
        stream.write_all(body.as_bytes())?;
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    if !raw.windows(4).any(|window| window == b"\r\n\r\n") {
        // Cut off before an answer (the replica died): not acknowledged.
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no answer"));
    }
    let response = crate::serve::parse_response(&raw);
    Ok((response.status, String::from_utf8_lossy(&response.body).into_owned()))
}

/// Posts a new item; its id when the server acknowledged it (201).
fn post_item(address: &str, title: &str) -> std::io::Result<(u16, Option<String>)> {
    let body = json!({"title": title, "content": "written under load"}).to_string();
    let (status, text) = try_request(address, "POST", "/api/v2/items?project=demo", Some(&body))?;
    let id = (status == 201)
        .then(|| serde_json::from_str::<serde_json::Value>(&text).ok())
        .flatten()
        .and_then(|item| item["id"].as_str().map(str::to_string));
    Ok((status, id))
}

/// Every item id in the store, through a replica.
fn all_ids(server: &Server) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = server.get(&format!("/api/v2/items?project=demo&limit=100{cursor}")).json();
        for item in page["items"].as_array().unwrap() {
            ids.push(item["id"].as_str().unwrap().to_string());
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return ids,
        }
    }
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_write_through_one_replica_is_read_invalidated_and_evented_through_the_other() {
    let schema = Schema::new("replicas");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory", "--content", "the project starts here"]);
    let env_b = replica_env(&schema.url);
    let a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    let before = b.get("/api/v2/brain?project=demo");
    assert_eq!(before.status, 200, "{}", before.text());
    let etag = before.header("etag").unwrap().to_string();
    assert_eq!(b.request("GET", "/api/v2/brain?project=demo", &[("If-None-Match", &etag)], None).status, 304);
    // Replica B's event stream.
    let mut stream = TcpStream::connect(&b.address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET /api/v2/events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n", b.address).unwrap();
    let mut events = BufReader::new(stream);
    let mut seen = String::new();
    let mut read_until = |needle: &str, seen: &mut String, limit: Duration| {
        let started = Instant::now();
        while !seen.contains(needle) {
            assert!(started.elapsed() < limit, "no {needle:?} within {limit:?}: {seen}");
            let mut line = String::new();
            if events.read_line(&mut line).unwrap() == 0 {
                break;
            }
            seen.push_str(&line);
        }
    };
    read_until("event: ready", &mut seen, Duration::from_secs(10));
    // The write goes through A...
    let created = a.json("POST", "/api/v2/items?project=demo", &json!({"title": "Written through replica A"}));
    assert_eq!(created.status, 201, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_string();
    // ...and B answers with it at once: the old ETag no longer matches, the item is there.
    let after = b.request("GET", "/api/v2/brain?project=demo", &[("If-None-Match", &etag)], None);
    assert_eq!(after.status, 200, "B answered from a stale cache");
    assert_ne!(after.header("etag").unwrap(), etag);
    assert!(after.text().contains("Written through replica A"));
    assert_eq!(b.get(&format!("/api/v2/items/{id}")).status, 200);
    // B's clients hear of it by notification, well before the 5 s safety poll.
    read_until("event: brain", &mut seen, Duration::from_secs(3));
    // Both replicas assemble the same document for the same data: one ETag.
    let from_a = a.get("/api/v2/brain?project=demo");
    assert_eq!(from_a.header("etag"), after.header("etag"));
    assert_eq!(a.get("/readyz").json()["status"], "ready");
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_write_through_one_replica_is_in_the_next_session_start_of_the_other() {
    let schema = Schema::new("sessions");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory", "--content", "the project starts here"]);
    let env_b = replica_env(&schema.url);
    let a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    let path = "/api/v2/session-start?project=demo&task=webhook%20retry%20backoff";
    let session = |server: &Server| {
        let response = server.get(path);
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()
    };
    let recalled = |start: &serde_json::Value, id: &str| {
        start["context_recall"].as_array().unwrap().iter().any(|recalled| recalled["id"] == id)
    };
    let before = session(&b);
    // B keeps what it read (the same state twice); every write through A is in B's next
    // session start at once, with no pause between them.
    assert_eq!(session(&b)["memory_count"], before["memory_count"]);
    let base = before["memory_count"].as_u64().unwrap();
    let mut ids = Vec::new();
    for n in 1..=5 {
        let title = format!("Webhook retry backoff, attempt {n}");
        let created = a.json("POST", "/api/v2/items?project=demo", &json!({"title": title}));
        assert_eq!(created.status, 201, "{}", created.text());
        let id = created.json()["id"].as_str().unwrap().to_string();
        let after = session(&b);
        assert_eq!(after["memory_count"].as_u64(), Some(base + n), "B served a stale session start");
        assert!(recalled(&after, &id), "B did not recall {id} written through A: {after}");
        ids.push(id);
    }
    // A change of status through A leaves B's next session start at once.
    let deprecated = a.json("POST", &format!("/api/v2/items/{}/deprecate", ids[0]), &json!({}));
    assert_eq!(deprecated.status, 200, "{}", deprecated.text());
    let last = session(&b);
    assert_eq!(last["memory_count"].as_u64(), Some(base + 4));
    assert!(!recalled(&last, &ids[0]), "B recalled a deprecated item: {last}");
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn two_hundred_concurrent_writers_across_two_replicas_lose_nothing() {
    let schema = Schema::new("writers");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory"]);
    let env_b = replica_env(&schema.url);
    let a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    let addresses = [a.address.clone(), b.address.clone()];
    let writers: Vec<_> = (0..200)
        .map(|n| {
            let address = addresses[n % 2].clone();
            std::thread::spawn(move || post_item(&address, &format!("writer {n}")).unwrap())
        })
        .collect();
    let mut acknowledged = Vec::new();
    for writer in writers {
        let (status, id) = writer.join().unwrap();
        assert_eq!(status, 201);
        acknowledged.push(id.unwrap());
    }
    let mut stored = all_ids(&b);
    stored.sort();
    for id in &acknowledged {
        assert!(stored.binary_search(id).is_ok(), "acknowledged {id} is missing");
    }
    assert_eq!(stored.len(), 201);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_replica_killed_under_load_loses_no_acknowledged_write() {
    let schema = Schema::new("kill9");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory"]);
    let env_b = replica_env(&schema.url);
    let mut a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let deadline = Instant::now() + Duration::from_millis(1500);
    let writers: Vec<_> = (0..8)
        .map(|n| {
            let address = if n % 2 == 0 { a.address.clone() } else { b.address.clone() };
            let acknowledged = Arc::clone(&acknowledged);
            std::thread::spawn(move || {
                let mut k = 0;
                while Instant::now() < deadline {
                    k += 1;
                    // A refused or cut connection is an unacknowledged write: fine to lose.
                    if let Ok((201, Some(id))) = post_item(&address, &format!("writer {n} item {k}")) {
                        acknowledged.lock().unwrap().push(id);
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(600));
    a.kill();
    for writer in writers {
        writer.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() > 20, "too little load: {}", acknowledged.len());
    let mut stored = all_ids(&b);
    stored.sort();
    let lost: Vec<&String> = acknowledged.iter().filter(|id| stored.binary_search(id).is_err()).collect();
    assert!(lost.is_empty(), "{} acknowledged writes lost: {lost:?}", lost.len());
}

/// A PostgreSQL server of this test's own (initdb in a temp dir), so restarting it disturbs
/// no one else. Runs as the `postgres` user when the test runs as root (initdb refuses root).
struct PrivatePostgres {
    _dir: tempfile::TempDir,
    data: PathBuf,
    port: u16,
}

impl PrivatePostgres {
    fn bin(name: &str) -> PathBuf {
        let versions = std::fs::read_dir("/usr/lib/postgresql").expect("PostgreSQL server binaries (postgresql-15)");
        let mut found: Vec<PathBuf> =
            versions.filter_map(|e| e.ok()).map(|e| e.path().join("bin").join(name)).collect();
        found.sort();
        found.pop().filter(|path| path.exists()).unwrap_or_else(|| panic!("no {name} under /usr/lib/postgresql"))
    }

    fn run(args: &[&str]) {
        let mut command = if running_as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).args(args);
            command
        } else {
            let mut command = Command::new(args[0]);
            command.args(&args[1..]);
            command
        };
        let output = command.stdin(Stdio::null()).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }

    fn start() -> PrivatePostgres {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        if running_as_root() {
            Command::new("chown").args(["-R", "postgres:postgres", dir.path().to_str().unwrap()]).status().unwrap();
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let initdb = PrivatePostgres::bin("initdb");
        PrivatePostgres::run(&[
            initdb.to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        ]);
        let server = PrivatePostgres { _dir: dir, data, port };
        server.pg_ctl(&["start", "-w", "-t", "60"]);
        server
    }

    fn pg_ctl(&self, action: &[&str]) {
        let pg_ctl = PrivatePostgres::bin("pg_ctl");
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", self.port, self.data.display());
        let log = self.data.join("server.log");
        let mut args = vec![pg_ctl.to_str().unwrap(), "-D", self.data.to_str().unwrap(), "-o", &options];
        args.extend(["-l", log.to_str().unwrap()]);
        args.extend(action);
        PrivatePostgres::run(&args);
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let pg_ctl = PrivatePostgres::bin("pg_ctl");
        let args = [pg_ctl.to_str().unwrap(), "-D", self.data.to_str().unwrap(), "stop", "-m", "immediate"];
        let _ = std::panic::catch_unwind(|| PrivatePostgres::run(&args));
    }
}

/// Whether this process runs as root (from /proc, no libc binding needed).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find(|line| line.starts_with("Uid:")).map(|line| line.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_postgres_restart_under_load_gives_clear_503s_then_recovery() {
    let _ = crate::fleet::test_database_url();
    let postgres = PrivatePostgres::start();
    let env = Env::uninitialized();
    std::fs::create_dir_all(&env.home).unwrap();
    std::fs::write(env.home.join("config.toml"), format!("[store]\nurl = {:?}\n", postgres.url())).unwrap();
    env.brain().arg("init").assert().success();
    env.remember(&["--title", "Seed memory"]);
    let server = Server::start(&env, &[]);
    let address = server.address.clone();
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|n| {
            let (address, acknowledged, statuses, stop) =
                (address.clone(), Arc::clone(&acknowledged), Arc::clone(&statuses), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut k = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    k += 1;
                    let outcome = post_item(&address, &format!("writer {n} item {k}")).unwrap();
                    if let (201, Some(id)) = &outcome {
                        acknowledged.lock().unwrap().push(id.clone());
                    }
                    statuses.lock().unwrap().push((Instant::now(), outcome.0));
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    // A fast restart drops every connection; while it is down, answers are 503.
    postgres.pg_ctl(&["stop", "-m", "fast", "-w"]);
    let down = Instant::now();
    std::thread::sleep(Duration::from_millis(800));
    let during = try_request(&address, "GET", "/readyz", None).unwrap();
    assert_eq!(during.0, 503, "{}", during.1);
    assert!(during.1.contains("\"unavailable\""), "{}", during.1);
    let refused = post_item(&address, "while down").unwrap();
    assert_eq!(refused.0, 503);
    postgres.pg_ctl(&["start", "-w", "-t", "60"]);
    let up = Instant::now();
    // Recovery by itself: writes succeed again without restarting the replica.
    let started = Instant::now();
    loop {
        if let Ok((201, _)) = post_item(&address, "after the restart") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no recovery within 20 s of the restart");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    let statuses = statuses.lock().unwrap().clone();
    let unexpected: Vec<u16> = statuses.iter().map(|(_, status)| *status).filter(|s| ![201, 503].contains(s)).collect();
    assert!(unexpected.is_empty(), "answers other than 201/503: {unexpected:?}");
    assert!(statuses.iter().any(|(at, status)| *status == 503 && *at > down && *at < up), "no 503 while down");
    assert!(statuses.iter().any(|(at, status)| *status == 201 && *at > up), "no 201 after the restart");
    let acknowledged = acknowledged.lock().unwrap().clone();
    let mut stored = all_ids(&server);
    stored.sort();
    let lost: Vec<&String> = acknowledged.iter().filter(|id| stored.binary_search(id).is_err()).collect();
    assert!(lost.is_empty(), "{} acknowledged writes lost", lost.len());
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_token_made_or_revoked_anywhere_reaches_every_replica_at_once() {
    let schema = Schema::new("tokens");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory"]);
    let env_b = replica_env(&schema.url);
    // A config-file token on replica B keeps working beside the stored ones.
    std::fs::write(
        env_b.home.join("config.toml"),
        format!(
            "[store]\nurl = {:?}\n[[serve.tokens]]\nname = \"file\"\ntoken = \"file-token-0123456789\"\nread = [\"*\"]\n",
            schema.url
        ),
    )
    .unwrap();
    let a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    // Made with the CLI on a third machine (replica A's home).
    let output =
        env_a.brain().args(["token", "create", "--name", "fleet", "--write", "project/demo"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let bearer = format!("Bearer {}", String::from_utf8(output.stdout).unwrap().trim());
    let items = "/api/v2/items?project=demo";
    let wait_for = |server: &Server, header: &str, status: u16, what: &str| {
        let started = Instant::now();
        while server.request("GET", items, &[("Authorization", header)], None).status != status {
            assert!(started.elapsed() < Duration::from_secs(2), "{what} did not reach {} in 2 s", server.address);
            std::thread::sleep(Duration::from_millis(10));
        }
        started.elapsed()
    };
    let reached = [wait_for(&a, &bearer, 200, "the new token"), wait_for(&b, &bearer, 200, "the new token")];
    assert_eq!(b.request("GET", items, &[("Authorization", "Bearer file-token-0123456789")], None).status, 200);
    env_a.brain().args(["token", "revoke", "fleet"]).assert().success();
    let refused = [wait_for(&a, &bearer, 401, "the revocation"), wait_for(&b, &bearer, 401, "the revocation")];
    eprintln!("token reached replicas after {reached:?}; revocation after {refused:?}");
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn only_one_replica_runs_each_scheduled_tick() {
    let schema = Schema::new("tick");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory"]);
    let env_b = replica_env(&schema.url);
    // One vault on a "shared volume": both homes point at it.
    let vault = env_a.dir.path().join("shared-vault");
    env_a.brain().args(["vault", "init", "--vault", vault.to_str().unwrap()]).assert().success();
    let config = |env: &Env| {
        let text = format!(
            "[store]\nurl = {:?}\n[vault]\npath = {:?}\n[serve]\ntick_interval_secs = 3\n",
            schema.url,
            vault.display().to_string()
        );
        std::fs::write(env.home.join("config.toml"), text).unwrap();
    };
    config(&env_a);
    config(&env_b);
    let a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    std::thread::sleep(Duration::from_millis(10_500));
    let last = b.get("/api/v2/tick").json()["last"].clone();
    assert_eq!(a.get("/api/v2/tick").json()["last"], last, "both replicas show the same record");
    let history: Vec<i64> = last["history"]
        .as_array()
        .unwrap_or_else(|| panic!("no tick ran: {last}"))
        .iter()
        .map(|at| jiff::Timestamp::from_str(at.as_str().unwrap()).unwrap().as_second())
        .collect();
    assert!(history.len() >= 2, "{history:?}");
    // One tick per interval between them: no two runs closer than the interval (whole
    // seconds, so one less), which two replicas ticking on their own would not keep.
    for pair in history.windows(2) {
        assert!(pair[1] - pair[0] >= 2, "two ticks {} s apart: {history:?}", pair[1] - pair[0]);
    }
}

#[test]
#[ignore = "needs PostgreSQL, NATS (127.0.0.1:4222) and Redis (127.0.0.1:6379)"]
fn a_critical_signal_is_published_once_per_fleet_to_nats_and_redis_and_evented_on_every_replica() {
    let schema = Schema::new("signals");
    let env_a = postgres_env(&schema);
    env_a.remember(&["--title", "Seed memory"]);
    let env_b = replica_env(&schema.url);
    let subject = format!("brain.test.{}", std::process::id());
    let stream = format!("brain:test:{}:{}", std::process::id(), schema.url.len());
    let config = format!(
        "[store]\nurl = {:?}\n[serve]\nsignals_nats_url = \"nats://127.0.0.1:4222\"\nsignals_nats_subject = {subject:?}\n\
         signals_redis_url = \"redis://127.0.0.1:6379\"\nsignals_redis_stream = {stream:?}\n",
        schema.url
    );
    std::fs::write(env_a.home.join("config.toml"), &config).unwrap();
    std::fs::write(env_b.home.join("config.toml"), &config).unwrap();
    // A subscriber on NATS before anything is published.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut subscriber = runtime.block_on(async {
        let client = async_nats::connect("nats://127.0.0.1:4222").await.expect("NATS on 127.0.0.1:4222");
        let subscriber = client.subscribe(format!("{subject}.>")).await.unwrap();
        client.flush().await.unwrap();
        (client, subscriber)
    });
    let a = Server::start(&env_a, &[]);
    let b = Server::start(&env_b, &[]);
    let mut events_b = crate::fleet::EventStream::open(&b, None);
    let created = a.json(
        "POST",
        "/api/v2/items?project=demo",
        &json!({"kind": "signal", "severity": "nuclear", "title": "Primary database lost", "content": "fail over now"}),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_string();
    // Every replica's clients hear of it...
    assert!(events_b.wait_for(&id, Duration::from_secs(5)), "{}", events_b.seen);
    // ...and the bus gets it exactly once, though both replicas saw it.
    let messages: Vec<(String, serde_json::Value)> = runtime.block_on(async {
        use futures_util::StreamExt;
        let mut received = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(6);
        while let Ok(Some(message)) = tokio::time::timeout_at(deadline, subscriber.1.next()).await {
            received.push((message.subject.to_string(), serde_json::from_slice(&message.payload).unwrap()));
        }
        received
    });
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].0, format!("{subject}.nuclear"));
    let message = &messages[0].1;
    assert_eq!((message["type"].as_str(), message["id"].as_str()), (Some("brain.signal"), Some(id.as_str())));
    assert_eq!((message["severity"].as_str(), message["scope"].as_str()), (Some("nuclear"), Some("project/demo")));
    let mut redis = redis::Client::open("redis://127.0.0.1:6379").unwrap().get_connection().expect("Redis on 6379");
    let entries: Vec<(String, Vec<(String, String)>)> =
        redis::cmd("XRANGE").arg(&stream).arg("-").arg("+").query(&mut redis).unwrap();
    let _: i64 = redis::cmd("DEL").arg(&stream).query(&mut redis).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let fields: std::collections::HashMap<String, String> = entries[0].1.iter().cloned().collect();
    assert_eq!(fields.get("id"), Some(&id));
    let json: serde_json::Value = serde_json::from_str(&fields["json"]).unwrap();
    assert_eq!(&json["text"], "fail over now");
    // The one signal model's shape, on both sinks.
    assert_eq!((&message["origin"], &message["title"]), (&json!("item"), &json!("Primary database lost")));
    assert_eq!(
        (&json["origin"], &json["title"], &json["project"]),
        (&json!("item"), &json!("Primary database lost"), &json!("demo"))
    );
    assert!(json["createdAt"].is_string() && json["publishedAt"].is_string(), "{json}");
}
