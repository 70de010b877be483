//! `brain serve` (SPEC §7.2): the HTTP API, server-sent events, metrics and MCP over
//! streamable HTTP, on one tokio runtime. Handlers are thin: they check parameters and
//! grants and run one `Brain` call on a pooled SQLite connection (a blocking thread).
//!
//! Safety defaults: loopback unless tokens are configured (the server refuses otherwise),
//! request bodies capped (413), requests cut off after a timeout (408), JSON errors
//! everywhere, and SIGTERM/SIGINT finish in-flight requests before exiting.

pub mod api;
pub mod auth;
pub mod dashboard;
pub mod error;
pub mod events;
pub mod extract;
pub mod metrics;
pub mod openapi;
pub mod state;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Extension, Router, middleware};
use brain_core::Timestamp;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::watch;
use tower_http::timeout::TimeoutLayer;

use crate::app::Context;
use crate::error::{BrainError, BrainResult};
use crate::mcp::BrainMcp;
use state::AppState;

/// Longest wait for in-flight requests after SIGTERM before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// What `brain serve` was asked for on the command line.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// `--listen`; else `[serve] listen`.
    pub listen: Option<String>,
    /// `--now`: a fixed clock for every request (tests).
    pub fixed_now: Option<Timestamp>,
}

/// Runs the server until SIGTERM or SIGINT.
pub fn run(context: Context, options: ServeOptions) -> BrainResult<()> {
    let threads = std::thread::available_parallelism().map(usize::from).unwrap_or(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|err| BrainError::internal(format!("cannot start the async runtime: {err}")))?;
    runtime.block_on(serve(context, options))
}

/// Resolves the listen address (`host:port`, names allowed).
async fn resolve(listen: &str) -> BrainResult<SocketAddr> {
    let invalid = |why: String| {
        BrainError::user_with_hint(
            format!("invalid listen address {listen:?}: {why}"),
            "use HOST:PORT, e.g. 127.0.0.1:7077",
        )
    };
    let mut addresses = tokio::net::lookup_host(listen).await.map_err(|err| invalid(err.to_string()))?;
    addresses.next().ok_or_else(|| invalid("it resolves to no address".into()))
}

async fn serve(context: Context, options: ServeOptions) -> BrainResult<()> {
    let state = Arc::new(AppState::new(context.clone(), options.fixed_now)?);
    let listen = options.listen.clone().unwrap_or_else(|| state.config.listen.clone());
    let address = resolve(&listen).await?;
    if !address.ip().is_loopback() && !state.auth.is_enabled() {
        return Err(BrainError::user_with_hint(
            format!("refusing to listen on {address}: it is not a loopback address and no tokens are configured"),
            "add [[serve.tokens]] with read/write grants to the config, or listen on 127.0.0.1",
        ));
    }
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|err| BrainError::user(format!("cannot listen on {address}: {err}")))?;
    let local = listener.local_addr().map_err(|err| BrainError::internal(format!("listener: {err}")))?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let mcp_config = mcp_config(&state, address);
    let mcp_cancel = mcp_config.cancellation_token.clone();
    let app = router(Arc::clone(&state), shutdown_rx.clone(), mcp_config, &context, options.fixed_now.is_some());
    let watcher = tokio::spawn(events::watch_store(Arc::clone(&state), shutdown_rx.clone()));
    eprintln!(
        "brain serve: listening on http://{local} (project {}, home {}, {})",
        state.default_project,
        context.home.display(),
        if state.auth.is_enabled() { "bearer tokens required" } else { "no auth: loopback only" }
    );
    let mut stopping = shutdown_rx.clone();
    let signal = async move {
        wait_for_signal().await;
        eprintln!("brain serve: shutting down; finishing in-flight requests");
        let _ = shutdown_tx.send(true);
        mcp_cancel.cancel();
    };
    let server = axum::serve(listener, app).with_graceful_shutdown(signal);
    let deadline = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        served = server => served.map_err(|err| BrainError::internal(format!("server: {err}")))?,
        () = deadline => eprintln!("brain serve: in-flight requests still running after {}s; exiting", SHUTDOWN_GRACE.as_secs()),
    }
    watcher.abort();
    eprintln!("brain serve: stopped");
    Ok(())
}

/// SIGTERM or SIGINT (Ctrl-C).
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// MCP over streamable HTTP: the loopback `Host` check stays on unless tokens protect a
/// server listening on another address (clients then use names we cannot know).
fn mcp_config(state: &AppState, address: SocketAddr) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default().with_max_request_body_bytes(state.config.max_body_bytes);
    if !address.ip().is_loopback() && state.auth.is_enabled() { config.disable_allowed_hosts() } else { config }
}

/// MCP tools read and write the server's project: the token needs both grants on it.
async fn require_mcp_grant(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let caller = request.extensions().get::<auth::Caller>().cloned().unwrap_or(auth::Caller::Open);
    let scope = brain_core::Scope::Project(state.default_project.clone());
    match caller.require_read(&scope).and_then(|()| caller.require_write(&scope)) {
        Ok(()) => next.run(request).await,
        Err(err) => err.into_response(),
    }
}

/// The routes and their layers. Outermost first: metrics, JSON errors, auth, body limit;
/// the request timeout applies to the API routes, not to the event stream and MCP.
pub fn router(
    state: Arc<AppState>,
    shutdown: watch::Receiver<bool>,
    mcp_config: StreamableHttpServerConfig,
    context: &Context,
    fixed_now: bool,
) -> Router {
    let timeout = Duration::from_secs(state.config.request_timeout_secs.max(1));
    let api = Router::new()
        .route("/api/v2/brain", get(api::brain))
        .route("/api/v2/session-start", get(api::session_start))
        .route("/api/v2/context-pack", get(api::context_pack))
        .route("/api/v2/search", get(api::search))
        .route("/api/v2/items", get(api::list_items).post(api::create_item))
        .route("/api/v2/items/{id}", get(api::get_item).patch(api::patch_item).delete(api::delete_item))
        .route("/api/v2/items/{id}/approve", post(api::approve_item))
        .route("/api/v2/items/{id}/deprecate", post(api::deprecate_item))
        .route("/api/v2/arcs", get(api::arcs))
        .route("/api/v2/feed/{name}", get(api::feed))
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .route("/openapi.json", get(api::openapi))
        .route("/", get(dashboard::index))
        .route("/assets/app.js", get(dashboard::script))
        .route("/assets/style.css", get(dashboard::style))
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, timeout));
    let prototype = BrainMcp::new(context.clone(), fixed_now);
    let mcp =
        StreamableHttpService::new(move || Ok(prototype.clone()), Arc::new(LocalSessionManager::default()), mcp_config);
    let mcp = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(Arc::clone(&state), require_mcp_grant));
    let streaming = Router::new().route("/api/v2/events", get(events::events)).merge(mcp);
    api.merge(streaming)
        .fallback(|| async { error::ApiError::not_found("no such route; see /openapi.json") })
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(Extension(shutdown))
        .layer(middleware::from_fn_with_state(Arc::clone(&state.auth), auth::authenticate))
        .layer(middleware::map_response(error::json_errors))
        .layer(middleware::from_fn_with_state(Arc::clone(&state.metrics), metrics::track))
        .with_state(state)
}
