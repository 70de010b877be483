//! brain, the application: one `Brain` API (app.rs) and the adapters that call it (the CLI
//! today; HTTP, MCP and hooks share the same API).

pub mod access_log;
pub mod ai;
pub mod app;
pub mod capture;
pub mod cli;
pub mod config;
pub mod embed;
pub mod error;
pub mod feed_index;
pub mod fsio;
pub mod hook;
pub mod http;
pub mod hygiene;
pub mod mcp;
pub mod output;
pub mod policy;
pub mod read_cache;
pub mod recall;
pub mod remote;
pub mod search;
pub mod serve;
pub mod session;
pub mod signals;
pub mod skills;
pub mod status;
pub mod sync;
pub mod vault;
pub mod views;
