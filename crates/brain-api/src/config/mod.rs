//! Configuration, with one precedence chain (lowest first):
//!
//! 1. built-in defaults,
//! 2. the user config file `<home>/config.toml`,
//! 3. the project file `.brain.toml` in the working directory or its nearest ancestor,
//! 4. `BRAIN_*` environment variables,
//! 5. command-line flags.
//!
//! Reading configuration never writes files. Unknown keys are errors, so a typo never
//! silently does nothing.
//!
//! A project file travels with a repository, so a cloned repository can carry one: it may
//! set only what [`PROJECT_ALLOWED`] lists (the project name and display and budget
//! preferences). Every other key in it — anything that executes code, moves the vault,
//! widens exposure or loosens a bound — is a config error naming the key, the file and why. The home itself comes from `--home`, else `BRAIN_HOME`, else
//! `~/.brain`; the project from `--project`, `BRAIN_PROJECT`, `.brain.toml`'s `project`,
//! the git root's folder name, the working directory's name (SPEC §2.6).

use std::path::{Path, PathBuf};

use brain_core::Status;
use brain_core::scope::validate_scope_name;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{BrainError, BrainResult};

pub mod ai;
pub mod folders;

pub use ai::AiConfig;
pub use brain_core::keeper::config::VaultConfig;

/// File name of the user config inside the home.
pub const USER_CONFIG_FILE: &str = "config.toml";
/// File name of the project config.
pub const PROJECT_CONFIG_FILE: &str = ".brain.toml";
/// File name of the database inside the home.
pub const DATABASE_FILE: &str = "brain.db";

/// The effective configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    /// Token counter: `heuristic` (default), `o200k` or `cl100k`.
    pub tokenizer: String,
    /// Status of items written by agents (MCP, hooks): `approved` (default) or `draft`.
    pub write_policy: Status,
    /// Brain document budgets and thresholds.
    pub brain: BrainDocumentConfig,
    /// The vault and the tick (`[vault]`).
    pub vault: VaultConfig,
    /// Agent hooks (`[hooks]`).
    pub hooks: HooksConfig,
    /// Remote mode (`[remote]`): the CLI talking to a `brain serve`.
    pub remote: RemoteConfig,
    /// `brain serve` (`[serve]`; only in the user config, like every key outside [`PROJECT_ALLOWED`]).
    pub serve: ServeConfig,
    /// Search (`[search]`; a project's `.brain.toml` may set it).
    pub search: SearchConfig,
    /// Embeddings (`[embed]`; only in the user config: an endpoint URL sends item text off
    /// the machine and a model path is loaded and run).
    pub embed: crate::embed::EmbedConfig,
    /// Where the store lives (`[store]`; only in the user config).
    pub store: StoreConfig,
    /// The LLM of the tick's AI phases (`[ai]`; only in the user config: it sends vault text
    /// off the machine and chooses where).
    pub ai: AiConfig,
    /// `brain sync` (`[sync]`; only in the user config: the URL sends items off the machine).
    pub sync: SyncConfig,
}

/// `[sync]` table: `brain sync` with a `brain serve` (the token comes from `BRAIN_TOKEN`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyncConfig {
    /// The server (`http://host:port` or `https://host[:port][/prefix]`); unset: no sync.
    pub url: Option<String>,
    /// Scope patterns that travel (`global`, `project/*`, `team/core`, …; `*` is every
    /// scope but `agent/…`, which travels only when named).
    pub scopes: Vec<String>,
    /// The stop and session-end hooks start a background sync at most this often (seconds;
    /// 0: never).
    pub interval: u64,
    /// One run stops after this many pulls, MiB of pull answers or seconds, however much the
    /// server says follows (the next run resumes): a broken or hostile server cannot keep a
    /// sync, and its lock, running for ever. See `sync::RunBounds`.
    pub max_pulls: u64,
    pub max_pull_mib: u64,
    pub max_seconds: u64,
}

impl SyncConfig {
    /// The scopes that travel unless `scopes` says otherwise.
    pub const DEFAULT_SCOPES: [&'static str; 3] = ["global", "project/*", "team/*"];
    /// The bounds of one run (`sync::RunBounds::DEFAULT`).
    pub const DEFAULT_MAX_PULLS: u64 = 1000;
    pub const DEFAULT_MAX_PULL_MIB: u64 = 1024;
    pub const DEFAULT_MAX_SECONDS: u64 = 600;
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            url: None,
            scopes: SyncConfig::DEFAULT_SCOPES.iter().map(|scope| scope.to_string()).collect(),
            interval: 300,
            max_pulls: SyncConfig::DEFAULT_MAX_PULLS,
            max_pull_mib: SyncConfig::DEFAULT_MAX_PULL_MIB,
            max_seconds: SyncConfig::DEFAULT_MAX_SECONDS,
        }
    }
}

/// `[search]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Default mode of `brain search`, MCP `brain_search` and the HTTP search: `lexical`,
    /// `hybrid` or `semantic` (the last two need `[embed]`; they fall back to lexical, saying
    /// so in `why`, when the embedder is not there). Session-start recall is always lexical.
    pub mode: String,
    /// Whether recall learns from what sessions used (issue 32, `brain_api::usage`): items
    /// given and not used sink for tasks like those, used ones are reinforced. Off: recall
    /// ranks as if nothing had been recorded (decisions are still recorded).
    pub learn_from_use: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { mode: "lexical".into(), learn_from_use: true }
    }
}

/// `[store]` table: which database backs this home. Unset: `<home>/brain.db` (SQLite).
/// `BRAIN_DATABASE_URL` and `brain serve --database` override it. Only the user config may
/// set it: a project file must never point a user's brain at another database.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `postgres://USER[:PASSWORD]@HOST:PORT/DATABASE` or `sqlite:PATH`.
    pub url: Option<String>,
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password.
        f.debug_struct("StoreConfig").field("url", &self.url.as_ref().map(|_| "…")).finish()
    }
}

impl Serialize for StoreConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Printed as its location without the password, never as given.
        let url = self.url.as_deref().map(|url| match brain_store::StoreLocation::parse(url) {
            Ok(location) => location.to_string(),
            Err(_) => "(invalid)".to_string(),
        });
        let mut table = serializer.serialize_struct("StoreConfig", 1)?;
        serde::ser::SerializeStruct::serialize_field(&mut table, "url", &url)?;
        serde::ser::SerializeStruct::end(table)
    }
}

/// `[serve]` table: the HTTP server (SPEC §7.2, §9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Address to listen on; a non-loopback address needs `[[serve.tokens]]`.
    pub listen: String,
    /// Largest accepted request body (bytes); larger ones get 413.
    pub max_body_bytes: usize,
    /// A request (other than the event stream and MCP) is cut off with 408 after this long.
    pub request_timeout_secs: u64,
    /// Store connections serving requests at once.
    pub pool_size: usize,
    /// How often the event stream looks for writes by other processes (milliseconds). On
    /// PostgreSQL writes are pushed (LISTEN/NOTIFY) and this is only a safety net.
    pub events_poll_ms: u64,
    /// At start-up, how long to wait for a database server that is not up yet (seconds).
    pub database_wait_secs: u64,
    /// Run the vault tick this often (seconds; 0 = never). Replicas sharing a store tick
    /// once per interval between them (a lock in the store), on the replica that has the vault.
    pub tick_interval_secs: u64,
    /// `POST /api/v2/tick` runs at most one requested tick per this many seconds.
    pub tick_request_min_secs: u64,
    /// Publish critical signals to this NATS server (`nats://host:4222`); none: no NATS.
    pub signals_nats_url: Option<String>,
    /// Subject prefix of published signals (`<prefix>.critical`, `<prefix>.nuclear`).
    pub signals_nats_subject: String,
    /// Publish critical signals to a Redis stream on this server (`redis://host:6379`).
    pub signals_redis_url: Option<String>,
    /// The Redis stream's key.
    pub signals_redis_stream: String,
    /// Bearer tokens and their scope grants. Empty: no auth (loopback only).
    pub tokens: Vec<TokenConfig>,
    /// Names (`host` or `host:port`) accepted in the `Host` header besides the listen
    /// address and, on loopback, `localhost`: the defence against DNS rebinding.
    pub allowed_hosts: Vec<String>,
    /// Browser origins (`https://app.example:8443`) allowed to call the API besides the
    /// server's own; any other `Origin` is refused.
    pub allowed_origins: Vec<String>,
    /// A connection must deliver a complete request head within this long of opening or of
    /// its previous response (slow headers and idle keep-alive alike), else it is closed.
    pub header_timeout_secs: u64,
    /// Most connections open at once (also bounded by the process's open-file limit); idle
    /// ones are closed to make room for new ones.
    pub max_connections: usize,
    /// Requests one token may have in progress at once (streams included), at most a
    /// quarter of `max_connections`; 0: no bound.
    pub max_requests_per_token: usize,
    /// `/api/v2/events` and `GET /mcp` streams one token may hold open, at most a quarter of
    /// `max_connections`; 0: no bound.
    pub max_streams_per_token: usize,
    /// Requests one client address may have in progress at once, at most half of
    /// `max_connections`; 0: no bound (behind a proxy every request comes from its address).
    pub max_requests_per_peer: usize,
    /// Streams one client address may hold open, at most half of `max_connections`; 0: no bound.
    pub max_streams_per_peer: usize,
    /// A request body must arrive whole within this long of its head, else 408.
    pub body_timeout_secs: u64,
    /// MCP sessions open at once over HTTP (each holds a worker and its buffers until it is
    /// closed or idle for five minutes); one token may open at most a quarter of them.
    pub max_mcp_sessions: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:7077".into(),
            max_body_bytes: 1024 * 1024,
            request_timeout_secs: 30,
            pool_size: 4,
            events_poll_ms: 500,
            database_wait_secs: 60,
            tick_interval_secs: 7200,
            tick_request_min_secs: 60,
            signals_nats_url: None,
            signals_nats_subject: "brain.signals".into(),
            signals_redis_url: None,
            signals_redis_stream: "brain:signals".into(),
            tokens: Vec::new(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            header_timeout_secs: 10,
            max_connections: 512,
            max_requests_per_token: 64,
            max_streams_per_token: 16,
            max_requests_per_peer: 128,
            max_streams_per_peer: 32,
            body_timeout_secs: 15,
            max_mcp_sessions: 1024,
        }
    }
}

/// One `[[serve.tokens]]` entry: a secret (in clear, or its SHA-256 in hex) and the scopes
/// it may read, write and review (`global`, `project/NAME`, `project/*`, `*`, …; review
/// matters under `write_policy = "draft"`: approving, and changing approved items).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// A name for logs and metrics (the secret itself is never logged).
    pub name: String,
    #[serde(default, skip_serializing)]
    pub token: Option<String>,
    #[serde(default, skip_serializing)]
    pub token_sha256: Option<String>,
    #[serde(default)]
    pub read: Vec<String>,
    #[serde(default)]
    pub write: Vec<String>,
    #[serde(default)]
    pub review: Vec<String>,
}

impl std::fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("TokenConfig")
            .field("name", &self.name)
            .field("read", &self.read)
            .field("write", &self.write)
            .field("review", &self.review)
            .finish()
    }
}

/// `[hooks]` table: agent hook behaviour (SPEC §7.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HooksConfig {
    /// Character cap of injected context (Claude Code cuts SessionStart context above 10,000).
    pub max_chars: usize,
    /// `user-prompt-submit` re-injects at most every this many turns, and only on change.
    pub refresh_interval: u32,
    /// A hook gives up (printing an empty payload) after this many milliseconds.
    pub timeout_ms: u64,
    /// Codex's cap, in its tokens (4 bytes each): it spills hook context over 2,500 to a file.
    pub codex_max_tokens: usize,
    /// Gemini CLI's cap of injected context, in characters.
    pub gemini_max_chars: usize,
    /// Cursor's cap of injected context (and of `.cursor/rules/brain.mdc`), in characters.
    pub cursor_max_chars: usize,
    /// Qwen Code's cap of injected context, in characters (it cuts hook text at 10,000).
    pub qwen_max_chars: usize,
    /// GitHub Copilot CLI's cap of injected context, in characters.
    pub copilot_max_chars: usize,
    /// OpenCode's cap of injected context (brain's plugin), in characters.
    pub opencode_max_chars: usize,
    /// Cline's cap: the working memory in brain's Cline rule (`.cline/rules/`).
    pub cline_max_chars: usize,
    /// The first prompt of a session gets the memories recalled for it (the task).
    pub task_recall: bool,
}

/// The smallest cap of injected context, in characters (Codex's in its 4-byte tokens: a
/// quarter): a session start shows its urgent signals first and must have room for them. A
/// smaller cap (a project's `.brain.toml` could set 0) is read as this one.
pub const MIN_HOOK_CHARS: usize = 500;

impl HooksConfig {
    fn keep_room_for_signals(&mut self) {
        for cap in [
            &mut self.max_chars,
            &mut self.gemini_max_chars,
            &mut self.cursor_max_chars,
            &mut self.qwen_max_chars,
            &mut self.copilot_max_chars,
            &mut self.opencode_max_chars,
            &mut self.cline_max_chars,
        ] {
            *cap = (*cap).max(MIN_HOOK_CHARS);
        }
        self.codex_max_tokens = self.codex_max_tokens.max(MIN_HOOK_CHARS / 4);
    }
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            max_chars: 9500,
            refresh_interval: 30,
            timeout_ms: 3000,
            codex_max_tokens: 2400,
            gemini_max_chars: 9500,
            cursor_max_chars: 9500,
            qwen_max_chars: 9500,
            copilot_max_chars: 9500,
            opencode_max_chars: 9500,
            cline_max_chars: 9500,
            task_recall: true,
        }
    }
}

/// `[remote]` table: the CLI in remote mode (`--remote URL` / `BRAIN_URL`). The URL and the
/// token are not config keys: the URL is a flag or `BRAIN_URL`, the token only `BRAIN_TOKEN`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RemoteConfig {
    /// A remote command gives up after this many milliseconds (connect + request + response).
    /// `hook session-start` uses `hooks.timeout_ms` instead.
    pub timeout_ms: u64,
}

impl Default for RemoteConfig {
    fn default() -> Self {
        RemoteConfig { timeout_ms: 10_000 }
    }
}

/// `[brain]` table: the layered brain document (SPEC §4.1). Layer budgets left unset scale
/// with `token_budget` (500 / 1500 / 2000 of 6000).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrainDocumentConfig {
    pub token_budget: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer0: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer1: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer2: Option<usize>,
    /// Layer 3: items below this confidence and older than `low_confidence_days` are archived.
    #[serde(serialize_with = "brain_core::item::serialize_decimal_f32")]
    pub low_confidence: f32,
    pub low_confidence_days: f64,
    /// Layer 3: implementation facts older than this are archived.
    pub implementation_max_days: f64,
    /// Layer 3: fixed bugs older than this are archived.
    pub fixed_bug_max_days: f64,
}

impl Default for BrainDocumentConfig {
    fn default() -> Self {
        BrainDocumentConfig {
            token_budget: 6000,
            layer0: None,
            layer1: None,
            layer2: None,
            low_confidence: 0.4,
            low_confidence_days: 14.0,
            implementation_max_days: 90.0,
            fixed_bug_max_days: 30.0,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tokenizer: "heuristic".into(),
            write_policy: Status::Approved,
            brain: BrainDocumentConfig::default(),
            vault: VaultConfig::default(),
            hooks: HooksConfig::default(),
            remote: RemoteConfig::default(),
            serve: ServeConfig::default(),
            search: SearchConfig::default(),
            embed: crate::embed::EmbedConfig::default(),
            store: StoreConfig::default(),
            sync: SyncConfig::default(),
            ai: AiConfig::default(),
        }
    }
}

/// The shape of both config files; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    project: Option<String>,
    tokenizer: Option<String>,
    write_policy: Option<String>,
    brain: Option<toml::Table>,
    vault: Option<toml::Table>,
    hooks: Option<toml::Table>,
    remote: Option<toml::Table>,
    serve: Option<toml::Table>,
    search: Option<toml::Table>,
    embed: Option<toml::Table>,
    store: Option<toml::Table>,
    sync: Option<toml::Table>,
    ai: Option<toml::Table>,
}

/// Environment variables that configure brain, read in one place so tests can pass their own.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub tokenizer: Option<String>,
    pub write_policy: Option<String>,
    /// `BRAIN_DATABASE_URL` (or `brain serve --database`, which replaces it): the store.
    pub database_url: Option<String>,
}

impl Environment {
    pub fn from_process() -> Environment {
        let read = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Environment {
            tokenizer: read("BRAIN_TOKENIZER"),
            write_policy: read("BRAIN_WRITE_POLICY"),
            database_url: read("BRAIN_DATABASE_URL"),
        }
    }
}

/// The config plus where the project name came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub config: Config,
    /// The `project` key of the nearest `.brain.toml`, if any.
    pub project_from_file: Option<String>,
}

/// Loads the configuration for `home`, starting the `.brain.toml` search at `cwd`.
pub fn load(home: &Path, cwd: &Path, env: &Environment) -> BrainResult<Loaded> {
    load_files(home, Some(cwd), env)
}

/// The configuration of `home` and the environment alone, as if no `.brain.toml` were
/// found: what the reading hooks fall back to when a repository's file is invalid, so a
/// file a clone carries cannot silence the session start (its urgent signals above all).
pub fn load_without_project_file(home: &Path, env: &Environment) -> BrainResult<Loaded> {
    load_files(home, None, env)
}

fn load_files(home: &Path, cwd: Option<&Path>, env: &Environment) -> BrainResult<Loaded> {
    let mut config = Config::default();
    let mut project_from_file = None;
    let user_file = home.join(USER_CONFIG_FILE);
    if let Some((file, _)) = read_config_file(&user_file)? {
        apply_file(&mut config, file, &user_file)?;
    }
    if let Some(project_file) = cwd.and_then(|cwd| find_upwards(cwd, PROJECT_CONFIG_FILE))
        && let Some((mut file, table)) = read_config_file(&project_file)?
    {
        check_project_file(&table, &config, &project_file, &user_file)?;
        project_from_file = file.project.take();
        if let Some(name) = &project_from_file {
            validate_scope_name(name).map_err(|why| BrainError::Config {
                message: format!("config file {} is invalid: project name {name:?}: {why}", project_file.display()),
                hint: None,
            })?;
        }
        apply_file(&mut config, file, &project_file)?;
    }
    if let Some(tokenizer) = &env.tokenizer {
        config.tokenizer = parse_tokenizer(tokenizer, "BRAIN_TOKENIZER")?;
    }
    if let Some(policy) = &env.write_policy {
        config.write_policy = parse_write_policy(policy, "BRAIN_WRITE_POLICY")?;
    }
    Ok(Loaded { config, project_from_file })
}

/// Largest config file read (`config.toml`, `.brain.toml`): a real one is a few hundred bytes.
pub const MAX_CONFIG_BYTES: u64 = 256 * 1024;

/// A config file's text: a regular file (a link is followed to one; opened without blocking,
/// [`crate::fsio::open_regular`]) of at most [`MAX_CONFIG_BYTES`]. A repository can carry
/// `.brain.toml` as a link to `/dev/zero` or `/dev/stdin`, or a file of gigabytes, and every
/// command and hook reads it.
pub fn read_config_text(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let mut bytes = Vec::new();
    crate::fsio::open_regular(path)?.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::new(ErrorKind::InvalidData, format!("larger than {} KiB", MAX_CONFIG_BYTES / 1024)));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// The file parsed twice: into the typed shape (unknown keys are errors) and as a table
/// (the keys it sets, for the project allow-list).
fn read_config_file(path: &Path) -> BrainResult<Option<(ConfigFile, toml::Table)>> {
    let text = match read_config_text(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(BrainError::Config {
                message: format!("cannot read config file {}: {err}", path.display()),
                hint: None,
            });
        }
    };
    let invalid = |err: toml::de::Error| BrainError::Config {
        message: format!("config file {} is invalid: {}", path.display(), err.message()),
        hint: Some("see the configuration section of the README for the keys".into()),
    };
    let table: toml::Table = toml::from_str(&text).map_err(invalid)?;
    let file: ConfigFile = table.clone().try_into().map_err(invalid)?;
    Ok(Some((file, table)))
}

/// What a project `.brain.toml` may set, as `(table, keys)`: `""` is the top level and `*`
/// every key of the table. Everything else is refused (see [`project_refusal`]), so a key
/// added later is refused in project files until someone decides it is harmless there.
/// `write_policy` is allowed only to tighten (see [`check_project_file`]).
pub const PROJECT_ALLOWED: &[(&str, &[&str])] = &[
    ("", &["project", "tokenizer", "write_policy", "brain", "hooks", "search"]),
    // Budgets and archive thresholds of the brain document: what a session is shown.
    ("brain", &["*"]),
    // How much context the hooks inject and how often; not how long they may run.
    (
        "hooks",
        &[
            "max_chars",
            "refresh_interval",
            "codex_max_tokens",
            "gemini_max_chars",
            "cursor_max_chars",
            "qwen_max_chars",
            "copilot_max_chars",
            "opencode_max_chars",
            "cline_max_chars",
            "task_recall",
        ],
    ),
    // Whether search ranks by words or also by meaning; the embedder itself is the user's.
    ("search", &["mode", "learn_from_use"]),
];

/// Why `key` (dotted: `vault.path`) may not come from a project file.
fn project_refusal(key: &str) -> &'static str {
    match key {
        "vault.path" | "vault.vault_path" => {
            "it moves the vault, and `brain tick` and `brain vault scan` read and rewrite files wherever it points"
        }
        "vault.allow_verify_commands" | "vault.verify_timeout_secs" => {
            "it lets `brain tick` run commands written in vault notes"
        }
        "vault.max_file_bytes" => "it loosens a resource bound of the vault scan",
        "hooks.timeout_ms" => "it bounds how long every agent hook may run",
        _ if key.starts_with("vault.") || key == "vault" => {
            "the vault belongs to the brain home, not to a project: a tick must do the same from any folder"
        }
        _ if key.starts_with("serve.") || key == "serve" => {
            "it configures the HTTP server, its listen address and its tokens (exposure)"
        }
        _ if key.starts_with("store.") || key == "store" => {
            "it points the brain at another database, which a cloned repository must never choose"
        }
        _ if key.starts_with("embed.") || key == "embed" => {
            "it would send item text to a server or load a model file, which a cloned repository must never choose"
        }
        _ if key.starts_with("sync.") || key == "sync" => {
            "it would send this brain's items to a server, which a cloned repository must never choose"
        }
        _ if key.starts_with("ai.") || key == "ai" => {
            "it would switch on calls to an LLM and choose the server that receives vault text, which a cloned repository must never choose"
        }
        _ if key.starts_with("remote.") || key == "remote" => {
            "remote mode belongs to the user (`BRAIN_URL`, `--remote`, [remote] in config.toml)"
        }
        _ => {
            "a project file, which a cloned repository can carry, may set only the project name and display and budget preferences"
        }
    }
}

fn project_key_allowed(table: &str, key: &str) -> bool {
    PROJECT_ALLOWED
        .iter()
        .any(|(allowed_table, keys)| *allowed_table == table && keys.iter().any(|k| *k == "*" || *k == key))
}

/// Refuses every key of a project file that [`PROJECT_ALLOWED`] does not list, and a
/// `write_policy` that would approve what the user config sends to review. `config` holds
/// the defaults and the user config.
fn check_project_file(table: &toml::Table, config: &Config, path: &Path, user_file: &Path) -> BrainResult<()> {
    // Every refused key, so one edit fixes the file.
    let mut refused: Vec<String> = Vec::new();
    for (key, value) in table {
        // A table is judged key by key, so the message names the key that matters.
        let toml::Value::Table(inner) = value else {
            if !project_key_allowed("", key) {
                refused.push(format!("`{key}` is not allowed in a project file: {}", project_refusal(key)));
            }
            continue;
        };
        for inner_key in inner.keys() {
            if !(project_key_allowed("", key) && project_key_allowed(key, inner_key)) {
                let dotted = format!("{key}.{inner_key}");
                refused.push(format!("`{dotted}` is not allowed in a project file: {}", project_refusal(&dotted)));
            }
        }
    }
    let loosens = table
        .get("write_policy")
        .and_then(toml::Value::as_str)
        .is_some_and(|policy| policy.trim().eq_ignore_ascii_case("approved") && config.write_policy == Status::Draft);
    if loosens {
        refused.push(
            "`write_policy = \"approved\"` is not allowed in a project file: the user config sends agent writes \
             to review (draft); a project may tighten that, never loosen it"
                .into(),
        );
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(BrainError::Config {
        message: format!("{}: {}", path.display(), refused.join("; ")),
        hint: Some(format!(
            "set these in {} (a project file may set: project, tokenizer, write_policy = \"draft\", [brain], \
             [hooks] max_chars, the hosts' *_max_chars and codex_max_tokens, refresh_interval and task_recall, [search] mode and learn_from_use)",
            user_file.display()
        )),
    })
}

fn apply_file(config: &mut Config, file: ConfigFile, path: &Path) -> BrainResult<()> {
    let origin = path.display().to_string();
    if let Some(tokenizer) = file.tokenizer {
        config.tokenizer = parse_tokenizer(&tokenizer, &origin)?;
    }
    if let Some(policy) = file.write_policy {
        config.write_policy = parse_write_policy(&policy, &origin)?;
    }
    if let Some(table) = file.brain {
        // Merged key by key (as every table but [serve] and [store]) so a project file can
        // override one budget and keep the rest.
        config.brain = merged(&config.brain, table, &origin)?;
    }
    if let Some(table) = file.vault {
        config.vault = merged(&config.vault, table, &origin)?;
    }
    if let Some(table) = file.serve {
        // Not merged key by key: only the user config may carry it.
        config.serve = toml::Value::Table(table).try_into().map_err(|err: toml::de::Error| BrainError::Config {
            message: format!("config file {origin}: invalid [serve] table: {}", err.message()),
            hint: None,
        })?;
    }
    if let Some(table) = file.store {
        config.store = toml::Value::Table(table).try_into().map_err(|err: toml::de::Error| BrainError::Config {
            message: format!("config file {origin}: invalid [store] table: {}", err.message()),
            hint: Some("[store] url = \"postgres://USER@HOST:5432/DATABASE\" (or leave it out for SQLite)".into()),
        })?;
    }
    if let Some(table) = file.hooks {
        config.hooks = merged(&config.hooks, table, &origin)?;
        config.hooks.keep_room_for_signals();
    }
    if let Some(table) = file.search {
        config.search = merged(&config.search, table, &origin)?;
        if !["lexical", "hybrid", "semantic"].contains(&config.search.mode.as_str()) {
            return Err(BrainError::Config {
                message: format!(
                    "config file {origin}: [search] mode {:?} is not one of lexical, hybrid, semantic",
                    config.search.mode
                ),
                hint: None,
            });
        }
    }
    if let Some(table) = file.embed {
        config.embed = merged(&config.embed, table, &origin)?;
    }
    if let Some(table) = file.sync {
        config.sync = merged(&config.sync, table, &origin)?;
    }
    if let Some(table) = file.ai {
        config.ai = merged(&config.ai, table, &origin)?;
    }
    if let Some(table) = file.remote {
        config.remote = merged(&config.remote, table, &origin)?;
    }
    Ok(())
}

/// A table of the config file whose keys merge one by one over what the layers below set
/// (the defaults, the user config), checked as a whole after the merge.
pub(crate) trait Section: Serialize + DeserializeOwned {
    /// The table's name, as in `[vault]`.
    const NAME: &'static str;
    /// Where a user finds the table's keys, when its keys are checked.
    const HINT: Option<&'static str> = None;
    /// Checks the merged table's bounds; the message names the key.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// `base` with the keys of `table` (from the config file `origin`) laid over it, validated.
pub(crate) fn merged<T: Section>(base: &T, table: toml::Table, origin: &str) -> BrainResult<T> {
    let mut merged = toml::Table::try_from(base)
        .map_err(|err| BrainError::internal(format!("cannot serialize {} config: {err}", T::NAME)))?;
    merged.extend(table);
    let invalid = |message: String| BrainError::Config {
        message: format!("config file {origin}: invalid [{}] table: {message}", T::NAME),
        hint: T::HINT.map(str::to_string),
    };
    let config: T = merged.try_into().map_err(|err: toml::de::Error| invalid(err.message().to_string()))?;
    config.validate().map_err(invalid)?;
    Ok(config)
}

macro_rules! sections {
    ($($ty:ty => $name:literal),* $(,)?) => {
        $(impl Section for $ty {
            const NAME: &'static str = $name;
        })*
    };
}
sections!(BrainDocumentConfig => "brain", HooksConfig => "hooks", SearchConfig => "search", crate::embed::EmbedConfig => "embed", SyncConfig => "sync", RemoteConfig => "remote");

impl Section for VaultConfig {
    const NAME: &'static str = "vault";
    const HINT: Option<&'static str> = Some("see the commented [vault] section of config.toml for the keys");
    fn validate(&self) -> Result<(), String> {
        VaultConfig::validate(self)
    }
}

impl Section for AiConfig {
    const NAME: &'static str = "ai";
    const HINT: Option<&'static str> = Some("see the commented [ai] section of config.toml for the keys");
    fn validate(&self) -> Result<(), String> {
        AiConfig::validate(self)
    }
}

fn parse_tokenizer(value: &str, origin: &str) -> BrainResult<String> {
    let value = value.trim().to_ascii_lowercase();
    match value.as_str() {
        "heuristic" | "o200k" | "cl100k" => Ok(value),
        _ => Err(BrainError::Config {
            message: format!("{origin}: invalid tokenizer {value:?} (allowed: heuristic, o200k, cl100k)"),
            hint: None,
        }),
    }
}

fn parse_write_policy(value: &str, origin: &str) -> BrainResult<Status> {
    match value.trim().to_ascii_lowercase().as_str() {
        "approved" => Ok(Status::Approved),
        "draft" => Ok(Status::Draft),
        _ => Err(BrainError::Config {
            message: format!("{origin}: invalid write_policy {value:?} (allowed: approved, draft)"),
            hint: None,
        }),
    }
}

/// The nearest `name` in `start` or one of its ancestors.
pub fn find_upwards(start: &Path, name: &str) -> Option<PathBuf> {
    start.ancestors().map(|dir| dir.join(name)).find(|candidate| candidate.exists())
}

/// The project's root folder: the nearest folder with `.brain.toml`, else the git root,
/// else `cwd` (where `inject` writes CLAUDE.md and `hook install --scope project` writes
/// `.claude/settings.json`).
pub fn project_root(cwd: &Path) -> PathBuf {
    [PROJECT_CONFIG_FILE, ".git"]
        .iter()
        .find_map(|marker| find_upwards(cwd, marker))
        .and_then(|found| found.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| cwd.to_path_buf())
}

/// Resolves the current project name (SPEC §2.6), `explicit` being `--project` or
/// `BRAIN_PROJECT` (clap merges the two).
pub fn resolve_project(explicit: Option<&str>, from_file: Option<&str>, cwd: &Path) -> BrainResult<String> {
    if let Some(name) = explicit {
        validate_scope_name(name).map_err(|why| BrainError::user(format!("invalid project name {name:?}: {why}")))?;
        return Ok(name.to_string());
    }
    if let Some(name) = from_file {
        validate_scope_name(name).map_err(|why| {
            BrainError::user(format!("invalid project name {name:?} in {PROJECT_CONFIG_FILE}: {why}"))
        })?;
        return Ok(name.to_string());
    }
    let folder = find_upwards(cwd, ".git").and_then(|git| git.parent().map(Path::to_path_buf)).unwrap_or(cwd.into());
    let raw = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(sanitize_project_name(&raw))
}

/// The current project of `cwd` (SPEC §2.6), checked against the folders its name is tied to
/// when the folder chose it ([`folders`]; `record` ties a first use). A name given on the
/// command line or in `BRAIN_PROJECT` is taken as given.
pub fn project_here(
    home: &Path,
    explicit: Option<&str>,
    from_file: Option<&str>,
    cwd: &Path,
    record: bool,
) -> BrainResult<folders::Tied> {
    let name = resolve_project(explicit, from_file, cwd)?;
    if explicit.is_some() || !home.is_dir() {
        return Ok(folders::Tied { project: name, held_by: None, unreadable: None });
    }
    Ok(folders::tie(home, &name, cwd, record))
}

/// Turns a folder name into a valid project name: disallowed characters become `-`.
pub fn sanitize_project_name(raw: &str) -> String {
    let cleaned: String =
        raw.chars().map(|c| if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect();
    let cleaned = cleaned.trim_matches('-').to_string();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." { "default".to_string() } else { cleaned }
}

/// `~/.brain`, the default home.
pub fn default_home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".")).join(".brain")
}

/// The commented default user config written by `brain init`.
pub const DEFAULT_USER_CONFIG: &str = r#"# brain configuration. Precedence (lowest first): built-in defaults < this file <
# the project's .brain.toml < BRAIN_* environment variables < command-line flags.

# Token counter for budgets: "heuristic" (chars/4, default), "o200k" or "cl100k".
# tokenizer = "heuristic"

# Status of items written by agents through MCP and hooks: "approved" or "draft".
# write_policy = "approved"

# The layered brain document. Layer budgets not set here scale with token_budget
# (500 / 1500 / 2000 of 6000; the rest goes to the vault feed).
# [brain]
# token_budget = 6000
# layer0 = 500
# layer1 = 1500
# layer2 = 2000
# low_confidence = 0.4
# low_confidence_days = 14
# implementation_max_days = 90
# fixed_bug_max_days = 30

# Agent hooks.
# [hooks]
# max_chars = 9500         # cap of injected context (Claude Code; every cap is at least 500)
# codex_max_tokens = 2400  # Codex's cap (its tokens are 4 bytes; it spills more than 2,500)
# gemini_max_chars = 9500  # Gemini CLI's cap
# cursor_max_chars = 9500  # Cursor's cap (also of .cursor/rules/brain.mdc)
# qwen_max_chars = 9500    # Qwen Code's cap (it cuts hook text at 10,000)
# copilot_max_chars = 9500 # GitHub Copilot CLI's cap
# opencode_max_chars = 9500 # OpenCode's cap (brain's plugin)
# cline_max_chars = 9500 # Cline's cap (brain's rule in .cline/rules/)
# refresh_interval = 30    # user-prompt-submit re-injects every N turns, only on change
# task_recall = true       # the first prompt gets the memories recalled for it
# timeout_ms = 3000        # a hook gives up with an empty payload after this long
#                          # (hook session-start with --remote / BRAIN_URL: the request too)

# Remote mode: `--remote URL` or BRAIN_URL sends session-start, hook session-start, search,
# remember and brain to a `brain serve`; the bearer token comes from BRAIN_TOKEN only.
# [remote]
# timeout_ms = 10000       # connect + request + response

# Sync: the same brain on every machine through a `brain serve` (`brain sync`); the token
# comes from BRAIN_TOKEN only. Only here, never in a project's .brain.toml.
# [sync]
# url = "https://brain.example.com"
# scopes = ["global", "project/*", "team/*"]   # "*" = all but agent/…, named agents travel
# interval = 300           # stop/session-end hooks start a background sync at most this often
# max_pulls = 1000         # one run stops after this many pulls (1,000 changes each at most),
# max_pull_mib = 1024      # this many MiB of answers or this many seconds; the next run
# max_seconds = 600        # resumes where it stopped

# Search. mode: "lexical" (default), "hybrid" or "semantic" (these two need [embed]).
# [search]
# mode = "lexical"

# Embeddings for hybrid/semantic search; fill them with `brain embed`. Only here, never in a
# project's .brain.toml. provider: "none" (default), "local" (a brain built with
# --features semantic; all-MiniLM-L6-v2 files in model_path) or "endpoint" (any
# OpenAI-compatible /v1/embeddings server; item text is sent there, redacted).
# [embed]
# provider = "local"
# model_path = "/path/to/all-MiniLM-L6-v2"
# provider = "endpoint"
# url = "http://127.0.0.1:11434"
# model = "nomic-embed-text"
# timeout_ms = 2000
# batch = 32
# document_prefix = "search_document: "  # what a model trained with instructions wants before
# query_prefix = "search_query: "        #   an item's text and a query (nomic-embed-text here)

# The HTTP server (`brain serve`). It listens on loopback unless tokens are configured.
# [serve]
# listen = "127.0.0.1:7077"
# max_body_bytes = 1048576
# request_timeout_secs = 30
# pool_size = 4                  # store connections serving requests at once
# events_poll_ms = 500           # how often /api/v2/events looks for writes
# database_wait_secs = 60        # at start, wait this long for a PostgreSQL that is not up
# tick_interval_secs = 7200      # the vault tick, once per interval across replicas (0: never)
# tick_request_min_secs = 60     # POST /api/v2/tick at most this often
# signals_nats_url = "nats://127.0.0.1:4222"    # publish critical signals (once per fleet)
# signals_nats_subject = "brain.signals"        #   as <subject>.critical / .nuclear
# signals_redis_url = "redis://127.0.0.1:6379"  # and/or XADD them to a Redis stream
# signals_redis_stream = "brain:signals"
# allowed_hosts = []             # extra names for the Host header, e.g. ["brain.lan"]
# allowed_origins = []           # extra browser origins, e.g. ["https://app.example"]
# header_timeout_secs = 10       # request head deadline (slow headers, idle keep-alive)
# max_connections = 512          # open connections at once (idle ones make room)
# max_requests_per_token = 64    # one token's requests in progress (<= max_connections/4; 0: no bound)
# max_streams_per_token = 16     # one token's open event and MCP streams (<= max_connections/4)
# max_requests_per_peer = 128    # one client address's requests in progress (<= max_connections/2;
# max_streams_per_peer = 32      #   0 for both behind a proxy: every request comes from its address)
# body_timeout_secs = 15         # a request body must arrive whole within this long (408)
# max_mcp_sessions = 1024        # MCP sessions open over HTTP (one token: a quarter of them)
# [[serve.tokens]]               # one per client; read/write/review grants by scope
# name = "ci-agent"
# token_sha256 = "…"             # sha256 of the secret in hex (or token = "…" in clear)
# read = ["project/acme-api"]    # global is readable by every valid token
# write = ["project/acme-api"]   # "project/*" or "*" grant more
# review = []                   # under write_policy = "draft": may approve, and change approved items

# Where the store lives: unset means <home>/brain.db (SQLite). A PostgreSQL URL shares one
# brain between machines and `brain serve` replicas (BRAIN_DATABASE_URL and
# `brain serve --database URL` override it). Never in a project's .brain.toml.
# [store]
# url = "postgres://brain@db.internal:5432/brain"

# The AI phases of `brain tick` (2-5): an LLM recommends edges, merges, signal changes, the
# operator's intent and a health score; code checks every proposal and applies the valid ones.
# Only here, never in a project's .brain.toml. The key is read from the variable api_key_env
# names, never from a file. provider: "none" (default), "openai" (any OpenAI-compatible
# /v1/chat/completions: OpenAI, Ollama, vLLM, llama.cpp, LiteLLM, OpenRouter) or "anthropic".
# [ai]
# provider = "openai"
# base_url = "http://127.0.0.1:11434"   # /v1/chat/completions (or /v1/messages) is appended
# model = "qwen2.5:7b"
# api_key_env = "OPENAI_API_KEY"       # unset: no key is sent (a local server)
# timeout_ms = 60000                   # the whole reasoning phase, retries included
# max_output_tokens = 2000
# max_cost_per_tick = 0.05             # a request whose worst case exceeds it is not sent
# input_price_per_mtok = 0.0           # prices per million tokens (0: cost not counted)
# output_price_per_mtok = 0.0
# prompt_max_tokens = 6000             # the prompt's budget, under `tokenizer`
# max_changes_per_kind = 10            # edges, merges, signal changes per tick

# The vault of markdown arcs and the deterministic tick (`brain vault`, `brain tick`).
# [vault]
# path = "vault"                 # relative to this home; default <home>/vault
# promote_heat = 7               # pointer note in frontal-lobe/conscious at this heat
# demote_heat = 5                # below this a promoted arc moves to frontal-lobe/unconscious
# graduate_heat = 1              # at or below this heat, and older than graduate_days,
# graduate_days = 14             #   an arc moves to its region folder (status: graduated)
# signal_stale_days = 3          # non-critical signals older than this leave the feed
# hot_arcs = 10                  # arcs listed in brain-feed/hot-arcs.md and the feed
# max_file_bytes = 2097152       # larger files are skipped with a diagnostic
# allow_verify_commands = false  # run signals' verify= commands (no shell, with a timeout)
# verify_timeout_secs = 10
# shared_signal_severity = "nuclear"  # signals at/above this reach every project's feed;
#                                #   below it only their arc's project (unless scope=global)
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn each_layer_overrides_the_one_below() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("repo/sub");
        std::fs::create_dir_all(&project).unwrap();
        write(
            &home.join(USER_CONFIG_FILE),
            "tokenizer = \"cl100k\"\nwrite_policy = \"draft\"\n[brain]\nlayer1 = 900\n",
        );
        write(&dir.path().join("repo").join(PROJECT_CONFIG_FILE), "project = \"api\"\n[brain]\ntoken_budget = 8000\n");
        let loaded = load(&home, &project, &Environment::default()).unwrap();
        assert_eq!(loaded.config.tokenizer, "cl100k");
        assert_eq!(loaded.config.write_policy, Status::Draft);
        assert_eq!((loaded.config.brain.layer1, loaded.config.brain.token_budget), (Some(900), 8000));
        assert_eq!(loaded.project_from_file.as_deref(), Some("api"));
        let env = Environment {
            tokenizer: Some("o200k".into()),
            write_policy: Some("approved".into()),
            ..Environment::default()
        };
        let loaded = load(&home, &project, &env).unwrap();
        assert_eq!((loaded.config.tokenizer.as_str(), loaded.config.write_policy), ("o200k", Status::Approved));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join(USER_CONFIG_FILE), "tokenzier = \"o200k\"\n");
        let err = load(dir.path(), dir.path(), &Environment::default()).unwrap_err();
        assert!(err.to_string().contains("tokenzier") && err.to_string().contains("config.toml"), "{err}");
        write(&dir.path().join(USER_CONFIG_FILE), "tokenizer = \"gpt2\"\n");
        let err = load(dir.path(), dir.path(), &Environment::default()).unwrap_err();
        assert!(err.to_string().contains("allowed: heuristic, o200k, cl100k"), "{err}");
    }

    /// A cloned repository's `.brain.toml` with `text`, loaded from inside the repository.
    fn load_hostile(user_config: &str, text: &str) -> BrainResult<Loaded> {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        write(&home.join(USER_CONFIG_FILE), user_config);
        let repo = dir.path().join("cloned");
        write(&repo.join(PROJECT_CONFIG_FILE), text);
        load(&home, &repo, &Environment::default())
    }

    #[test]
    fn a_project_file_may_set_the_project_and_display_and_budget_preferences() {
        let loaded = load_hostile(
            "",
            "project = \"api\"\ntokenizer = \"o200k\"\nwrite_policy = \"draft\"\n\
             [brain]\ntoken_budget = 4000\nlayer1 = 900\nlow_confidence = 0.3\n\
             [hooks]\nmax_chars = 6000\nrefresh_interval = 10\n",
        )
        .unwrap();
        assert_eq!(loaded.project_from_file.as_deref(), Some("api"));
        assert_eq!((loaded.config.tokenizer.as_str(), loaded.config.write_policy), ("o200k", Status::Draft));
        assert_eq!((loaded.config.brain.token_budget, loaded.config.brain.layer1), (4000, Some(900)));
        assert_eq!((loaded.config.hooks.max_chars, loaded.config.hooks.refresh_interval), (6000, 10));
        // Approving agent writes is the default: a project saying so changes nothing.
        assert!(load_hostile("", "write_policy = \"approved\"\n").is_ok());
    }

    #[test]
    fn a_project_file_setting_anything_security_relevant_is_refused_naming_the_key_the_file_and_why() {
        let cases: &[(&str, &str, &str)] = &[
            ("[vault]\nallow_verify_commands = true\n", "vault.allow_verify_commands", "run commands"),
            ("[vault]\nverify_timeout_secs = 3600\n", "vault.verify_timeout_secs", "run commands"),
            ("[vault]\npath = \"vault\"\n", "vault.path", "moves the vault"),
            ("[vault]\nvault_path = \"/tmp/x\"\n", "vault.vault_path", "moves the vault"),
            ("[vault]\nmax_file_bytes = 999999999\n", "vault.max_file_bytes", "resource bound"),
            ("[vault]\ngraduate_days = 0\n", "vault.graduate_days", "belongs to the brain home"),
            ("[serve]\nlisten = \"0.0.0.0:80\"\n", "serve.listen", "exposure"),
            ("[[serve.tokens]]\nname = \"x\"\ntoken = \"0123456789abcdef0\"\n", "serve.tokens", "tokens"),
            ("[serve]\nmax_body_bytes = 1\n", "serve.max_body_bytes", "HTTP server"),
            ("[remote]\ntimeout_ms = 1\n", "remote.timeout_ms", "remote mode belongs to the user"),
            ("[sync]\nurl = \"http://attacker.example\"\n", "sync.url", "send this brain's items to a server"),
            ("[hooks]\ntimeout_ms = 3600000\n", "hooks.timeout_ms", "how long every agent hook may run"),
            ("[store]\nurl = \"postgres://evil@attacker.example/db\"\n", "store.url", "another database"),
        ];
        for (text, key, why) in cases {
            let err = load_hostile("", &format!("project = \"evil\"\n{text}")).unwrap_err();
            let message = err.to_string();
            assert!(matches!(err, BrainError::Config { .. }), "{key}: {err:?}");
            assert!(message.contains(&format!("`{key}` is not allowed in a project file")), "{key}: {message}");
            assert!(message.contains(".brain.toml") && message.contains(why), "{key}: {message}");
            assert!(err.hint().is_some_and(|hint| hint.contains(USER_CONFIG_FILE)), "{key}");
        }
        // The same keys are fine in the user's own config file.
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join(USER_CONFIG_FILE), "[vault]\nallow_verify_commands = true\npath = \"v\"\n");
        assert!(load(dir.path(), dir.path(), &Environment::default()).unwrap().config.vault.allow_verify_commands);
    }

    #[test]
    fn a_project_file_may_tighten_the_write_policy_but_never_loosen_it() {
        let err = load_hostile("write_policy = \"draft\"\n", "write_policy = \"approved\"\n").unwrap_err();
        assert!(err.to_string().contains("never loosen"), "{err}");
        let loaded = load_hostile("write_policy = \"draft\"\n", "write_policy = \"draft\"\n").unwrap();
        assert_eq!(loaded.config.write_policy, Status::Draft);
    }

    #[test]
    fn every_key_of_the_config_shape_is_either_allowed_in_a_project_file_or_refused_with_a_reason() {
        // A new table or key is refused in project files until it is added to the allow-list.
        let config = toml::Table::try_from(Config::default()).unwrap();
        for (table, value) in &config {
            let keys: Vec<String> = match value {
                toml::Value::Table(inner) => inner.keys().map(|key| format!("{table}.{key}")).collect(),
                _ => vec![table.clone()],
            };
            for key in keys {
                let (outer, inner) = key.split_once('.').unwrap_or(("", key.as_str()));
                let allowed = project_key_allowed(outer, inner) && (outer.is_empty() || project_key_allowed("", outer));
                let expected_allowed = matches!(
                    key.as_str(),
                    "tokenizer"
                        | "write_policy"
                        | "hooks.max_chars"
                        | "hooks.refresh_interval"
                        | "hooks.codex_max_tokens"
                        | "hooks.gemini_max_chars"
                        | "hooks.cursor_max_chars"
                        | "hooks.qwen_max_chars"
                        | "hooks.copilot_max_chars"
                        | "hooks.opencode_max_chars"
                        | "hooks.cline_max_chars"
                        | "hooks.task_recall"
                        | "search.mode"
                        | "search.learn_from_use"
                ) || key.starts_with("brain.");
                assert_eq!(allowed, expected_allowed, "{key}: {}", project_refusal(&key));
            }
        }
    }

    #[test]
    fn the_project_falls_back_to_the_git_root_then_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("My Repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(resolve_project(None, None, &repo.join("src/deep")).unwrap(), "My-Repo");
        assert_eq!(resolve_project(Some("x"), Some("y"), &repo).unwrap(), "x");
        assert_eq!(resolve_project(None, Some("y"), &repo).unwrap(), "y");
        assert!(resolve_project(Some("../etc"), None, &repo).is_err());
    }

    #[test]
    fn vault_keys_merge_over_the_defaults_and_bad_thresholds_name_the_key() {
        use brain_core::Severity;
        let table: toml::Table = toml::from_str("promote_heat = 8\nvault_path = \"/v\"").unwrap();
        let config = merged(&VaultConfig::default(), table, "x.toml").unwrap();
        assert_eq!((config.promote_heat, config.demote_heat), (8, 5));
        assert_eq!(config.path, Some(PathBuf::from("/v")));
        let table: toml::Table = toml::from_str("demote_heat = 9").unwrap();
        let err = merged(&VaultConfig::default(), table, "x.toml").unwrap_err().to_string();
        assert!(err.contains("demote_heat (9)") && err.contains("x.toml"), "{err}");
        let table: toml::Table = toml::from_str("allow_verify = true").unwrap();
        let err = merged(&VaultConfig::default(), table, "x.toml").unwrap_err().to_string();
        assert!(err.contains("allow_verify"), "{err}");
        let table: toml::Table = toml::from_str("shared_signal_severity = \"critical\"").unwrap();
        let config = merged(&VaultConfig::default(), table, "x.toml").unwrap();
        assert_eq!(config.shared_signal_severity, Some(Severity::Critical));
        assert!(config.shares(Severity::Nuclear, false) && !config.shares(Severity::Warning, false));
        assert!(config.shares(Severity::Info, true), "a signal marked scope=global is shared whatever its severity");
        for (bad, named) in [("info", "shared_signal_severity"), ("loud", "loud")] {
            let table: toml::Table = toml::from_str(&format!("shared_signal_severity = {bad:?}")).unwrap();
            let err = merged(&VaultConfig::default(), table, "x.toml").unwrap_err().to_string();
            assert!(err.contains(named) && err.contains("x.toml"), "{err}");
        }
    }
}
