//! `GET /api/v2/events`: server-sent events. A watcher follows the store's write generation
//! (writes come from any process: CLI, hooks, tick, other servers and replicas) and
//! announces `brain` when it moves and `signal` for each new critical or nuclear signal
//! (items and vault alike: `brain_api::signals`). On
//! SQLite it polls (`events_poll_ms`); on a database server the writes are pushed
//! (LISTEN/NOTIFY, followed on a thread of its own), so clients of every replica hear of a
//! write at once, with a slow poll kept as a safety net for notifications lost while
//! reconnecting. Streams end when the server shuts down, so a graceful shutdown never waits
//! on a subscriber.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use brain_core::Scope;
use futures_util::Stream;
use serde_json::json;
use tokio::sync::{broadcast, watch};

use super::auth::Caller;
use super::error::ApiError;
use super::extract::Params;
use super::state::{AppState, Event};

/// The safety-net poll when writes are pushed.
const PUSHED_POLL: Duration = Duration::from_secs(5);

/// Watches the store until `shutdown` flips, announcing changes to subscribers.
pub async fn watch_store(state: Arc<AppState>, mut shutdown: watch::Receiver<bool>) {
    let mut pushed = if state.is_shared() { follow_pushed_writes(state.location.clone()) } else { None };
    let period = match pushed {
        Some(_) => PUSHED_POLL,
        None => Duration::from_millis(state.config.events_poll_ms.clamp(50, 60_000)),
    };
    let mut last_generation = state.generation().await.ok();
    // The tokens were loaded when the state was made, before the server listened; one made or
    // revoked since, before the generation above was read, would otherwise wait for the next
    // write to be seen. Loading them again after reading the generation closes that gap.
    state.refresh_tokens().await;
    let publisher = super::signals::Publisher::from_config(&state.config);
    // Signals active at start-up were announced before (by whoever saw them appear); they
    // may still need publishing, which the claims in the store decide.
    let mut signals = current_critical(&state).await;
    let mut seen: HashSet<String> = signals.iter().map(|signal| signal.id.clone()).collect();
    let mut published: HashSet<(super::signals::Sink, String)> = HashSet::new();
    loop {
        if let Some(publisher) = &publisher {
            publish_pending(&state, publisher, &signals, &mut published).await;
        }
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            changed = async { pushed.as_mut()?.changed().await.ok() }, if pushed.is_some() => {
                if changed.is_none() {
                    // The follower thread ended: poll from now on.
                    pushed = None;
                }
            }
            _ = shutdown.changed() => return,
        }
        let Ok(generation) = state.generation().await else { continue };
        if Some(generation) == last_generation {
            continue;
        }
        state.refresh_tokens().await;
        state.announce("brain", json!({"generation": generation, "previous": last_generation}));
        last_generation = Some(generation);
        signals = current_critical(&state).await;
        for signal in &signals {
            if seen.insert(signal.id.clone()) {
                let data = serde_json::to_value(signal).unwrap_or_default();
                state.announce_in("signal", data, signal.scope.clone());
            }
        }
    }
}

/// Publishes each current signal to each sink it has not reached yet, claiming it in the
/// store first so that one replica publishes it; a failed publish gives the claim back for
/// a later pass. Never fails: problems are logged.
async fn publish_pending(
    state: &Arc<AppState>,
    publisher: &super::signals::Publisher,
    signals: &[brain_core::Signal],
    published: &mut HashSet<(super::signals::Sink, String)>,
) {
    let Ok(now) = state.clock(None) else { return };
    for signal in signals {
        for sink in publisher.sinks() {
            if published.contains(&(sink, signal.id.clone())) {
                continue;
            }
            let id = signal.id.clone();
            let claimed = state
                .pool
                .run(state.default_project.clone(), now, move |brain| brain.claim(sink.claim_kind(), &id))
                .await;
            match claimed {
                // Another replica (or an earlier run) published it.
                Ok(false) => {
                    published.insert((sink, signal.id.clone()));
                }
                Ok(true) => {
                    let message = super::signals::message(signal, now);
                    match publisher.publish(sink, signal, &message).await {
                        Ok(()) => {
                            published.insert((sink, signal.id.clone()));
                        }
                        Err(err) => {
                            eprintln!(
                                "brain serve: cannot publish signal {} to {sink:?}: {err}; will retry",
                                signal.id
                            );
                            let id = signal.id.clone();
                            let _ = state
                                .pool
                                .run(state.default_project.clone(), now, move |brain| {
                                    brain.release_claim(sink.claim_kind(), &id)
                                })
                                .await;
                        }
                    }
                }
                Err(err) => eprintln!("brain serve: cannot claim signal {}: {}", signal.id, err.message),
            }
        }
    }
}

/// Follows the store's pushed writes on a thread with a connection of its own; the receiver
/// changes on every notification (and after a reconnection, when some may have been
/// missed). The thread ends when the receiver is dropped.
fn follow_pushed_writes(location: brain_store::StoreLocation) -> Option<watch::Receiver<u64>> {
    let (sender, receiver) = watch::channel(0u64);
    let spawned = std::thread::Builder::new().name("brain-listen".into()).spawn(move || {
        let mut pause = Duration::from_millis(250);
        while !sender.is_closed() {
            let feed = brain_store::Store::open(&location, false, brain_store::PageReads::Cached)
                .and_then(|store| store.listen());
            let mut feed = match feed {
                Ok(Some(feed)) => feed,
                Ok(None) => return,
                Err(err) => {
                    eprintln!("brain serve: cannot listen for writes ({err}); retrying");
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(5));
                    continue;
                }
            };
            pause = Duration::from_millis(250);
            // Listening again: whatever was committed meanwhile was not announced.
            sender.send_modify(|tick| *tick = tick.wrapping_add(1));
            while !sender.is_closed() {
                match feed.wait(Duration::from_secs(1)) {
                    Ok(Some(_)) => sender.send_modify(|tick| *tick = tick.wrapping_add(1)),
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
        }
    });
    spawned.ok().map(|_| receiver)
}

/// The active critical and nuclear signals of every scope (see `signals::current_urgent`);
/// none when the store cannot be read right now.
async fn current_critical(state: &Arc<AppState>) -> Vec<brain_core::Signal> {
    let Ok(now) = state.clock(None) else { return Vec::new() };
    state.pool.run(state.default_project.clone(), now, brain_api::signals::current_urgent).await.unwrap_or_default()
}

/// `GET /api/v2/events` parameters.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsParams {
    project: Option<String>,
}

/// `GET /api/v2/events`: `ready` with the current generation, then `brain` and `signal`
/// events as they happen; a comment every 15 s keeps proxies from closing the stream. The
/// caller needs a read grant on `project` (default: the server's); each signal then reaches
/// it only if it may read the signal's scope, a tick record only with a grant on every
/// project of the vault.
pub async fn events(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Extension(shutdown): Extension<watch::Receiver<bool>>,
    Params(params): Params<EventsParams>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    caller.require_read(&Scope::Project(state.project(params.project.as_deref())?))?;
    let generation = state.generation().await?;
    let receiver = state.events.subscribe();
    state.metrics.event_subscribers.inc();
    let guard = SubscriberGuard(Arc::clone(&state), caller);
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
                        Ok(Event { scopes, .. }) if !scopes.iter().all(|scope| guard.1.can_read(scope)) => {}
                        Ok(Event { name, data, .. }) => {
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

/// Counts open streams in the metrics; carries the subscriber (whose grants filter the
/// scoped events).
struct SubscriberGuard(Arc<AppState>, Caller);

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.0.metrics.event_subscribers.dec();
    }
}
