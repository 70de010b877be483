//! `brain sync`: push this home's changes to a `brain serve` and pull the server's
//! (`brain_remote::sync`); `--status` shows what waits, `resolve` settles a conflict.

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;
use brain_remote::remote::{RemoteBrain, RemoteTarget, Token, parse_base_url};
use brain_remote::sync::{self, ScopeSelector};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<SyncCommand>,
    /// Show what waits (local changes not pushed, unresolved conflicts with both versions); no network
    #[arg(long)]
    pub status: bool,
    /// The server (default: [sync] url); the token comes from BRAIN_TOKEN
    #[arg(long)]
    pub url: Option<String>,
    /// Started by a hook: no output, errors (offline included) go to logs/hooks.log, exit 0
    #[arg(long, hide = true)]
    pub background: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum SyncCommand {
    /// Settle a conflict: keep this machine's version (pushed next) or the server's
    Resolve {
        /// The item in conflict
        id: String,
        /// Which version to keep
        #[arg(long, value_enum)]
        keep: KeepArg,
    },
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum KeepArg {
    Local,
    Remote,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    sync::trace("command");
    if args.background {
        // Offline is normal for a laptop: a line in the log, never an error for anyone.
        let line = match run_sync(context, None, &args, false, true) {
            Err(err) => format!("{err}{}", err.hint().map(|hint| format!(" ({hint})")).unwrap_or_default()),
            Ok(report) if !report.refused.is_empty() => refused_lines(&report).join("; "),
            Ok(_) => return Ok(()),
        };
        crate::hook::harness::write_log(
            &context.home,
            "sync",
            None,
            &line,
            crate::hook::harness::LogPolicy::ExistingHome,
        );
        return Ok(());
    }
    let brain = Brain::open(context)?;
    let loaded = config::load(&context.home, &context.cwd, &context.env)?;
    let selector = ScopeSelector::parse(&loaded.config.sync.scopes)?;
    let mut out = Out::new();
    match &args.command {
        Some(SyncCommand::Resolve { id, keep }) => {
            let keep = match keep {
                KeepArg::Local => brain_store::Keep::Local,
                KeepArg::Remote => brain_store::Keep::Remote,
            };
            sync::resolve(&brain, id, keep)?;
            if json {
                out.json(&serde_json::json!({"id": id, "resolved": true}));
            } else {
                let which = if keep == brain_store::Keep::Local { "this machine's" } else { "the server's" };
                out.line(format!("{id}: kept {which} version"));
            }
            return Ok(());
        }
        None if args.status => {
            let url = args.url.clone().or(loaded.config.sync.url.clone());
            let url = url.as_deref().map(parse_base_url).transpose()?;
            let status = sync::status(&brain, url.as_deref(), &selector)?;
            if json {
                out.json(&status);
                return Ok(());
            }
            out.line(format!("server: {}", status.url.as_deref().unwrap_or("(none: set [sync] url)")));
            out.line(format!("scopes: {}", status.scopes.join(", ")));
            out.line(format!("pending: {} local change(s) not pushed", status.pending));
            out.line(format!("pulled through: cursor {}", status.pulled_through));
            out.line(format!("conflicts: {}", status.conflicts.len()));
            for conflict in &status.conflicts {
                let side = |item: &Option<brain_core::Item>| match item {
                    Some(item) => format!("{:?}", brain_api::output::escape_controls(&item.content)),
                    None => "(deleted)".to_string(),
                };
                out.line(format!("  {} {}", conflict.id, brain_api::output::escape_controls(&conflict.title)));
                out.line(format!("    local:  {}", side(&conflict.local)));
                out.line(format!(
                    "    remote: {} (server version {})",
                    side(&conflict.remote),
                    conflict.remote_version
                ));
                out.line(format!("    resolve: brain sync resolve {} --keep local|remote", conflict.id));
            }
            return Ok(());
        }
        None => {}
    }
    let report = run_sync(context, Some(brain), &args, true, false)?;
    sync::trace("closed");
    if json {
        out.json(&report);
    } else {
        out.line(format!(
            "synced with {}: pushed {}, pulled {}, {} new conflict(s), {} unresolved, {} pending",
            report.url, report.pushed, report.pulled, report.conflicts, report.unresolved, report.pending
        ));
        if report.unresolved > 0 {
            eprintln!("conflicts wait: `brain sync --status` shows both versions");
        }
        for line in refused_lines(&report) {
            eprintln!("{line}");
        }
    }
    Ok(())
}

/// What a run refused to pull, for a person: a heading and one line per change.
fn refused_lines(report: &sync::SyncReport) -> Vec<String> {
    if report.refused.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "{} pulled change(s) refused: they would change items of scopes this machine no longer syncs",
        report.refused.len()
    )];
    for refused in &report.refused {
        lines.push(format!(
            "  {} ({}): the item here is in {}, which [sync] scopes leaves out",
            refused.id, refused.scope, refused.local_scope
        ));
    }
    lines
}

/// A sync of `context`'s home (`brain`: the home's store, opened by the caller already, or
/// opened here once the configuration names a server).
fn run_sync(
    context: &Context,
    brain: Option<Brain>,
    args: &Args,
    show_progress: bool,
    background: bool,
) -> BrainResult<sync::SyncReport> {
    let loaded = config::load(&context.home, &context.cwd, &context.env)?;
    let url =
        args.url.clone().or(loaded.config.sync.url.clone()).ok_or_else(|| {
            BrainError::user_with_hint("no sync server", "set [sync] url in config.toml (or pass --url)")
        })?;
    let selector = ScopeSelector::parse(&loaded.config.sync.scopes)?;
    let bounds = sync::RunBounds::from_config(&loaded.config.sync)?;
    sync::trace("config");
    let brain = match brain {
        Some(brain) => brain,
        None => Brain::open(context)?,
    };
    sync::trace("opened");
    let Some(_lock) = brain.try_lock_job("sync")? else {
        if background {
            return Ok(sync::SyncReport::default());
        }
        return Err(BrainError::user_with_hint(
            "another `brain sync` is running for this home",
            "it finishes on its own; run again afterwards",
        ));
    };
    let target = RemoteTarget { base_url: parse_base_url(&url)?, token: Token::from_env()? };
    let remote = RemoteBrain::new(context, target, false, None)?;
    sync::trace("locked, client built");
    let bar = progress::bar(None, "sync");
    let mut report_progress = |stage: &str, done: usize| {
        if show_progress {
            bar.set_message(stage.to_string());
            bar.set_position(done as u64);
        }
    };
    let outcome = sync::run(&brain, &remote, &selector, bounds, &mut report_progress);
    bar.finish_and_clear();
    outcome.map_err(|err| match err {
        BrainError::User { message, hint } => BrainError::User {
            message: format!("sync with {url} failed: {message}"),
            hint: Some(format!(
                "{}nothing was lost: the next `brain sync` retries",
                hint.map(|hint| format!("{hint}; ")).unwrap_or_default()
            )),
        },
        other => other,
    })
}
