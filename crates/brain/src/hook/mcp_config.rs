//! `brain mcp` registered as an MCP server in a host's own configuration (what `brain setup`
//! does besides the hooks), merged like the hooks: other servers and every other key keep
//! their place, an older brain entry (another binary path, another `--home`) is replaced, the
//! previous file is kept as `<file>.brain-backup` (a new numbered one each time: a backup is
//! never overwritten), a linked file is written through ([`super::user_files`]), and a dry run
//! writes nothing and shows the change as a unified diff.
//!
//! | host | file (user scope) | entry |
//! |---|---|---|
//! | Claude Code | `~/.claude.json` | `mcpServers.brain: {type: "stdio", command, args, env: {}}` |
//! | Codex | `$CODEX_HOME/config.toml` (`~/.codex`) | `[mcp_servers.brain]` `command`, `args` (the rest of the TOML kept as written) |
//! | Gemini CLI | `~/.gemini/settings.json` | `mcpServers.brain: {command, args}` |
//! | Cursor | `~/.cursor/mcp.json` | `mcpServers.brain: {command, args}` |
//! | Qwen Code | `~/.qwen/settings.json` | `mcpServers.brain: {command, args, trust: true}` |
//! | Copilot CLI | `$COPILOT_HOME/mcp-config.json` (`~/.copilot`) | `mcpServers.brain: {type: "local", command, args, tools: ["*"]}` |
//! | OpenCode | `$XDG_CONFIG_HOME/opencode/opencode.json` (`~/.config`) | `mcp.brain: {type: "local", command: [command, …args], enabled: true}` |
//! | Cline | `$CLINE_DATA_DIR/settings/cline_mcp_settings.json` (`~/.cline/data`) | `mcpServers.brain: {transport: {type: "stdio", command, args}}` (as `cline mcp add` writes it) |
//!
//! A host not in this table gets no MCP entry from setup (its hooks still work), nor does
//! OpenCode when its configuration is `opencode.jsonc` (JSON with comments, which this merge
//! would not keep); an entry named `brain` that runs something other than brain is left
//! alone, with a note.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::install::{InstallOutcome, read_settings, unified_diff, write_settings};
use brain_api::error::{BrainError, BrainResult};
use brain_capture::Host;

/// The server's name in every host's configuration.
pub const SERVER_NAME: &str = "brain";

/// How a host starts brain's MCP server: the program and its arguments (`[--home DIR] mcp`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServer {
    pub command: String,
    pub args: Vec<String>,
}

/// The file `host` reads its user-scope MCP servers from, when brain knows how to merge it;
/// `home` is the user's home folder, `codex_home` `$CODEX_HOME` when set.
pub fn config_path(host: Host, home: &Path, codex_home: Option<&Path>) -> Option<PathBuf> {
    match host {
        Host::ClaudeCode => Some(home.join(".claude.json")),
        Host::Codex => Some(codex_home.map_or_else(|| home.join(".codex"), Path::to_path_buf).join("config.toml")),
        Host::Gemini => Some(home.join(".gemini/settings.json")),
        Host::Cursor => Some(home.join(".cursor/mcp.json")),
        Host::Qwen => Some(home.join(".qwen/settings.json")),
        Host::Copilot => Some(brain_capture::extract::copilot_home(home).join("mcp-config.json")),
        Host::OpenCode => {
            let config = std::env::var_os("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from);
            let folder = config.unwrap_or_else(|| home.join(".config")).join("opencode");
            let json = folder.join("opencode.json");
            (json.exists() || !folder.join("opencode.jsonc").exists()).then_some(json)
        }
        Host::Cline => {
            let data = std::env::var_os("CLINE_DATA_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from);
            let data = data.unwrap_or_else(|| brain_capture::extract::cline_home(home).join("data"));
            Some(data.join("settings/cline_mcp_settings.json"))
        }
    }
}

/// The key of the servers' table in `host`'s file.
fn servers_key(host: Host) -> &'static str {
    if host == Host::OpenCode { "mcp" } else { "mcpServers" }
}

/// brain's entry in `host`'s shape.
fn server_entry(host: Host, server: &McpServer) -> Value {
    let (command, args) = (&server.command, &server.args);
    match host {
        Host::ClaudeCode => json!({"type": "stdio", "command": command, "args": args, "env": {}}),
        Host::Qwen => json!({"command": command, "args": args, "trust": true}),
        Host::Copilot => json!({"type": "local", "command": command, "args": args, "tools": ["*"]}),
        Host::OpenCode => {
            let line: Vec<&String> = std::iter::once(command).chain(args).collect();
            json!({"type": "local", "command": line, "enabled": true})
        }
        Host::Cline => json!({"transport": {"type": "stdio", "command": command, "args": args}}),
        Host::Codex | Host::Gemini | Host::Cursor => json!({"command": command, "args": args}),
    }
}

/// The program and arguments an entry runs, in any of the hosts' shapes (a `command` string
/// and `args`, OpenCode's `command` list, Cline's `transport`).
fn program_of(entry: &Value) -> (String, Vec<Value>) {
    let entry = if entry["transport"].is_object() { &entry["transport"] } else { entry };
    match &entry["command"] {
        Value::Array(line) => {
            let program = line.first().and_then(Value::as_str).unwrap_or_default().to_string();
            (program, line.iter().skip(1).cloned().collect())
        }
        command => {
            let args = entry["args"].as_array().cloned().unwrap_or_default();
            (command.as_str().unwrap_or_default().to_string(), args)
        }
    }
}

/// Merges brain's MCP server into the file at `path` for `host`. With `dry_run`, nothing is
/// written; with `backup` false, no `.brain-backup` is written (the caller already kept the
/// file's state before this run touched it).
pub fn install(
    path: &Path,
    host: Host,
    server: &McpServer,
    dry_run: bool,
    backup: bool,
) -> BrainResult<InstallOutcome> {
    let before = read_settings(path)?.unwrap_or_default();
    let mut outcome = InstallOutcome {
        agent: host.as_str().to_string(),
        settings: path.display().to_string(),
        dry_run,
        ..InstallOutcome::default()
    };
    let merged =
        if host == Host::Codex { merge_toml(path, &before, server)? } else { merge_json(path, host, &before, server)? };
    let after = match merged {
        Merge::Unchanged => return Ok(outcome),
        Merge::Foreign(command) => {
            outcome.notes.push(format!(
                "{} already names an MCP server \"{SERVER_NAME}\" that runs {command:?}, not brain: left alone",
                path.display()
            ));
            return Ok(outcome);
        }
        Merge::Added(after) => {
            outcome.added.push(format!("mcp server {SERVER_NAME}"));
            after
        }
        Merge::Updated(after) => {
            outcome.updated.push(format!("mcp server {SERVER_NAME}"));
            after
        }
    };
    outcome.diff = unified_diff(&before, &after, path);
    write_settings(path, &before, &after, dry_run, backup, &mut outcome)?;
    Ok(outcome)
}

/// What merging brain's entry does to a file's text.
enum Merge {
    Unchanged,
    /// An entry named brain runs this other command.
    Foreign(String),
    Added(String),
    Updated(String),
}

/// Whether a configured server command is a brain binary (any path, any quoting).
fn is_brain(command: &str) -> bool {
    let program = command.rsplit(['/', '\\']).next().unwrap_or(command);
    program.to_ascii_lowercase().contains("brain")
}

fn merge_json(path: &Path, host: Host, before: &str, server: &McpServer) -> BrainResult<Merge> {
    let mut settings: Value = if before.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(before).map_err(|err| {
            BrainError::user_with_hint(
                format!("{} is not valid JSON ({err}); refusing to rewrite it", path.display()),
                "fix the file or move it away, then run setup again",
            )
        })?
    };
    super::install::refuse_lossy(path, before, &settings)?;
    let shape = |what: &str| {
        BrainError::user(format!("{what} in {} is not what {} expects", path.display(), host.display_name()))
    };
    let Some(root) = settings.as_object_mut() else { return Err(shape("the top level")) };
    let key = servers_key(host);
    let servers = root.entry(key).or_insert_with(|| json!({}));
    let Some(servers) = servers.as_object_mut() else { return Err(shape(&format!("\"{key}\""))) };
    let entry = server_entry(host, server);
    let existing = servers.get(SERVER_NAME).cloned();
    let updated = match &existing {
        None => false,
        Some(current) => {
            let (command, args) = program_of(current);
            if !is_brain(&command) {
                return Ok(Merge::Foreign(command));
            }
            if (command, args) == program_of(&entry) {
                return Ok(Merge::Unchanged);
            }
            true
        }
    };
    // An older brain entry keeps its place and its other keys (a timeout the user set).
    match servers.get_mut(SERVER_NAME).and_then(Value::as_object_mut) {
        Some(current) => {
            if host == Host::Cline {
                // An older flat entry (Cline reads both shapes) becomes the one Cline writes.
                for flat in ["type", "command", "args"] {
                    current.remove(flat);
                }
            }
            if let Value::Object(fields) = entry {
                current.extend(fields);
            }
        }
        None => {
            servers.insert(SERVER_NAME.to_string(), entry);
        }
    }
    let after = serde_json::to_string_pretty(&settings).map_err(|err| BrainError::internal(err.to_string()))? + "\n";
    Ok(if updated { Merge::Updated(after) } else { Merge::Added(after) })
}

fn merge_toml(path: &Path, before: &str, server: &McpServer) -> BrainResult<Merge> {
    let invalid = |why: String| {
        BrainError::user_with_hint(
            format!("{} is not valid TOML ({why}); refusing to rewrite it", path.display()),
            "fix the file or move it away, then run setup again",
        )
    };
    let mut document: toml_edit::DocumentMut =
        before.parse().map_err(|err: toml_edit::TomlError| invalid(err.to_string()))?;
    let shape = || BrainError::user(format!("mcp_servers in {} is not a table of servers", path.display()));
    let servers = document.entry("mcp_servers").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let servers = servers.as_table_like_mut().ok_or_else(shape)?;
    let args = toml_edit::Array::from_iter(server.args.iter().map(String::as_str));
    let updated = match servers.get(SERVER_NAME) {
        None => false,
        Some(current) => {
            let command = current.get("command").and_then(|item| item.as_str()).unwrap_or_default();
            if !is_brain(command) {
                return Ok(Merge::Foreign(command.to_string()));
            }
            let same_args = current.get("args").and_then(|item| item.as_array()).is_some_and(|current| {
                current.iter().map(|value| value.as_str()).eq(server.args.iter().map(|arg| Some(arg.as_str())))
            });
            if command == server.command && same_args {
                return Ok(Merge::Unchanged);
            }
            true
        }
    };
    match servers.get_mut(SERVER_NAME).and_then(|item| item.as_table_like_mut()) {
        Some(current) => {
            current.insert("command", toml_edit::value(server.command.as_str()));
            current.insert("args", toml_edit::value(args));
        }
        None => {
            let mut table = toml_edit::Table::new();
            table.insert("command", toml_edit::value(server.command.as_str()));
            table.insert("args", toml_edit::value(args));
            // An inline `mcp_servers = {…}` takes it as an inline table.
            servers.insert(SERVER_NAME, toml_edit::Item::Table(table));
        }
    }
    let after = document.to_string();
    // The merged text must read back as TOML (an inline `mcp_servers = {…}` cannot take a
    // table the way a `[mcp_servers]` section can).
    after.parse::<toml_edit::DocumentMut>().map_err(|err| invalid(format!("after the merge: {err}")))?;
    Ok(if updated { Merge::Updated(after) } else { Merge::Added(after) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(command: &str) -> McpServer {
        McpServer { command: command.into(), args: vec!["--home".into(), "/h/my brain".into(), "mcp".into()] }
    }

    #[test]
    fn codex_config_keeps_its_text_and_gets_one_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# my model\nmodel = \"gpt-5\"  # fast\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
        std::fs::write(&path, original).unwrap();
        let outcome = install(&path, Host::Codex, &server("/usr/bin/brain"), false, true).unwrap();
        assert_eq!(outcome.added, vec!["mcp server brain"]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(original), "{text}");
        assert!(
            text.ends_with(
                "[mcp_servers.brain]\ncommand = \"/usr/bin/brain\"\nargs = [\"--home\", \"/h/my brain\", \"mcp\"]\n"
            ),
            "{text}"
        );
        assert_eq!(std::fs::read_to_string(dir.path().join("config.toml.brain-backup")).unwrap(), original);
        let again = install(&path, Host::Codex, &server("/usr/bin/brain"), false, true).unwrap();
        assert!(!again.changed(), "{}", again.diff);
        let moved = install(&path, Host::Codex, &server("/opt/brain"), true, true).unwrap();
        assert_eq!(moved.updated, vec!["mcp server brain"]);
        assert!(moved.diff.contains("+command = \"/opt/brain\""), "{}", moved.diff);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "a dry run writes nothing");
    }

    #[test]
    fn the_newer_hosts_get_brain_in_their_own_shape_once() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let server = server("/usr/bin/brain");
        let expected = [
            (Host::Qwen, json!({"command": "/usr/bin/brain", "args": ["--home", "/h/my brain", "mcp"], "trust": true})),
            (
                Host::Copilot,
                json!({"type": "local", "command": "/usr/bin/brain", "args": ["--home", "/h/my brain", "mcp"], "tools": ["*"]}),
            ),
            (
                Host::OpenCode,
                json!({"type": "local", "command": ["/usr/bin/brain", "--home", "/h/my brain", "mcp"], "enabled": true}),
            ),
            (
                Host::Cline,
                json!({"transport": {"type": "stdio", "command": "/usr/bin/brain", "args": ["--home", "/h/my brain", "mcp"]}}),
            ),
        ];
        // Under the test's own folder whatever the environment says (COPILOT_HOME, …).
        let file = |host: Host| match host {
            Host::Qwen => home.join(".qwen/settings.json"),
            Host::Copilot => home.join(".copilot/mcp-config.json"),
            Host::OpenCode => home.join(".config/opencode/opencode.json"),
            _ => home.join(".cline/data/settings/cline_mcp_settings.json"),
        };
        for (host, entry) in expected {
            let path = file(host);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, r#"{"theme": "dark"}"#).unwrap();
            let outcome = install(&path, host, &server, false, true).unwrap();
            assert_eq!(outcome.added, vec!["mcp server brain"], "{host}");
            let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(value["theme"], "dark", "{host}");
            assert_eq!(value[servers_key(host)]["brain"], entry, "{host}");
            assert!(!install(&path, host, &server, false, true).unwrap().changed(), "{host}: idempotent");
            let moved = install(&path, host, &super::tests::server("/opt/brain"), true, true).unwrap();
            assert_eq!(moved.updated, vec!["mcp server brain"], "{host}: another binary is an update");
        }
        let moved_homes = ["COPILOT_HOME", "XDG_CONFIG_HOME", "CLINE_DIR", "CLINE_DATA_DIR"];
        if moved_homes.iter().all(|name| std::env::var_os(name).is_none()) {
            for host in [Host::Qwen, Host::Copilot, Host::OpenCode, Host::Cline] {
                assert_eq!(config_path(host, home, None), Some(file(host)), "{host}");
            }
        }
        // Cline's older flat entry becomes the shape `cline mcp add` writes.
        let cline = file(Host::Cline);
        std::fs::write(
            &cline,
            r#"{"mcpServers": {"brain": {"command": "/old/brain", "args": ["mcp"], "timeout": 90}}}"#,
        )
        .unwrap();
        install(&cline, Host::Cline, &server, false, true).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&cline).unwrap()).unwrap();
        assert_eq!(
            value["mcpServers"]["brain"],
            json!({"timeout": 90, "transport": {"type": "stdio", "command": "/usr/bin/brain", "args": ["--home", "/h/my brain", "mcp"]}})
        );
        // OpenCode's foreign brain is left alone; a commented opencode.jsonc is not merged.
        let opencode = file(Host::OpenCode);
        std::fs::write(&opencode, r#"{"mcp": {"brain": {"type": "local", "command": ["node", "other.js"]}}}"#).unwrap();
        let outcome = install(&opencode, Host::OpenCode, &server, false, true).unwrap();
        assert!(!outcome.changed() && outcome.notes[0].contains("runs \"node\""), "{outcome:?}");
        std::fs::remove_file(&opencode).unwrap();
        std::fs::write(opencode.with_extension("jsonc"), "// mine\n{}").unwrap();
        if std::env::var_os("XDG_CONFIG_HOME").is_none() {
            assert_eq!(config_path(Host::OpenCode, home, None), None);
        }
    }

    #[test]
    fn json_hosts_merge_and_leave_a_foreign_brain_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        std::fs::write(&path, r#"{"numStartups": 3, "mcpServers": {"docs": {"command": "docs"}}}"#).unwrap();
        install(&path, Host::ClaudeCode, &server("/usr/bin/brain"), false, true).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["numStartups"], 3);
        assert_eq!(value["mcpServers"]["docs"]["command"], "docs");
        assert_eq!(
            value["mcpServers"]["brain"],
            json!({"type": "stdio", "command": "/usr/bin/brain", "args": ["--home", "/h/my brain", "mcp"], "env": {}})
        );

        let cursor = dir.path().join("mcp.json");
        std::fs::write(&cursor, r#"{"mcpServers": {"brain": {"command": "node", "args": ["other.js"]}}}"#).unwrap();
        let outcome = install(&cursor, Host::Cursor, &server("/usr/bin/brain"), false, true).unwrap();
        assert!(!outcome.changed() && outcome.notes[0].contains("left alone"), "{outcome:?}");
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{not json").unwrap();
        let err = install(&broken, Host::Gemini, &server("/usr/bin/brain"), false, true).unwrap_err().to_string();
        assert!(err.contains("is not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(&broken).unwrap(), "{not json");
    }
}
