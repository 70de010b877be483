//! End-to-end tests of the `brain` binary: hermetic homes, a fixed clock, cleared env.

mod ai_items;
mod capture;
mod cli_bad_input;
mod cli_concurrency;
mod cli_context;
mod cli_items;
mod crash_support;
mod fleet;
mod fleet_replicas;
mod hook_bounds;
mod hosts;
mod lean_assembly;
mod mcp;
mod mcp_support;
mod project_ties;
mod real_hosts;
mod release;
mod reliability;
mod reliability_config;
mod reliability_crash;
mod remote;
mod search;
mod secrets;
mod secrets_support;
mod semantic;
mod serve;
mod serve_fairness;
mod serve_security;
mod session_start;
mod setup;
mod signals;
mod sync;
mod usage;
mod vault_ai;
mod vault_bounds;
mod vault_crash;
mod vault_doctor;
mod vault_keeper;
mod vault_mark;
mod vault_projects;
mod vault_scan;
mod vault_support;
mod vault_tick;

use std::path::{Path, PathBuf};

pub const NOW: &str = "2026-11-21T10:00:00Z";

/// A temp home plus a project folder (with `.brain.toml` naming project `demo`).
pub struct Env {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project_dir: PathBuf,
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

impl Env {
    /// This home's brain opened in the test's process (as a command would, project from the
    /// project folder, clock at [`NOW`]), for tests that drive the library directly.
    pub fn open_brain(&self) -> brain_api::app::Brain {
        let context = brain_api::app::Context {
            home: self.home.clone(),
            cwd: self.project_dir.clone(),
            project: None,
            now: NOW.parse().unwrap(),
            env: brain_api::config::Environment::default(),
        };
        brain_api::app::Brain::open(&context).unwrap()
    }

    /// A home that has been `brain init`-ed.
    pub fn new() -> Env {
        let env = Env::uninitialized();
        env.brain().arg("init").assert().success();
        env
    }

    pub fn uninitialized() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project_dir = dir.path().join("work/demo-repo");
        std::fs::create_dir_all(&project_dir).unwrap();
        std::fs::write(project_dir.join(".brain.toml"), "project = \"demo\"\n").unwrap();
        Env { dir, home, project_dir }
    }

    /// `brain` with a cleared environment, this home, the project folder and a fixed clock.
    pub fn brain(&self) -> assert_cmd::Command {
        let mut command = assert_cmd::Command::cargo_bin("brain").unwrap();
        command
            .env_clear()
            .env("HOME", self.dir.path())
            .env("BRAIN_HOME", &self.home)
            .current_dir(&self.project_dir)
            .args(["--now", NOW]);
        command
    }

    /// `brain … --json` parsed.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let output = self.brain().args(args).arg("--json").output().unwrap();
        assert!(output.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// Adds an item and returns its id.
    pub fn remember(&self, args: &[&str]) -> String {
        let item = self.json(&[&["remember"], args].concat());
        item["id"].as_str().unwrap().to_string()
    }

    /// Everything in the store, as the export text (a fingerprint of the store's state).
    pub fn export(&self) -> String {
        let output = self.brain().arg("export").output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn db(&self) -> PathBuf {
        self.home.join("brain.db")
    }
}

/// Bytes of a file (for "unchanged" checks).
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// One HTTP/1.1 request read off `stream` by a fake server of a test: its request line and
/// headers as sent, and its body (`content-length` bytes; a short read leaves zeros).
pub fn read_http_request(stream: &std::net::TcpStream) -> (String, Vec<u8>) {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(stream);
    let (mut head, mut length) = (String::new(), 0);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    (head, body)
}
