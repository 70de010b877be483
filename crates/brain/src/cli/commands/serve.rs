//! `brain serve`: the HTTP API, events, metrics and MCP over streamable HTTP (SPEC §7.2).

use brain_api::app::Context;
use brain_api::error::BrainResult;
use brain_serve::ServeOptions;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (HOST:PORT; port 0 picks a free one) [default: [serve] listen, 127.0.0.1:7077]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// The store: postgres://USER@HOST:5432/DATABASE (replicas share it) or sqlite:PATH
    /// [default: BRAIN_DATABASE_URL, [store] url, <home>/brain.db]. A password here shows in
    /// the process list: prefer BRAIN_DATABASE_URL for one.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
}

pub fn run(context: &Context, args: Args, fixed_now: bool) -> BrainResult<()> {
    let options = ServeOptions { listen: args.listen, fixed_now: fixed_now.then_some(context.now) };
    let mut context = context.clone();
    if let Some(url) = args.database {
        context.env.database_url = Some(url);
    }
    brain_serve::run(context, options)
}
