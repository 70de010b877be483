//! `brain skill list|show|add`: the skills of the home (SPEC §2.4).

use std::path::PathBuf;

use brain_api::app::Context;
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::Out;
use brain_api::skills;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: SkillCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SkillCommand {
    /// The skills index: name and description of each skill
    List,
    /// Print a skill's whole SKILL.md
    Show {
        /// Skill name
        name: String,
    },
    /// Add a skill (body from --file or stdin)
    Add {
        /// Skill name (letters, digits, '.', '_', '-')
        name: String,
        /// One line saying when to use the skill
        #[arg(long)]
        description: String,
        /// Markdown body file (default: stdin)
        #[arg(long)]
        file: Option<PathBuf>,
        /// Words or phrases that should bring the skill to mind
        #[arg(long, value_delimiter = ',')]
        triggers: Vec<String>,
        /// Overwrite an existing skill
        #[arg(long)]
        replace: bool,
    },
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    context.require_home()?;
    let mut out = Out::new();
    match args.command {
        SkillCommand::List => {
            let index = skills::list(&context.home);
            if json {
                out.json(&index);
            } else if index.is_empty() {
                eprintln!("no skills (add one with `brain skill add NAME --description …`)");
            } else {
                for skill in &index {
                    out.line(format!("{:<24} {}", skill.name, skill.description));
                }
            }
        }
        SkillCommand::Show { name } => {
            let text = skills::show(&context.home, &name)?;
            if json {
                out.json(&serde_json::json!({"name": name, "text": text}));
            } else {
                out.text(text);
            }
        }
        SkillCommand::Add { name, description, file, triggers, replace } => {
            let body = match file {
                Some(path) => std::fs::read_to_string(&path)
                    .map_err(|err| BrainError::user(format!("cannot read {}: {err}", path.display())))?,
                None if super::stdin_is_piped() => super::read_stdin()?,
                None => String::new(),
            };
            let skill = skills::add(&context.home, &name, &description, &body, &triggers, replace)?;
            if json {
                out.json(&skill);
            } else {
                out.line(format!("added skill {}", skill.name));
            }
        }
    }
    Ok(())
}
