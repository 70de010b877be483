//! Pushed change notifications: a connection of its own that `LISTEN`s on the store's
//! channel, where every committed write announces a generation that includes it, right
//! after its commit (`PgStore::announce`). Each `brain serve` replica follows it to refresh
//! caches and announce events at once, instead of polling, and reads the generation on the
//! same connection (after a notification, and as a keepalive).

use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

use super::PgStore;
use crate::StoreResult;

/// A subscription to committed writes (one connection; drop it to unsubscribe).
pub struct ChangeFeed {
    client: postgres::Client,
    store_display: String,
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeed").field("location", &self.store_display).finish()
    }
}

impl PgStore {
    /// Opens a listening connection on the store's channel.
    pub(crate) fn listen(&self) -> StoreResult<ChangeFeed> {
        let mut connection = self.connect()?;
        let channel = self.namespace.channel.replace('"', "\"\"");
        connection.client.batch_execute(&format!("LISTEN \"{channel}\"")).map_err(|err| self.error(err))?;
        Ok(ChangeFeed { client: connection.client, store_display: self.location().to_string() })
    }
}

/// A connection holding a session advisory lock (see `jobs.rs`); closing it releases it.
pub struct LockConnection {
    _client: postgres::Client,
}

impl std::fmt::Debug for LockConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LockConnection")
    }
}

impl PgStore {
    /// Takes the session advisory lock of `purpose` on a new connection, if free.
    pub(crate) fn try_lock(&self, purpose: &str) -> StoreResult<Option<LockConnection>> {
        let mut connection = self.connect()?;
        let key = self.namespace.lock_key(purpose);
        let taken: bool = connection
            .client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .and_then(|row| row.try_get(0))
            .map_err(|err| self.error(err))?;
        Ok(taken.then_some(LockConnection { _client: connection.client }))
    }
}

impl ChangeFeed {
    /// The write generation, read on the listening connection. Read after `LISTEN` took
    /// effect, it covers every write committed before the read; every later one is notified.
    pub fn generation(&mut self) -> StoreResult<u64> {
        let unavailable =
            |detail: String| crate::StoreError::Unavailable { location: self.store_display.clone(), detail };
        // The simple protocol: one round trip.
        let messages = self.client.simple_query(super::GENERATION_SQL).map_err(|err| unavailable(err.to_string()))?;
        messages
            .iter()
            .find_map(|message| match message {
                postgres::SimpleQueryMessage::Row(row) => row.get(0).and_then(|text| text.parse::<u64>().ok()),
                _ => None,
            })
            .ok_or_else(|| unavailable("the generation read returned no number".into()))
    }

    /// Waits at most `timeout` for committed writes and returns the newest generation
    /// announced (`None` when nothing was committed meanwhile). A lost connection is
    /// `Unavailable`: open a new feed (and re-read the generation: notifications sent while
    /// no one listened are gone).
    pub fn wait(&mut self, timeout: Duration) -> StoreResult<Option<u64>> {
        let unavailable = |err: postgres::Error, display: &str| crate::StoreError::Unavailable {
            location: display.to_string(),
            detail: err.to_string(),
        };
        let display = self.store_display.clone();
        let mut newest: Option<u64> = None;
        let mut note = |payload: &str| {
            if let Ok(generation) = payload.parse::<u64>() {
                newest = Some(newest.map_or(generation, |seen| seen.max(generation)));
            }
        };
        {
            let mut notifications = self.client.notifications();
            let first = notifications.timeout_iter(timeout).next().map_err(|err| unavailable(err, &display))?;
            if let Some(first) = first {
                note(first.payload());
                // Whatever else already arrived, without waiting again.
                let mut pending = notifications.iter();
                while let Some(more) = pending.next().map_err(|err| unavailable(err, &display))? {
                    note(more.payload());
                }
            }
        }
        if self.client.is_closed() {
            return Err(crate::StoreError::Unavailable { location: display, detail: "connection closed".into() });
        }
        Ok(newest)
    }
}
