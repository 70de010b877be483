//! `brain mark`: append a marker block (lesson, signal, decision, todo, inject) to an arc of
//! the vault, or to its inbox note, atomically, redacted and idempotent by key.

use std::io::Read;
use std::path::PathBuf;

use brain_api::app::{Brain, Context};
use brain_api::error::{BrainError, BrainResult};
use brain_api::output::{Out, escape_controls};
use brain_vault::{self as vault, Location, MAX_MARK_TEXT_BYTES, MarkRequest};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The block's type: lesson, signal, decision, todo or inject
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: String,
    /// The block's text; `-` reads it from stdin
    #[arg(value_name = "TEXT")]
    pub text: String,
    /// The arc's cluster_id [default: the vault's inbox note]
    #[arg(long, value_name = "CLUSTER_ID")]
    pub arc: Option<String>,
    /// signal: info, warning, critical, nuclear or resolved [default: info]
    #[arg(long)]
    pub severity: Option<String>,
    /// signal: where it comes from (a short token, e.g. auth-broker)
    #[arg(long)]
    pub source: Option<String>,
    /// inject: the file it steers [default: claude.md]
    #[arg(long)]
    pub target: Option<String>,
    /// Idempotency key: a block with this key already in the file writes nothing
    /// [default: a digest of the type, text and attributes]
    #[arg(long)]
    pub key: Option<String>,
    /// The vault folder [default: config `[vault] path`, else <home>/vault]
    #[arg(long, value_name = "DIR")]
    pub vault: Option<PathBuf>,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let text = if args.text == "-" {
        let mut text = String::new();
        std::io::stdin()
            .take(MAX_MARK_TEXT_BYTES as u64 * 4 + 1)
            .read_to_string(&mut text)
            .map_err(|err| BrainError::user(format!("cannot read the text from stdin: {err}")))?;
        text
    } else {
        args.text
    };
    let brain = Brain::open(context)?;
    let flag = args.vault.map(|dir| context.cwd.join(dir));
    let location = Location::resolve(&brain, flag.as_deref(), None)?;
    let request = MarkRequest {
        kind: args.kind,
        text,
        arc: args.arc,
        severity: args.severity,
        source: args.source,
        target: args.target,
        key: args.key,
    };
    let outcome = vault::mark(&brain, &location, &request, context.now, &|_| Ok(()))?;
    let mut out = Out::new();
    if json {
        out.json(&outcome);
        return Ok(());
    }
    let file = escape_controls(&outcome.file);
    if outcome.written {
        out.line(format!("marked {} (key {})", file, outcome.key));
    } else {
        out.line(format!("already there: {} holds a block with key {}; nothing written", file, outcome.key));
    }
    if !outcome.indexed {
        out.line("note: a tick or scan holds the vault; the next one indexes the block");
    }
    Ok(())
}
