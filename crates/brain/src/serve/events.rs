//! `GET /api/v2/events`: server-sent events. A watcher polls the store's write generation
//! (writes come from any process: CLI, hooks, tick, other servers) and announces
//! `brain` when it moves and `signal` for each new critical vault signal. Streams end when
//! the server shuts down, so a graceful shutdown never waits on a subscriber.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use brain_core::{Scope, Severity};
use futures_util::Stream;
use serde_json::json;
use tokio::sync::{broadcast, watch};

use super::auth::Caller;
use super::error::ApiError;
use super::state::{AppState, Event};

/// Ids of the active critical signals of the vault feed.
fn critical_signals(feed: &brain_core::assemble::Feed) -> Vec<(String, serde_json::Value)> {
    feed.signals
        .iter()
        .filter(|signal| signal.severity == Severity::Critical)
        .map(|signal| {
            (
                signal.id.clone(),
                json!({"id": signal.id, "severity": signal.severity, "source": signal.source, "text": signal.text}),
            )
        })
        .collect()
}

/// Watches the store until `shutdown` flips, announcing changes to subscribers.
pub async fn watch_store(state: Arc<AppState>, mut shutdown: watch::Receiver<bool>) {
    let period = Duration::from_millis(state.config.events_poll_ms.clamp(50, 60_000));
    let mut last_generation = state.generation().ok();
    let mut seen: HashSet<String> = current_critical(&state).await.into_iter().map(|(id, _)| id).collect();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = shutdown.changed() => return,
        }
        let Ok(generation) = state.generation() else { continue };
        if Some(generation) == last_generation {
            continue;
        }
        state.announce("brain", json!({"generation": generation, "previous": last_generation}));
        last_generation = Some(generation);
        for (id, signal) in current_critical(&state).await {
            if seen.insert(id) {
                state.announce("signal", signal);
            }
        }
    }
}

async fn current_critical(state: &Arc<AppState>) -> Vec<(String, serde_json::Value)> {
    let now = match state.clock(None) {
        Ok(now) => now,
        Err(_) => return Vec::new(),
    };
    state
        .pool
        .run(state.default_project.clone(), now, move |brain| {
            Ok(critical_signals(&crate::vault::indexed_feed(brain.store(), now)))
        })
        .await
        .unwrap_or_default()
}

/// `GET /api/v2/events`: `ready` with the current generation, then `brain` and `signal`
/// events as they happen; a comment every 15 s keeps proxies from closing the stream.
pub async fn events(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Extension(shutdown): Extension<watch::Receiver<bool>>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    caller.require_read(&Scope::Project(state.default_project.clone()))?;
    let generation = state.generation()?;
    let receiver = state.events.subscribe();
    state.metrics.event_subscribers.inc();
    let guard = SubscriberGuard(Arc::clone(&state));
    let first = SseEvent::default().event("ready").data(json!({"generation": generation}).to_string());
    let stream = futures_util::stream::unfold(
        (Some(first), receiver, shutdown, guard),
        |(first, mut receiver, mut shutdown, guard)| async move {
            if let Some(event) = first {
                return Some((Ok(event), (None, receiver, shutdown, guard)));
            }
            if *shutdown.borrow() {
                return None;
            }
            loop {
                tokio::select! {
                    received = receiver.recv() => match received {
                        Ok(Event { name, data }) => {
                            let event = SseEvent::default().event(name).data(data.to_string());
                            return Some((Ok(event), (None, receiver, shutdown, guard)));
                        }
                        // A slow subscriber missed some: tell it to re-read everything.
                        Err(broadcast::error::RecvError::Lagged(missed)) => {
                            let event = SseEvent::default().event("lagged").data(json!({"missed": missed}).to_string());
                            return Some((Ok(event), (None, receiver, shutdown, guard)));
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    },
                    changed = shutdown.changed() => {
                        if changed.is_err() || *shutdown.borrow() {
                            return None;
                        }
                    }
                }
            }
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// Counts open streams in the metrics.
struct SubscriberGuard(Arc<AppState>);

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.0.metrics.event_subscribers.dec();
    }
}
