//! `brain capture`: `brain extract` then `brain cluster`, in one go.

use std::path::PathBuf;

use serde::Serialize;

use super::cluster as cluster_command;
use super::extract::{self as extract_command, ExtractArgs};
use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_capture::{self as capture, ClusterReport, ExtractReport};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub extract: ExtractArgs,
    /// Clusters folder; arcs go to <DIR>/<YYYY-MM-DD>/<cluster_id>.md [default: <vault>/clusters]
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Serialize)]
struct CaptureReport {
    /// The extract's counts (its sessions are the cluster's input, not repeated here).
    extract: ExtractReport,
    cluster: ClusterReport,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let options = args.extract.options(context)?;
    let brain = Brain::open(context)?;
    let mut extract = extract_command::extract_with_progress(&brain, &options)?;
    let sessions = std::mem::take(&mut extract.sessions);
    let out_dir = cluster_command::out_dir(context, &brain, args.out_dir);
    let cluster = capture::run_cluster(&brain, sessions, &out_dir)?;
    if json {
        Out::new().json(&CaptureReport { extract, cluster });
        return Ok(());
    }
    extract_command::print_summary(&extract);
    cluster_command::print(&cluster, false);
    Ok(())
}
