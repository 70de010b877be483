//! The feed files' cache: what the last tick wrote to `brain-feed/`, so an unchanged feed
//! is not written again. The feed itself (chosen from the index, rendered) is
//! `brain_core::keeper::feed`; its session-start read is `brain_api::feed_index`.

pub(crate) use brain_core::keeper::feed::*;
use serde::{Deserialize, Serialize};

/// What the last tick wrote to the feed: the digest of its inputs and the SHA-256 of each
/// feed file it derived from them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FeedCache {
    pub digest: String,
    pub files: Vec<(String, String)>,
}

impl FeedCache {
    /// The files that depend on the digest's inputs only.
    pub const FILES: [&'static str; 3] = ["hot-arcs.md", "inject.md", "signals.md"];

    /// True when every file is on disk with the content the last tick wrote (a file someone
    /// edited or deleted is written again).
    pub fn files_intact(&self, feed_dir: &std::path::Path) -> bool {
        self.files.len() == Self::FILES.len()
            && self.files.iter().all(|(name, sha)| {
                std::fs::read(feed_dir.join(name)).is_ok_and(|bytes| brain_api::fsio::sha256_hex(&bytes) == *sha)
            })
    }
}
