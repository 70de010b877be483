//! `brain mcp`: serve the MCP tools over stdio (stdout carries only JSON-RPC).

use brain_api::app::Context;
use brain_api::error::BrainResult;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(context: &Context, _args: Args, fixed_now: bool) -> BrainResult<()> {
    brain_serve::mcp::serve_stdio(context.clone(), fixed_now)
}
