//! What a request holds while it runs, and for how long. Every request in progress holds a
//! connection (an event stream for as long as its subscriber listens), and connections are
//! bounded (`conn`), so one client must not hold them all:
//!
//! - **shares**: one token may have at most `[serve] max_requests_per_token` requests in
//!   progress and `max_streams_per_token` of them streams (`/api/v2/events`, `GET /mcp`);
//!   one client address `max_requests_per_peer` and `max_streams_per_peer`. A token's share
//!   is at most a quarter of the connections and an address's at most half, so whoever
//!   holds a full share leaves room for `/healthz` and for everyone else. Beyond its share a
//!   request gets 429 with `Retry-After` and an error naming the bound. Liveness and
//!   readiness probes take no share: they answer at once and an orchestrator must reach them;
//! - **the body deadline**: a request body must arrive whole within `[serve]
//!   body_timeout_secs` of the head, else 408 `body_timeout` (a trickled upload would
//!   otherwise hold its connection for the whole request timeout);
//! - **revocation**: when the token of a request is revoked (`auth::Grant::revoked`), the
//!   request is answered 401 if it is still running, and a body still being made (an event
//!   stream, an MCP answer over SSE) ends, so a revoked token hears nothing more. An answer
//!   made whole before the revocation is sent whole: it was the token's to read when it was
//!   made, and cutting it would close the connection with nothing said (its head is written
//!   with its first bytes).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};

use super::auth::Grant;
use super::error::ApiError;
use super::openapi::{Mount, PROBES, ROUTES};
use brain_api::config::ServeConfig;

/// Seconds a refused client is asked to wait: a request in progress ends soon, a stream
/// rarely.
const RETRY_REQUEST_SECS: u64 = 1;
const RETRY_STREAM_SECS: u64 = 5;

/// The shares in force: the configured ones, capped by the connection bound (`None`: no bound).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareLimits {
    pub requests_per_token: Option<usize>,
    pub streams_per_token: Option<usize>,
    pub requests_per_peer: Option<usize>,
    pub streams_per_peer: Option<usize>,
    pub body_timeout: Duration,
}

impl ShareLimits {
    /// `[serve]`'s shares on a server allowing `max_connections` connections at once.
    pub fn new(config: &ServeConfig, max_connections: usize) -> ShareLimits {
        let token_cap = (max_connections / 4).max(1);
        let peer_cap = (max_connections / 2).max(1);
        let bound = |configured: usize, cap: usize| (configured > 0).then(|| configured.min(cap));
        ShareLimits {
            requests_per_token: bound(config.max_requests_per_token, token_cap),
            streams_per_token: bound(config.max_streams_per_token, token_cap),
            requests_per_peer: bound(config.max_requests_per_peer, peer_cap),
            streams_per_peer: bound(config.max_streams_per_peer, peer_cap),
            body_timeout: Duration::from_secs(config.body_timeout_secs.max(1)),
        }
    }
}

/// Who holds requests: a token (by name) or a client address.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Holder {
    Token(String),
    Peer(IpAddr),
}

/// What one holder has in progress.
#[derive(Debug, Default)]
struct Held {
    requests: usize,
    streams: usize,
}

/// The requests and streams every holder has in progress.
#[derive(Debug)]
pub struct Shares {
    limits: ShareLimits,
    held: Mutex<HashMap<Holder, Held>>,
}

/// A request's place in its holders' shares, given back when dropped (with the response
/// body, once it is written or its client is gone).
struct Hold {
    shares: Arc<Shares>,
    holders: Vec<Holder>,
    stream: bool,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut held = self.shares.lock();
        for holder in &self.holders {
            let Some(counts) = held.get_mut(holder) else { continue };
            counts.requests = counts.requests.saturating_sub(1);
            if self.stream {
                counts.streams = counts.streams.saturating_sub(1);
            }
            if counts.requests == 0 {
                held.remove(holder);
            }
        }
    }
}

impl Shares {
    pub fn new(limits: ShareLimits) -> Shares {
        Shares { limits, held: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Holder, Held>> {
        self.held.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Takes one request (a stream if `stream`) in the shares of `token` and `peer`, or
    /// refuses it naming the first share it would exceed; nothing is taken on refusal.
    fn take(self: &Arc<Self>, token: Option<&str>, peer: Option<IpAddr>, stream: bool) -> Result<Hold, ApiError> {
        let limits = &self.limits;
        let mut checks = Vec::new();
        if let Some(name) = token {
            let who = format!("token {name:?}");
            checks.push((
                Holder::Token(name.to_string()),
                who,
                limits.requests_per_token,
                limits.streams_per_token,
                "token",
            ));
        }
        if let Some(address) = peer {
            checks.push((
                Holder::Peer(address),
                address.to_string(),
                limits.requests_per_peer,
                limits.streams_per_peer,
                "peer",
            ));
        }
        let mut held = self.lock();
        for (holder, who, max_requests, max_streams, kind) in &checks {
            let counts = held.get(holder);
            let (requests, streams) = counts.map_or((0, 0), |counts| (counts.requests, counts.streams));
            if let Some(max) = max_streams.filter(|max| stream && streams >= *max) {
                return Err(refusal(
                    "too_many_streams",
                    format!(
                        "{who} holds {streams} open streams, the most [serve] max_streams_per_{kind} allows ({max})"
                    ),
                    "close one of its streams (/api/v2/events, GET /mcp) first, or wait",
                ));
            }
            if let Some(max) = max_requests.filter(|max| requests >= *max) {
                return Err(refusal(
                    "too_many_requests",
                    format!(
                        "{who} has {requests} requests in progress, the most [serve] max_requests_per_{kind} allows ({max})"
                    ),
                    "wait for one of its requests to finish, then retry",
                ));
            }
        }
        let mut holders = Vec::with_capacity(checks.len());
        for (holder, ..) in checks {
            let counts = held.entry(holder.clone()).or_default();
            counts.requests += 1;
            if stream {
                counts.streams += 1;
            }
            holders.push(holder);
        }
        Ok(Hold { shares: Arc::clone(self), holders, stream })
    }
}

fn refusal(code: &'static str, message: String, hint: &str) -> ApiError {
    ApiError::new(StatusCode::TOO_MANY_REQUESTS, code, message).with_hint(hint)
}

/// Whether a request opens a stream that lives as long as its client listens.
fn is_stream(method: &Method, path: &str) -> bool {
    if path == "/mcp" {
        return method == Method::GET;
    }
    ROUTES.iter().any(|route| route.mount == Mount::Stream && route.path == path)
}

/// Middleware (inside auth, which names the caller): takes the request's shares, enforces
/// the body deadline and ends the request when its token is revoked (see the module docs).
pub async fn hold(State(shares): State<Arc<Shares>>, request: Request, next: Next) -> Response {
    if PROBES.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    // Set by auth for a request that presented a valid token.
    let grant = request.extensions().get::<Arc<Grant>>().cloned();
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(address)| address.ip());
    let stream = is_stream(request.method(), request.uri().path());
    let hold = match shares.take(grant.as_ref().map(|grant| grant.name()), peer, stream) {
        Ok(hold) => hold,
        Err(refused) => {
            let retry = if stream { RETRY_STREAM_SECS } else { RETRY_REQUEST_SECS };
            let mut response = refused.into_response();
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry));
            return response;
        }
    };
    let body_timeout = shares.limits.body_timeout;
    let (request, body_arrived) = watch_body(request);
    let mut revoked: Pin<Box<dyn Future<Output = ()> + Send>> = match &grant {
        Some(grant) => Box::pin(grant.revoked()),
        None => Box::pin(std::future::pending()),
    };
    let handler = next.run(request);
    tokio::pin!(handler);
    let deadline = tokio::time::sleep(body_timeout);
    tokio::pin!(deadline);
    let mut body_pending = !body_arrived.load(Ordering::Acquire);
    let response = loop {
        tokio::select! {
            biased;
            () = &mut revoked => return token_revoked(),
            () = &mut deadline, if body_pending => {
                if !body_arrived.load(Ordering::Acquire) {
                    return body_too_slow(body_timeout);
                }
                body_pending = false;
            }
            response = &mut handler => break response,
        }
    };
    // A body whole when the handler returned was made while the token was valid: sent whole.
    // One still being made (an event stream, an MCP answer over SSE) ends on revocation.
    let whole = http_body::Body::size_hint(response.body()).exact().is_some();
    let revoked = (grant.is_some() && !whole).then_some(revoked);
    response.map(|body| Body::new(HeldBody { body, revoked, _hold: hold }))
}

/// 401 for a request whose token was revoked while it ran.
fn token_revoked() -> Response {
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "the bearer token was revoked")
        .with_hint("ask for a new token")
        .into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"brain\""));
    response
}

/// 408 for a body that did not arrive whole in time; the connection is closed with it.
fn body_too_slow(body_timeout: Duration) -> Response {
    let mut response = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        "body_timeout",
        format!("the request body did not arrive within {} s ([serve] body_timeout_secs)", body_timeout.as_secs()),
    )
    .with_hint("send the body at once, right after the head")
    .into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The request with its body watched: the flag turns true once the body has been read to
/// its end (at once for a request without a body).
fn watch_body(request: Request) -> (Request, Arc<AtomicBool>) {
    use http_body::Body as _;
    let arrived = Arc::new(AtomicBool::new(request.body().is_end_stream()));
    if arrived.load(Ordering::Relaxed) {
        return (request, arrived);
    }
    let flag = Arc::clone(&arrived);
    let request = request.map(|body| Body::new(WatchedBody { body, arrived: flag }));
    (request, arrived)
}

/// A request body that says when it has been read to its end.
struct WatchedBody {
    body: Body,
    arrived: Arc<AtomicBool>,
}

impl http_body::Body for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || this.body.is_end_stream() {
            this.arrived.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A response body that keeps its request's shares until it is dropped, and — one still
/// being made — ends early when the request's token is revoked.
struct HeldBody {
    body: Body,
    revoked: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    _hold: Hold,
}

impl http_body::Body for HeldBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        // Looked at first, so nothing more is sent once the token is revoked. An error, not
        // a clean end: the connection is closed too, so the revoked holder keeps no socket
        // (a clean end would leave it open for its next request).
        if let Some(revoked) = &mut this.revoked
            && revoked.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(axum::Error::new("the bearer token was revoked"))));
        }
        Pin::new(&mut this.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(config: &ServeConfig, max_connections: usize) -> Arc<Shares> {
        Arc::new(Shares::new(ShareLimits::new(config, max_connections)))
    }

    #[test]
    fn shares_follow_the_connection_bound_and_zero_means_no_bound() {
        let defaults = ShareLimits::new(&ServeConfig::default(), 512);
        assert_eq!(
            (
                defaults.requests_per_token,
                defaults.streams_per_token,
                defaults.requests_per_peer,
                defaults.streams_per_peer
            ),
            (Some(64), Some(16), Some(128), Some(32))
        );
        let few = ShareLimits::new(&ServeConfig::default(), 24);
        assert_eq!((few.requests_per_token, few.streams_per_token), (Some(6), Some(6)));
        assert_eq!((few.requests_per_peer, few.streams_per_peer), (Some(12), Some(12)));
        let open = ServeConfig {
            max_requests_per_peer: 0,
            max_streams_per_peer: 0,
            body_timeout_secs: 0,
            ..ServeConfig::default()
        };
        let open = ShareLimits::new(&open, 512);
        assert_eq!((open.requests_per_peer, open.streams_per_peer), (None, None));
        assert_eq!(open.body_timeout, Duration::from_secs(1));
        assert_eq!(ShareLimits::new(&ServeConfig::default(), 1).requests_per_token, Some(1));
    }

    #[test]
    fn a_holder_beyond_its_share_is_refused_and_a_dropped_hold_gives_its_place_back() {
        let config = ServeConfig { max_streams_per_token: 2, max_requests_per_token: 3, ..ServeConfig::default() };
        let shares = shares(&config, 512);
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let first = shares.take(Some("reader"), Some(peer), true).unwrap();
        let _second = shares.take(Some("reader"), Some(peer), true).unwrap();
        let refused = shares.take(Some("reader"), Some(peer), true).err().unwrap();
        assert_eq!((refused.status, refused.code), (StatusCode::TOO_MANY_REQUESTS, "too_many_streams"));
        assert!(refused.message.contains("max_streams_per_token"), "{}", refused.message);
        // Not a stream: the request share still has room, once.
        let _third = shares.take(Some("reader"), Some(peer), false).unwrap();
        let refused = shares.take(Some("reader"), Some(peer), false).err().unwrap();
        assert_eq!(refused.code, "too_many_requests");
        // Another token from the same address is served; a refusal took nothing.
        let _other = shares.take(Some("writer"), Some(peer), true).unwrap();
        assert_eq!(shares.lock()[&Holder::Peer(peer)].requests, 4);
        drop(first);
        let _again = shares.take(Some("reader"), Some(peer), true).unwrap();
        assert_eq!(shares.lock()[&Holder::Token("reader".into())].streams, 2);
    }

    #[test]
    fn streams_are_the_event_stream_and_mcps_get() {
        assert!(is_stream(&Method::GET, "/api/v2/events"));
        assert!(is_stream(&Method::GET, "/mcp"));
        assert!(!is_stream(&Method::POST, "/mcp"));
        assert!(!is_stream(&Method::GET, "/api/v2/brain"));
        assert!(!is_stream(&Method::POST, "/api/v2/sync/push"));
    }

    /// A token revoked after its request's answer was made, before a byte of it was sent:
    /// the answer is sent whole (it was once closed with nothing said: the client saw an
    /// empty reply), while a body still being made for the same token ends.
    #[tokio::test]
    async fn an_answer_made_before_its_token_was_revoked_is_sent_whole_and_a_stream_ends() {
        use axum::middleware::from_fn;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let secret = "secret-rrrrrrrrrrrr";
        let record = |revoked: bool| brain_store::TokenRecord {
            name: "reader".into(),
            sha256: super::super::auth::secret_digest(secret),
            read: vec!["project/demo".into()],
            write: vec![],
            review: vec![],
            created_at: "2026-11-21T10:00:00Z".parse().unwrap(),
            revoked_at: revoked.then(|| "2026-11-21T10:00:01Z".parse().unwrap()),
        };
        let auth = Arc::new(super::super::auth::Auth::default());
        auth.set_stored(&[record(false)]);
        // The handler revokes the token as it answers: the revocation lands after the answer
        // is made and before its body is sent.
        let answer = {
            let auth = Arc::clone(&auth);
            move || {
                let auth = Arc::clone(&auth);
                async move {
                    auth.set_stored(&[record(true)]);
                    "the answer".to_string()
                }
            }
        };
        // The same answer as a body still being made, as an event stream or an MCP answer
        // over SSE is.
        let streamed = {
            let answer = answer.clone();
            move || {
                let made = answer();
                async move {
                    let text = made.await;
                    Body::from_stream(futures_util::stream::once(async move { Ok::<_, std::io::Error>(text) }))
                }
            }
        };
        let app = {
            let auth = Arc::clone(&auth);
            axum::Router::new()
                .route("/api/v2/items", axum::routing::get(answer))
                .route("/api/v2/events", axum::routing::get(streamed))
                .layer(axum::middleware::from_fn_with_state(shares(&ServeConfig::default(), 512), hold))
                // As `auth::authenticate` does: the grant the token has now.
                .layer(from_fn(move |mut request: Request, next: Next| {
                    request.extensions_mut().insert(auth.find(secret).expect("an active token"));
                    next.run(request)
                }))
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let get = |path: &'static str| async move {
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut raw = Vec::new();
            let _ = stream.read_to_end(&mut raw).await;
            String::from_utf8_lossy(&raw).into_owned()
        };
        let whole = get("/api/v2/items").await;
        assert!(whole.starts_with("HTTP/1.1 200") && whole.ends_with("the answer"), "{whole:?}");
        // A new grant for the token, revoked again by the stream's handler.
        auth.set_stored(&[record(false)]);
        let streamed = get("/api/v2/events").await;
        assert!(!streamed.contains("the answer"), "a revoked token's stream said more: {streamed:?}");
        assert!(!streamed.contains(" 401 "), "the stream was opened before the revocation: {streamed:?}");
    }
}
