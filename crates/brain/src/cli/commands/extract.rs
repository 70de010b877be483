//! `brain extract`: summarize the sessions of a time window (SPEC §6.7), from Claude Code
//! transcripts, Codex rollouts, Gemini CLI and Qwen Code chats or Copilot CLI session events
//! (`--agent`).

use std::path::PathBuf;

use brain_core::time::format_timestamp;

use crate::cli::progress;
use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_capture::{self as capture, ExtractOptions, ExtractReport, Host, Window};

/// The flags that choose the sessions (shared with `brain capture`). The global `--project P`
/// (or `BRAIN_PROJECT`) keeps only project folders whose name contains P.
#[derive(Debug, clap::Args)]
pub struct ExtractArgs {
    /// Start of the window: a duration back from now (30m, 26h, 7d, 2w), an RFC 3339 time or a date
    #[arg(long, default_value = capture::extract::DEFAULT_SINCE, value_name = "WHEN")]
    pub since: String,
    /// End of the window, in the same forms [default: now]
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Skip sessions with fewer prompts than this (tool results are not prompts)
    #[arg(long, default_value_t = capture::extract::DEFAULT_MIN_TURNS, value_name = "N")]
    pub min_turns: u32,
    /// Whose transcripts: claude-code, codex (rollouts), gemini or qwen (chats), copilot (session events), opencode (written by brain's plugin)
    #[arg(long, value_enum, default_value = "claude-code")]
    pub agent: TranscriptAgent,
    /// Folder of transcripts [default: ~/.claude/projects; codex: $CODEX_HOME/sessions (~/.codex/sessions); gemini: ~/.gemini/tmp; qwen: ~/.qwen/projects; copilot: $COPILOT_HOME/session-state (~/.copilot/session-state); opencode: ~/.local/share/opencode/brain-transcripts; cline: $CLINE_DIR/data/sessions (~/.cline/data/sessions)]
    #[arg(long, value_name = "DIR")]
    pub projects_dir: Option<PathBuf>,
}

/// The hosts whose transcripts brain reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TranscriptAgent {
    ClaudeCode,
    Codex,
    Gemini,
    Qwen,
    Copilot,
    #[value(name = "opencode")]
    OpenCode,
    Cline,
}

impl TranscriptAgent {
    pub fn host(self) -> Host {
        match self {
            TranscriptAgent::ClaudeCode => Host::ClaudeCode,
            TranscriptAgent::Codex => Host::Codex,
            TranscriptAgent::Gemini => Host::Gemini,
            TranscriptAgent::Qwen => Host::Qwen,
            TranscriptAgent::Copilot => Host::Copilot,
            TranscriptAgent::OpenCode => Host::OpenCode,
            TranscriptAgent::Cline => Host::Cline,
        }
    }
}

impl ExtractArgs {
    pub fn options(&self, context: &Context) -> BrainResult<ExtractOptions> {
        let window = Window::parse(&self.since, self.until.as_deref(), context.now)?;
        let host = self.agent.host();
        let projects_dir = match &self.projects_dir {
            Some(dir) => context.cwd.join(dir),
            None => capture::extract::default_projects_dir(host),
        };
        Ok(ExtractOptions { host, projects_dir, window, min_turns: self.min_turns, project: context.project.clone() })
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub extract: ExtractArgs,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let options = args.extract.options(context)?;
    let brain = Brain::open(context)?;
    let report = extract_with_progress(&brain, &options)?;
    let mut out = Out::new();
    if json {
        out.json(&report);
        return Ok(());
    }
    for session in &report.sessions {
        let start = session.start.map(format_timestamp).unwrap_or_default();
        let prompt: String = session.first_prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        let prompt: String = prompt.chars().take(70).collect();
        out.line(format!(
            "{start}  {:<11} {:<20} {:>4} turns {:>5} tools  {}  {prompt}",
            session.host, session.project, session.turns, session.tool_calls, session.session_id
        ));
    }
    print_summary(&report);
    Ok(())
}

/// Runs the extract with a progress bar on a terminal.
pub fn extract_with_progress(brain: &Brain, options: &ExtractOptions) -> BrainResult<ExtractReport> {
    let bar = progress::bar(Some(0), "extracting");
    let report = capture::run_extract(brain, options, &|total| bar.set_length(total as u64), &|| bar.inc(1));
    bar.finish_and_clear();
    report
}

/// The counts, on stderr (stdout carries the sessions).
pub fn print_summary(report: &ExtractReport) {
    let files = &report.files;
    let lines = &report.lines;
    eprintln!(
        "{} sessions from {} transcripts in {} ({} read, {} unchanged, {} older than the window, {} unreadable)",
        report.sessions_returned,
        files.found,
        report.projects_dir,
        files.read,
        files.unchanged,
        files.skipped_old,
        files.unreadable
    );
    let skipped = &report.skipped;
    if skipped.too_short + skipped.outside_window + skipped.no_timestamps + skipped.other_project > 0 {
        let mut line = format!(
            "skipped: {} with fewer than {} turns, {} outside the window, {} without timestamps",
            skipped.too_short, report.filter.min_turns, skipped.outside_window, skipped.no_timestamps
        );
        if skipped.other_project > 0 {
            line.push_str(&format!(", {} of other projects", skipped.other_project));
        }
        eprintln!("{line}");
    }
    if lines.bad_json + lines.unknown_type + lines.truncated + lines.oversized > 0 {
        eprintln!(
            "lines skipped: {} not JSON, {} of unknown record types, {} cut short at the end of a file, {} longer than 16 MiB",
            lines.bad_json, lines.unknown_type, lines.truncated, lines.oversized
        );
    }
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
}
