//! A minimal MCP client over stdio for the tests: `brain mcp` in a test home.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::Env;

/// A minimal MCP client over stdio (newline-delimited JSON-RPC).
pub struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Mcp {
    pub fn start(env: &Env) -> Mcp {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("brain"))
            .env_clear()
            .env("HOME", env.dir.path())
            .env("BRAIN_HOME", &env.home)
            .current_dir(&env.project_dir)
            .args(["--now", crate::NOW, "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp { child, stdin, stdout, next_id: 1 };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "brain-it", "version": "1"}}),
        );
        writeln!(mcp.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        mcp
    }

    /// Sends a request and returns the whole answer line (the raw text, as a client sees it).
    pub fn request(&mut self, method: &str, params: Value) -> String {
        let id = self.next_id;
        self.next_id += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "brain mcp closed its stdout");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return line;
            }
        }
    }

    pub fn call(&mut self, tool: &str, arguments: Value) -> String {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
