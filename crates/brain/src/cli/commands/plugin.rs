//! `brain plugin write DIR`: brain as a Claude Code and Codex plugin (hooks, MCP server,
//! skill), with the marketplace files each host installs it from.

use std::path::PathBuf;

use crate::hook::install::shell_quote;
use crate::hook::plugin::{self, PluginCommand};
use brain_api::app::Context;
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: PluginSubcommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum PluginSubcommand {
    /// Write the marketplace and plugin into DIR; then `claude plugin marketplace add DIR`
    /// and `claude plugin install brain@brain` (Codex: `codex plugin marketplace add DIR`,
    /// `codex plugin add brain@brain`)
    Write(WriteArgs),
}

#[derive(Debug, clap::Args)]
pub struct WriteArgs {
    /// The marketplace folder to write (created if missing; other files in it are left alone)
    pub dir: PathBuf,
    /// The program the plugin runs [default: this brain binary's absolute path]; `brain`
    /// makes a portable plugin that uses whatever brain is on the PATH
    #[arg(long)]
    pub command: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let PluginSubcommand::Write(args) = args.command;
    let (program, shell_program) = match args.command {
        Some(command) if command.trim().is_empty() => return Err(BrainError::user("--command is empty")),
        Some(command) => (command.clone(), command),
        None => {
            let exe = std::env::current_exe()
                .map_err(|err| BrainError::internal(format!("cannot find this executable: {err}")))?;
            let exe = exe.to_string_lossy().into_owned();
            let quoted = shell_quote(&exe);
            (exe, quoted)
        }
    };
    // The home goes with the commands when it is not the default one, as for `hook install`.
    let global_args = if context.home == config::default_home() {
        Vec::new()
    } else {
        vec!["--home".to_string(), context.home.to_string_lossy().into_owned()]
    };
    let command = PluginCommand { program, global_args, shell_program };
    let outcome = plugin::write(&context.cwd.join(&args.dir), &command)?;
    let mut out = Out::new();
    if json {
        out.json(&outcome);
        return Ok(());
    }
    for file in &outcome.written {
        out.line(format!("wrote {file}"));
    }
    for backup in &outcome.backups {
        eprintln!("another marketplace was there: brain was merged into it, the previous file kept as {backup}");
    }
    eprintln!(
        "{} file(s) written, {} already up to date in {}; install with `claude plugin marketplace add {dir}` and \
         `claude plugin install brain@{claude}`, or `codex plugin marketplace add {dir}` and `codex plugin add \
         brain@{codex}`",
        outcome.written.len(),
        outcome.unchanged.len(),
        outcome.dir,
        dir = outcome.dir,
        claude = outcome.claude_marketplace,
        codex = outcome.codex_marketplace,
    );
    Ok(())
}
