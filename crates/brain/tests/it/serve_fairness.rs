//! `brain serve` shared fairly: one token or one address holding event streams or trickling
//! request bodies gets 429 beyond its share, while `/healthz` and other tokens are served;
//! a body that does not arrive within its deadline is cut off.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::serve::{READER, Response, Server, WRITER, parse_response, seeded, with_tokens};

/// Reads one response head and its `content-length` body off `reader` (the connection may
/// stay open), after `status_line` if it was read already.
fn read_response_after(reader: &mut BufReader<TcpStream>, status_line: &str) -> Response {
    let mut raw = status_line.as_bytes().to_vec();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        raw.extend_from_slice(line.as_bytes());
        if line == "\r\n" {
            break;
        }
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    raw.extend_from_slice(&body);
    parse_response(&raw)
}

fn read_response(reader: &mut BufReader<TcpStream>) -> Response {
    read_response_after(reader, "")
}

/// Opens `GET /api/v2/events` on a connection of its own: the open stream once its `ready`
/// event arrived, or the server's refusal.
fn open_stream(server: &Server, token: Option<&str>) -> Result<BufReader<TcpStream>, Response> {
    let mut stream = TcpStream::connect(&server.address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
    write!(
        stream,
        "GET /api/v2/events HTTP/1.1\r\nHost: {}\r\n{auth}Accept: text/event-stream\r\n\r\n",
        server.address
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    if !status.starts_with("HTTP/1.1 200") {
        return Err(read_response_after(&mut reader, &status));
    }
    let mut seen = String::new();
    while !seen.contains("event: ready") {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended before ready: {seen}");
        seen.push_str(&line);
    }
    Ok(reader)
}

/// Asserts a refusal for a share: 429, `Retry-After`, a JSON error naming the bound.
fn assert_refused_by(refused: &Response, code: &str, bound: &str) {
    assert_eq!(refused.status, 429, "{}", refused.text());
    assert_eq!(refused.error_code(), code, "{}", refused.text());
    let message = refused.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains(&format!("[serve] {bound}")), "the refusal does not name {bound}: {message}");
    assert!(refused.header("retry-after").is_some_and(|after| after.parse::<u64>().is_ok()), "{:?}", refused.headers);
}

#[test]
fn one_token_holding_event_streams_leaves_room_for_healthz_and_other_tokens() {
    let env = seeded();
    with_tokens(&env);
    let tokens = std::fs::read_to_string(env.home.join("config.toml")).unwrap();
    // Few connections, so that the attack of the report (a stream per connection until every
    // connection is held) is quick; the shares are the defaults, which follow the bound.
    std::fs::write(env.home.join("config.toml"), format!("[serve]\nmax_connections = 24\n{tokens}")).unwrap();
    let server = Server::start(&env, &[]);
    let mut held = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..24 {
        match open_stream(&server, Some(READER)) {
            Ok(stream) => held.push(stream),
            Err(response) => refused.push(response),
        }
    }
    // The server is still there for everyone else: liveness, and another token's stream and
    // request.
    let health = server.get("/healthz");
    assert_eq!(health.status, 200, "{}", health.text());
    let other_stream = open_stream(&server, Some(WRITER));
    assert!(other_stream.is_ok(), "another token's stream was refused: {:?}", other_stream.err());
    let writer = format!("Bearer {WRITER}");
    let read = server.request("GET", "/api/v2/brain?project=demo", &[("Authorization", &writer)], None);
    assert_eq!(read.status, 200, "{}", read.text());
    // The one token got a share, at most a quarter of the connections, and then 429s.
    assert!(!held.is_empty() && held.len() <= 6, "{} streams held by one token", held.len());
    assert_eq!(held.len() + refused.len(), 24);
    assert_refused_by(&refused[0], "too_many_streams", "max_streams_per_token");
    // Its streams closed, the token may open new ones (the server notices the closed sockets).
    drop(held);
    let started = Instant::now();
    while let Err(refusal) = open_stream(&server, Some(READER)) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "closed streams were never given back: {}",
            refusal.text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn one_address_gets_a_share_of_streams_without_tokens() {
    let env = seeded();
    std::fs::write(env.home.join("config.toml"), "[serve]\nmax_streams_per_peer = 3\n").unwrap();
    let server = Server::start(&env, &[]);
    let held: Vec<_> = (0..3).map(|_| open_stream(&server, None).expect("a stream within the share")).collect();
    let refused = open_stream(&server, None).expect_err("a fourth stream from one address");
    assert_refused_by(&refused, "too_many_streams", "max_streams_per_peer");
    // Requests that are not streams are still served to that address.
    assert_eq!(server.get("/healthz").status, 200);
    assert_eq!(server.get("/api/v2/brain?project=demo").status, 200);
    assert_eq!(held.len(), 3);
}

/// Whether the server has already answered on `reader`'s connection (without blocking).
fn answered(reader: &mut BufReader<TcpStream>) -> bool {
    if !reader.buffer().is_empty() {
        return true;
    }
    let socket = reader.get_ref();
    socket.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let ready = matches!(socket.peek(&mut byte), Ok(count) if count > 0);
    socket.set_nonblocking(false).unwrap();
    ready
}

/// Sends the head of a `POST /api/v2/sync/push` announcing `length` bytes, then one byte of
/// body every 100 ms on a thread of its own (until the server stops reading).
fn trickle_push(address: &str, length: usize) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(45))).unwrap();
    write!(
        stream,
        "POST /api/v2/sync/push HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {length}\r\n\r\n{{"
    )
    .unwrap();
    let mut writer = stream.try_clone().unwrap();
    std::thread::spawn(move || {
        for _ in 0..length {
            std::thread::sleep(Duration::from_millis(100));
            if writer.write_all(b" ").is_err() {
                return;
            }
        }
    });
    BufReader::new(stream)
}

#[test]
fn a_trickled_body_is_cut_off_at_its_deadline_and_one_address_holds_few_requests() {
    let env = seeded();
    // The request timeout alone would hold a trickled body for two minutes.
    std::fs::write(
        env.home.join("config.toml"),
        "[serve]\nbody_timeout_secs = 20\nrequest_timeout_secs = 120\nmax_requests_per_peer = 3\n",
    )
    .unwrap();
    let server = Server::start(&env, &[]);
    let started = Instant::now();
    let mut trickles: Vec<_> = (0..3).map(|_| trickle_push(&server.address, 1000)).collect();
    // While three trickles are held, a fourth request from the same address is refused. The
    // trickles reach the server in their own time, and one that arrives while a probe below is
    // in flight is itself refused (the share is full): such a trickle is replaced, and the
    // probe's refusal counts only when no trickle was answered.
    let refused = loop {
        for trickle in &mut trickles {
            if answered(trickle) {
                *trickle = trickle_push(&server.address, 1000);
            }
        }
        let response = server.get("/api/v2/items?project=demo&limit=1");
        if response.status == 429 && !trickles.iter_mut().any(answered) {
            break response;
        }
        assert!(matches!(response.status, 200 | 429), "{}", response.text());
        assert!(started.elapsed() < Duration::from_secs(19), "the trickles were never counted: {}", server.log());
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_refused_by(&refused, "too_many_requests", "max_requests_per_peer");
    // Each trickle is cut off at its deadline with a JSON 408 naming it.
    for trickle in &mut trickles {
        let response = read_response(trickle);
        assert_eq!(response.status, 408, "{}", response.text());
        assert_eq!(response.error_code(), "body_timeout");
        assert!(response.text().contains("[serve] body_timeout_secs"), "{}", response.text());
    }
    let cut_off = started.elapsed();
    assert!(cut_off < Duration::from_secs(45), "the trickles were held for {cut_off:?}");
    // Their share given back, the address is served again.
    assert_eq!(server.get("/api/v2/brain?project=demo").status, 200);
}
