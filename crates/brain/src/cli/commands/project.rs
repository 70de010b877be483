//! `brain project link|unlink|list`: the folders each project name is tied to on this machine
//! (`brain_api::config::folders`). A folder that names a project tied to other folders, and
//! is neither a worktree nor a clone of the same remote as one of them, gets a project of its
//! own until it is linked here.

use brain_api::app::Context;
use brain_api::config::{self, folders};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: ProjectCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ProjectCommand {
    /// Tie the project this folder names (or --project) to this folder: it shares that
    /// project's memory from now on
    Link,
    /// Untie it from this folder
    Unlink,
    /// Every project name tied on this machine and its folders
    List,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    context.require_home()?;
    let mut out = Out::new();
    let name = || -> BrainResult<String> {
        let loaded = config::load(&context.home, &context.cwd, &context.env)?;
        config::resolve_project(context.project.as_deref(), loaded.project_from_file.as_deref(), &context.cwd)
    };
    match args.command {
        ProjectCommand::Link => {
            let name = name()?;
            let folders = folders::link(&context.home, &name, &context.cwd)?;
            if json {
                out.json(&serde_json::json!({"project": name, "folders": folders}));
            } else {
                out.line(format!("project {name} is tied to:"));
                for folder in &folders {
                    out.line(format!("  {}", folder.display()));
                }
            }
        }
        ProjectCommand::Unlink => {
            let name = name()?;
            let removed = folders::unlink(&context.home, &name, &context.cwd)?;
            if json {
                out.json(&serde_json::json!({"project": name, "unlinked": removed}));
            } else if removed {
                out.line(format!("project {name} is no longer tied to this folder"));
            } else {
                out.line(format!("project {name} was not tied to this folder"));
            }
        }
        ProjectCommand::List => {
            let listed = folders::list(&context.home)?;
            if json {
                out.json(&listed);
            } else if listed.is_empty() {
                eprintln!("no project is tied to a folder yet (the first folder that uses a project name holds it)");
            } else {
                for (name, folders) in &listed {
                    out.line(name);
                    for folder in folders {
                        out.line(format!("  {}", folder.display()));
                    }
                }
            }
        }
    }
    Ok(())
}
