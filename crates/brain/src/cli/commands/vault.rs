//! `brain vault init|scan|doctor`: create the compartments of a vault; index it
//! (incrementally) and print its diagnostics; audit it for drift and repair it.

use std::path::PathBuf;

use brain_core::vault::DiagnosticSeverity;

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;
use brain_vault::{self as vault, Location};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: VaultCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum VaultCommand {
    /// Create the vault folder and its compartments (idempotent)
    Init(VaultArgs),
    /// Index the vault into the store (only changed files are parsed) and print diagnostics
    Scan(VaultArgs),
    /// Audit the vault for drift (duplicate or missing cluster_id, orphaned pointer notes,
    /// tombstones pointing nowhere, duplicate edges, interrupted graduations); writes nothing
    /// unless --repair. Exits 1 while problems remain
    Doctor(DoctorArgs),
}

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// The vault folder [default: config `[vault] path`, else <home>/vault]
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
    /// Fix what can be fixed safely (atomic writes, never over a file changed since it was read)
    #[arg(long)]
    pub repair: bool,
}

#[derive(Debug, clap::Args)]
pub struct VaultArgs {
    /// The vault folder [default: config `[vault] path`, else <home>/vault]
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    match args.command {
        VaultCommand::Init(args) => init(context, args, json),
        VaultCommand::Scan(args) => scan(context, args, json),
        VaultCommand::Doctor(args) => doctor(context, args, json),
    }
}

fn doctor(context: &Context, args: DoctorArgs, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let flag = args.vault.map(|dir| context.cwd.join(dir));
    let location = Location::resolve(&brain, flag.as_deref(), None)?;
    let report = vault::vault_doctor(&brain, &location, args.repair)?;
    let mut out = Out::new();
    if json {
        out.json(&report);
    } else {
        out.line(format!("vault {}: {} files, {} arcs", report.vault, report.files, report.arcs));
        for done in &report.recovered {
            out.line(format!("recovered graduation {} → {}: {} ({})", done.from, done.to, done.action, done.reason));
        }
        for problem in &report.problems {
            let state = if problem.repaired {
                "repaired".to_string()
            } else if let Some(why) = &problem.not_repaired {
                format!("not repaired: {why}")
            } else if report.repair {
                "left".to_string()
            } else {
                "found".to_string()
            };
            out.line(format!("{} {}: {} [{state}]", problem.kind, problem.file, problem.detail));
            if !problem.repaired {
                out.line(format!("  fix: {}", problem.fix));
            }
        }
        if report.remaining.is_empty() {
            let repaired = report.problems.iter().filter(|p| p.repaired).count();
            if repaired > 0 {
                out.line(format!("ok: {repaired} problem(s) repaired, none remain"));
            } else {
                out.line("ok: no problems found");
            }
        }
    }
    out.flush();
    if report.remaining.is_empty() {
        return Ok(());
    }
    let automatic = report.remaining.iter().any(|p| !p.fix.starts_with("by hand"));
    let hint = if automatic && !report.repair {
        "run `brain vault doctor --repair` to fix them (it writes atomically and never over a changed file)"
    } else {
        "fix the problems marked `by hand`, then run `brain vault doctor` again"
    };
    Err(BrainError::user_with_hint(format!("{} problem(s) remain in the vault", report.remaining.len()), hint))
}

fn init(context: &Context, args: VaultArgs, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let flag = args.vault.map(|dir| context.cwd.join(dir));
    let path = vault::vault_path(&brain, flag.as_deref());
    let report = vault::init(&path)?;
    let mut out = Out::new();
    if json {
        out.json(&report);
        return Ok(());
    }
    if report.created.is_empty() {
        out.line(format!("vault {} is ready (every compartment exists)", report.vault));
    } else {
        out.line(format!("vault {}: created {}", report.vault, report.created.join(", ")));
    }
    if flag.is_some() && brain.config().vault.path.is_none() {
        eprintln!(
            "hint: pass --vault {} to scan and tick, or set `[vault] path` in {}",
            report.vault,
            brain.home().join(brain_api::config::USER_CONFIG_FILE).display()
        );
    }
    Ok(())
}

fn scan(context: &Context, args: VaultArgs, json: bool) -> BrainResult<()> {
    // As the tick: a first scan writes most of the store (see `tick::run`).
    let brain = Brain::open_with(context, brain_store::PageReads::Cached)?;
    let flag = args.vault.map(|dir| context.cwd.join(dir));
    let location = Location::resolve(&brain, flag.as_deref(), None)?;
    let bar = progress::bar(None, "scanning");
    let on_progress = |done: usize, total: usize| progress::count(&bar, done as u64, total as u64);
    let report = vault::scan_vault(&brain, &location, &on_progress);
    bar.finish_and_clear();
    let report = report?;
    let mut out = Out::new();
    if json {
        out.json(&report);
        return Ok(());
    }
    out.line(format!(
        "scanned {}: {} files ({} parsed, {} unchanged, {} touched, {} removed) in {:.0} ms",
        report.vault, report.files, report.parsed, report.unchanged, report.touched, report.removed, report.ms
    ));
    out.line(format!(
        "index: {} items, {} arcs ({} inserted, {} updated, {} deleted)",
        report.indexed_items.unwrap_or(0),
        report.indexed_arcs.unwrap_or(0),
        report.items_inserted,
        report.items_updated,
        report.items_deleted
    ));
    for done in &report.recovered {
        eprintln!("note: interrupted graduation {} → {}: {} ({})", done.from, done.to, done.action, done.reason);
    }
    if report.reindexed {
        eprintln!("note: the index held another vault; it was rebuilt for this one");
    }
    let count =
        |severity: DiagnosticSeverity| report.diagnostics.iter().filter(|d| d.severity == severity.as_str()).count();
    if !report.diagnostics.is_empty() {
        out.line(format!(
            "diagnostics: {} ({} errors, {} warnings, {} info)",
            report.diagnostics.len(),
            count(DiagnosticSeverity::Error),
            count(DiagnosticSeverity::Warning),
            count(DiagnosticSeverity::Info)
        ));
        out.flush();
        for d in &report.diagnostics {
            eprintln!("{}:{}: {}: {}", d.file, d.line, d.severity, d.message);
        }
    }
    Ok(())
}
