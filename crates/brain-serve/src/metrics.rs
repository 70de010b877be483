//! `/metrics` (Prometheus / OpenMetrics text): requests by route, method and status, latency
//! histograms by route, brain-document cache hits, open connections and the ones the server
//! closed (evicted, refused, header timeout), and the store's size and generation.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CloseLabels {
    reason: &'static str,
}

/// The server's metrics and their registry.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    cache: Family<CacheLabels, Counter>,
    closed: Family<CloseLabels, Counter>,
    /// Open client connections.
    pub connections: Gauge,
    pub items: Gauge,
    pub generation: Gauge,
    pub event_subscribers: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

/// Latency buckets: 50 µs doubling to ~1.6 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("brain");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(latency_histogram as fn() -> Histogram);
        let cache = Family::<CacheLabels, Counter>::default();
        let closed = Family::<CloseLabels, Counter>::default();
        let connections = Gauge::default();
        let items = Gauge::default();
        let generation = Gauge::default();
        let event_subscribers = Gauge::default();
        registry.register("http_requests", "HTTP requests by route, method and status", requests.clone());
        registry.register("http_request_duration_seconds", "HTTP request latency by route", latency.clone());
        registry.register(
            "brain_document_cache",
            "GET /api/v2/brain answered from the cache or assembled",
            cache.clone(),
        );
        registry.register("store_items", "Items in the store (every scope and status)", items.clone());
        registry.register("store_generation", "The store's write generation", generation.clone());
        registry.register("event_subscribers", "Open /api/v2/events streams", event_subscribers.clone());
        registry.register("http_connections", "Open client connections", connections.clone());
        registry.register(
            "http_connections_closed",
            "Connections the server closed: evicted (idle, to make room), refused (all busy), header_timeout",
            closed.clone(),
        );
        Metrics { registry, requests, latency, cache, closed, connections, items, generation, event_subscribers }
    }

    pub fn cache_hit(&self) {
        self.cache.get_or_create(&CacheLabels { outcome: "hit" }).inc();
    }

    pub fn cache_miss(&self) {
        self.cache.get_or_create(&CacheLabels { outcome: "assembled" }).inc();
    }

    /// A connection the server closed, and why.
    pub fn connection_closed(&self, reason: &'static str) {
        self.closed.get_or_create(&CloseLabels { reason }).inc();
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// Middleware: counts every request and times it under its route template (never the raw
/// path, so ids do not explode the label set).
pub async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route =
        request.extensions().get::<MatchedPath>().map(|path| path.as_str().to_string()).unwrap_or_else(|| {
            if request.uri().path().starts_with("/mcp") { "/mcp".into() } else { "unmatched".into() }
        });
    let method = request.method().as_str().to_string();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    metrics.latency.get_or_create(&RouteLabels { route: route.clone() }).observe(started.elapsed().as_secs_f64());
    metrics.requests.get_or_create(&RequestLabels { route, method, status }).inc();
    response
}
