//! Critical signals reach every agent: a `critical` or `nuclear` signal — a marker of the
//! vault, or an active `signal` item written through any replica or process: the one model
//! of `brain_api::signals` — is announced on every replica's event stream (each replica's
//! watcher sees the write), and, when configured, published once per fleet to NATS and/or a
//! Redis stream.
//!
//! The bus message (the same JSON on both; `file` for a vault signal only):
//!
//! ```json
//! {"type": "brain.signal", "id": "mem_…", "origin": "vault", "severity": "critical",
//!  "scope": "project/api", "project": "api", "source": "auth-broker", "title": "…",
//!  "text": "…", "createdAt": "2026-11-21T09:00:00Z", "file": "clusters/…/arc.md",
//!  "publishedAt": "2026-11-21T10:00:00Z"}
//! ```
//!
//! NATS: subject `<signals_nats_subject>.<severity>` (default `brain.signals.critical`),
//! header `Nats-Msg-Id: <id>` (JetStream drops duplicates by it). Redis: `XADD
//! <signals_redis_stream> MAXLEN ~ 10000 * id <id> severity <severity> json <message>`.
//! Exactly one replica publishes a signal: it claims it in the store first, per sink, and
//! gives the claim back when the sink failed, so a later pass (any replica) retries. A
//! failure to publish never fails or delays a write: publishing happens after the commit,
//! on the watcher, bounded by [`PUBLISH_TIMEOUT`], and is logged.

use std::time::Duration;

use brain_core::{Signal, Timestamp};

use brain_api::config::ServeConfig;

/// One publish (connect included) gives up after this long.
pub const PUBLISH_TIMEOUT: Duration = Duration::from_secs(3);
/// Entries a Redis stream keeps (approximately).
const STREAM_LENGTH: usize = 10_000;

/// The message of a signal on the bus (see the module docs): the signal in the one shape
/// every reader gets, with its type and when it was published.
pub fn message(signal: &Signal, at: Timestamp) -> serde_json::Value {
    let mut message = serde_json::Map::new();
    message.insert("type".into(), "brain.signal".into());
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(signal) {
        message.extend(fields);
    }
    message.insert("publishedAt".into(), brain_core::time::format_timestamp(at).into());
    serde_json::Value::Object(message)
}

/// The configured sinks (NATS, a Redis stream), connected lazily and reconnected by their
/// clients.
pub struct Publisher {
    nats: Option<NatsSink>,
    redis: Option<RedisSink>,
}

struct NatsSink {
    url: String,
    subject: String,
    client: tokio::sync::Mutex<Option<async_nats::Client>>,
}

struct RedisSink {
    url: String,
    stream: String,
    manager: tokio::sync::Mutex<Option<redis::aio::ConnectionManager>>,
}

/// A sink a signal goes to (the claim kind names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sink {
    Nats,
    Redis,
}

impl Sink {
    pub fn claim_kind(self) -> &'static str {
        match self {
            Sink::Nats => "signal:nats",
            Sink::Redis => "signal:redis",
        }
    }
}

impl Publisher {
    /// The sinks of `[serve] signals_nats_url` / `signals_redis_url` (none: `None`).
    pub fn from_config(config: &ServeConfig) -> Option<Publisher> {
        let nats = config.signals_nats_url.as_ref().map(|url| NatsSink {
            url: url.clone(),
            subject: config.signals_nats_subject.clone(),
            client: tokio::sync::Mutex::new(None),
        });
        let redis = config.signals_redis_url.as_ref().map(|url| RedisSink {
            url: url.clone(),
            stream: config.signals_redis_stream.clone(),
            manager: tokio::sync::Mutex::new(None),
        });
        (nats.is_some() || redis.is_some()).then_some(Publisher { nats, redis })
    }

    /// The configured sinks.
    pub fn sinks(&self) -> Vec<Sink> {
        let mut sinks = Vec::new();
        if self.nats.is_some() {
            sinks.push(Sink::Nats);
        }
        if self.redis.is_some() {
            sinks.push(Sink::Redis);
        }
        sinks
    }

    /// Publishes one message to one sink, within [`PUBLISH_TIMEOUT`].
    pub async fn publish(&self, sink: Sink, signal: &Signal, message: &serde_json::Value) -> Result<(), String> {
        let attempt = async {
            match sink {
                Sink::Nats => match &self.nats {
                    Some(nats) => nats.publish(signal, message).await,
                    None => Err("NATS is not configured".to_string()),
                },
                Sink::Redis => match &self.redis {
                    Some(redis) => redis.publish(signal, message).await,
                    None => Err("Redis is not configured".to_string()),
                },
            }
        };
        match tokio::time::timeout(PUBLISH_TIMEOUT, attempt).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no answer within {} s", PUBLISH_TIMEOUT.as_secs())),
        }
    }
}

impl NatsSink {
    async fn publish(&self, signal: &Signal, message: &serde_json::Value) -> Result<(), String> {
        let mut slot = self.client.lock().await;
        if slot.is_none() {
            let client = async_nats::connect(self.url.as_str()).await.map_err(|err| format!("connect: {err}"))?;
            *slot = Some(client);
        }
        let Some(client) = slot.as_ref() else { return Err("no connection".into()) };
        let subject = format!("{}.{}", self.subject, signal.severity.as_str());
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", signal.id.as_str());
        let payload = message.to_string().into_bytes();
        client.publish_with_headers(subject, headers, payload.into()).await.map_err(|err| err.to_string())?;
        // Published only once the server has it.
        client.flush().await.map_err(|err| format!("flush: {err}"))
    }
}

impl RedisSink {
    async fn publish(&self, signal: &Signal, message: &serde_json::Value) -> Result<(), String> {
        let mut slot = self.manager.lock().await;
        if slot.is_none() {
            let client = redis::Client::open(self.url.as_str()).map_err(|err| format!("invalid URL: {err}"))?;
            let manager = redis::aio::ConnectionManager::new(client).await.map_err(|err| format!("connect: {err}"))?;
            *slot = Some(manager);
        }
        let Some(manager) = slot.as_mut() else { return Err("no connection".into()) };
        let fields = [
            ("id", signal.id.clone()),
            ("severity", signal.severity.as_str().to_string()),
            ("json", message.to_string()),
        ];
        let _: Option<String> = redis::AsyncCommands::xadd_maxlen(
            manager,
            &self.stream,
            redis::streams::StreamMaxlen::Approx(STREAM_LENGTH),
            "*",
            &fields,
        )
        .await
        .map_err(|err| err.to_string())?;
        Ok(())
    }
}
