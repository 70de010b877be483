//! Hooks under hostile input (issue 11): stdin that never closes, transcripts that are
//! FIFOs, devices, directories, huge lines, huge files; hostile session ids and paths. Every
//! hook must exit 0 with a valid payload within `[hooks] timeout_ms` (plus process start-up:
//! the wall-time bounds below are generous upper limits that only catch hangs), log why,
//! and keep memory bounded (checked under `ulimit -v`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::Env;

/// The hooks' deadline in these tests.
const TIMEOUT_MS: u64 = 1000;
/// Generous: a hook that takes longer than this hangs.
const HANG: Duration = Duration::from_millis(TIMEOUT_MS + 2000);
/// Virtual memory allowed to a hook under `ulimit -v` (KiB). A normal hook runs in far less
/// (measured: under 200 MiB of address space, most of it the store's map and thread stacks);
/// holding a 1 GiB line or /dev/zero whole would not fit.
const ULIMIT_KB: u64 = 300 * 1024;

fn env() -> Env {
    let env = Env::new();
    std::fs::write(env.home.join("config.toml"), format!("[hooks]\ntimeout_ms = {TIMEOUT_MS}\n")).unwrap();
    env
}

/// `brain … hook EVENT` as a plain process (so stdin can be held open), optionally under
/// `ulimit -v`.
fn hook_command(env: &Env, event: &str, ulimit_kb: Option<u64>) -> Command {
    let binary = assert_cmd::cargo::cargo_bin("brain");
    let mut command = match ulimit_kb {
        Some(limit) => {
            let mut shell = Command::new("sh");
            shell.arg("-c").arg(format!("ulimit -v {limit} && exec \"$0\" \"$@\"")).arg(binary);
            shell
        }
        None => Command::new(binary),
    };
    command
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", &env.home)
        .current_dir(&env.project_dir)
        .args(["--now", crate::NOW, "hook", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for `child` at most [`HANG`] (then kills it and fails): its output and wall time.
fn finish(mut child: Child, started: Instant) -> (Output, Duration) {
    loop {
        if child.try_wait().unwrap().is_some() {
            let elapsed = started.elapsed();
            return (child.wait_with_output().unwrap(), elapsed);
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!("the hook hangs (> {HANG:?}); stderr: {}", String::from_utf8_lossy(&output.stderr));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs a hook with `stdin` written and then either closed or held open until it exits.
fn run_hook(env: &Env, event: &str, stdin: &[u8], hold_open: bool, ulimit_kb: Option<u64>) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = hook_command(env, event, ulimit_kb).spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let _ = pipe.write_all(stdin);
    let held = if hold_open { Some(pipe) } else { None };
    let result = finish(child, started);
    drop(held);
    result
}

fn log(env: &Env) -> String {
    std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap_or_default()
}

/// Exit 0 and the event's valid payload: session-start always prints one, the others print
/// nothing or one payload.
fn assert_valid(event: &str, output: &Output) -> serde_json::Value {
    assert_eq!(output.status.code(), Some(0), "{event}: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    if event != "session-start" && stdout.is_empty() {
        return serde_json::Value::Null;
    }
    let json: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{event}: {err}: {stdout}"));
    assert!(json["hookSpecificOutput"]["additionalContext"].is_string(), "{event}: {json}");
    json
}

const EVENTS: [&str; 4] = ["session-start", "user-prompt-submit", "stop", "session-end"];

#[test]
fn stdin_held_open_after_the_object_does_not_hold_any_hook() {
    let env = env();
    for event in EVENTS {
        let input = serde_json::json!({"session_id": "held", "transcript_path": "/nope.jsonl", "cwd": env.project_dir});
        let (output, elapsed) = run_hook(&env, event, input.to_string().as_bytes(), true, None);
        let json = assert_valid(event, &output);
        assert!(elapsed < HANG, "{event} waited for stdin to close: {elapsed:?}");
        // The object was complete: the hook did its work rather than time out.
        if event == "session-start" {
            assert!(json["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("Working memory"));
        }
    }
    assert!(!log(&env).contains("timed out"), "{}", log(&env));
}

#[test]
fn stdin_that_never_ends_costs_at_most_the_deadline() {
    let env = env();
    for (event, stdin) in [
        ("session-start", &b""[..]),
        ("user-prompt-submit", b"{\"session_id\": \"s1\", \"prompt\": \"half a"),
        ("stop", b"   "),
        ("session-end", b"{"),
    ] {
        let (output, elapsed) = run_hook(&env, event, stdin, true, None);
        assert_valid(event, &output);
        if event == "session-start" {
            assert_eq!(assert_valid(event, &output)["hookSpecificOutput"]["additionalContext"], "");
        }
        assert!(elapsed >= Duration::from_millis(TIMEOUT_MS) && elapsed < HANG, "{event}: {elapsed:?}");
        assert!(log(&env).contains(&format!(" {event}: timed out after {TIMEOUT_MS} ms")), "{event}: {}", log(&env));
    }
}

#[test]
fn oversized_stdin_is_refused_after_its_bound() {
    let env = env();
    let mut input = b"{\"session_id\": \"big\", \"prompt\": \"".to_vec();
    input.resize(9 * 1024 * 1024, b'a');
    input.extend_from_slice(b"\"}");
    for event in ["session-start", "user-prompt-submit"] {
        let (output, elapsed) = run_hook(&env, event, &input, false, Some(ULIMIT_KB));
        assert_valid(event, &output);
        assert!(elapsed < HANG);
        assert!(log(&env).contains(&format!("{event}: hook input is larger than 8 MiB")), "{}", log(&env));
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Transcripts that are not regular files are skipped without being opened for blocking
/// reads: /dev/zero (directly and through a symlink), a FIFO nobody writes, a directory.
#[cfg(unix)]
#[test]
fn transcripts_that_are_not_regular_files_are_skipped_at_once() {
    let env = env();
    let fifo = env.dir.path().join("fifo.jsonl");
    mkfifo(&fifo);
    let link = env.dir.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let cases: [(PathBuf, &str); 4] = [
        (PathBuf::from("/dev/zero"), "a character device"),
        (link, "a character device"),
        (fifo, "a FIFO"),
        (env.dir.path().to_path_buf(), "a directory"),
    ];
    for (path, kind) in &cases {
        for event in ["stop", "session-end"] {
            let input = serde_json::json!({"session_id": "s-dev", "transcript_path": path});
            let (output, elapsed) = run_hook(&env, event, input.to_string().as_bytes(), false, Some(ULIMIT_KB));
            assert_valid(event, &output);
            assert!(output.stdout.is_empty());
            assert!(elapsed < HANG, "{event} {path:?}: {elapsed:?}");
            let expected =
                format!("{event}: cannot read transcript {}: not a regular file ({kind}); skipped", path.display());
            assert!(log(&env).contains(&expected), "{expected}\n{}", log(&env));
        }
    }
}

/// A transcript line of 50 MB without a line break, and a 1 GiB file of zeros without one:
/// read with bounded memory (under `ulimit -v`), within the deadline, the line skipped and
/// logged; the next capture goes on where this one stopped.
#[test]
fn huge_lines_and_huge_files_are_read_within_bounds() {
    let env = env();
    let transcripts = env.dir.path().join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let line = transcripts.join("long-line.jsonl");
    let mut text = br#"{"type":"user","timestamp":"2026-11-21T08:00:00Z","message":{"content":"before"}}"#.to_vec();
    text.push(b'\n');
    text.extend_from_slice(br#"{"type":"user","message":{"content":""#);
    text.resize(text.len() + 50 * 1024 * 1024, b'x');
    std::fs::write(&line, &text).unwrap();
    let input = serde_json::json!({"session_id": "long-line", "transcript_path": line});
    let (output, elapsed) = run_hook(&env, "stop", input.to_string().as_bytes(), false, Some(ULIMIT_KB));
    assert_valid("stop", &output);
    assert!(elapsed < HANG, "{elapsed:?}");
    assert!(log(&env).contains("skipped 1 line(s) longer than 16 MiB"), "{}", log(&env));

    // The line ends later: the next capture skips the rest of it and reads what follows.
    let mut file = std::fs::File::options().append(true).open(&line).unwrap();
    file.write_all(
        b"\"}}\n{\"type\":\"user\",\"timestamp\":\"2026-11-21T08:05:00Z\",\"message\":{\"content\":\"after\"}}\n",
    )
    .unwrap();
    drop(file);
    let (output, _) = run_hook(&env, "stop", input.to_string().as_bytes(), false, Some(ULIMIT_KB));
    assert_valid("stop", &output);
    let state = std::fs::read_to_string(env.home.join("capture/sessions/transcripts.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(state.lines().last().unwrap()).unwrap();
    assert_eq!(last["summary"]["turns"], 2, "before and after are prompts: {last}");
    assert_eq!(last["summary"]["lines"]["oversized"], 1);
    assert_eq!(last["skipping"], false);

    let zeros = transcripts.join("zeros.jsonl");
    std::fs::File::create(&zeros).unwrap().set_len(1024 * 1024 * 1024).unwrap();
    let input = serde_json::json!({"session_id": "zeros", "transcript_path": zeros});
    for event in ["stop", "session-end"] {
        let (output, elapsed) = run_hook(&env, event, input.to_string().as_bytes(), false, Some(ULIMIT_KB));
        assert_valid(event, &output);
        assert!(elapsed < HANG, "{event}: {elapsed:?}");
    }
    assert!(log(&env).contains("within the deadline; the next capture reads on"), "{}", log(&env));
}

/// A hostile session id never reaches a file name or the log as written, and a 200 KB
/// transcript path (with terminal escapes) becomes one bounded, printable log line.
#[test]
fn hostile_session_ids_and_paths_are_bounded_and_sanitised_in_logs_and_file_names() {
    let env = env();
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let session = format!("../../{secret}\u{1b}[31m/evil");
    let input = serde_json::json!({"session_id": session, "cwd": env.project_dir, "prompt": "hi"});
    let (output, _) = run_hook(&env, "user-prompt-submit", input.to_string().as_bytes(), false, None);
    assert_valid("user-prompt-submit", &output);
    let names: Vec<String> = std::fs::read_dir(env.home.join("hooks/sessions"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1);
    assert!(names[0].starts_with("h-") && !names[0].contains(secret), "{names:?}");

    let long_path = format!("/tmp/{}\u{1b}]0;owned\u{7}/{secret}/x.jsonl", "d/".repeat(100_000));
    let input = serde_json::json!({"session_id": session, "transcript_path": long_path});
    let (output, _) = run_hook(&env, "stop", input.to_string().as_bytes(), false, None);
    assert_valid("stop", &output);
    let (output, _) = run_hook(&env, "session-start", b"{\"session_id\": 7, \"cwd\": \"\\u0000\"}", false, None);
    assert_valid("session-start", &output);
    let (output, _) = run_hook(&env, "stop", format!("{{\"session_id\": \"{secret}\"}}").as_bytes(), false, None);
    assert_valid("stop", &output);
    let log = log(&env);
    assert!(!log.is_empty());
    for line in log.lines() {
        assert!(line.chars().count() < 1200, "unbounded log line: {} chars", line.chars().count());
        assert!(!line.contains(secret), "{line}");
        assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
    }
    assert!(log.contains(" stop: cannot read transcript /tmp/d/d/d/"), "{log}");
    assert!(log.contains(" stop: hook input has no transcript_path"), "{log}");
    assert!(!log.contains("session=../"), "{log}");
    assert_eq!(log.matches("session=h-").count(), 2, "both hostile ids are hashed: {log}");
    assert!(!log.contains("timed out"), "{log}");
}
