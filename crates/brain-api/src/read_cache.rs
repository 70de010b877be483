//! Reads of the store kept between changes, for a process that serves many session starts
//! (`brain serve`): the parts of a session start that depend only on the items and the clock
//! — the pins, the counters, the low-confidence alerts, the vault feed, the active signals —
//! and the recall
//! candidates of a task.
//!
//! Every entry is tagged with the store's [`ReadStamp`] (the write generation and the access
//! epoch, read in one snapshot) read *before* the entry was computed. A caller reads the
//! stamp first, and uses an entry only when the stamp it read is the entry's: both parts
//! only grow, so an equal stamp means no write and no fold of access bookkeeping committed
//! since the entry was read, through this process or any other (on PostgreSQL, any replica
//! on any machine). A write anywhere moves the generation, so the next session start
//! anywhere recomputes. Nothing here is trusted without that read: no notification, no
//! timer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use brain_core::assemble::Feed;
use brain_core::assemble::session::LowConfidenceAlert;
use brain_core::{Item, Signal};
use brain_store::ReadStamp;

/// Most session parts kept (one per project and clock minute).
const SESSION_ENTRIES: usize = 16;
/// Most recall candidate lists kept (one per project and task).
const RECALL_ENTRIES: usize = 64;

/// What a session start reads besides its recall: the same for every session of a project
/// at one instant, until the stamp moves.
#[derive(Debug)]
pub struct SessionParts {
    /// Approved, unexpired pins of the session's scopes, newest first.
    pub pins: Vec<Item>,
    pub feed: Feed,
    /// The active signals of the session's scopes, items and vault alike, in order.
    pub signals: Vec<Signal>,
    pub memory_count: u64,
    pub due_for_review: usize,
    pub low_confidence_alerts: Vec<LowConfidenceAlert>,
}

/// A recall candidate: the item, its relevance normalised to the best match (0 without a
/// query), what matched, and what learning from use makes of it for the query
/// (`crate::usage`).
pub type RecallCandidate = (Item, f64, String, brain_core::usage::Learned);

/// The cached reads of one process, shared by its store connections.
#[derive(Debug, Default)]
pub struct ReadCache {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// The stamp every entry below was read at (`None`: nothing kept yet).
    stamp: Option<ReadStamp>,
    /// By project and clock (Unix seconds).
    sessions: HashMap<(String, i64), Arc<SessionParts>>,
    /// By project and query text.
    recalls: HashMap<(String, String), Arc<Vec<RecallCandidate>>>,
}

impl ReadCache {
    pub fn new() -> ReadCache {
        ReadCache::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic elsewhere while holding the lock leaves whole entries only.
        self.entries.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// The session parts of `project` at `now`, read at `stamp`, else `read()`'s (kept).
    /// `read` must read the store after `stamp` was read.
    pub fn session<E>(
        &self,
        stamp: ReadStamp,
        project: &str,
        now: i64,
        read: impl FnOnce() -> Result<SessionParts, E>,
    ) -> Result<Arc<SessionParts>, E> {
        let key = (project.to_string(), now);
        if let Some(found) = self.find(stamp, |entries| entries.sessions.get(&key).cloned()) {
            return Ok(found);
        }
        let parts = Arc::new(read()?);
        self.keep(stamp, |entries| {
            if entries.sessions.len() >= SESSION_ENTRIES {
                entries.sessions.clear();
            }
            entries.sessions.insert(key, Arc::clone(&parts));
        });
        Ok(parts)
    }

    /// The recall candidates of `project` for `query`, read at `stamp`, else `read()`'s
    /// (kept). `read` must read the store after `stamp` was read.
    pub fn recall<E>(
        &self,
        stamp: ReadStamp,
        project: &str,
        query: &str,
        read: impl FnOnce() -> Result<Vec<RecallCandidate>, E>,
    ) -> Result<Arc<Vec<RecallCandidate>>, E> {
        let key = (project.to_string(), query.to_string());
        if let Some(found) = self.find(stamp, |entries| entries.recalls.get(&key).cloned()) {
            return Ok(found);
        }
        let candidates = Arc::new(read()?);
        self.keep(stamp, |entries| {
            if entries.recalls.len() >= RECALL_ENTRIES {
                entries.recalls.clear();
            }
            entries.recalls.insert(key, Arc::clone(&candidates));
        });
        Ok(candidates)
    }

    /// An entry kept at exactly `stamp`.
    fn find<T>(&self, stamp: ReadStamp, pick: impl FnOnce(&Entries) -> Option<T>) -> Option<T> {
        let entries = self.lock();
        if entries.stamp != Some(stamp) {
            return None;
        }
        pick(&entries)
    }

    /// Keeps an entry read at `stamp`. A newer stamp drops every entry of the older one (they
    /// can never be used again); an entry of an older stamp than the kept ones (a slow
    /// reader) is not kept.
    fn keep(&self, stamp: ReadStamp, put: impl FnOnce(&mut Entries)) {
        let mut entries = self.lock();
        match entries.stamp {
            Some(kept) if kept == stamp => {}
            Some(kept) if !stamp.is_at_least(&kept) => return,
            _ => *entries = Entries { stamp: Some(stamp), ..Entries::default() },
        }
        put(&mut entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(memory_count: u64) -> SessionParts {
        SessionParts {
            pins: Vec::new(),
            feed: Feed::default(),
            signals: Vec::new(),
            memory_count,
            due_for_review: 0,
            low_confidence_alerts: Vec::new(),
        }
    }

    fn stamp(generation: u64, accesses: u64) -> ReadStamp {
        ReadStamp { generation, accesses }
    }

    fn session(cache: &ReadCache, at: ReadStamp, project: &str, now: i64, count: u64) -> u64 {
        cache.session(at, project, now, || Ok::<_, ()>(parts(count))).unwrap().memory_count
    }

    #[test]
    fn an_entry_is_used_only_at_the_stamp_it_was_read_at() {
        let cache = ReadCache::new();
        assert_eq!(session(&cache, stamp(1, 0), "demo", 60, 10), 10);
        // Same stamp: kept.
        assert_eq!(session(&cache, stamp(1, 0), "demo", 60, 99), 10);
        // A write moved the generation: read again.
        assert_eq!(session(&cache, stamp(2, 0), "demo", 60, 11), 11);
        // A fold of access bookkeeping moved the epoch: read again.
        assert_eq!(session(&cache, stamp(2, 1), "demo", 60, 12), 12);
        assert_eq!(session(&cache, stamp(2, 1), "demo", 60, 99), 12);
        // Another project or another minute is another entry.
        assert_eq!(session(&cache, stamp(2, 1), "other", 60, 5), 5);
        assert_eq!(session(&cache, stamp(2, 1), "demo", 120, 6), 6);
    }

    #[test]
    fn a_slow_reader_of_an_older_stamp_neither_uses_nor_replaces_newer_entries() {
        let cache = ReadCache::new();
        assert_eq!(session(&cache, stamp(5, 2), "demo", 60, 50), 50);
        // Read at an older stamp: computed, not kept, newer entries untouched.
        assert_eq!(session(&cache, stamp(4, 2), "demo", 60, 40), 40);
        assert_eq!(session(&cache, stamp(4, 2), "demo", 60, 41), 41);
        assert_eq!(session(&cache, stamp(5, 2), "demo", 60, 99), 50);
        // Not comparable (an older epoch): not kept either.
        assert_eq!(session(&cache, stamp(6, 1), "demo", 60, 61), 61);
        assert_eq!(session(&cache, stamp(5, 2), "demo", 60, 99), 50);
    }

    #[test]
    fn recall_lists_follow_the_stamp_and_the_query() {
        let cache = ReadCache::new();
        let now = brain_core::Timestamp::from_second(1_700_000_000).unwrap();
        let item = brain_core::assemble::fixtures::generate_items(1, 7, now).remove(0);
        let read = |cache: &ReadCache, at: ReadStamp, query: &str, label: &str| {
            let list = cache
                .recall(at, "demo", query, || {
                    Ok::<_, ()>(vec![(item.clone(), 1.0, label.to_string(), brain_core::usage::Learned::NEUTRAL)])
                })
                .unwrap();
            list[0].2.clone()
        };
        assert_eq!(read(&cache, stamp(1, 0), "retry logic", "a"), "a");
        assert_eq!(read(&cache, stamp(1, 0), "retry logic", "b"), "a");
        assert_eq!(read(&cache, stamp(1, 0), "webhook", "c"), "c");
        assert_eq!(read(&cache, stamp(2, 0), "retry logic", "d"), "d");
        // An error is returned and nothing is kept.
        let failed = cache.recall(stamp(3, 0), "demo", "x", || Err::<Vec<RecallCandidate>, _>("down"));
        assert_eq!(failed.unwrap_err(), "down");
        assert_eq!(read(&cache, stamp(3, 0), "x", "e"), "e");
    }
}
