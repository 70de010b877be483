//! The command line: global flags, the subcommand table and the error boundary that turns
//! every failure into one clear message and an exit code (0 ok, 1 user error, 2 internal).

pub mod commands;
mod fields;
mod progress;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use brain_api::app::Context;
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_remote::remote::{self, RemoteBrain, RemoteTarget};

pub use fields::ItemFields;

/// Local-first memory for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "brain", version, about, max_term_width = 100, args_override_self = true)]
pub struct Cli {
    /// Brain home (database, config, skills, vault) [default: ~/.brain]
    #[arg(long, global = true, env = "BRAIN_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Current project (else .brain.toml, the git root's name, the folder's name)
    #[arg(long, global = true, env = "BRAIN_PROJECT", value_name = "NAME")]
    pub project: Option<String>,
    /// The clock, for reproducible output (RFC 3339, e.g. 2026-11-21T10:00:00Z)
    #[arg(long, global = true, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Print data as JSON
    #[arg(long, global = true)]
    pub json: bool,
    /// Talk to a `brain serve` at URL instead of the local store (session-start, hook
    /// session-start, search, remember, brain); the bearer token comes from BRAIN_TOKEN
    #[arg(long, global = true, env = "BRAIN_URL", value_name = "URL")]
    pub remote: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set brain up here: the home, every agent host found (hooks, MCP), the project's memory files as drafts
    Setup(commands::setup::Args),
    /// Create the brain home, its database and a commented config (idempotent)
    Init(commands::init::Args),
    /// Add a memory item (content from --content or stdin)
    Remember(commands::remember::Args),
    /// List items (newest first)
    List(commands::list::Args),
    /// Show one item with every field
    Show(commands::show::Args),
    /// Change fields of an item
    Edit(commands::edit::Args),
    /// Approve a draft so it enters assembled context
    Approve(commands::status::Args),
    /// Deprecate an item (kept and searchable, never injected)
    Deprecate(commands::status::Args),
    /// Mark OLD as superseded by NEW (both are kept)
    Supersede(commands::supersede::Args),
    /// Archive an item, or erase it with --hard
    Forget(commands::forget::Args),
    /// Pin an item: always loaded first at session start
    Pin(commands::pin::PinArgs),
    /// Unpin an item
    Unpin(commands::pin::UnpinArgs),
    /// Ranked search over title, content, tags, files and schema key (--mode hybrid|semantic with [embed])
    Search(commands::search::Args),
    /// Fill the embedding vectors hybrid and semantic search use ([embed] in the config)
    Embed(commands::embed::Args),
    /// Import items from a JSONL file, all or nothing
    Import(commands::import::Args),
    /// Import the project's memory files (CLAUDE.md, AGENTS.md, .cursorrules, rules, memory bank) as drafts
    ImportMemory(commands::import_memory::Args),
    /// Export items as JSONL (readable by `brain import`)
    Export(commands::export::Args),
    /// Check the home, the database, the search index and the config
    Doctor(commands::doctor::Args),
    /// The project, the store's generation, items by status and every active signal
    Status(commands::brain_status::Args),
    /// The folders each project name is tied to: link, unlink, list
    Project(commands::project::Args),
    /// Print the layered brain document (what an agent should know), within a token budget
    Brain(commands::brain::Args),
    /// Assemble a context profile: brain, claude-md, session-start or agent
    Context(commands::context::Args),
    /// Write the summary into the managed block of CLAUDE.md / AGENTS.md / GEMINI.md / .cursorrules
    Inject(commands::inject::Args),
    /// Skills: list, show, add
    Skill(commands::skill::Args),
    /// The working memory for a new agent session: pins, skills, feed, recall
    SessionStart(commands::session_start::Args),
    /// List items due for review, or record one review
    Review(commands::review::Args),
    /// Say whether a memory helped (decides over what recall inferred from sessions)
    Feedback(commands::feedback::FeedbackArgs),
    /// What sessions did with an item they were given, with the evidence
    WhyUsed(commands::feedback::WhyUsedArgs),
    /// The vault of markdown arcs: create its compartments, index it
    Vault(commands::vault::Args),
    /// Maintain the vault: heat, promotion, graduation, signals, the brain feed (phase 1)
    Tick(commands::tick::Args),
    /// Propose memory items from captured sessions with the [ai] LLM, written as drafts to review
    Enrich(commands::enrich::Args),
    /// Plan the store's upkeep (near-duplicates, shared dedup hints, stale, low confidence); --apply acts
    Hygiene(commands::hygiene::Args),
    /// Append a marker block (lesson, signal, decision, todo, inject) to an arc or the vault's inbox
    Mark(commands::mark::Args),
    /// Summarize the Claude Code sessions of a time window (--project P keeps project folders matching P)
    Extract(commands::extract::Args),
    /// Group the extracted sessions into arcs in the vault
    Cluster(commands::cluster::Args),
    /// Extract and cluster in one go: transcripts → arcs
    Capture(commands::capture::Args),
    /// Agent hooks for Claude Code, Codex, Gemini CLI, Cursor (always exit 0); install, uninstall
    Hook(commands::hook::Args),
    /// Serve the MCP tools over stdio (for agents: session start, search, remember, update)
    Mcp(commands::mcp::Args),
    /// brain as a Claude Code and Codex plugin (hooks, MCP server, skill) with marketplaces
    Plugin(commands::plugin::Args),
    /// Serve the HTTP API (ETags, auth, events, metrics) and MCP over HTTP until SIGTERM
    Serve(commands::serve::Args),
    /// Bearer tokens kept in the store (fleets): create, list, revoke
    Token(commands::token::Args),
    /// Copy this home's store into another (a fleet's PostgreSQL), all or nothing
    Migrate(commands::migrate::Args),
    /// Push this home's changes to a brain serve and pull the server's ([sync] url, BRAIN_TOKEN); --status, resolve
    Sync(commands::sync::Args),
}

/// Parses the process arguments, runs the command and returns the exit code.
pub fn run() -> ExitCode {
    let parsed = Cli::command().try_get_matches().and_then(|matches| {
        let cli = Cli::from_arg_matches(&matches)?;
        Ok((cli, command_name(&matches)))
    });
    let (cli, command_name) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            use clap::error::ErrorKind;
            let _ = err.print();
            return match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::SUCCESS,
                // Usage mistakes are user errors (SPEC §7.1), not clap's default 2.
                _ => ExitCode::from(1),
            };
        }
    };
    let json = cli.json;
    // Hooks fail open even when the command line context cannot be built (a deleted
    // working directory, a bad --now): a valid payload and exit 0, always.
    if let Command::Hook(args) = &cli.command
        && let Err(err) = context(&cli)
    {
        if let Some(payload) = args.fallback_payload() {
            println!("{payload}");
        }
        eprintln!("brain hook: {err}");
        return ExitCode::SUCCESS;
    }
    match execute(cli, &command_name) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            report(&err, json);
            ExitCode::from(err.exit_code())
        }
    }
}

/// Prints an error to stderr: `error: …` and an optional `hint: …` (as JSON with --json).
pub fn report(err: &BrainError, json: bool) {
    if json {
        let value = serde_json::json!({"error": {"code": err.code(), "message": err.to_string(), "hint": err.hint()}});
        eprintln!("{value}");
        return;
    }
    // Messages quote values (titles, paths) that may hold terminal control sequences.
    eprintln!("error: {}", brain_api::output::escape_controls(&err.to_string()));
    if let Some(hint) = err.hint() {
        eprintln!("hint: {}", brain_api::output::escape_controls(hint));
    }
}

/// The subcommand path as typed (`search`, `hook install`), for messages.
fn command_name(matches: &clap::ArgMatches) -> String {
    let mut names = Vec::new();
    let mut current = matches;
    while let Some((name, sub)) = current.subcommand() {
        names.push(name);
        current = sub;
    }
    names.join(" ")
}

fn execute(cli: Cli, command_name: &str) -> BrainResult<()> {
    let context = context(&cli)?;
    let json = cli.json;
    if let Some(url) = cli.remote.as_deref().filter(|url| !url.trim().is_empty()) {
        return execute_remote(cli.command, &context, url, cli.now.is_some(), command_name, json);
    }
    match cli.command {
        Command::Setup(args) => commands::setup::run(&context, args, json),
        Command::Init(args) => commands::init::run(&context, args, json),
        Command::Remember(args) => commands::remember::run(&context, args, json),
        Command::List(args) => commands::list::run(&context, args, json),
        Command::Show(args) => commands::show::run(&context, args, json),
        Command::Edit(args) => commands::edit::run(&context, args, json),
        Command::Approve(args) => commands::status::run(&context, args, brain_core::Status::Approved, json),
        Command::Deprecate(args) => commands::status::run(&context, args, brain_core::Status::Deprecated, json),
        Command::Supersede(args) => commands::supersede::run(&context, args, json),
        Command::Forget(args) => commands::forget::run(&context, args, json),
        Command::Pin(args) => commands::pin::run_pin(&context, args, json),
        Command::Unpin(args) => commands::pin::run_unpin(&context, args, json),
        Command::Search(args) => commands::search::run(&context, args, json),
        Command::Embed(args) => commands::embed::run(&context, args, json),
        Command::Import(args) => commands::import::run(&context, args, json),
        Command::ImportMemory(args) => commands::import_memory::run(&context, args, json),
        Command::Export(args) => commands::export::run(&context, args, json),
        Command::Doctor(args) => commands::doctor::run(&context, args, json),
        Command::Status(args) => commands::brain_status::run(&context, args, json),
        Command::Brain(args) => commands::brain::run(&context, args, json),
        Command::Context(args) => commands::context::run(&context, args, json),
        Command::Inject(args) => commands::inject::run(&context, args, json),
        Command::Skill(args) => commands::skill::run(&context, args, json),
        Command::SessionStart(args) => commands::session_start::run(&context, args, json),
        Command::Review(args) => commands::review::run(&context, args, json),
        Command::Feedback(args) => commands::feedback::feedback(&context, args, json),
        Command::WhyUsed(args) => commands::feedback::why_used(&context, args, json),
        Command::Vault(args) => commands::vault::run(&context, args, json),
        Command::Tick(args) => commands::tick::run(&context, args, json),
        Command::Enrich(args) => commands::enrich::run(&context, args, json),
        Command::Hygiene(args) => commands::hygiene::run(&context, args, json),
        Command::Mark(args) => commands::mark::run(&context, args, json),
        Command::Extract(args) => commands::extract::run(&context, args, json),
        Command::Cluster(args) => commands::cluster::run(&context, args, json),
        Command::Capture(args) => commands::capture::run(&context, args, json),
        Command::Hook(args) => commands::hook::run(&context, args, json),
        Command::Mcp(args) => commands::mcp::run(&context, args, cli.now.is_some()),
        Command::Plugin(args) => commands::plugin::run(&context, args, json),
        Command::Serve(args) => commands::serve::run(&context, args, cli.now.is_some()),
        Command::Token(args) => commands::token::run(&context, args, json),
        Command::Project(args) => commands::project::run(&context, args, json),
        Command::Sync(args) => commands::sync::run(&context, args, json),
        Command::Migrate(args) => commands::migrate::run(&context, args, json),
    }
}

/// Remote mode (`--remote URL` / `BRAIN_URL`): the commands a `brain serve` answers, with
/// the local rendering; every other command is refused rather than silently run locally.
fn execute_remote(
    command: Command,
    context: &Context,
    url: &str,
    fixed_clock: bool,
    command_name: &str,
    json: bool,
) -> BrainResult<()> {
    let connect = || RemoteBrain::new(context, RemoteTarget::from_env(url)?, fixed_clock, None);
    match command {
        // Hooks get the URL unchecked: even a bad one must fail open.
        Command::Hook(args) => commands::hook::run_remote(context, args, url, fixed_clock, json),
        Command::SessionStart(args) => commands::session_start::run_remote(&connect()?, args),
        Command::Search(args) => commands::search::run_remote(&connect()?, args, json),
        Command::Remember(args) => commands::remember::run_remote(&connect()?, args, json),
        Command::Brain(args) => commands::brain::run_remote(&connect()?, args, json),
        // The ties are this machine's: remote mode resolves the project here too.
        Command::Project(args) => commands::project::run(context, args, json),
        _ => Err(remote::unsupported(command_name)),
    }
}

fn context(cli: &Cli) -> BrainResult<Context> {
    let now = match &cli.now {
        Some(text) => {
            brain_core::time::parse_timestamp(text).map_err(|err| BrainError::user(format!("--now: {err}")))?
        }
        None => jiff::Timestamp::now(),
    };
    let cwd =
        std::env::current_dir().map_err(|err| BrainError::user(format!("cannot read the working directory: {err}")))?;
    let home = match &cli.home {
        Some(home) if home.as_os_str().is_empty() => return Err(BrainError::user("--home is empty")),
        Some(home) => cwd.join(home),
        None => config::default_home(),
    };
    Ok(Context {
        home,
        cwd,
        project: cli.project.clone().filter(|p| !p.trim().is_empty()),
        now,
        env: config::Environment::from_process(),
    })
}
