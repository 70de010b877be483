//! `POST /api/v2/markers`: an agent appends a marker block to an arc of the server's vault (or
//! its inbox note) over HTTP — the same checks as `brain mark` (bounded, redacted, idempotent
//! by key, atomic, no paths), and the caller's write grant on the scope the block's items get.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::auth::Caller;
use super::error::ApiError;
use super::extract::{Body, Params};
use super::state::AppState;
use brain_vault::{self as vault, Location, MarkRequest};

/// The body: a block to append. Unknown fields are refused (400).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerBody {
    #[serde(rename = "type")]
    kind: String,
    text: String,
    arc: Option<String>,
    severity: Option<String>,
    source: Option<String>,
    target: Option<String>,
    key: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerParams {
    now: Option<String>,
}

/// 201 with `{file, key, written: true, block, indexed}` when the block was appended, 200 with
/// `written: false` when a block with its key was there already; 400 for a bad block, 403
/// without the write grant, 404 for an unknown arc, 409 when the server has no vault.
pub async fn post_marker(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Params(params): Params<MarkerParams>,
    Body(body): Body<MarkerBody>,
) -> Result<Response, ApiError> {
    let now = state.clock(params.now.as_deref())?;
    let request = MarkRequest {
        kind: body.kind,
        text: body.text,
        arc: body.arc,
        severity: body.severity,
        source: body.source,
        target: body.target,
        key: body.key,
    };
    let outcome = state
        .pool
        .run(state.default_project.clone(), now, move |brain| {
            let authorize = |scope: &brain_core::Scope| brain.authorize_mark_for(&caller, scope);
            // The inbox is global: a caller without that grant learns nothing more.
            if request.arc.is_none() {
                authorize(&brain_core::Scope::Global)?;
            }
            if !vault::vault_path(brain, None).is_dir() {
                return Ok(None);
            }
            let location = Location::resolve(brain, None, None)?;
            vault::mark(brain, &location, &request, now, &authorize).map(Some)
        })
        .await?;
    let Some(outcome) = outcome else {
        return Err(ApiError::new(StatusCode::CONFLICT, "no_vault", "this server has no vault to write to")
            .with_hint("initialise it with `brain vault init` (or set [vault] path)"));
    };
    let status = if outcome.written { StatusCode::CREATED } else { StatusCode::OK };
    let mut response = (status, serde_json::to_vec(&outcome).unwrap_or_default()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}
