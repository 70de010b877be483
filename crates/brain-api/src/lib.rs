//! brain's one application API: [`app::Brain`] and what it is made of. Items (written,
//! redacted, validated, versioned), search and recall, the brain document and session start
//! (`session`), skills, configuration, embeddings, the access log, and every policy check
//! (`policy`: scopes, grants, the write policy). Every adapter above (the vault keeper,
//! capture, the AI phases, sync, the server, the CLI and hooks) calls these methods; none
//! reaches the store past them for a decision this crate makes.

pub mod access_log;
pub mod app;
pub mod config;
pub mod embed;
pub mod error;
pub mod feed_index;
pub mod fsio;
pub mod http;
pub mod memory_import;
pub mod output;
pub mod policy;
pub mod read_cache;
pub mod recall;
pub mod search;
pub mod session;
pub mod signals;
pub mod skills;
pub mod status;
pub mod tokens;
pub mod usage;
pub mod views;
