//! Configuration, with one precedence chain (lowest first):
//!
//! 1. built-in defaults,
//! 2. the user config file `<home>/config.toml`,
//! 3. the project file `.brain.toml` in the working directory or its nearest ancestor,
//! 4. `BRAIN_*` environment variables,
//! 5. command-line flags.
//!
//! Reading configuration never writes files. Unknown keys are errors, so a typo never
//! silently does nothing. The home itself comes from `--home`, else `BRAIN_HOME`, else
//! `~/.brain`; the project from `--project`, `BRAIN_PROJECT`, `.brain.toml`'s `project`,
//! the git root's folder name, the working directory's name (SPEC §2.6).

use std::path::{Path, PathBuf};

use brain_core::Status;
use brain_core::scope::validate_scope_name;
use serde::{Deserialize, Serialize};

use crate::error::{BrainError, BrainResult};

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
    pub vault: crate::vault::VaultConfig,
    /// Agent hooks (`[hooks]`).
    pub hooks: HooksConfig,
    /// Remote mode (`[remote]`): the CLI talking to a `brain serve`.
    pub remote: RemoteConfig,
    /// `brain serve` (`[serve]`; only in the user config, never in a project's `.brain.toml`).
    pub serve: ServeConfig,
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
    /// How often the event stream looks for writes by other processes (milliseconds).
    pub events_poll_ms: u64,
    /// Bearer tokens and their scope grants. Empty: no auth (loopback only).
    pub tokens: Vec<TokenConfig>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:7077".into(),
            max_body_bytes: 1024 * 1024,
            request_timeout_secs: 30,
            pool_size: 4,
            events_poll_ms: 500,
            tokens: Vec::new(),
        }
    }
}

/// One `[[serve.tokens]]` entry: a secret (in clear, or its SHA-256 in hex) and the scopes
/// it may read and write (`global`, `project/NAME`, `project/*`, `*`, …).
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
}

impl std::fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("TokenConfig")
            .field("name", &self.name)
            .field("read", &self.read)
            .field("write", &self.write)
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
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig { max_chars: 9500, refresh_interval: 30, timeout_ms: 3000 }
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
            vault: crate::vault::VaultConfig::default(),
            hooks: HooksConfig::default(),
            remote: RemoteConfig::default(),
            serve: ServeConfig::default(),
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
}

/// Environment variables that configure brain, read in one place so tests can pass their own.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub tokenizer: Option<String>,
    pub write_policy: Option<String>,
}

impl Environment {
    pub fn from_process() -> Environment {
        let read = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Environment { tokenizer: read("BRAIN_TOKENIZER"), write_policy: read("BRAIN_WRITE_POLICY") }
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
    let mut config = Config::default();
    let mut project_from_file = None;
    let user_file = home.join(USER_CONFIG_FILE);
    if let Some(file) = read_config_file(&user_file)? {
        apply_file(&mut config, file, &user_file)?;
    }
    if let Some(project_file) = find_upwards(cwd, PROJECT_CONFIG_FILE)
        && let Some(mut file) = read_config_file(&project_file)?
    {
        project_from_file = file.project.take();
        if file.serve.is_some() {
            return Err(BrainError::Config {
                message: format!("{}: [serve] is not allowed in a project file", project_file.display()),
                hint: Some(format!("server settings and tokens belong in {}", user_file.display())),
            });
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

fn read_config_file(path: &Path) -> BrainResult<Option<ConfigFile>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(BrainError::Config {
                message: format!("cannot read config file {}: {err}", path.display()),
                hint: None,
            });
        }
    };
    toml::from_str(&text).map(Some).map_err(|err| BrainError::Config {
        message: format!("config file {} is invalid: {}", path.display(), err.message()),
        hint: Some("see the configuration section of the README for the keys".into()),
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
        // Merge key by key so a project file can override one budget and keep the rest.
        let mut merged = toml::Table::try_from(&config.brain)
            .map_err(|err| BrainError::internal(format!("cannot serialize brain config: {err}")))?;
        merged.extend(table);
        config.brain = merged.try_into().map_err(|err: toml::de::Error| BrainError::Config {
            message: format!("config file {origin}: invalid [brain] table: {}", err.message()),
            hint: None,
        })?;
    }
    if let Some(table) = file.vault {
        config.vault = crate::vault::VaultConfig::merged(&config.vault, table, &origin)?;
    }
    if let Some(table) = file.serve {
        // Not merged key by key: only the user config may carry it.
        config.serve = toml::Value::Table(table).try_into().map_err(|err: toml::de::Error| BrainError::Config {
            message: format!("config file {origin}: invalid [serve] table: {}", err.message()),
            hint: None,
        })?;
    }
    if let Some(table) = file.hooks {
        let mut merged = toml::Table::try_from(&config.hooks)
            .map_err(|err| BrainError::internal(format!("cannot serialize hooks config: {err}")))?;
        merged.extend(table);
        config.hooks = merged.try_into().map_err(|err: toml::de::Error| BrainError::Config {
            message: format!("config file {origin}: invalid [hooks] table: {}", err.message()),
            hint: None,
        })?;
    }
    if let Some(table) = file.remote {
        let mut merged = toml::Table::try_from(&config.remote)
            .map_err(|err| BrainError::internal(format!("cannot serialize remote config: {err}")))?;
        merged.extend(table);
        config.remote = merged.try_into().map_err(|err: toml::de::Error| BrainError::Config {
            message: format!("config file {origin}: invalid [remote] table: {}", err.message()),
            hint: None,
        })?;
    }
    Ok(())
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
# max_chars = 9500         # cap of injected context
# refresh_interval = 30    # user-prompt-submit re-injects every N turns, only on change
# timeout_ms = 3000        # a hook gives up with an empty payload after this long
#                          # (hook session-start with --remote / BRAIN_URL: the request too)

# Remote mode: `--remote URL` or BRAIN_URL sends session-start, hook session-start, search,
# remember and brain to a `brain serve`; the bearer token comes from BRAIN_TOKEN only.
# [remote]
# timeout_ms = 10000       # connect + request + response

# The HTTP server (`brain serve`). It listens on loopback unless tokens are configured.
# [serve]
# listen = "127.0.0.1:7077"
# max_body_bytes = 1048576
# request_timeout_secs = 30
# pool_size = 4                  # store connections serving requests at once
# events_poll_ms = 500           # how often /api/v2/events looks for writes
# [[serve.tokens]]               # one per client; read/write grants by scope
# name = "ci-agent"
# token_sha256 = "…"             # sha256 of the secret in hex (or token = "…" in clear)
# read = ["project/acme-api"]    # global is readable by every valid token
# write = ["project/acme-api"]   # "project/*" or "*" grant more

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
        let env = Environment { tokenizer: Some("o200k".into()), write_policy: Some("approved".into()) };
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
}
