//! `brain hook …`: the agent hooks of every host (always exit 0, fail-open, SPEC §7.4) and
//! `install`/`uninstall`, which put them into (or take them out of) a host's settings.

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use crate::hook::install::{self, Change, InstallOutcome, InstallScope};
use crate::hook::{self, CaptureEvent, HookEvent, HookRun, copilot, hosts, repo_files, rule};
use brain_api::app::{Brain, Context, SessionRequest};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::{Out, escape_name};
use brain_capture::Host;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Session start: print the working memory as the host's hook JSON
    SessionStart(EventArgs),
    /// Prompt submitted: task recall at the first prompt, a refresh every N turns on change
    UserPromptSubmit(EventArgs),
    /// The agent stopped: capture what the session did so far
    Stop(EventArgs),
    /// The session ended: capture it
    SessionEnd(EventArgs),
    /// Merge brain's hooks into a host's settings (idempotent, with a backup; --dry-run shows the diff)
    Install(InstallArgs),
    /// Take brain's hooks out of a host's settings (everything else is kept)
    Uninstall(UninstallArgs),
}

/// The hosts brain's hooks speak to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Qwen,
    Copilot,
    #[value(name = "opencode")]
    OpenCode,
    Cline,
}

impl Agent {
    pub fn host(self) -> Host {
        match self {
            Agent::ClaudeCode => Host::ClaudeCode,
            Agent::Codex => Host::Codex,
            Agent::Gemini => Host::Gemini,
            Agent::Cursor => Host::Cursor,
            Agent::Qwen => Host::Qwen,
            Agent::Copilot => Host::Copilot,
            Agent::OpenCode => Host::OpenCode,
            Agent::Cline => Host::Cline,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    User,
    Project,
}

#[derive(Debug, clap::Args)]
pub struct EventArgs {
    /// The host calling the hook: the input it sends and the output it reads
    #[arg(long, value_enum, default_value = "claude-code")]
    pub agent: Agent,
    /// session-end: wait for the host to write the session, then capture it (what Copilot
    /// CLI's sessionEnd hook starts in the background; see hook::copilot)
    #[arg(long, hide = true)]
    pub after_host_exit: bool,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The host whose settings get the hooks
    #[arg(long, value_enum, default_value = "claude-code")]
    pub agent: Agent,
    /// user: the host's settings in your home (~/.claude, ~/.codex, ~/.gemini, ~/.cursor,
    /// ~/.qwen, ~/.copilot; OpenCode: brain's plugin in ~/.config/opencode/plugins; Cline: its
    /// hook files in ~/.cline/hooks); project: the same folder at the project root (Copilot:
    /// .github/hooks/brain.json)
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// The program hooks run [default: this brain binary's absolute path, quoted for the shell]
    #[arg(long)]
    pub command: Option<String>,
    /// Write this settings file instead
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Show the change as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    /// The host whose settings lose the hooks
    #[arg(long, value_enum, default_value = "claude-code")]
    pub agent: Agent,
    /// user or project, as for install
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Edit this settings file instead
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Show the change as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

impl Args {
    /// The host and event of a hook command (`None` for install and uninstall).
    fn event(&self) -> Option<(Agent, HookEvent)> {
        Some(match &self.command {
            HookCommand::SessionStart(args) => (args.agent, HookEvent::SessionStart),
            HookCommand::UserPromptSubmit(args) => (args.agent, HookEvent::UserPromptSubmit),
            HookCommand::Stop(args) => (args.agent, HookEvent::Stop),
            HookCommand::SessionEnd(args) => (args.agent, HookEvent::SessionEnd),
            HookCommand::Install(_) | HookCommand::Uninstall(_) => return None,
        })
    }

    /// What a hook prints when it cannot even start (no working directory, a bad `--now`).
    pub fn fallback_payload(&self) -> Option<String> {
        let (agent, event) = self.event()?;
        Some(hook::quiet_payload(agent.host(), event)).filter(|payload| !payload.is_empty())
    }

    /// A Claude Code hook that Copilot CLI runs from `.claude/settings.json`: it stays quiet
    /// (brain's Copilot hooks serve the session). What it printed, if it is one.
    fn quiet_inside_copilot(&self, context: &Context, started: Instant) -> Option<String> {
        let (agent, event) = self.event().filter(|(agent, _)| copilot::claude_hook_inside_copilot(agent.host()))?;
        Some(copilot::quiet_inside_copilot(hook_run(context, agent, started), event))
    }
}

/// The hook's stdin, read by the hook's worker within its deadline; a terminal is no input.
fn hook_run(context: &Context, agent: Agent, started: Instant) -> HookRun {
    let stdin: Box<dyn Read + Send> =
        if super::stdin_is_piped() { Box::new(std::io::stdin()) } else { Box::new(std::io::empty()) };
    HookRun { host: agent.host(), context: context.clone(), started, stdin }
}

fn print_payload(output: &str) {
    if !output.is_empty() {
        Out::new().line(output);
    }
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let started = Instant::now();
    if let Some(output) = args.quiet_inside_copilot(context, started) {
        print_payload(&output);
        return Ok(());
    }
    let output = match args.command {
        HookCommand::SessionStart(args) => hook::session_start(hook_run(context, args.agent, started)),
        HookCommand::UserPromptSubmit(args) => hook::user_prompt_submit(hook_run(context, args.agent, started)),
        HookCommand::Stop(args) => hook::capture_transcript(hook_run(context, args.agent, started), CaptureEvent::Stop),
        HookCommand::SessionEnd(args) if args.after_host_exit => {
            hook::capture_after_host_exit(hook_run(context, args.agent, started))
        }
        HookCommand::SessionEnd(args) => {
            hook::capture_transcript(hook_run(context, args.agent, started), CaptureEvent::SessionEnd)
        }
        HookCommand::Install(install) => return run_install(context, install, json),
        HookCommand::Uninstall(uninstall) => return run_uninstall(context, uninstall, json),
    };
    print_payload(&output);
    Ok(())
}

/// The hooks with `--remote` / `BRAIN_URL`: session-start asks the server; the hooks remote
/// mode does not cover do nothing (and still exit 0); install and uninstall touch no store
/// and run as usual.
pub fn run_remote(context: &Context, args: Args, url: &str, fixed_clock: bool, json: bool) -> BrainResult<()> {
    let started = Instant::now();
    if let Some(output) = args.quiet_inside_copilot(context, started) {
        print_payload(&output);
        return Ok(());
    }
    let output = match args.command {
        HookCommand::SessionStart(args) => {
            hook::session_start_remote(hook_run(context, args.agent, started), url, fixed_clock)
        }
        HookCommand::UserPromptSubmit(args) => {
            hook::user_prompt_submit_remote(hook_run(context, args.agent, started), url, fixed_clock)
        }
        HookCommand::Stop(args) => hook::skip_remote(hook_run(context, args.agent, started), HookEvent::Stop),
        HookCommand::SessionEnd(args) => {
            hook::skip_remote(hook_run(context, args.agent, started), HookEvent::SessionEnd)
        }
        HookCommand::Install(install) => return run_install(context, install, json),
        HookCommand::Uninstall(uninstall) => return run_uninstall(context, uninstall, json),
    };
    print_payload(&output);
    Ok(())
}

/// The settings file `--settings`, else the host's for the scope.
fn settings_file(context: &Context, host: Host, scope: Scope, explicit: Option<&PathBuf>) -> BrainResult<PathBuf> {
    if let Some(path) = explicit {
        return Ok(context.cwd.join(path));
    }
    let scope = match scope {
        Scope::User => InstallScope::User,
        Scope::Project => InstallScope::Project,
    };
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    let home = match (scope, home) {
        (InstallScope::User, None) => return Err(BrainError::user("HOME is not set; pass --settings FILE")),
        (_, home) => home.unwrap_or_default(),
    };
    let codex_home = std::env::var_os("CODEX_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from);
    let project_root = config::project_root(&context.cwd);
    let path = install::settings_path(host, scope, &home, &project_root, codex_home.as_deref());
    // A project's settings are in the repository, which may carry links; the user's own
    // (a dotfiles link to ~/.claude is common) and an explicit --settings are followed.
    if scope == InstallScope::Project {
        repo_files::refuse_links(&project_root, &path)?;
    }
    Ok(path)
}

/// What installed hooks run before `hook …`: this binary (quoted when its path needs it) or
/// `--command`, and `--home DIR` when the home is not the default one, so the hooks find
/// the home this install was run with.
fn command_prefix(context: &Context, explicit: Option<String>) -> BrainResult<String> {
    let mut prefix = match explicit {
        Some(command) => command,
        None => {
            let exe = std::env::current_exe()
                .map_err(|err| BrainError::internal(format!("cannot find this executable: {err}")))?;
            install::shell_quote(&exe.to_string_lossy())
        }
    };
    if context.home != config::default_home() {
        prefix.push_str(" --home ");
        prefix.push_str(&install::shell_quote(&context.home.to_string_lossy()));
    }
    Ok(prefix)
}

fn host_notes(host: Host, scope: Scope) -> Vec<String> {
    match (host, scope) {
        (Host::Codex, _) => vec![
            "Codex runs new hooks only once you trust them: start `codex`, open /hooks and trust brain's \
             (automation: `codex exec --dangerously-bypass-hook-trust`)"
                .into(),
            "Codex has no SessionEnd event: sessions are captured at every Stop".into(),
        ],
        (Host::Gemini, Scope::Project) => {
            vec!["Gemini CLI asks you to trust a project's hooks the first time it runs them".into()]
        }
        (Host::Qwen, _) => vec![
            "Qwen Code drops what a SessionStart hook returns: the session's first prompt gets the working memory"
                .into(),
        ],
        (Host::Copilot, Scope::User) => vec![
            "inside Copilot CLI, brain's Claude Code hooks (a repository's .claude/settings.json) stay quiet: \
             these serve the session"
                .into(),
        ],
        (Host::Copilot, Scope::Project) => {
            vec!["Copilot CLI runs a repository's hooks only in a folder you trust (-p runs: --trust-folder)".into()]
        }
        (Host::OpenCode, _) => vec![
            "OpenCode loads the plugin at its next start; it writes each session's messages to \
             ~/.local/share/opencode/brain-transcripts/ for capture"
                .into(),
        ],
        (Host::Cline, _) => vec![
            "Cline reads no hook's answer at a task's start or prompt: the working memory reaches it as a rule, \
             .cline/rules/brain-working-memory.md, which the hooks keep current (and create in a project's first \
             task, for the next one); there is no per-prompt recall"
                .into(),
        ],
        _ => Vec::new(),
    }
}

fn run_install(context: &Context, args: InstallArgs, json: bool) -> BrainResult<()> {
    let outcome = install_hooks(context, args)?;
    report(&outcome, json, "installed")
}

/// Installs brain's hooks for one host as `args` say, with the host's notes (what `hook
/// install` runs, and `brain setup` for each host it wires).
pub fn install_hooks(context: &Context, args: InstallArgs) -> BrainResult<InstallOutcome> {
    let host = args.agent.host();
    let settings = settings_file(context, host, args.scope, args.settings.as_ref())?;
    let prefix = command_prefix(context, args.command)?;
    let project_root = config::project_root(&context.cwd);
    if rule::has_rule(host) {
        // Refused before the settings are written, so a refusal leaves nothing half done.
        rule::refuse_links(host, &project_root)?;
    }
    if host == Host::Cline && args.scope == Scope::Project && args.settings.is_none() {
        // Each hook file too: a repository can carry a link in place of one.
        for name in hosts::installed_events(host).into_iter().filter_map(|event| hosts::event_name(host, event)) {
            repo_files::refuse_links(&project_root, &settings.join(name))?;
        }
    }
    let mut outcome = install::apply(&settings, host, &prefix, Change::Install, args.dry_run)?;
    outcome.notes.extend(host_notes(host, args.scope));
    if rule::has_rule(host) {
        outcome.notes.push(write_rule(context, host, args.dry_run));
    }
    Ok(outcome)
}

fn run_uninstall(context: &Context, args: UninstallArgs, json: bool) -> BrainResult<()> {
    let host = args.agent.host();
    let settings = settings_file(context, host, args.scope, args.settings.as_ref())?;
    let mut outcome = install::apply(&settings, host, "", Change::Uninstall, args.dry_run)?;
    if rule::has_rule(host) {
        let root = config::project_root(&context.cwd);
        let path = rule::rule_path(host, &root);
        let verb = if args.dry_run { "would remove" } else { "removed" };
        let removed = if args.dry_run { rule::managed_rule(host, &root) } else { rule::remove(host, &root) };
        match removed {
            Ok(true) => outcome.notes.push(format!("{verb} {}", path.display())),
            Ok(false) => {}
            Err(err) => outcome.notes.push(format!("left {}: {err}", path.display())),
        }
    }
    report(&outcome, json, "removed")
}

/// Writes the rule of `host` (Cursor, Cline) for the current project; what happened, as a note.
fn write_rule(context: &Context, host: Host, dry_run: bool) -> String {
    let root = config::project_root(&context.cwd);
    let path = rule::rule_path(host, &root);
    if dry_run {
        return format!("would write the working memory to {} (kept current by the hooks)", path.display());
    }
    let written = (|| {
        let brain = Brain::open(context)?;
        let cap = hosts::size_cap(host, &brain.config().hooks);
        let request = SessionRequest { top: 5, max_chars: Some(cap.chars()), ..SessionRequest::default() };
        let start = brain.session_start(&request)?;
        rule::write(host, &root, &start.text, true)
    })();
    match written {
        Ok(rule::RuleOutcome::NotOurs) => {
            format!("{} exists and was not written by brain: left alone", path.display())
        }
        Ok(_) if rule::excluded_from_git(host, &root) => {
            format!("wrote the working memory to {} (kept current by the hooks; git-excluded)", path.display())
        }
        Ok(_) => format!(
            "wrote the working memory to {} (kept current by the hooks; not in a git repository)",
            path.display()
        ),
        Err(err) => format!("could not write {}: {err}", path.display()),
    }
}

fn report(outcome: &InstallOutcome, json: bool, verb: &str) -> BrainResult<()> {
    let mut out = Out::new();
    if json {
        out.json(outcome);
        return Ok(());
    }
    let host: Host = outcome.agent.parse().map_err(BrainError::internal)?;
    // Paths keep to their line (a folder's name may hold a line feed).
    let settings = escape_name(&outcome.settings);
    if outcome.dry_run {
        if outcome.changed() {
            out.line(outcome.diff.trim_end());
        } else {
            eprintln!("no change to {settings}");
        }
    } else if !outcome.changed() {
        let state = if verb == "installed" { "already installed" } else { "not installed" };
        out.line(format!("brain hooks for {} {state} in {settings}", host.display_name()));
    } else {
        let mut events: Vec<&str> =
            outcome.added.iter().chain(&outcome.updated).chain(&outcome.removed).map(String::as_str).collect();
        events.dedup();
        let verb = if !outcome.updated.is_empty() && outcome.added.is_empty() { "updated" } else { verb };
        out.line(format!("{verb} brain hooks for {} ({}) in {}", host.display_name(), events.join(", "), settings));
        if let Some(backup) = &outcome.backup {
            eprintln!("previous settings kept in {}", escape_name(backup));
        }
    }
    for note in &outcome.notes {
        eprintln!("note: {}", escape_name(note));
    }
    Ok(())
}
