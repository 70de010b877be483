//! brain as a client of another brain: remote mode's HTTP client (`remote`: the CLI and
//! hooks reading and writing through a `brain serve`) and `sync` (a home's items pushed to
//! and pulled from a server, both sides of the protocol).

pub mod remote;
pub mod sync;
