//! `brain serve` (SPEC §7.2): the HTTP API, server-sent events, metrics and MCP over
//! streamable HTTP, on one tokio runtime. Handlers are thin: they check parameters and
//! grants and run one `Brain` call on a pooled SQLite connection (a blocking thread).
//!
//! Safety defaults: loopback unless tokens are configured (the server refuses otherwise),
//! `Host` and `Origin` checked on every route (`guard`), request heads bounded in size and
//! time and connections in number (`conn`), what one token or address may hold of them
//! bounded and request bodies given a deadline (`holds`), request bodies capped (413),
//! requests cut off after a timeout (408), JSON errors everywhere, and SIGTERM/SIGINT finish
//! in-flight requests before exiting (0), as a start-up error exits 1 with its message.

pub mod api;
pub mod auth;
pub mod conn;
pub mod dashboard;
pub mod error;
pub mod events;
pub mod extract;
pub mod fleet;
pub mod guard;
pub mod holds;
pub mod markers;
pub mod mcp;
pub mod mcp_http;
pub mod metrics;
pub mod openapi;
pub mod signals;
pub mod state;
pub mod sync_routes;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, delete, get, patch, post};
use axum::{Extension, Router, middleware};
use brain_core::Timestamp;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::watch;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::timeout::TimeoutLayer;

use crate::mcp::BrainMcp;
use brain_api::app::Context;
use brain_api::error::{BrainError, BrainResult};
use openapi::{Mount, ROUTES, RouteDoc};
use state::AppState;

/// Longest wait for in-flight requests after SIGTERM before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Longest wait, once serving has ended, for the runtime's tasks and blocking store calls.
const RUNTIME_STOP: Duration = Duration::from_secs(5);

/// What `brain serve` was asked for on the command line.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// `--listen`; else `[serve] listen`.
    pub listen: Option<String>,
    /// `--now`: a fixed clock for every request (tests).
    pub fixed_now: Option<Timestamp>,
}

/// Runs the server until SIGTERM or SIGINT.
///
/// The store connections (the pool's, and the one MCP tools open) are made before the
/// runtime starts and dropped after it has stopped: a PostgreSQL connection is the blocking
/// `postgres` client, which runs a runtime of its own to close, and closing it on a thread of
/// this runtime panics ("Cannot start a runtime from within a runtime") — on SIGTERM, and in
/// place of every start-up error's message. Tasks still running when the runtime stops drop
/// their references on its threads; the last ones are dropped here.
pub fn run(context: Context, options: ServeOptions) -> BrainResult<()> {
    let state = Arc::new(AppState::new(context.clone(), options.fixed_now)?);
    let mcp = BrainMcp::with_transport(context.clone(), options.fixed_now.is_some(), true, state.config.pool_size);
    let threads = std::thread::available_parallelism().map(usize::from).unwrap_or(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|err| BrainError::internal(format!("cannot start the async runtime: {err}")))?;
    let served = runtime.block_on(serve(Arc::clone(&state), mcp.clone(), &context, options));
    runtime.shutdown_timeout(RUNTIME_STOP);
    drop(mcp);
    drop(state);
    served
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

async fn serve(state: Arc<AppState>, mcp: BrainMcp, context: &Context, options: ServeOptions) -> BrainResult<()> {
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
    let guard =
        Arc::new(guard::Guard::new(&listen, local, &state.config.allowed_hosts, &state.config.allowed_origins)?);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let mcp_config = mcp_config(&state);
    let mcp_cancel = mcp_config.cancellation_token.clone();
    let limits = conn::Limits::new(
        state.config.header_timeout_secs,
        state.config.max_connections,
        state.config.pool_size.clamp(1, 64),
    );
    let shares = Arc::new(holds::Shares::new(holds::ShareLimits::new(&state.config, limits.max_connections)));
    let app = router(Arc::clone(&state), guard, shares, shutdown_rx.clone(), mcp_config, mcp);
    let watcher = tokio::spawn(events::watch_store(Arc::clone(&state), shutdown_rx.clone()));
    let ticker = tokio::spawn(fleet::schedule_ticks(Arc::clone(&state), shutdown_rx.clone()));
    eprintln!(
        "brain serve: listening on http://{local} (project {}, home {}, {})",
        state.default_project,
        context.home.display(),
        if state.auth.is_enabled() { "bearer tokens required" } else { "no auth: loopback only" }
    );
    let mut stopping = shutdown_rx.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        eprintln!("brain serve: shutting down; finishing in-flight requests");
        let _ = shutdown_tx.send(true);
        mcp_cancel.cancel();
    });
    let server = conn::serve(listener, app, limits, Arc::clone(&state.metrics), shutdown_rx.clone());
    let deadline = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        () = server => {}
        () = deadline => eprintln!("brain serve: in-flight requests still running after {}s; exiting", SHUTDOWN_GRACE.as_secs()),
    }
    watcher.abort();
    ticker.abort();
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

/// MCP over streamable HTTP. rmcp's own `Host` check (loopback names only) is off: the
/// guard checks `Host` and `Origin` on every route, `/mcp` included, with the names the
/// user configured (`[serve] allowed_hosts`, `allowed_origins`).
fn mcp_config(state: &AppState) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(state.config.max_body_bytes)
        .disable_allowed_hosts()
        .disable_allowed_origins()
}

/// The handler of a route of the table (`openapi::ROUTES`); `None` for `/mcp`, which is
/// the nested rmcp service, and for a table entry without a handler (a unit test makes sure
/// there is none).
fn handler(route: &RouteDoc) -> Option<MethodRouter<Arc<AppState>>> {
    Some(match (route.method, route.path) {
        ("get", "/api/v2/brain") => get(api::brain),
        ("get", "/api/v2/session-start") => get(api::session_start),
        ("get", "/api/v2/context-pack") => get(api::context_pack),
        ("get", "/api/v2/search") => get(api::search),
        ("get", "/api/v2/items") => get(api::list_items),
        ("post", "/api/v2/items") => post(api::create_item),
        ("get", "/api/v2/items/{id}") => get(api::get_item),
        ("patch", "/api/v2/items/{id}") => patch(api::patch_item),
        ("delete", "/api/v2/items/{id}") => delete(api::delete_item),
        ("post", "/api/v2/items/{id}/approve") => post(api::approve_item),
        ("post", "/api/v2/items/{id}/deprecate") => post(api::deprecate_item),
        ("get", "/api/v2/arcs") => get(api::arcs),
        ("get", "/api/v2/use") => get(api::use_rate),
        ("get", "/api/v2/feed/{name}") => get(api::feed),
        ("get", "/api/v2/events") => get(events::events),
        ("get", "/healthz") => get(api::healthz),
        ("get", "/readyz") => get(fleet::readyz),
        ("get", "/api/v2/tick") => get(fleet::get_tick),
        ("get", "/api/v2/signals") => get(fleet::signals),
        ("post", "/api/v2/tick") => post(fleet::post_tick),
        ("post", "/api/v2/markers") => post(markers::post_marker),
        ("post", "/api/v2/sync/push") => post(sync_routes::push),
        ("get", "/api/v2/sync/pull") => get(sync_routes::pull),
        ("get", "/metrics") => get(api::metrics),
        ("get", "/openapi.json") => get(api::openapi),
        ("get", "/") => get(dashboard::index),
        ("get", "/assets/app.js") => get(dashboard::script),
        ("get", "/assets/style.css") => get(dashboard::style),
        ("get", "/favicon.svg") => get(dashboard::favicon),
        _ => return None,
    })
}

/// The routes and their layers. Every route comes from the table (`openapi::ROUTES`), so
/// nothing is served that is not described, and the security matrix test covers it.
/// Layers, outermost first: metrics, panics as 500, JSON errors, the guard (Host, Origin,
/// JSON for state changes), auth, the token's and the address's shares (`holds`), body
/// limit; the request timeout applies to `Timed` routes, not to the event stream and MCP.
pub fn router(
    state: Arc<AppState>,
    guard: Arc<guard::Guard>,
    shares: Arc<holds::Shares>,
    shutdown: watch::Receiver<bool>,
    mcp_config: StreamableHttpServerConfig,
    mcp: BrainMcp,
) -> Router {
    let timeout = Duration::from_secs(state.config.request_timeout_secs.max(1));
    let mut timed = Router::new();
    let mut streaming = Router::new();
    for route in ROUTES {
        let Some(handler) = handler(route) else { continue };
        match route.mount {
            Mount::Timed => timed = timed.route(route.path, handler),
            Mount::Stream => streaming = streaming.route(route.path, handler),
            Mount::Mcp => {}
        }
    }
    let timed = timed.layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, timeout));
    let manager = Arc::new(LocalSessionManager::default());
    let sessions = Arc::new(mcp_http::Sessions::new(Arc::clone(&manager), state.config.max_mcp_sessions));
    let mcp = StreamableHttpService::new(move || Ok(mcp.clone()), manager, mcp_config);
    let mcp = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(sessions, mcp_http::bound_sessions))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), mcp_http::check_body))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), mcp_http::require_grant));
    let routes = timed
        .merge(streaming)
        .merge(mcp)
        .fallback(|| async { error::ApiError::not_found("no such route; see /openapi.json") })
        .layer(middleware::from_fn_with_state(Arc::clone(&state), refuse_clock_on_writes))
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(Extension(shutdown))
        .layer(middleware::from_fn_with_state(shares, holds::hold))
        .layer(middleware::from_fn_with_state(Arc::clone(&state.auth), auth::authenticate));
    // CORS only for the origins the user allowed (none by default): inside the guard, which
    // refuses every other origin, and outside auth, since preflights carry no token.
    let routes = if guard.has_allowed_origins() { routes.layer(cors(Arc::clone(&guard))) } else { routes };
    routes
        .layer(middleware::from_fn_with_state(guard, guard::check))
        .layer(middleware::map_response(error::json_errors))
        .layer(CatchPanicLayer::custom(error::panic_response))
        .layer(middleware::map_response(error::no_sniffing))
        .layer(middleware::from_fn_with_state(Arc::clone(&state.metrics), metrics::track))
        .with_state(state)
}

/// A write naming its clock (`?now=`) is refused unless the server runs on a fixed clock
/// (`serve --now`): see [`AppState::may_set_clock`]. One check for every route.
async fn refuse_clock_on_writes(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    // Read as the routes' `Query` reads it: a key encoded `%6Eow` is `now` too.
    let names_clock = request
        .uri()
        .query()
        .is_some_and(|query| form_urlencoded::parse(query.as_bytes()).any(|(key, _)| key == "now"));
    if names_clock && !state.may_set_clock(request.method()) {
        return error::ApiError::bad_request(
            "now is honoured on reads only (a write is dated by the server's clock; `serve --now` fixes it for tests)",
        )
        .into_response();
    }
    next.run(request).await
}

/// CORS answers for `[serve] allowed_origins`: a browser app there (the MCP Inspector, a team
/// page) may call the API and `/mcp` with its token and read the answers.
fn cors(guard: Arc<guard::Guard>) -> CorsLayer {
    use axum::http::{HeaderName, Method, header};
    let origins =
        AllowOrigin::predicate(move |origin, _| origin.to_str().is_ok_and(|origin| guard.is_allowed_origin(origin)));
    CorsLayer::new()
        .allow_origin(origins)
        .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([header::ETAG, header::LOCATION, HeaderName::from_static("mcp-session-id")])
        .max_age(Duration::from_secs(600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_of_the_table_has_a_handler_or_is_mcp() {
        for route in ROUTES {
            let mounted = route.mount == Mount::Mcp || handler(route).is_some();
            assert!(mounted, "{} {} is in the table but has no handler", route.method, route.path);
            assert_eq!(route.mount == Mount::Mcp, route.path == "/mcp", "{}", route.path);
        }
    }
}
