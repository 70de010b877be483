//! `brain cluster`: group the extracted sessions into arcs in the vault (SPEC §6.7).

use std::path::PathBuf;

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_capture::{self as capture, ClusterReport};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Clusters folder; arcs go to <DIR>/<YYYY-MM-DD>/<cluster_id>.md [default: <vault>/clusters]
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// The sessions: `brain extract --json` output (`-` for stdin) [default: the last extract]
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let bundle = args.bundle.map(|path| if path.as_os_str() == "-" { path } else { context.cwd.join(path) });
    let sessions = capture::load_sessions(&brain, bundle.as_deref())?;
    let out_dir = out_dir(context, &brain, args.out_dir);
    let report = capture::run_cluster(&brain, sessions, &out_dir)?;
    print(&report, json);
    Ok(())
}

/// `--out-dir` against the working directory, else the vault's clusters folder.
pub fn out_dir(context: &Context, brain: &Brain, flag: Option<PathBuf>) -> PathBuf {
    flag.map_or_else(|| capture::clusters_dir(brain), |dir| context.cwd.join(dir))
}

/// One line per arc on stdout, the totals on stderr (or the report as JSON).
pub fn print(report: &ClusterReport, json: bool) {
    let mut out = Out::new();
    if json {
        out.json(report);
        return;
    }
    for arc in &report.arcs {
        let reason = arc.reason.as_deref().map(|r| format!(" — {r}")).unwrap_or_default();
        out.line(format!(
            "{:<9} {}  ({} sessions from {}, heat {}, {}, {}){reason}",
            arc.action.as_str(),
            arc.path,
            arc.sessions,
            arc.hosts.join(", "),
            arc.heat,
            arc.status,
            arc.region
        ));
    }
    out.flush();
    eprintln!(
        "{} sessions → {} arcs in {}: {} created, {} updated, {} unchanged, {} skipped",
        report.sessions,
        report.arcs.len(),
        report.out_dir,
        report.created,
        report.updated,
        report.unchanged,
        report.skipped
    );
}
