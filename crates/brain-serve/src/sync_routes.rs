//! `POST /api/v2/sync/push` and `GET /api/v2/sync/pull`: the server's side of `brain sync`
//! (`brain_remote::sync`). A token pushes only into scopes it may write (the change's scope and,
//! inside the transaction, the stored item's) and pulls only scopes it may read.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use brain_core::Scope;
use serde::Deserialize;

use super::auth::Caller;
use super::error::ApiError;
use super::extract::{Body, Params};
use super::state::AppState;
use brain_api::error::BrainError;
use brain_remote::sync::{self, PushRequest, PushResponse, ScopeSelector};

/// Query parameters every client request may carry (remote mode adds `project` and `now`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushParams {
    #[allow(dead_code)]
    project: Option<String>,
    now: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullParams {
    #[allow(dead_code)]
    project: Option<String>,
    now: Option<String>,
    after: Option<u64>,
    limit: Option<usize>,
    scopes: Option<String>,
}

fn json(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn scope_allowed(scope: &str, allowed: impl Fn(&Scope) -> bool) -> bool {
    Scope::parse(scope).is_ok_and(|scope| allowed(&scope))
}

/// 200 with `{results: [{id, status: accepted|conflict, version}]}`, one per change in
/// order; 400 for a malformed change, 403 (nothing written) when one is outside the
/// token's write grants.
pub async fn push(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Params(params): Params<PushParams>,
    Body(request): Body<PushRequest>,
) -> Result<Response, ApiError> {
    let now = state.clock(params.now.as_deref())?;
    if !state.may_set_clock(&axum::http::Method::POST) {
        refuse_future_dates(&request, now)?;
    }
    let results = state
        .pool
        .run(state.default_project.clone(), now, move |brain| {
            let may_write = |scope: &str| scope_allowed(scope, |scope| brain.may_push_for(&caller, scope));
            sync::accept_push(brain, request, &may_write)
        })
        .await?;
    let body = serde_json::to_vec(&PushResponse { results })
        .map_err(|err| BrainError::internal(format!("cannot serialize the response: {err}")))?;
    Ok(json(StatusCode::OK, body))
}

/// A pushed item's times come from the machine that wrote it; on a server on the wall clock
/// none may be later than a write on the server's clock could date it
/// ([`sync::too_late`]), as no write through the items routes may name its date.
fn refuse_future_dates(request: &PushRequest, now: brain_core::Timestamp) -> Result<(), ApiError> {
    for change in &request.changes {
        let Some(item) = &change.item else { continue };
        if let Some((field, at)) = sync::too_late(item, now) {
            return Err(ApiError::bad_request(format!(
                "pushed change {}: {field} {} is later than the server's clock ({}) lets a write date it; nothing was applied",
                brain_core::keeper::text::clip(&change.id, 40),
                brain_core::time::format_timestamp(at),
                brain_core::time::format_timestamp(now)
            )));
        }
    }
    Ok(())
}

/// 200 with `{changes, next, more}`: the log after `after` in the scopes the token may
/// read and `scopes` asks for (default: global, every project and team).
pub async fn pull(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Params(params): Params<PullParams>,
) -> Result<Response, ApiError> {
    let now = state.clock(params.now.as_deref())?;
    let selector = match params.scopes.as_deref() {
        Some(text) => ScopeSelector::from_param(text)?,
        None => ScopeSelector::parse(&ScopeSelector::default_patterns())?,
    };
    // A scope asked for by name must be readable; wildcards are narrowed to the grants.
    for scope in selector.exact_scopes() {
        caller.require_read(&scope)?;
    }
    let limit = params.limit.unwrap_or(sync::MAX_PULL_CHANGES);
    if !(1..=sync::MAX_PULL_CHANGES).contains(&limit) {
        return Err(ApiError::bad_request(format!("limit {limit} is out of range (1 to {})", sync::MAX_PULL_CHANGES)));
    }
    let after = params.after.unwrap_or(0);
    let page = state
        .pool
        .run(state.default_project.clone(), now, move |brain| {
            let keep = |scope: &str| selector.matches(scope) && scope_allowed(scope, |scope| caller.can_read(scope));
            sync::pull_page(brain, after, limit, &keep)
        })
        .await?;
    let body = serde_json::to_vec(&page)
        .map_err(|err| BrainError::internal(format!("cannot serialize the response: {err}")))?;
    Ok(json(StatusCode::OK, body))
}
