//! `brain hook …`: the agent hooks. Every hook always exits 0 (fail-open, SPEC §7.4).

use std::io::Read;
use std::path::PathBuf;

use crate::app::Context;
use crate::cli::commands::hook_capture;
use crate::config;
use crate::error::{BrainError, BrainResult};
use crate::hook::{self, InstallScope};
use crate::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Claude Code SessionStart: print the working memory as hook JSON
    SessionStart,
    /// Claude Code UserPromptSubmit: re-inject every N turns when the brain changed
    UserPromptSubmit,
    /// Claude Code Stop: capture what the session did so far
    Stop,
    /// Claude Code SessionEnd: capture the session that ended
    SessionEnd,
    /// Merge brain's hooks into the agent's settings file (idempotent, with a backup)
    Install(InstallArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    ClaudeCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    User,
    Project,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent whose settings get the hooks
    #[arg(long, value_enum, default_value = "claude-code")]
    pub agent: Agent,
    /// user: ~/.claude/settings.json; project: .claude/settings.json at the project root
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// The command hooks run [default: this brain binary's absolute path]
    #[arg(long)]
    pub command: Option<String>,
    /// Write this settings file instead
    #[arg(long)]
    pub settings: Option<PathBuf>,
}

fn read_stdin_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    if super::stdin_is_piped() {
        let _ = std::io::stdin().read_to_end(&mut bytes);
    }
    bytes
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    match args.command {
        HookCommand::SessionStart => {
            let output = hook::session_start(context, &read_stdin_bytes());
            Out::new().line(output);
            Ok(())
        }
        HookCommand::UserPromptSubmit => {
            let output = hook::user_prompt_submit(context, &read_stdin_bytes());
            if !output.is_empty() {
                Out::new().line(output);
            }
            Ok(())
        }
        HookCommand::Stop => hook_capture::run(context, hook_capture::Args { event: hook_capture::Event::Stop }),
        HookCommand::SessionEnd => {
            hook_capture::run(context, hook_capture::Args { event: hook_capture::Event::SessionEnd })
        }
        HookCommand::Install(install) => run_install(context, install, json),
    }
}

/// The hooks with `--remote` / `BRAIN_URL`: session-start asks the server; the hooks remote
/// mode does not cover do nothing (and still exit 0); install touches no store and runs as
/// usual.
pub fn run_remote(context: &Context, args: Args, url: &str, fixed_clock: bool, json: bool) -> BrainResult<()> {
    match args.command {
        HookCommand::SessionStart => {
            let output = hook::session_start_remote(context, &read_stdin_bytes(), url, fixed_clock);
            Out::new().line(output);
            Ok(())
        }
        HookCommand::UserPromptSubmit | HookCommand::Stop | HookCommand::SessionEnd => {
            // Drain the hook input so the agent's write never meets a closed pipe.
            read_stdin_bytes();
            let event = match args.command {
                HookCommand::UserPromptSubmit => "user-prompt-submit",
                HookCommand::Stop => "stop",
                _ => "session-end",
            };
            hook::skip_remote(context, event);
            Ok(())
        }
        HookCommand::Install(install) => run_install(context, install, json),
    }
}

fn run_install(context: &Context, args: InstallArgs, json: bool) -> BrainResult<()> {
    let scope = match args.scope {
        Scope::User => InstallScope::User,
        Scope::Project => InstallScope::Project,
    };
    let settings = match (&args.settings, scope) {
        (Some(path), _) => context.cwd.join(path),
        (None, InstallScope::User) => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .ok_or_else(|| BrainError::user("HOME is not set; pass --settings FILE"))?;
            home.join(".claude").join("settings.json")
        }
        (None, InstallScope::Project) => config::project_root(&context.cwd).join(".claude").join("settings.json"),
    };
    let command = match args.command {
        Some(command) => command,
        None => std::env::current_exe()
            .map_err(|err| BrainError::internal(format!("cannot find this executable: {err}")))?
            .display()
            .to_string(),
    };
    let Agent::ClaudeCode = args.agent;
    let outcome = hook::install_claude_code(&settings, &command)?;
    let mut out = Out::new();
    if json {
        out.json(&outcome);
    } else if outcome.added.is_empty() {
        out.line(format!("brain hooks already installed in {}", outcome.settings));
    } else {
        out.line(format!("installed brain hooks ({}) in {}", outcome.added.join(", "), outcome.settings));
        if let Some(backup) = &outcome.backup {
            eprintln!("previous settings kept in {backup}");
        }
    }
    Ok(())
}
