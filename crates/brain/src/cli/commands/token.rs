//! `brain token create|list|revoke|reopen`: bearer tokens kept in the store, for fleets of
//! `brain serve` replicas (see `brain_api::tokens`).

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;
use brain_api::tokens;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Make a token; its secret is printed once (stdout), only its SHA-256 is stored
    Create {
        /// A name for logs and metrics (letters, digits, '-', '_', '.')
        #[arg(long)]
        name: String,
        /// Scopes it may read (global, project/NAME, project/*, team/*, agent/*, *); repeat or comma-separate
        #[arg(long, value_delimiter = ',')]
        read: Vec<String>,
        /// Scopes it may write (and read); repeat or comma-separate
        #[arg(long, value_delimiter = ',')]
        write: Vec<String>,
        /// Scopes it may review (and write): under write_policy = "draft", approve items and
        /// change approved ones; repeat or comma-separate
        #[arg(long, value_delimiter = ',')]
        review: Vec<String>,
    },
    /// Every stored token (never a secret), revoked ones too
    List,
    /// Revoke a stored token: every server refuses it at once (a server keeps requiring
    /// tokens after the last one is revoked, and so does every server started later)
    Revoke {
        /// The token's name
        name: String,
    },
    /// Forget every revoked token, so that servers started from now on serve WITHOUT A TOKEN
    /// again (on loopback, unless [[serve.tokens]] are configured); refused while a token is active
    Reopen,
}

pub fn run(context: &Context, args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let mut out = Out::new();
    match args.command {
        TokenCommand::Create { name, read, write, review } => {
            let created = tokens::create(&brain, &name, &read, &write, &review)?;
            if json {
                out.json(&created);
            } else {
                out.line(&created.secret);
                eprintln!(
                    "token {:?} created (read {:?}, write {:?}, review {:?}); the secret above is shown once: \
                     store it now and send it as Authorization: Bearer …",
                    created.token.name, created.token.read, created.token.write, created.token.review
                );
            }
        }
        TokenCommand::List => {
            let listed = tokens::list(&brain)?;
            if json {
                out.json(&listed);
            } else if listed.is_empty() {
                eprintln!("no stored tokens (make one with `brain token create --name N --read … --write …`)");
            } else {
                for token in &listed {
                    let state = match token.revoked_at {
                        Some(at) => format!("revoked {}", brain_core::time::format_timestamp(at)),
                        None => "active".to_string(),
                    };
                    out.line(format!(
                        "{:<24} {:<28} read [{}] write [{}] review [{}] sha256 {}…",
                        token.name,
                        state,
                        token.read.join(", "),
                        token.write.join(", "),
                        token.review.join(", "),
                        token.sha256_prefix
                    ));
                }
            }
        }
        TokenCommand::Reopen => {
            let reopened = tokens::reopen(&brain)?;
            if json {
                out.json(&reopened);
            }
            eprintln!(
                "warning: forgot {} revoked token{}: a `brain serve` started on this store from now on, without \
                 [[serve.tokens]] in its config, serves without a token (loopback only); servers already running \
                 keep requiring one until they restart",
                reopened.forgotten,
                if reopened.forgotten == 1 { "" } else { "s" }
            );
        }
        TokenCommand::Revoke { name } => {
            let revoked = tokens::revoke(&brain, &name)?;
            if json {
                out.json(&revoked);
            } else {
                out.line(format!("revoked token {}", revoked.name));
            }
        }
    }
    Ok(())
}
