//! `brain mcp`: serve the MCP tools over stdio (stdout carries only JSON-RPC).

use crate::app::Context;
use crate::error::BrainResult;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(context: &Context, _args: Args, fixed_now: bool) -> BrainResult<()> {
    crate::mcp::serve_stdio(context.clone(), fixed_now)
}
