//! The vault keeper's pure parts: what a vault file says once parsed (its state), an arc's
//! heat and the vault's health, the feed chosen from the index and rendered as the feed
//! files, the `[vault]` thresholds, and the text helpers of generated notes. The keeper
//! itself (the walk, the scan into the store, the tick's writes) is `brain-vault`.

pub mod config;
pub mod feed;
pub mod heat;
pub mod snapshot;
pub mod state;
pub mod text;

#[cfg(test)]
mod tests;
