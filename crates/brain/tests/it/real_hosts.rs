//! The real agent hosts — Claude Code, Codex, Gemini CLI, Qwen Code, GitHub Copilot CLI,
//! OpenCode and Cline from npm — run offline against settings written by `brain hook install`, with a fake model
//! server on loopback (`tests/hosts/fake_model.py`) behind each host's base-URL setting. Each
//! host must accept the installed settings, run brain's session-start hook (whose context must
//! reach the model: the fake server sees it in the request) and its other hooks (the session is
//! captured), with nothing in `hooks.log`. For the newer hosts the test also finds the task's
//! recall in the request and makes an arc of the captured session that names the host.
//!
//! Ignored by `cargo test`: `.ci/run` installs the CLIs with npm (versions pinned there) into a
//! throw-away prefix and runs it with `BRAIN_TEST_HOSTS_BIN=<prefix>/node_modules/.bin`. Cursor
//! has no CLI that runs here (its agent is the editor); its hooks are tested with documented
//! payloads (`tests/it/hosts.rs`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Env;

/// A memory only this test writes: the fake model must see it in what the host sends.
const MARKER: &str = "Quokka deploy protocol";
/// The prompt of the newer hosts' tests: its task recalls [`RECALLED`], which the working
/// memory leaves out (see [`Stage::seed_task_memories`]).
const TASK: &str = "why do our webhook retries back off like this?";
const RECALLED: &str = "Webhook retries use jitter";
/// The working memory's heading: once in a request means the session start was given once.
const WORKING_MEMORY: &str = "# Working memory";

struct FakeModel {
    child: Child,
    port: u16,
    log: PathBuf,
    bodies: PathBuf,
}

impl FakeModel {
    fn start(dir: &Path) -> FakeModel {
        let log = dir.join("model-requests.log");
        let bodies = dir.join("model-requests.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/fake_model.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(["--log", log.to_str().unwrap(), "--bodies", bodies.to_str().unwrap(), "--marker", MARKER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the fake model server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port =
            line.trim().strip_prefix("listening ").and_then(|port| port.parse().ok()).expect("the server's port");
        FakeModel { child, port, log, bodies }
    }

    fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The body of the first chat-completions request that offers tools and holds `text`
    /// (the agent's first model request for that prompt, not a side call such as a title), as
    /// sent.
    fn chat_request_with(&self, text: &str) -> String {
        let bodies = std::fs::read_to_string(&self.bodies).unwrap_or_default();
        bodies
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|request| request["path"].as_str().is_some_and(|path| path.ends_with("/chat/completions")))
            .filter(|request| request["body"]["tools"].as_array().is_some_and(|tools| !tools.is_empty()))
            .map(|request| request["body"].to_string())
            .find(|body| body.contains(text))
            .unwrap_or_else(|| panic!("no chat-completions request with tools holds {text:?}: {}", self.requests()))
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        // Closing stdin stops it; kill in case it does not.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_with_timeout(mut command: Command, what: &str) -> std::process::Output {
    let started = Instant::now();
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!("{what} did not finish in 120 s: {}", String::from_utf8_lossy(&output.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Everything both tests share: a temp project (a git repository), a user home, a brain home
/// with a space in its path, the brain binary under a path with a space, the fake model
/// server, and the hosts' CLIs.
pub(crate) struct Stage {
    pub(crate) env: Env,
    model: FakeModel,
    base: String,
    bin_dir: PathBuf,
    pub(crate) path: String,
    pub(crate) user_home: PathBuf,
    pub(crate) brain_home: PathBuf,
    pub(crate) brain_bin: PathBuf,
}

impl Stage {
    pub(crate) fn new() -> Stage {
        let bin_dir =
            PathBuf::from(std::env::var("BRAIN_TEST_HOSTS_BIN").expect(
                "BRAIN_TEST_HOSTS_BIN must name node_modules/.bin holding claude, codex and gemini (see .ci/run)",
            ));
        let env = Env::new();
        let dir = env.dir.path().to_path_buf();
        let model = FakeModel::start(&dir);
        let base = format!("http://127.0.0.1:{}", model.port);
        let user_home = dir.join("user home");
        std::fs::create_dir_all(user_home.join(".codex")).unwrap();
        assert!(Command::new("git").args(["init", "-q"]).current_dir(&env.project_dir).status().unwrap().success());
        // A binary path with a space and a custom home: what the installed commands must survive.
        let brain_bin = dir.join("Program Files/brain");
        std::fs::create_dir_all(brain_bin.parent().unwrap()).unwrap();
        let original = assert_cmd::cargo::cargo_bin("brain");
        if std::fs::hard_link(&original, &brain_bin).is_err() {
            std::fs::copy(&original, &brain_bin).unwrap();
        }
        let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
        let stage = Stage { env, model, base, bin_dir, path, user_home, brain_home: dir.join("brain home"), brain_bin };
        stage.brain(&["init"]);
        stage.brain(&[
            "remember",
            "--title",
            MARKER,
            "--content",
            "Deploys wait for the quokka to nod",
            "--kind",
            "decision",
        ]);
        // Codex offline: a model provider on the fake server.
        std::fs::write(
            stage.user_home.join(".codex/config.toml"),
            format!(
                "model = \"gpt-fake\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_MODEL_KEY\"\n",
                stage.base
            ),
        )
        .unwrap();
        stage
    }

    /// `brain --home <brain home> ARGS` from the project, as the user; it must succeed. Its
    /// stdout.
    fn brain(&self, args: &[&str]) -> Vec<u8> {
        let output = Command::new(&self.brain_bin)
            .env_clear()
            .env("HOME", &self.user_home)
            .current_dir(&self.env.project_dir)
            .arg("--home")
            .arg(&self.brain_home)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "brain {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    }

    /// `brain --home <brain home> ARGS --json` from the project, parsed.
    fn brain_json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_slice(&self.brain(&[args, &["--json"]].concat())).unwrap()
    }

    /// Runs a host's CLI from the project; it must succeed. Its stdout and stderr.
    pub(crate) fn host(&self, program: &str, args: &[&str], vars: &[(&str, &str)]) -> String {
        let mut command = Command::new(self.bin_dir.join(program));
        command
            .env_clear()
            .env("HOME", &self.user_home)
            .env("PATH", &self.path)
            .current_dir(&self.env.project_dir)
            .args(args);
        for (name, value) in vars {
            command.env(name, value);
        }
        let output = run_with_timeout(command, program);
        let text = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{program} {args:?}: {text}");
        text
    }

    /// Claude Code and Codex (and Gemini CLI) answer one prompt through the fake model.
    pub(crate) fn ask(&self, hosts: &[&str]) {
        let prompt = "How do we deploy here?";
        for host in hosts {
            let output = match *host {
                "claude" => self.host(
                    "claude",
                    &["-p", prompt],
                    &[("ANTHROPIC_BASE_URL", &self.base), ("ANTHROPIC_API_KEY", "sk-ant-dummy")],
                ),
                // Codex runs user hooks once they are trusted (its /hooks view); automation bypasses.
                "codex" => self.host(
                    "codex",
                    &["exec", "--dangerously-bypass-hook-trust", prompt],
                    &[("FAKE_MODEL_KEY", "dummy")],
                ),
                _ => self.host(
                    "gemini",
                    &["-p", prompt],
                    &[
                        ("GEMINI_API_KEY", "dummy"),
                        ("GOOGLE_GEMINI_BASE_URL", &self.base),
                        ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
                    ],
                ),
            };
            assert!(output.contains("Done: the hook ran."), "{host}: {output}");
        }
    }

    /// Each API's request carried the memory brain injected at session start.
    pub(crate) fn assert_context_reached_the_model(&self, apis: &[&str]) {
        let requests = self.model.requests();
        for api in apis {
            let line = requests
                .lines()
                .find(|line| line.contains(api))
                .unwrap_or_else(|| panic!("no {api} request: {requests}"));
            assert!(
                line.ends_with("marker=yes"),
                "the session-start context did not reach the model: {line}\n{requests}"
            );
        }
        let log = std::fs::read_to_string(self.brain_home.join("logs/hooks.log")).unwrap_or_default();
        assert_eq!(log, "", "brain's hooks logged failures");
    }

    /// Memories for [`TASK`]: [`RECALLED`] (low importance, so the working memory leaves it
    /// out) and newer conventions the working memory prefers.
    fn seed_task_memories(&self) {
        let content = "Retry webhooks with exponential backoff and jitter, capped at 30 s";
        self.brain(&["remember", "--title", RECALLED, "--content", content, "--kind", "decision", "--importance", "1"]);
        for topic in
            ["logging format", "database pool size", "release checklist", "css naming", "ci cache", "error pages"]
        {
            let title = format!("Convention: {topic}");
            let content = format!("How we handle {topic} in this project");
            self.brain(&["remember", "--title", &title, "--content", &content, "--importance", "5"]);
        }
    }

    /// `request` (what the host sent the model with [`TASK`]) carries the working memory once
    /// and the task's recall once, and no hook logged a failure.
    fn assert_memory_reached_the_model_once(&self, host: &str, request: &str) {
        assert_eq!(request.matches(WORKING_MEMORY).count(), 1, "{host}: the working memory, once: {request}");
        assert_eq!(request.matches(RECALLED).count(), 1, "{host}: the task's recall, once: {request}");
        let log = std::fs::read_to_string(self.brain_home.join("logs/hooks.log")).unwrap_or_default();
        assert_eq!(log, "", "{host}: brain's hooks logged failures");
    }

    /// The session a hook captured (its state shard, named for the host) becomes an arc that
    /// names the host through `brain capture --agent HOST`, which reads the host's transcripts
    /// where the host keeps them (one prompt is a turn: `--min-turns 1`).
    fn assert_captured_into_an_arc(&self, host: &str) {
        self.await_capture(host);
        self.brain(&["capture", "--agent", host, "--min-turns", "1", "--since", "1d"]);
        let clusters = self.brain_home.join("vault/clusters");
        let arcs: Vec<String> = std::fs::read_dir(&clusters)
            .unwrap()
            .flatten()
            .flat_map(|day| std::fs::read_dir(day.path()).unwrap().flatten())
            .map(|file| std::fs::read_to_string(file.path()).unwrap())
            .collect();
        let arc = arcs.iter().find(|arc| arc.contains(&format!("hosts: [{host}]\n"))).unwrap_or_else(|| {
            panic!("{host}: no arc names the host: {arcs:?}");
        });
        assert!(arc.contains(TASK), "{host}: the arc holds the session's prompt: {arc}");
    }

    /// Waits (at most 30 s) for a hook to have captured a session of `host` (its state shard):
    /// Copilot CLI's capture runs after the CLI exits, in a brain its sessionEnd hook started.
    fn await_capture(&self, host: &str) {
        let waited = Instant::now();
        let prefix = format!("{host}-");
        while !self.brain_home.join("capture/sessions").is_dir()
            || !self.count("capture/sessions").iter().any(|name| name.starts_with(&prefix))
        {
            let log = std::fs::read_to_string(self.brain_home.join("logs/hooks.log")).unwrap_or_default();
            assert!(waited.elapsed() < Duration::from_secs(30), "{host}: no capture after 30 s; hooks.log: {log}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn count(&self, folder: &str) -> Vec<String> {
        std::fs::read_dir(self.brain_home.join(folder))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn real_hosts_accept_the_installed_settings_and_run_brains_hooks() {
    let stage = Stage::new();
    for host in ["claude-code", "codex", "gemini"] {
        stage.brain(&["hook", "install", "--agent", host]);
    }
    // Gemini CLI offline: key auth (its base URL alone selects a gateway it will not run).
    let gemini_settings = stage.user_home.join(".gemini/settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&gemini_settings).unwrap()).unwrap();
    settings["security"] = serde_json::json!({"auth": {"selectedType": "gemini-api-key"}});
    std::fs::write(&gemini_settings, settings.to_string()).unwrap();

    stage.ask(&["claude", "codex", "gemini"]);
    stage.assert_context_reached_the_model(&["/v1/messages", "/v1/responses", ":streamGenerateContent"]);
    // Each host's session was captured at its Stop / AfterAgent hook, in its own shard.
    let shards = stage.count("capture/sessions");
    for prefix in ["codex-", "gemini-"] {
        assert!(shards.iter().any(|name| name.starts_with(prefix)), "no {prefix} capture: {shards:?}");
    }
    assert!(
        shards.iter().any(|name| !name.starts_with("codex-") && !name.starts_with("gemini-")),
        "no Claude Code capture: {shards:?}"
    );
    assert_eq!(
        stage.count("hooks/sessions").len(),
        3,
        "one session state per host (session start and prompt hooks ran)"
    );
}

#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn real_hosts_install_brains_plugin_from_its_marketplace() {
    let stage = Stage::new();
    let marketplace = stage.env.dir.path().join("marketplace");
    stage.brain(&["plugin", "write", marketplace.to_str().unwrap()]);
    // Installed the way each host installs plugins: its own CLI, from the marketplace folder.
    let market = marketplace.to_str().unwrap();
    stage.host("claude", &["plugin", "marketplace", "add", market], &[]);
    stage.host("claude", &["plugin", "install", "brain@brain"], &[]);
    let details = stage.host("claude", &["plugin", "details", "brain@brain"], &[]);
    assert!(details.contains("brain-memory"), "the skill: {details}");
    assert!(details.contains("SessionStart, UserPromptSubmit, Stop, SessionEnd"), "the hooks: {details}");
    assert!(details.contains("MCP servers (1)  brain"), "the MCP server: {details}");
    stage.host("codex", &["plugin", "marketplace", "add", market], &[]);
    stage.host("codex", &["plugin", "add", "brain@brain"], &[]);
    let list = stage.host("codex", &["plugin", "list"], &[]);
    assert!(list.contains("brain@brain") && list.contains("installed, enabled"), "{list}");

    stage.ask(&["claude", "codex"]);
    stage.assert_context_reached_the_model(&["/v1/messages", "/v1/responses"]);
    assert_eq!(stage.count("hooks/sessions").len(), 2, "both hosts ran the plugin's hooks");
}

/// Qwen Code 0.15.10 runs no SessionStart hook with `-p` (and drops what one returns where it
/// does run), so `install --agent qwen` registers none and the first prompt's hook gives the
/// working memory with the task's recall: both must reach the model once. The Stop hook
/// captures the chat.
#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn qwen_code_runs_no_session_start_with_p_so_its_first_prompt_carries_the_working_memory() {
    let stage = Stage::new();
    stage.seed_task_memories();
    stage.brain(&["hook", "install", "--agent", "qwen"]);
    let path = stage.user_home.join(".qwen/settings.json");
    let mut settings: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(settings["hooks"].get("SessionStart").is_none(), "{settings}");
    // Offline: an OpenAI-compatible provider (the fake server), no update check, no telemetry.
    settings["security"] = serde_json::json!({"auth": {"selectedType": "openai"}});
    settings["general"] = serde_json::json!({"enableAutoUpdate": false});
    settings["privacy"] = serde_json::json!({"usageStatisticsEnabled": false});
    settings["telemetry"] = serde_json::json!({"enabled": false});
    std::fs::write(&path, settings.to_string()).unwrap();

    let base = format!("{}/v1", stage.base);
    let vars = [("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "dummy"), ("OPENAI_MODEL", "fake")];
    let output = stage.host("qwen", &["-p", TASK], &vars);
    assert!(output.contains("Done: the hook ran."), "{output}");
    stage.assert_memory_reached_the_model_once("qwen", &stage.model.chat_request_with(TASK));
    stage.assert_captured_into_an_arc("qwen");
}

/// GitHub Copilot CLI 1.0.102 in a trusted repository that also has brain's Claude Code hooks
/// (`.claude/settings.json`, which Copilot runs too, with `COPILOT_CLI=1`): the model gets the
/// working memory and the task's recall once, from brain's Copilot hooks; the session is
/// captured once Copilot has written it (after its sessionEnd hook: see hook::copilot).
#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn copilot_cli_gets_the_working_memory_once_in_a_repository_with_claude_codes_hooks() {
    let stage = Stage::new();
    stage.seed_task_memories();
    stage.brain(&["hook", "install", "--agent", "copilot"]);
    stage.brain(&["hook", "install", "--agent", "claude-code", "--scope", "project"]);
    // Another tool's hook beside brain's in .claude/settings.json: it shows that Copilot ran
    // the repository's Claude Code hooks (so "once" means brain's stayed quiet).
    let claude = stage.env.project_dir.join(".claude/settings.json");
    let mut settings: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    let ran = stage.env.dir.path().join("claude-hooks-ran");
    let touch = format!("touch '{}'", ran.display());
    settings["hooks"]["SessionStart"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"hooks": [{"type": "command", "command": touch}]}));
    std::fs::write(&claude, settings.to_string()).unwrap();

    let base = format!("{}/v1", stage.base);
    let vars = [
        ("COPILOT_OFFLINE", "true"),
        ("COPILOT_PROVIDER_BASE_URL", base.as_str()),
        ("COPILOT_PROVIDER_API_KEY", "dummy"),
        ("COPILOT_MODEL", "fake"),
        ("COPILOT_AUTO_UPDATE", "false"),
        // Repository hooks (.claude/settings.json) run only in a trusted folder.
        ("COPILOT_ALLOW_ALL", "true"),
    ];
    let output = stage.host("copilot", &["-p", TASK, "--allow-all-tools"], &vars);
    assert!(output.contains("Done: the hook ran."), "{output}");
    assert!(ran.exists(), "Copilot CLI ran the repository's Claude Code hooks");
    // Copilot ignores Claude Code's output shape, but brain's Claude Code hooks would still
    // take the session's task recall (its state is the session's) and capture the Copilot
    // events as a Claude Code transcript: quiet, they do neither.
    stage.assert_memory_reached_the_model_once("copilot", &stage.model.chat_request_with(TASK));
    // Copilot writes the session's events once its sessionEnd hook returned: brain captures
    // them after the CLI exits.
    stage.await_capture("copilot");
    let shards = stage.count("capture/sessions");
    assert!(shards.iter().all(|name| name.starts_with("copilot-")), "captured as Copilot only: {shards:?}");
    stage.assert_captured_into_an_arc("copilot");
}

/// OpenCode 1.18.33 loads brain's plugin (`hook install --agent opencode`): the working
/// memory reaches the model as a system message and the task's recall as a part of the
/// prompt, once each; at `session.idle` the plugin writes the session's messages and brain's
/// stop hook captures them. Offline, OpenCode's background `npm install` of the plugin API in
/// its config folder would hang the run: the folder is seeded as installed, as the research
/// found (docs/research/new-hosts).
#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn opencode_runs_brains_plugin_which_gives_the_memory_and_captures_the_session() {
    let stage = Stage::new();
    stage.seed_task_memories();
    stage.brain(&["hook", "install", "--agent", "opencode"]);
    let config = stage.user_home.join(".config/opencode");
    assert!(config.join("plugins/brain.js").is_file());
    let provider = serde_json::json!({
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": format!("{}/v1", stage.base), "apiKey": "dummy"},
            "models": {"fake": {"name": "fake", "tool_call": true}}}},
        "model": "fake/fake", "small_model": "fake/fake", "autoupdate": false, "share": "disabled",
    });
    std::fs::write(config.join("opencode.json"), provider.to_string()).unwrap();
    std::fs::create_dir_all(config.join("node_modules")).unwrap();
    let lock = serde_json::json!({"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}});
    std::fs::write(config.join("package-lock.json"), lock.to_string()).unwrap();

    let vars =
        [("OPENCODE_DISABLE_MODELS_FETCH", "1"), ("OPENCODE_DISABLE_AUTOUPDATE", "1"), ("OPENCODE_DISABLE_SHARE", "1")];
    let output = stage.host("opencode", &["run", TASK], &vars);
    assert!(output.contains("Done: the hook ran."), "{output}");
    stage.assert_memory_reached_the_model_once("opencode", &stage.model.chat_request_with(TASK));
    stage.assert_captured_into_an_arc("opencode");
}

/// Recall that learns from use (issue 32), in a real Claude Code session: the fake model, as
/// its prompt scripts it, opens the file one given memory names (a Read tool call Claude Code
/// runs) and answers quoting another given memory in words the user did not type. brain's stop
/// hook records exactly those two as used and every other memory the session was given as
/// given and not used.
#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn claude_code_sessions_record_the_memories_the_agent_used_and_the_rest_as_given_not_used() {
    let stage = Stage::new();
    stage.brain(&["hook", "install", "--agent", "claude-code"]);
    let remember = |title: &str, content: &str, files: Option<&str>| -> String {
        let mut args = vec!["remember", "--title", title, "--content", content];
        if let Some(files) = files {
            args.extend(["--files", files]);
        }
        stage.brain_json(&args)["id"].as_str().unwrap().to_string()
    };
    let verify = std::path::Path::new("src/webhooks/verify.rs");
    std::fs::create_dir_all(stage.env.project_dir.join("src/webhooks")).unwrap();
    std::fs::write(stage.env.project_dir.join(verify), "pub fn verify(body: &[u8]) -> bool { !body.is_empty() }\n")
        .unwrap();
    let read = remember(
        "Signature verification module",
        "The verifier hashes the untouched request bytes before anything parses them.",
        Some("src/webhooks/verify.rs"),
    );
    let quoted = remember(
        "Delivery worker backoff",
        "Deliveries retry with exponential backoff and jitter, capped at six attempts per endpoint.",
        None,
    );
    let file = stage.env.project_dir.join(verify);
    let prompt = format!(
        "Look at how signatures are checked.\nCALL Read {{\"file_path\": \"{}\"}}\nQUOTE Delivery worker backoff\n",
        file.display()
    );
    let output = stage.host(
        "claude",
        &["-p", &prompt, "--allowedTools", "Read"],
        &[("ANTHROPIC_BASE_URL", &stage.base), ("ANTHROPIC_API_KEY", "sk-ant-dummy")],
    );
    assert!(output.contains("As the project memory says: Deliveries retry"), "the model quoted it: {output}");
    let bodies = std::fs::read_to_string(&stage.model.bodies).unwrap();
    assert!(bodies.contains("tool_result") && bodies.contains("pub fn verify"), "Claude Code ran the Read call");

    let sessions = stage.count("hooks/sessions");
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(stage.brain_home.join("hooks/sessions").join(&sessions[0])).unwrap(),
    )
    .unwrap();
    let given: Vec<String> =
        state["given"].as_array().unwrap().iter().map(|id| id.as_str().unwrap().to_string()).collect();
    assert!(given.contains(&read) && given.contains(&quoted) && given.len() >= 3, "{given:?}");
    for id in &given {
        let decisions = stage.brain_json(&["why-used", id])["decisions"].clone();
        let decisions = decisions.as_array().unwrap();
        assert_eq!(decisions.len(), 1, "{id}: one decision for the one session: {decisions:?}");
        let decision = &decisions[0];
        assert_eq!(decision["host"], "claude-code");
        match id {
            id if *id == read => {
                assert_eq!((&decision["verdict"], &decision["signal"]), (&"used".into(), &"file".into()), "{decision}")
            }
            id if *id == quoted => {
                assert_eq!(
                    (&decision["verdict"], &decision["signal"]),
                    (&"used".into(), &"quoted".into()),
                    "{decision}"
                )
            }
            _ => assert_eq!(decision["verdict"], "unused", "{id}: given and not used: {decision}"),
        }
    }
    let log = std::fs::read_to_string(stage.brain_home.join("logs/hooks.log")).unwrap_or_default();
    assert_eq!(log, "", "brain's hooks logged failures");
}

/// Cline 3.0.65 runs its hook files without waiting for `TaskStart` or `UserPromptSubmit` and
/// never reads their output (nor does `UserPromptSubmit` fire in a one-shot run), so no hook
/// can hand the model a prompt's recall: the task's recall is absent from the request, by
/// Cline's design. The working memory reaches the model through brain's rule
/// (`.cline/rules/brain-working-memory.md`, written by `hook install`), once, in the system
/// prompt; `TaskComplete` captures the session (after the CLI returned: Cline does not wait
/// for it either).
#[test]
#[ignore = "needs the hosts' CLIs from npm: run by .ci/run with BRAIN_TEST_HOSTS_BIN"]
fn cline_gets_the_working_memory_as_a_rule_but_no_prompt_recall_as_its_hooks_output_is_never_read() {
    let stage = Stage::new();
    stage.seed_task_memories();
    stage.brain(&["hook", "install", "--agent", "cline"]);
    let hooks = stage.user_home.join(".cline/hooks");
    for name in ["TaskStart", "TaskComplete", "SessionShutdown"] {
        assert!(hooks.join(name).is_file(), "{name}");
    }
    assert!(stage.env.project_dir.join(".cline/rules/brain-working-memory.md").is_file());
    let base = format!("{}/v1", stage.base);
    let vars = [("CLINE_NO_AUTO_UPDATE", "1"), ("TERM", "dumb")];
    stage.host("cline", &["auth", "-p", "openai-compatible", "-k", "dummy", "-m", "fake", "-b", &base], &vars);
    // Cline starts a hub daemon that outlives the run: the one this home started is ended.
    let _daemon = ClineHub(stage.user_home.join(".cline/data/locks/hub/production.json"));
    let output = stage.host("cline", &["--json", TASK], &vars);
    assert!(output.contains("Done: the hook ran."), "{output}");
    let request = stage.model.chat_request_with(TASK);
    assert_eq!(request.matches(WORKING_MEMORY).count(), 1, "cline: the working memory, once: {request}");
    assert_eq!(request.matches(RECALLED).count(), 0, "cline: no hook can add the task's recall: {request}");
    let log = std::fs::read_to_string(stage.brain_home.join("logs/hooks.log")).unwrap_or_default();
    assert_eq!(log, "", "cline: brain's hooks logged failures");
    stage.assert_captured_into_an_arc("cline");
}

/// Ends the hub daemon Cline started for a home: its pid is in the hub's lock file, which the
/// daemon writes a moment after the run (waited for, at most 10 s: a daemon another home
/// started serves this one and writes none here); only a process that still is that daemon.
struct ClineHub(PathBuf);

impl Drop for ClineHub {
    fn drop(&mut self) {
        let waited = Instant::now();
        let pid = loop {
            let hub = std::fs::read_to_string(&self.0).ok();
            let pid = hub.and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok()?["pid"].as_u64());
            if pid.is_some() || waited.elapsed() > Duration::from_secs(10) {
                break pid;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let Some(pid) = pid else { return };
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&command).contains("--cline-hub-daemon") {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}
