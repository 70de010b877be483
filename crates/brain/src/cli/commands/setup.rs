//! `brain setup`: from nothing to a working memory in one command. Creates the home when
//! missing, finds the agent hosts installed here (each host of `Host::ALL` whose CLI is on
//! the PATH or whose configuration folder exists), shows what it will do, then wires each —
//! its hooks through `hook install`'s own function, and `brain mcp` where the host reads MCP
//! servers from a file (`hook::mcp_config`) — and imports the project's memory files as
//! drafts (`brain import-memory`'s import).
//!
//! Everything is planned first, as a dry run of every step: a settings file brain cannot
//! merge or a memory file it cannot read stops setup before anything is written.

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::Serialize;

use super::hook::{self as hook_command, Agent, InstallArgs, Scope};
use super::import_memory;
use crate::hook::install::{self, InstallOutcome, InstallScope};
use crate::hook::mcp_config::{self, McpServer};
use brain_api::app::{Brain, Context};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::memory_import::{self, ImportPlan};
use brain_api::output::Out;
use brain_capture::Host;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show what setup would do (hosts, each settings change as a diff, the drafts); write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Go ahead without asking (for scripts)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Wire this host only (repeatable), found here or not [default: every host found]
    #[arg(long = "host", value_name = "HOST", value_parser = parse_host)]
    pub hosts: Vec<Host>,
    /// Wire the hosts only; import no memory files
    #[arg(long)]
    pub no_import: bool,
}

fn parse_host(text: &str) -> Result<Host, String> {
    text.parse()
}

/// A host and why setup thinks it is installed.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    pub host: Host,
    /// What showed it: `claude on the PATH (/usr/bin/claude)`, `~/.claude`, `--host`.
    pub evidence: Vec<String>,
}

/// One host's share of the setup.
#[derive(Debug, Serialize)]
pub struct HostPlan {
    pub host: Host,
    pub name: &'static str,
    pub found: Vec<String>,
    pub hooks: InstallOutcome,
    /// `None`: brain knows no MCP file of this host.
    pub mcp: Option<InstallOutcome>,
}

/// What setup does (or, with `--dry-run`, would do), as printed with `--json`.
#[derive(Debug, Serialize)]
pub struct SetupReport {
    pub home: String,
    /// The home did not exist (and was or would be created).
    pub creates_home: bool,
    pub dry_run: bool,
    pub hosts: Vec<HostPlan>,
    /// Hosts not found here (wire one anyway with `--host`).
    pub not_found: Vec<Host>,
    /// Hosts found here but not named by `--host`.
    pub left_out: Vec<Host>,
    pub import: Option<ImportPlan>,
    /// Drafts written (0 in a dry run).
    pub imported: usize,
    pub notes: Vec<String>,
}

impl SetupReport {
    fn changes_anything(&self) -> bool {
        self.creates_home
            || self
                .hosts
                .iter()
                .any(|plan| plan.hooks.changed() || plan.mcp.as_ref().is_some_and(InstallOutcome::changed))
            || self.import.as_ref().is_some_and(|plan| !plan.drafts.is_empty())
    }
}

/// The programs whose presence on the PATH shows `host` is installed: the first word of its
/// name (`claude-code` → `claude`, `qwen-code` → `qwen`), and for Cursor its agent CLI and
/// the editor's `cursor` command. Any host added to `Host::ALL` is found the same way.
pub fn programs(host: Host) -> Vec<&'static str> {
    let first = host.as_str().split('-').next().unwrap_or(host.as_str());
    if host == Host::Cursor {
        return vec!["cursor-agent", first];
    }
    vec![first]
}

/// The first executable file named `program` in the `PATH` folders.
fn on_path(program: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path_var = path_var?;
    std::env::split_paths(path_var).map(|dir| dir.join(program)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// The hosts of `Host::ALL` installed here: a CLI on the PATH, or the folder of its user
/// settings (`~/.claude`, `$CODEX_HOME`, `~/.gemini`, `~/.cursor`, …).
pub fn detect(user_home: &Path, codex_home: Option<&Path>, project_root: &Path) -> Vec<Found> {
    let path_var = std::env::var_os("PATH");
    let mut found = Vec::new();
    for &host in Host::ALL {
        let mut evidence = Vec::new();
        for program in programs(host) {
            if let Some(path) = on_path(program, path_var.as_deref()) {
                evidence.push(format!("{program} on the PATH ({})", import_memory::tilde(&path)));
                break;
            }
        }
        let settings = install::settings_path(host, InstallScope::User, user_home, project_root, codex_home);
        if let Some(folder) = settings.parent().filter(|folder| folder.is_dir() && *folder != user_home) {
            evidence.push(import_memory::tilde(folder));
        }
        if !evidence.is_empty() {
            found.push(Found { host, evidence });
        }
    }
    found
}

fn agent_of(host: Host) -> BrainResult<Agent> {
    Agent::value_variants()
        .iter()
        .copied()
        .find(|agent| agent.host() == host)
        .ok_or_else(|| BrainError::internal(format!("`brain hook install` has no --agent for {}", host.display_name())))
}

/// How hosts start `brain mcp`: this binary, plus `--home DIR` when the home is not the
/// default one (as the hooks do).
fn mcp_server(context: &Context) -> BrainResult<McpServer> {
    let exe =
        std::env::current_exe().map_err(|err| BrainError::internal(format!("cannot find this executable: {err}")))?;
    let mut args = Vec::new();
    if context.home != config::default_home() {
        args.push("--home".to_string());
        args.push(context.home.to_string_lossy().into_owned());
    }
    args.push("mcp".to_string());
    Ok(McpServer { command: exe.to_string_lossy().into_owned(), args })
}

/// Wires one host: its hooks, then its MCP server. `written` holds the files this run has
/// already backed up (the second change to a file keeps the first backup: the file as it was
/// before setup).
fn wire(
    context: &Context,
    found: &Found,
    server: &McpServer,
    paths: &Paths,
    dry_run: bool,
    written: &mut HashSet<PathBuf>,
) -> BrainResult<HostPlan> {
    let host = found.host;
    let hooks = hook_command::install_hooks(
        context,
        InstallArgs { agent: agent_of(host)?, scope: Scope::User, command: None, settings: None, dry_run },
    )?;
    if hooks.changed() {
        written.insert(PathBuf::from(&hooks.settings));
    }
    let mcp = match mcp_config::config_path(host, &paths.user_home, paths.codex_home.as_deref()) {
        Some(path) => {
            let backup = !written.contains(&path);
            let outcome = mcp_config::install(&path, host, server, dry_run, backup)?;
            if outcome.changed() {
                written.insert(path);
            }
            Some(outcome)
        }
        None => None,
    };
    Ok(HostPlan { host, name: host.display_name(), found: found.evidence.clone(), hooks, mcp })
}

struct Paths {
    user_home: PathBuf,
    codex_home: Option<PathBuf>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    // What the real run would refuse, a dry run refuses too (and --no-import does not skip it).
    if std::fs::symlink_metadata(&context.home).is_ok() && !context.home.is_dir() {
        return Err(BrainError::user_with_hint(
            format!("brain home {} exists and is not a folder", context.home.display()),
            "pass --home with a folder (or one to create), or move the file away",
        ));
    }
    if context.project.is_some() {
        config::resolve_project(context.project.as_deref(), None, &context.cwd)?;
    }
    let user_home = import_memory::user_home()
        .ok_or_else(|| BrainError::user("HOME is not set; setup wires the hosts' settings in it"))?;
    let codex_home = std::env::var_os("CODEX_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from);
    let paths = Paths { user_home, codex_home };
    let project_root = config::project_root(&context.cwd);
    let detected = detect(&paths.user_home, paths.codex_home.as_deref(), &project_root);
    let chosen: Vec<Found> = if args.hosts.is_empty() {
        detected.clone()
    } else {
        args.hosts
            .iter()
            .map(|&host| {
                detected
                    .iter()
                    .find(|found| found.host == host)
                    .cloned()
                    .unwrap_or(Found { host, evidence: vec!["--host".into()] })
            })
            .collect()
    };
    let server = mcp_server(context)?;
    let mut notes = Vec::new();
    if server.command.contains("/_npx/") {
        notes.push(format!(
            "brain runs from npx's cache ({}): the hooks and MCP entries would name that path, which npm may clean \
             away; install brain (`npm install -g`, or the install script) and run `brain setup` from there",
            server.command
        ));
    }

    // The plan: every step as a dry run. Anything that would fail stops setup here.
    let mut planned = Vec::new();
    let mut problems = Vec::new();
    let mut backed_up = HashSet::new();
    for found in &chosen {
        match wire(context, found, &server, &paths, true, &mut backed_up) {
            Ok(plan) => planned.push(plan),
            Err(err) => problems.push(format!("{}: {err}", found.host.display_name())),
        }
    }
    let creates_home = !context.home.is_dir();
    let mut import = None;
    if !args.no_import {
        let found = import_memory::project_found(context);
        problems.extend(found.problems);
        match memory_import::read_all(&found.sources) {
            Err(unreadable) => problems.extend(unreadable),
            Ok(files) if problems.is_empty() => {
                // Nothing is recorded before the user says yes (a dry run writes nothing).
                let brain = if creates_home { None } else { Some(Brain::open_without_recording(context)?) };
                import = Some(import_memory::plan_read(brain.as_ref(), &files)?);
            }
            Ok(_) => {}
        }
    }
    if !problems.is_empty() {
        return Err(BrainError::user_with_hint(
            format!("setup cannot go ahead; nothing was changed:\n  {}", problems.join("\n  ")),
            "fix what is named above, or narrow setup with --host HOST / --no-import",
        ));
    }
    let is_chosen = |host: &Host| chosen.iter().any(|found| found.host == *host);
    let is_detected = |host: &Host| detected.iter().any(|found| found.host == *host);
    let not_found = Host::ALL.iter().copied().filter(|host| !is_chosen(host) && !is_detected(host)).collect();
    let left_out = Host::ALL.iter().copied().filter(|host| !is_chosen(host) && is_detected(host)).collect();
    let mut report = SetupReport {
        home: context.home.display().to_string(),
        creates_home,
        dry_run: args.dry_run,
        hosts: planned,
        not_found,
        left_out,
        import,
        imported: 0,
        notes,
    };

    if args.dry_run {
        render(&report, json, true);
        return Ok(());
    }
    if !report.changes_anything() {
        render(&report, json, false);
        if !json {
            eprintln!("nothing to do: brain is set up here");
        }
        return Ok(());
    }
    if !args.yes {
        render(&report, false, false);
        confirm()?;
    }

    // The same steps for real.
    let brain = Brain::init(context)?;
    let mut written = HashSet::new();
    let mut done = Vec::new();
    for found in &chosen {
        done.push(wire(context, found, &server, &paths, false, &mut written)?);
    }
    report.hosts = done;
    if report.import.is_some() {
        let sources = import_memory::project_sources(context)?;
        let plan = import_memory::plan(Some(&brain), &sources)?;
        if !plan.drafts.is_empty() {
            report.imported = import_memory::write(&brain, &plan)?.imported;
        }
        report.import = Some(plan);
    }
    if json {
        Out::new().json(&report);
        return Ok(());
    }
    finished(&report, args.yes);
    Ok(())
}

/// Asks on the terminal; without one, `--yes` is needed.
fn confirm() -> BrainResult<()> {
    if !std::io::stdin().is_terminal() {
        return Err(BrainError::user_with_hint(
            "setup asks before it changes anything, and stdin is not a terminal",
            "run `brain setup --yes` to go ahead, or `brain setup --dry-run` to see every change",
        ));
    }
    eprint!("go ahead? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|err| BrainError::user(format!("cannot read the answer: {err}")))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        return Ok(());
    }
    Err(BrainError::user("setup cancelled; nothing was changed"))
}

/// What a hook or MCP outcome says in one phrase.
fn step(outcome: &InstallOutcome, what: &str, dry_run: bool) -> String {
    let mut file = import_memory::tilde(Path::new(&outcome.settings));
    if let Some(target) = outcome.writes_through.as_deref().filter(|_| outcome.changed()) {
        // The user's dotfiles: the link is kept, its target rewritten.
        file = format!(
            "{file} (a symbolic link: written through to {}, the link kept)",
            import_memory::tilde(Path::new(target))
        );
    }
    if !outcome.changed() {
        return format!("{what} already in {file}");
    }
    let mut names: Vec<&str> = outcome.added.iter().chain(&outcome.updated).map(String::as_str).collect();
    names.dedup();
    let verb = match (dry_run, outcome.added.is_empty()) {
        (true, _) => "→",
        (false, true) => "updated in",
        (false, false) => "added to",
    };
    if what == "hooks" {
        return format!("hooks {} {verb} {file}", names.join(", "));
    }
    format!("{what} {verb} {file}")
}

/// The plan, as a person reads it (`diffs`: every settings change and every draft too).
fn render(report: &SetupReport, json: bool, diffs: bool) {
    let mut out = Out::new();
    if json {
        out.json(report);
        return;
    }
    let home = if report.creates_home { "will be created" } else { "exists" };
    out.line(format!("brain home: {} ({home})", import_memory::tilde(Path::new(&report.home))));
    if report.hosts.is_empty() {
        out.line("agent hosts: none found (no CLI on the PATH, no settings folder); name one with --host HOST");
    }
    for plan in &report.hosts {
        out.line(format!("{} (found: {})", plan.name, plan.found.join(", ")));
        out.line(format!("  {}", step(&plan.hooks, "hooks", true)));
        match &plan.mcp {
            Some(mcp) => out.line(format!("  {}", step(mcp, "MCP server brain", true))),
            None => out.line("  MCP: brain does not know where this host reads MCP servers; add `brain mcp` by hand"),
        }
        if diffs {
            for outcome in std::iter::once(&plan.hooks).chain(plan.mcp.as_ref()) {
                if outcome.changed() {
                    out.text(&outcome.diff);
                }
            }
        }
    }
    let names = |hosts: &[Host]| hosts.iter().map(|host| host.display_name()).collect::<Vec<_>>().join(", ");
    if !report.not_found.is_empty() {
        out.line(format!("not found here: {} (wire one anyway with --host)", names(&report.not_found)));
    }
    if !report.left_out.is_empty() {
        out.line(format!("found but not named by --host: {}", names(&report.left_out)));
    }
    match &report.import {
        None => out.line("memory files: not imported (--no-import)"),
        Some(plan) => {
            out.line("memory files:");
            import_memory::render_plan(&mut out, plan, diffs);
            if !diffs && !plan.drafts.is_empty() {
                out.line(format!("  → {} drafts to import ({})", plan.drafts.len(), import_memory::kinds(plan)));
            }
        }
    }
    drop(out);
    if !report.dry_run {
        return;
    }
    eprintln!("dry run: nothing was written");
    print_notes(report);
}

/// The notes of the run and of every host's hooks and MCP entry, one line each (a path in
/// one cannot forge another line).
fn print_notes(report: &SetupReport) {
    let hosts =
        report.hosts.iter().flat_map(|plan| plan.hooks.notes.iter().chain(plan.mcp.iter().flat_map(|mcp| &mcp.notes)));
    for note in report.notes.iter().chain(hosts) {
        eprintln!("note: {}", brain_api::output::escape_name(note));
    }
}

/// What was done, and what to do next.
fn finished(report: &SetupReport, quiet_plan: bool) {
    let mut out = Out::new();
    if report.creates_home {
        out.line(format!("created the brain home {}", import_memory::tilde(Path::new(&report.home))));
    }
    for plan in &report.hosts {
        let mut parts = vec![step(&plan.hooks, "hooks", false)];
        if let Some(mcp) = &plan.mcp {
            parts.push(step(mcp, "MCP server brain", false));
        }
        out.line(format!("{} ({}): {}", plan.name, plan.found.join(", "), parts.join("; ")));
        for backup in plan.hooks.backup.iter().chain(plan.mcp.as_ref().and_then(|mcp| mcp.backup.as_ref())) {
            eprintln!("previous settings kept in {}", import_memory::tilde(Path::new(backup)));
        }
    }
    if let Some(plan) = &report.import {
        if quiet_plan {
            import_memory::render_plan(&mut out, plan, false);
        }
        if report.imported > 0 {
            out.line(format!("imported {} drafts ({})", report.imported, import_memory::kinds(plan)));
        } else {
            out.line("no new memory to import");
        }
    }
    drop(out);
    print_notes(report);
    if report.imported > 0 {
        eprintln!(
            "next: review the drafts with `brain review --drafts`; `brain approve ID` keeps one, `brain forget ID` drops it"
        );
    }
}
