//! A crash harness shared by the crash tests (import and capture in `reliability_crash`;
//! scan, tick and graduation in `vault_crash`): run a `brain` command, `kill -9` it at a chosen moment, then
//! judge what it left — stray temporary files, the store, the files it writes.
//!
//! ```ignore
//! let full = crash_support::time_full_run(|| env.brain_command(&args));
//! for (trial, at) in crash_support::kill_points(full, trials, seed).into_iter().enumerate() {
//!     let killed = crash_support::run_and_kill(env.brain_command(&args), at);
//!     // … doctor passes, all or nothing, the next run completes, no stray files …
//! }
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::secrets_support::Rng;
use crate::{Env, NOW};

/// `brain` on another home (a trial's copy), from the project folder, at the fixed time.
pub fn brain(env: &Env, home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("brain"));
    command
        .env_clear()
        .env("HOME", env.dir.path())
        .env("BRAIN_HOME", home)
        .current_dir(&env.project_dir)
        .args(["--now", NOW])
        .args(args);
    command
}

/// What one trial did.
#[derive(Debug)]
pub struct Killed {
    /// The process was still running at the kill point (else it had finished).
    pub killed: bool,
    /// When it was killed (or finished), from its start.
    pub after: Duration,
}

/// Runs `command` (stdout and stderr discarded) and sends SIGKILL at `at` unless it has
/// exited by then; waits for it either way.
pub fn run_and_kill(mut command: Command, at: Duration) -> Killed {
    let started = Instant::now();
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
    loop {
        if child.try_wait().expect("wait").is_some() {
            return Killed { killed: false, after: started.elapsed() };
        }
        if started.elapsed() >= at {
            // `Child::kill` is SIGKILL on Unix: no destructor, no signal handler runs.
            child.kill().expect("kill -9");
            child.wait().expect("reap");
            return Killed { killed: true, after: started.elapsed() };
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// How long an uninterrupted run takes (it must succeed).
pub fn time_full_run(mut command: Command) -> Duration {
    let started = Instant::now();
    let output = command.output().expect("run");
    assert!(output.status.success(), "the uninterrupted run failed: {}", String::from_utf8_lossy(&output.stderr));
    started.elapsed()
}

/// `trials` kill points spread over the whole run, each jittered within its slice;
/// deterministic for a seed.
pub fn kill_points(full: Duration, trials: usize, seed: u64) -> Vec<Duration> {
    let mut rng = Rng::new(seed);
    let span = full.as_secs_f64();
    (0..trials)
        .map(|trial| {
            let slice = span / trials as f64;
            let jitter = (rng.next() % 1000) as f64 / 1000.0;
            Duration::from_secs_f64(slice * (trial as f64 + jitter))
        })
        .collect()
}

/// Files under `root` that look like an interrupted write: brain's temp files
/// (`.<name>.brain-<pid>-<n>.tmp`, `*.tmp`), a claimed access log of a dead process, SQLite's
/// rollback journal. (`brain.db-wal`/`-shm` belong to a WAL database, not to a crash.)
pub fn stray_files(root: &Path) -> Vec<PathBuf> {
    files_under(root)
        .into_iter()
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let claimed_access_log = name.starts_with("access.jsonl.");
            name.ends_with(".tmp") || name.contains(".brain-") || name.ends_with("-journal") || claimed_access_log
        })
        .collect()
}

/// Every file below `root` (folders walked, unreadable ones skipped), sorted.
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Copies a folder tree (a prepared home), so each trial starts from the same state.
pub fn copy_tree(source: &Path, target: &Path) {
    std::fs::create_dir_all(target).unwrap();
    for entry in std::fs::read_dir(source).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &target.join(entry.file_name()));
        } else {
            std::fs::copy(&path, target.join(entry.file_name())).unwrap();
        }
    }
}

/// How many trials: `BRAIN_CRASH_TRIALS` (`.ci/run` asks for more), else `default`.
pub fn trials(default: usize) -> usize {
    std::env::var("BRAIN_CRASH_TRIALS").ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}
