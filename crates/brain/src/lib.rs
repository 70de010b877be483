//! The `brain` binary's adapters: the command line (`cli`) and the agent hosts' hooks
//! (`hook`). Each converts its input, calls the layers below (`brain-api`'s `Brain`, the
//! vault keeper, capture, the AI phases, sync and remote mode, the server) and renders.

pub mod cli;
pub mod hook;
