//! What `/mcp` requests go through before rmcp's streamable-HTTP service (the guard has
//! already checked `Host`, `Origin` — as the MCP transport spec asks — and that a POST is
//! JSON): the token's grants, and a body that is a JSON-RPC message. rmcp answers a body
//! it cannot parse with 415 and plain text; the MCP spec and the official SDKs answer 400
//! with a JSON-RPC error without id (-32700 parse error, -32600 invalid request), which is
//! what clients and the Inspector expect, so bodies are checked here first. Sessions are
//! bounded here too (rmcp keeps any number of them), and each belongs to the caller that
//! opened it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::json;

use super::auth::Caller;
use super::error::ApiError;
use super::state::AppState;

/// MCP tools work on the server's project: the token needs the read grant on it to talk to
/// the server at all. What each tool then reads or writes is checked against the token's
/// grants inside the tool (`brain_api::policy`), item by item and scope by scope.
pub async fn require_grant(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    // The auth layer names every caller (`Caller::Open` on a server without tokens); a
    // request it did not name is refused, never taken as open.
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        let unknown =
            brain_api::error::BrainError::Forbidden { message: "the caller of this MCP request is unknown".into() };
        return ApiError::from(unknown).into_response();
    };
    let scope = brain_core::Scope::Project(state.default_project.clone());
    match caller.require_read(&scope) {
        Ok(()) => next.run(request).await,
        Err(err) => ApiError::from(err).into_response(),
    }
}

/// A JSON-RPC error without id, as the MCP transport answers a message it cannot take.
fn jsonrpc_error(status: StatusCode, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}).to_string();
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Reads a POST body (at most `[serve] max_body_bytes`: 413 beyond) and lets it through
/// only if it is a JSON-RPC message: malformed or too deeply nested JSON (serde_json stops
/// at 128 levels) is 400 / -32700, JSON that is no JSON-RPC message 400 / -32600.
pub async fn check_body(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, state.config.max_body_bytes).await else {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            "the request body is larger than the limit ([serve] max_body_bytes)",
        )
        .into_response();
    };
    if let Err(err) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes) {
        return match err.classify() {
            serde_json::error::Category::Data => jsonrpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                format!("invalid request: not a JSON-RPC message: {err}"),
            ),
            _ => jsonrpc_error(StatusCode::BAD_REQUEST, -32700, format!("parse error: {err}")),
        };
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The header naming an MCP session (rmcp's `HEADER_SESSION_ID`).
const SESSION_HEADER: &str = "mcp-session-id";

/// The MCP sessions open over HTTP and who opened each: at most `max` at once, a quarter of
/// them per caller, and a session answers only the caller that opened it.
pub struct Sessions {
    manager: Arc<LocalSessionManager>,
    /// Session id → the name of the caller that opened it (`anonymous` on an open server).
    owners: Mutex<HashMap<String, String>>,
    max: usize,
    per_caller: usize,
}

impl Sessions {
    pub fn new(manager: Arc<LocalSessionManager>, max: usize) -> Sessions {
        let max = max.max(1);
        Sessions { manager, owners: Mutex::new(HashMap::new()), max, per_caller: (max / 4).max(1) }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.owners.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Opening a session (a POST without a session id: `initialize`) is refused with 503 when
/// the server holds `[serve] max_mcp_sessions`, and 429 when the caller holds a quarter of
/// them; a request naming a session another caller opened is answered as for an unknown
/// session (404), so a session id learned elsewhere is worth nothing.
pub async fn bound_sessions(State(sessions): State<Arc<Sessions>>, request: Request, next: Next) -> Response {
    let known = request.extensions().get::<Caller>();
    let is_token = matches!(known, Some(Caller::Token(_)));
    let caller = known.map_or("anonymous", Caller::name).to_string();
    if let Some(id) = request.headers().get(SESSION_HEADER).and_then(|id| id.to_str().ok()) {
        let owner = sessions.owners().get(id).cloned();
        if owner.is_some_and(|owner| owner != caller) {
            return ApiError::new(
                StatusCode::NOT_FOUND,
                "no_such_session",
                "no such MCP session; initialize a new one",
            )
            .into_response();
        }
        return next.run(request).await;
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    {
        let live = sessions.manager.sessions.read().await;
        let mut owners = sessions.owners();
        owners.retain(|id, _| live.contains_key(id.as_str()));
        let open = live.len();
        let mine = owners.values().filter(|owner| **owner == caller).count();
        let refused = if open >= sessions.max {
            Some((
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the server holds {open} MCP sessions, its bound ([serve] max_mcp_sessions)"),
            ))
        } else if mine >= sessions.per_caller {
            let holder = if is_token {
                format!("token {caller:?} holds")
            } else {
                "the clients of this server without tokens hold".to_string()
            };
            Some((
                StatusCode::TOO_MANY_REQUESTS,
                format!("{holder} {mine} MCP sessions, a share (a quarter of [serve] max_mcp_sessions)"),
            ))
        } else {
            None
        };
        if let Some((status, message)) = refused {
            let message =
                format!("{message}; close one (DELETE /mcp with its Mcp-Session-Id) or let idle ones end (5 minutes)");
            let mut response = ApiError::new(status, "too_many_sessions", message).into_response();
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(60));
            return response;
        }
    }
    let response = next.run(request).await;
    if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|id| id.to_str().ok()) {
        sessions.owners().insert(id.to_string(), caller);
    }
    response
}
