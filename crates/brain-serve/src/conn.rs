//! Connections: brain's own accept loop over hyper's HTTP/1.1 server (axum's `serve` offers
//! no header deadline and no connection bound), so that a client cannot hold the server's
//! sockets or file descriptors by being slow or idle:
//!
//! - a connection must deliver a complete request head within `[serve] header_timeout_secs`
//!   of opening or of its previous response (hyper's header-read timer starts whenever the
//!   connection waits for a head), else it is closed: slowloris headers and idle keep-alive
//!   alike;
//! - at most `[serve] max_connections` are open, fewer when the open-file limit is low; a
//!   new connection beyond the bound closes the oldest *idle* one (no request in progress:
//!   a half-sent head, or nothing yet), so a normal client is served while hundreds of
//!   partial-header sockets are held; when every open connection is busy, the new one gets
//!   a 503 and is closed;
//! - every request carries its client's address (`ConnectInfo`), by which `holds` bounds
//!   what one address may hold of these connections;
//! - request heads are bounded (`MAX_HEAD_BYTES`, hyper's 100 headers), and the bodiless
//!   answers hyper writes by itself for malformed requests (400, 414, 431) are rewritten
//!   into the JSON errors every other answer has (`JsonErrorsIo`);
//! - a connection closed after an answer given before its request's body was read (413,
//!   401, 403 to an upload) lingers: it sends its end, then reads and drops what the client
//!   still sends, until the client closes or `LINGER_TIME` / `LINGER_BYTES` run out. Closing
//!   a socket with unread bytes resets it, and a client still writing its body would get
//!   "connection reset" instead of the answer (RFC 9112 §9.6).
//!
//! On shutdown the loop stops accepting, asks every connection to finish its request and
//! close, and returns when all have.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

use super::metrics::Metrics;

/// Largest request head (request line and headers, bytes); larger ones get 431.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How long, and how many bytes, a closing connection whose request body was left unread
/// goes on reading what its client still sends.
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 16 << 20;

/// File descriptors kept free for everything but client sockets: the store's connections
/// (database, WAL and shared memory for each of the pool, the probe and MCP sessions), vault
/// and feed files, logs.
const RESERVED_FDS_BASE: u64 = 64;
const RESERVED_FDS_PER_POOLED: u64 = 3;

/// Connection settings.
#[derive(Clone, Debug)]
pub struct Limits {
    pub header_timeout: Duration,
    pub max_connections: usize,
}

impl Limits {
    /// `[serve] max_connections`, lowered to what the open-file limit leaves after the
    /// reserve (at least 16).
    pub fn new(header_timeout_secs: u64, max_connections: usize, pool_size: usize) -> Limits {
        let reserve = RESERVED_FDS_BASE + RESERVED_FDS_PER_POOLED * pool_size as u64;
        let by_files = open_file_limit().map(|limit| limit.saturating_sub(reserve).max(16));
        let max_connections = match by_files {
            Some(cap) => max_connections.min(usize::try_from(cap).unwrap_or(usize::MAX)),
            None => max_connections,
        };
        Limits {
            header_timeout: Duration::from_secs(header_timeout_secs.max(1)),
            max_connections: max_connections.max(1),
        }
    }
}

#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// One open connection as the registry sees it.
struct Slot {
    /// Requests being served on it (a request counts until its response body is written).
    in_flight: Arc<AtomicUsize>,
    /// Told to close when the connection is evicted.
    evict: Arc<Notify>,
}

/// Whether a new connection may open.
#[derive(Debug, PartialEq)]
enum Room {
    Free,
    /// An idle connection was closed for it.
    Evicted,
    Full,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Registry {
    open: Mutex<BTreeMap<u64, Slot>>,
    next_id: AtomicU64,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Slot>> {
        self.open.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Room for one more connection: there is some, or the oldest idle connection is told
    /// to close (and no longer counted), or every open connection is busy.
    fn make_room(&self, max: usize) -> Room {
        if self.lock().len() < max {
            return Room::Free;
        }
        if self.evict_oldest_idle() { Room::Evicted } else { Room::Full }
    }

    /// Tells the oldest connection without a request in progress to close.
    fn evict_oldest_idle(&self) -> bool {
        let mut open = self.lock();
        let idle = open.iter().find(|(_, slot)| slot.in_flight.load(Ordering::Acquire) == 0).map(|(id, _)| *id);
        match idle.and_then(|id| open.remove(&id)) {
            Some(slot) => {
                slot.evict.notify_one();
                true
            }
            None => false,
        }
    }

    fn register(&self) -> (u64, Arc<AtomicUsize>, Arc<Notify>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let evict = Arc::new(Notify::new());
        self.lock().insert(id, Slot { in_flight: Arc::clone(&in_flight), evict: Arc::clone(&evict) });
        (id, in_flight, evict)
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }
}

/// Accepts connections until `shutdown` turns true, then waits for the open ones to finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    metrics: Arc<Metrics>,
    mut shutdown: watch::Receiver<bool>,
) {
    let registry = Arc::new(Registry::default());
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.wait_for(|stop| *stop) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of file descriptors: free an idle connection's and try again shortly.
                if is_out_of_files(&err) && registry.evict_oldest_idle() {
                    metrics.connection_closed("evicted");
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        match registry.make_room(limits.max_connections) {
            Room::Free => {}
            Room::Evicted => metrics.connection_closed("evicted"),
            Room::Full => {
                metrics.connection_closed("refused");
                refuse(&stream);
                continue;
            }
        }
        let _ = stream.set_nodelay(true);
        let (id, in_flight, evict) = registry.register();
        let task = Connection {
            peer,
            router: router.clone(),
            limits: limits.clone(),
            metrics: Arc::clone(&metrics),
            in_flight,
            evict,
            shutdown: shutdown.clone(),
        };
        let registry = Arc::clone(&registry);
        connections.spawn(async move {
            task.run(stream).await;
            registry.remove(id);
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

fn is_out_of_files(err: &io::Error) -> bool {
    // EMFILE (24) and ENFILE (23) on Linux and the BSDs.
    matches!(err.raw_os_error(), Some(23 | 24))
}

/// Best effort: a 503 in the socket's empty send buffer, then close.
fn refuse(stream: &TcpStream) {
    let _ = stream.try_write(&error_response(
        503,
        "Service Unavailable",
        "busy",
        "every connection the server allows is busy; try again shortly",
    ));
}

/// A complete HTTP/1.1 error response with a JSON body, closing the connection.
fn error_response(status: u16, reason: &str, code: &str, message: &str) -> Vec<u8> {
    let body = json!({"error": {"code": code, "message": message}}).to_string();
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// What one connection's task needs.
struct Connection {
    /// The client's address, as every request on the connection carries it.
    peer: SocketAddr,
    router: Router,
    limits: Limits,
    metrics: Arc<Metrics>,
    in_flight: Arc<AtomicUsize>,
    evict: Arc<Notify>,
    shutdown: watch::Receiver<bool>,
}

impl Connection {
    async fn run(mut self, stream: TcpStream) {
        self.metrics.connections.inc();
        let in_flight = Arc::clone(&self.in_flight);
        let unread_body = Arc::new(AtomicBool::new(false));
        let tower = TowerToHyperService::new(self.router.clone());
        let peer = self.peer;
        let unread = Arc::clone(&unread_body);
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let busy = Busy::enter(&in_flight);
            let mut request = request.map(|body| RequestBody::watch(body, &unread));
            request.extensions_mut().insert(ConnectInfo(peer));
            let response = hyper::service::Service::call(&tower, request);
            async move {
                let response = response.await?;
                Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, _busy: busy })))
            }
        });
        let io = TokioIo::new(JsonErrorsIo {
            inner: stream,
            in_flight: Arc::clone(&self.in_flight),
            pending: None,
            unread_body,
            linger: None,
        });
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout)
            .max_header_size(MAX_HEAD_BYTES)
            .keep_alive(true);
        let connection = builder.serve_connection(io, service);
        tokio::pin!(connection);
        let mut stopping = false;
        loop {
            tokio::select! {
                served = connection.as_mut() => {
                    if served.as_ref().is_err_and(hyper::Error::is_timeout) {
                        self.metrics.connection_closed("header_timeout");
                    }
                    break;
                }
                () = self.evict.notified() => {
                    if self.in_flight.load(Ordering::Acquire) == 0 {
                        break;
                    }
                    // A request arrived meanwhile: let it finish, then close.
                    connection.as_mut().graceful_shutdown();
                }
                _ = self.shutdown.wait_for(|stop| *stop), if !stopping => {
                    stopping = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
        self.metrics.connections.dec();
    }
}

/// A request in progress on a connection, until its response body is dropped (written).
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn enter(in_flight: &Arc<AtomicUsize>) -> Busy {
        in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(in_flight))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its connection busy until hyper drops it.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request's body, telling its connection whether it is still unread: set when a request
/// with a body arrives, cleared when the body has been read to its end.
struct RequestBody {
    body: Incoming,
    unread: Arc<AtomicBool>,
}

impl RequestBody {
    fn watch(body: Incoming, unread: &Arc<AtomicBool>) -> Body {
        let ended = http_body::Body::is_end_stream(&body);
        unread.store(!ended, Ordering::Release);
        if ended { Body::new(body) } else { Body::new(RequestBody { body, unread: Arc::clone(unread) }) }
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(frame, Poll::Ready(None)) || this.body.is_end_stream() {
            this.unread.store(false, Ordering::Release);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A closing connection's lingering read: when it ends, and how much it has dropped.
struct Linger {
    deadline: Pin<Box<tokio::time::Sleep>>,
    drained: usize,
}

/// The socket, with hyper's automatic error answers made JSON. For a request it cannot parse
/// (bad request line or header: 400; URI over 64 KiB: 414; head over `MAX_HEAD_BYTES` or
/// more than 100 headers: 431) hyper writes a status line and `content-length: 0` without
/// calling the service, then closes. Such a write — no request in flight, one bodiless head
/// with one of those statuses and no content type — is replaced by the same status with a
/// `{error: {code, message}}` body. Every other byte passes through untouched, vectored
/// writes included. Its shutdown lingers while a request body is left unread (module docs).
struct JsonErrorsIo {
    inner: TcpStream,
    in_flight: Arc<AtomicUsize>,
    /// The replacement being written, and how much of it is out.
    pending: Option<(Vec<u8>, usize)>,
    /// Whether the last request's body is still unread (`RequestBody`).
    unread_body: Arc<AtomicBool>,
    /// Set once the connection's end is sent and its client's remaining bytes are being read.
    linger: Option<Linger>,
}

impl JsonErrorsIo {
    /// Writes what is left of the replacement; ready when all of it is out.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, written)) = &mut self.pending {
            if *written == bytes.len() {
                self.pending = None;
                break;
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(count)) => *written += count,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// The JSON answer for one of hyper's automatic error heads, if `buf` is one.
fn automatic_error(buf: &[u8]) -> Option<Vec<u8>> {
    // The cheap test first: every response but an error passes here.
    let status_class = buf.get(..10)?;
    if !(status_class == b"HTTP/1.1 4" || status_class == b"HTTP/1.0 4") {
        return None;
    }
    let head = buf.strip_suffix(b"\r\n\r\n")?;
    if head.len() > 512 || memchr::memmem::find(head, b"\r\n\r\n").is_some() {
        return None;
    }
    let text = std::str::from_utf8(head).ok()?.to_ascii_lowercase();
    let status = text.strip_prefix("http/1.1 ").or_else(|| text.strip_prefix("http/1.0 "))?;
    if text.contains("\r\ncontent-type:") || !text.contains("\r\ncontent-length: 0") {
        return None;
    }
    let (code, reason, error, message) = match status.get(..4)? {
        "400 " => {
            (400, "Bad Request", "malformed_request", "the request is not valid HTTP/1.1 (request line or headers)")
        }
        "414 " => (414, "URI Too Long", "uri_too_long", "the request URI is longer than the server accepts"),
        "431 " => (
            431,
            "Request Header Fields Too Large",
            "headers_too_large",
            "the request head is larger than 64 KiB or has more than 100 headers",
        ),
        _ => return None,
    };
    Some(error_response(code, reason, error, message))
}

impl AsyncRead for JsonErrorsIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for JsonErrorsIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.pending.is_none()
            && this.in_flight.load(Ordering::Acquire) == 0
            && let Some(replacement) = automatic_error(buf)
        {
            this.pending = Some((replacement, 0));
            // Hyper's bytes count as written; the replacement goes out in their place.
            let _ = this.poll_pending(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        if this.poll_pending(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    /// Hyper writes heads and bodies as slices of one vectored write when the socket takes
    /// them (as a TCP stream does): an automatic error is then a write of its head alone.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut slices = bufs.iter().filter(|slice| !slice.is_empty());
        if let (Some(only), None) = (slices.next(), slices.next())
            && this.pending.is_none()
            && this.in_flight.load(Ordering::Acquire) == 0
            && let Some(replacement) = automatic_error(only)
        {
            this.pending = Some((replacement, 0));
            let _ = this.poll_pending(cx)?;
            return Poll::Ready(Ok(only.len()));
        }
        if this.poll_pending(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.poll_pending(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    /// Sends the connection's end; then, if a request body was left unread, reads and drops
    /// what the client still sends until it closes, `LINGER_TIME` passes or `LINGER_BYTES`
    /// have come, so that closing does not reset the socket under a client still writing.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.linger.is_none() {
            if this.poll_pending(cx)?.is_pending() {
                return Poll::Pending;
            }
            match Pin::new(&mut this.inner).poll_shutdown(cx) {
                Poll::Ready(Ok(())) if this.unread_body.load(Ordering::Acquire) => {
                    this.linger = Some(Linger { deadline: Box::pin(tokio::time::sleep(LINGER_TIME)), drained: 0 });
                }
                other => return other,
            }
        }
        let Some(linger) = this.linger.as_mut() else { return Poll::Ready(Ok(())) };
        let mut scratch = [0u8; 16 * 1024];
        loop {
            if linger.drained >= LINGER_BYTES || linger.deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => linger.drained += buf.filled().len(),
                // The client's end, or its reset: nothing more to wait for.
                Poll::Ready(_) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bodiless_error_heads_become_json_and_nothing_else_does() {
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Sat, 21 Nov 2026 10:00:00 GMT\r\n\r\n";
        let json = String::from_utf8(automatic_error(head).unwrap()).unwrap();
        assert!(json.starts_with("HTTP/1.1 431 "), "{json}");
        let body: serde_json::Value = serde_json::from_str(json.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["error"]["code"], "headers_too_large");
        assert!(json.contains(&format!("content-length: {}", body.to_string().len())));
        let bad = automatic_error(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").unwrap();
        assert!(String::from_utf8(bad).unwrap().contains("malformed_request"));
        // Our own errors (JSON already), other statuses, bodies and partial heads pass.
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(automatic_error(ours).is_none());
        assert!(automatic_error(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(automatic_error(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}").is_none());
        assert!(automatic_error(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n").is_none());
        assert!(
            automatic_error(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\nHTTP/1.1 400 x\r\ncontent-length: 0\r\n\r\n")
                .is_none()
        );
    }

    #[test]
    fn the_oldest_idle_connection_makes_room_and_busy_ones_are_kept() {
        let registry = Registry::default();
        let (first, first_busy, first_evict) = registry.register();
        let (_, _, second_evict) = registry.register();
        first_busy.store(1, Ordering::Release);
        assert_eq!(registry.make_room(3), Room::Free, "below the bound");
        assert_eq!(registry.make_room(2), Room::Evicted, "the idle second connection makes room");
        assert_eq!(registry.lock().keys().copied().collect::<Vec<_>>(), vec![first]);
        // The evicted one has been told; the busy one has not.
        let told = futures_util::FutureExt::now_or_never(second_evict.notified());
        assert!(told.is_some());
        assert!(futures_util::FutureExt::now_or_never(first_evict.notified()).is_none());
        assert_eq!(registry.make_room(1), Room::Full, "every open connection is busy");
        first_busy.store(0, Ordering::Release);
        assert_eq!(registry.make_room(1), Room::Evicted);
    }

    #[test]
    fn the_connection_bound_leaves_room_for_the_store_under_a_low_file_limit() {
        let limits = Limits::new(10, 1_000_000, 4);
        if let Some(files) = open_file_limit() {
            assert!(limits.max_connections as u64 <= files.saturating_sub(76).max(16), "{limits:?} with {files} files");
        }
        assert_eq!(Limits::new(0, 5, 4).header_timeout, Duration::from_secs(1));
        assert_eq!(Limits::new(10, 5, 4).max_connections, 5);
    }
}
