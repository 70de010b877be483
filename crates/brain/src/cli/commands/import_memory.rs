//! `brain import-memory [PATH…]`: the memory files a project already keeps (CLAUDE.md,
//! AGENTS.md, .cursorrules, Cursor and Cline rules, Cline's memory bank, Claude Code's
//! auto-memory) imported as drafts to review; `brain setup` runs the same import.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::memory_import::{self, ImportPlan, Known, MemorySource};
use brain_api::output::{Out, escape_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Memory files or folders [default: the project's CLAUDE.md, AGENTS.md, GEMINI.md,
    /// .cursorrules, .cursor/rules/, .clinerules, memory-bank/ and Claude Code's auto-memory]
    pub paths: Vec<PathBuf>,
    /// List the drafts it would write; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = if args.dry_run && !context.home.is_dir() { None } else { Some(Brain::open(context)?) };
    let sources = if args.paths.is_empty() { project_sources(context) } else { named_sources(context, &args.paths) }?;
    let plan = plan(brain.as_ref(), &sources)?;
    let mut out = Out::new();
    if args.dry_run || plan.drafts.is_empty() {
        if json {
            out.json(&plan);
        } else {
            render_plan(&mut out, &plan, true);
        }
        return Ok(());
    }
    let Some(brain) = brain else { return Err(BrainError::internal("no store opened for the import")) };
    let report = write(&brain, &plan)?;
    if json {
        out.json(&serde_json::json!({"plan": plan, "report": report}));
        return Ok(());
    }
    render_plan(&mut out, &plan, false);
    out.line(format!("imported {} drafts ({})", report.imported, kinds(&plan)));
    eprintln!("review them with `brain review --drafts`; `brain approve ID` keeps one, `brain forget ID` drops it");
    Ok(())
}

/// The user's home folder (`$HOME`), if set.
pub fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from)
}

/// The project's memory files, Claude Code's auto-memory of the project included, or every
/// problem found on the way as one error.
pub fn project_sources(context: &Context) -> BrainResult<Vec<MemorySource>> {
    checked(project_found(context))
}

/// The project's memory files and the folders that could not be listed.
pub fn project_found(context: &Context) -> memory_import::Found {
    let root = config::project_root(&context.cwd);
    let home = user_home();
    let claude_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".claude")));
    let memory_dirs = match &claude_dir {
        Some(dir) => memory_import::claude_memory_dirs(dir, &root, &context.cwd),
        None => Vec::new(),
    };
    memory_import::discover(&root, &memory_dirs, home.as_deref())
}

fn named_sources(context: &Context, paths: &[PathBuf]) -> BrainResult<Vec<MemorySource>> {
    let root = config::project_root(&context.cwd);
    checked(memory_import::named(paths, &context.cwd, &root, user_home().as_deref()))
}

fn checked(found: memory_import::Found) -> BrainResult<Vec<MemorySource>> {
    if found.problems.is_empty() {
        return Ok(found.sources);
    }
    Err(problems_error(&found.problems))
}

fn problems_error(problems: &[String]) -> BrainError {
    let what = if problems.len() == 1 {
        "a memory file cannot be imported".to_string()
    } else {
        format!("{} memory files cannot be imported", problems.len())
    };
    BrainError::user_with_hint(
        format!("{what}; nothing was changed:\n  {}", problems.join("\n  ")),
        "fix or move them, import other files (`brain import-memory PATH…`), or leave the import out (`brain setup --no-import`)",
    )
}

/// Every source read (or every problem, as one error), split and deduplicated against
/// `brain`'s store (none: a home not created yet holds nothing). A spinner on a terminal
/// while the store is read.
pub fn plan(brain: Option<&Brain>, sources: &[MemorySource]) -> BrainResult<ImportPlan> {
    let files = memory_import::read_all(sources).map_err(|problems| problems_error(&problems))?;
    plan_read(brain, &files)
}

/// [`plan`] of files already read.
pub fn plan_read(brain: Option<&Brain>, files: &[(MemorySource, Option<String>)]) -> BrainResult<ImportPlan> {
    let bar = progress::bar(None, "reading");
    let known = match brain {
        Some(brain) => Known::of(brain),
        None => Ok(Known::default()),
    };
    let planned = known.and_then(|known| {
        // Splitting and redacting 8 MiB takes seconds: the files are counted on a terminal.
        memory_import::plan_with_progress(files, &known, &mut |done, total| {
            progress::count(&bar, done as u64, total as u64)
        })
    });
    bar.finish_and_clear();
    planned
}

/// Writes the plan's drafts, with a progress bar on a terminal.
pub fn write(brain: &Brain, plan: &ImportPlan) -> BrainResult<memory_import::MemoryImportReport> {
    let bar = progress::bar(Some(plan.drafts.len() as u64), "importing");
    let report = brain.import_memory(plan, &mut |done, total| progress::count(&bar, done as u64, total as u64));
    bar.finish_and_clear();
    report
}

/// `3 convention, 2 decision, 1 note`, most first.
pub fn kinds(plan: &ImportPlan) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for draft in &plan.drafts {
        *counts.entry(draft.kind.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts.iter().map(|(kind, count)| format!("{count} {kind}")).collect::<Vec<_>>().join(", ")
}

/// One line per file, then (`drafts`) one per draft: kind, evidence, title.
pub fn render_plan(out: &mut Out, plan: &ImportPlan, drafts: bool) {
    if plan.files.is_empty() {
        out.line("no memory files found (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/, .clinerules, memory-bank/, Claude Code's auto-memory)");
        return;
    }
    for file in &plan.files {
        // A file's name comes from the repository: it may hold a line feed.
        let name = escape_name(&file.file);
        match &file.skipped {
            Some(why) => out.line(format!("{name}: left out ({why})")),
            None if file.known > 0 => {
                out.line(format!("{name}: {} facts, {} new, {} already known", file.facts, file.new, file.known))
            }
            None => out.line(format!("{name}: {} facts, {} new", file.facts, file.new)),
        }
    }
    if plan.redacted > 0 {
        out.line(format!("{} of them held a secret: stored redacted", plan.redacted));
    }
    if !drafts {
        return;
    }
    if plan.drafts.is_empty() {
        out.line("nothing new to import");
        return;
    }
    out.line(format!("would import {} drafts ({}):", plan.drafts.len(), kinds(plan)));
    for draft in &plan.drafts {
        let (evidence, title) = (escape_name(&draft.evidence), escape_name(&draft.title));
        out.line(format!("  {:<14} {:<28} {title}", draft.kind.as_str(), evidence));
    }
}

/// `~/x` for a path in the user's home (shorter plans), its control characters escaped (a
/// line feed in a name cannot forge a line).
pub fn tilde(path: &Path) -> String {
    let shown = match user_home().and_then(|home| path.strip_prefix(&home).ok().map(Path::to_path_buf)) {
        Some(relative) => format!("~/{}", relative.display()),
        None => path.display().to_string(),
    };
    escape_name(&shown).into_owned()
}
