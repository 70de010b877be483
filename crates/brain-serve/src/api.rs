//! The `/api/v2` handlers (SPEC §7.2). Each one checks its parameters and the caller's
//! grants, runs one `Brain` call on a pooled connection and renders the same JSON as the
//! CLI's `--json` for the same data.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use brain_core::{Item, ItemDraft, Kind, Scope, Status};
use brain_store::ItemFilter;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::auth::Caller;
use super::error::ApiError;
use super::extract::{Body, Params, if_match, none_match, version_etag};
use super::state::{AppState, CachedDocument, DocumentKey};
use brain_api::app::{BudgetOverrides, SessionRequest};
use brain_api::error::BrainError;
use brain_api::views::SearchResult;

/// Largest token budget a request may ask for.
pub const MAX_TOKEN_BUDGET: usize = 100_000;
/// Most results of one page (search, items, arcs).
pub const MAX_PAGE: usize = 100;
/// Most items one session start may recall.
pub const MAX_TOP: usize = 50;

type Shared = State<Arc<AppState>>;

fn check_range(name: &str, value: usize, low: usize, high: usize) -> Result<usize, ApiError> {
    if !(low..=high).contains(&value) {
        return Err(ApiError::bad_request(format!("{name} {value} is out of range ({low} to {high})")));
    }
    Ok(value)
}

/// The `kind` filter of a list or search: one kind, or none (every kind).
fn kind_filter(kind: Option<&str>) -> Result<Vec<Kind>, ApiError> {
    kind.map(|text| text.parse::<Kind>().map_err(ApiError::bad_request)).into_iter().collect()
}

/// The `status` filter of a list or search: one status, or none.
fn status_filter(status: Option<&str>) -> Result<Vec<Status>, ApiError> {
    status.map(|text| text.parse::<Status>().map_err(ApiError::bad_request)).into_iter().collect()
}

/// A page cursor: the decimal offset of the next page, at most `max` (a search ranks
/// offset + limit candidates, so a cursor of 2^64 − 1 made one search cost a second and a
/// few of them stalled the pool; a list's next cursor wrapped to 0 beyond 2^63).
fn parse_cursor(cursor: Option<&str>, max: usize) -> Result<usize, ApiError> {
    match cursor {
        None | Some("") => Ok(0),
        Some(text) => match text.parse::<usize>() {
            Ok(offset) if offset <= max => Ok(offset),
            Ok(_) => Err(ApiError::bad_request(format!("invalid cursor {text:?}: at most {max}"))),
            Err(_) => Err(ApiError::bad_request(format!("invalid cursor {text:?}"))),
        },
    }
}

/// Furthest a list page may start (items and arcs; a store holds far fewer).
const MAX_LIST_OFFSET: usize = 100_000_000;

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn to_json(value: &impl Serialize) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(value)
        .map_err(|err| BrainError::internal(format!("cannot serialize the response: {err}")).into())
}

/// An item with its version as a strong ETag.
fn item_response(status: StatusCode, item: &Item) -> Result<Response, ApiError> {
    let mut response = json_response(status, to_json(item)?);
    if let Ok(etag) = HeaderValue::from_str(&version_etag(item.version)) {
        response.headers_mut().insert(header::ETAG, etag);
    }
    Ok(response)
}

/// The project of a read request, after the grant and existence checks.
async fn readable_project(state: &AppState, caller: &Caller, requested: Option<&str>) -> Result<String, ApiError> {
    let project = state.project(requested)?;
    caller.require_read(&Scope::Project(project.clone()))?;
    state.require_known_project(&project).await?;
    Ok(project)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BrainParams {
    project: Option<String>,
    token_budget: Option<usize>,
    layer0: Option<usize>,
    layer1: Option<usize>,
    layer2: Option<usize>,
    now: Option<String>,
}

/// `GET /api/v2/brain`: the layered brain document (SPEC §4.1) as `brain brain --json`
/// prints it. `ETag` is the quoted brainHash; a matching `If-None-Match` is answered 304
/// from the cache, which is keyed by the store's write generation, so a write by any
/// process invalidates it.
pub async fn brain(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    Params(params): Params<BrainParams>,
) -> Result<Response, ApiError> {
    let project = readable_project(&state, &caller, params.project.as_deref()).await?;
    let now = state.clock(params.now.as_deref())?;
    let budget =
        |name: &str, value: Option<usize>| value.map(|value| check_range(name, value, 1, MAX_TOKEN_BUDGET)).transpose();
    let overrides = BudgetOverrides {
        token_budget: budget("tokenBudget", params.token_budget)?,
        layer0: budget("layer0", params.layer0)?,
        layer1: budget("layer1", params.layer1)?,
        layer2: budget("layer2", params.layer2)?,
    };
    let key = DocumentKey {
        project: project.clone(),
        now: now.as_second(),
        budgets: [overrides.token_budget, overrides.layer0, overrides.layer1, overrides.layer2],
        generation: state.generation().await?,
    };
    // A document whose clock or budgets the caller chose is assembled for it alone: neither
    // cached (a run of chosen clocks would push the shared documents out) nor behind the
    // one assembly lock (where each would make every other client wait its turn).
    let chosen = params.now.is_some() || key.budgets.iter().any(Option::is_some);
    let document = match state.cached_document(&key) {
        Some(document) => {
            state.metrics.cache_hit();
            document
        }
        None if chosen => assemble_document(&state, project, now, overrides).await?,
        None => {
            // One assembly at a time; whoever waited may find the document ready.
            let _assembling = state.assembly.lock().await;
            match state.cached_document(&key) {
                Some(document) => {
                    state.metrics.cache_hit();
                    document
                }
                None => {
                    let cached = assemble_document(&state, project, now, overrides).await?;
                    state.cache_document(key, cached.clone());
                    cached
                }
            }
        }
    };
    let etag = format!("\"{}\"", document.brain_hash);
    let etag_value = HeaderValue::from_str(&etag).map_err(|err| BrainError::internal(format!("etag: {err}")))?;
    let mut response = if none_match(&headers, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = (StatusCode::OK, document.body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    };
    response.headers_mut().insert(header::ETAG, etag_value);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// A brain document assembled on the pool (a cache miss), as the cache keeps it.
async fn assemble_document(
    state: &AppState,
    project: String,
    now: brain_core::Timestamp,
    overrides: BudgetOverrides,
) -> Result<CachedDocument, ApiError> {
    state.metrics.cache_miss();
    let document =
        state.pool.run(project, now, move |brain| brain.brain_document(&brain.brain_options(&overrides))).await?;
    Ok(CachedDocument { body: Bytes::from(to_json(&document)?), brain_hash: document.brain_hash.clone() })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionParams {
    project: Option<String>,
    topics: Option<String>,
    task: Option<String>,
    top: Option<usize>,
    max_chars: Option<usize>,
    token_budget: Option<usize>,
    now: Option<String>,
}

/// The session-start JSON of SPEC §4.2 plus `text`, the rendered form hooks inject.
fn session_response(payload: &brain_core::assemble::session::SessionStart) -> Result<Response, ApiError> {
    let mut value = serde_json::to_value(payload).map_err(|err| BrainError::internal(format!("serialize: {err}")))?;
    value["text"] = json!(payload.text);
    Ok(json_response(StatusCode::OK, to_json(&value)?))
}

/// `GET /api/v2/session-start`: the working-memory payload (SPEC §4.2), as
/// `brain session-start --format json` prints it, plus `text` (within `maxChars` if given).
pub async fn session_start(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<SessionParams>,
) -> Result<Response, ApiError> {
    let project = readable_project(&state, &caller, params.project.as_deref()).await?;
    let now = state.clock(params.now.as_deref())?;
    let request = SessionRequest {
        topics: params.topics,
        task: params.task,
        top: check_range("top", params.top.unwrap_or(5), 1, MAX_TOP)?,
        max_chars: params.max_chars.map(|chars| check_range("maxChars", chars, 100, 1_000_000)).transpose()?,
        max_bytes: None,
        token_budget: params.token_budget.map(|b| check_range("tokenBudget", b, 1, MAX_TOKEN_BUDGET)).transpose()?,
    };
    let payload = state.pool.run(project, now, move |brain| brain.session_start_for(&caller, &request)).await?;
    session_response(&payload)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextPackParams {
    project: Option<String>,
    task: Option<String>,
    token_budget: Option<usize>,
    now: Option<String>,
}

/// `GET /api/v2/context-pack`: a task-focused pack within `tokenBudget` (default 4000): the
/// session-start plan with every section scaled to the budget and 10 recalled items.
pub async fn context_pack(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<ContextPackParams>,
) -> Result<Response, ApiError> {
    let project = readable_project(&state, &caller, params.project.as_deref()).await?;
    let now = state.clock(params.now.as_deref())?;
    let task = params.task.filter(|task| !task.trim().is_empty()).ok_or_else(|| {
        ApiError::bad_request("task is required: the task at hand, in words")
            .with_hint("GET /api/v2/context-pack?task=…")
    })?;
    let request = SessionRequest {
        topics: None,
        task: Some(task),
        top: 10,
        max_chars: None,
        max_bytes: None,
        token_budget: Some(check_range("tokenBudget", params.token_budget.unwrap_or(4000), 1, MAX_TOKEN_BUDGET)?),
    };
    let payload = state.pool.run(project, now, move |brain| brain.session_start_for(&caller, &request)).await?;
    session_response(&payload)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    q: Option<String>,
    project: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    limit: Option<usize>,
    cursor: Option<String>,
    now: Option<String>,
}

/// A search page over HTTP.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchPage {
    query: String,
    results: Vec<SearchResult>,
    next_cursor: Option<String>,
}

/// `GET /api/v2/search`: BM25 over the approved items of the project and global scope, the
/// same results as `brain search --json`, paged by `cursor`.
pub async fn search(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<SearchParams>,
) -> Result<Response, ApiError> {
    let project = readable_project(&state, &caller, params.project.as_deref()).await?;
    let now = state.clock(params.now.as_deref())?;
    let query = params.q.filter(|q| !q.trim().is_empty()).ok_or_else(|| ApiError::bad_request("q is required"))?;
    let limit = check_range("limit", params.limit.unwrap_or(10), 1, MAX_PAGE)?;
    let offset = parse_cursor(params.cursor.as_deref(), crate::mcp::MAX_SEARCH_OFFSET)?;
    let kinds = kind_filter(params.kind.as_deref())?;
    let statuses = status_filter(params.status.as_deref())?;
    let page = state
        .pool
        .run(project, now, move |brain| {
            // The agent's filter (approved items of the scopes the caller may read), narrowed
            // by kind or moved to another status when the caller names one.
            let mut filter = brain.agent_search_filter_for(&caller);
            filter.kinds = kinds;
            if !statuses.is_empty() {
                filter.statuses = statuses;
            }
            let found = brain_api::views::search_page(brain, &query, filter, limit, offset)?;
            Ok(SearchPage {
                results: found.results,
                next_cursor: found.next_offset.map(|next| next.to_string()),
                query,
            })
        })
        .await?;
    Ok(json_response(StatusCode::OK, to_json(&page)?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    project: Option<String>,
    scope: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    tag: Option<String>,
    #[serde(rename = "schemaKey")]
    schema_key: Option<String>,
    limit: Option<usize>,
    cursor: Option<String>,
    now: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ItemPage {
    items: Vec<Item>,
    next_cursor: Option<String>,
}

/// `GET /api/v2/items`: items of the project and global scope (or of one `scope`), newest
/// first, filtered by kind, status and tag, paged by `cursor`.
pub async fn list_items(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<ListParams>,
) -> Result<Response, ApiError> {
    let project = readable_project(&state, &caller, params.project.as_deref()).await?;
    let now = state.clock(params.now.as_deref())?;
    let scopes = match params.scope.as_deref() {
        Some(text) => {
            vec![Scope::parse(text).map_err(|err| ApiError::bad_request(format!("invalid scope: {err}")))?]
        }
        None => vec![Scope::Global, Scope::Project(project.clone())],
    };
    let kinds = kind_filter(params.kind.as_deref())?;
    let statuses = status_filter(params.status.as_deref())?;
    if let Some(key) = params.schema_key.as_deref() {
        brain_core::item::validate_schema_key(key)
            .map_err(|err| ApiError::bad_request(format!("invalid schemaKey: {}", err.message)))?;
    }
    let limit = check_range("limit", params.limit.unwrap_or(20), 1, MAX_PAGE)?;
    let offset = parse_cursor(params.cursor.as_deref(), MAX_LIST_OFFSET)?;
    let filter = ItemFilter {
        scopes: Some(scopes),
        kinds,
        statuses,
        tags: params.tag.into_iter().collect(),
        schema_key: params.schema_key,
        limit: Some(limit + 1),
        offset,
        ..ItemFilter::default()
    };
    let mut items = state.pool.run(project, now, move |brain| brain.list_for(&caller, &filter)).await?;
    let more = items.len() > limit;
    items.truncate(limit);
    let page = ItemPage { items, next_cursor: more.then(|| (offset + limit).to_string()) };
    Ok(json_response(StatusCode::OK, to_json(&page)?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteParams {
    project: Option<String>,
    now: Option<String>,
}

/// `POST /api/v2/items`: a new item from a draft (the snake_case fields of SPEC §2.1, as
/// `brain import` reads them). Redacted and validated like every write; 201 with the item
/// (what `brain remember --json` prints), `Location` and `ETag`. Agents' items take the
/// configured `write_policy` status unless the draft sets one.
pub async fn create_item(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<WriteParams>,
    Body(draft): Body<ItemDraft>,
) -> Result<Response, ApiError> {
    let project = state.project(params.project.as_deref())?;
    let now = state.clock(params.now.as_deref())?;
    if !state.may_set_clock(&axum::http::Method::POST) {
        brain_api::policy::refuse_dated(&draft)?;
    }
    let item = state.pool.run(project, now, move |brain| brain.remember_for(&caller, draft, "api")).await?;
    let mut response = item_response(StatusCode::CREATED, &item)?;
    if let Ok(location) = HeaderValue::from_str(&format!("/api/v2/items/{}", item.id)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemParams {
    now: Option<String>,
}

/// `GET /api/v2/items/{id}`: one item with every field; `ETag` is its version.
pub async fn get_item(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Params(params): Params<ItemParams>,
) -> Result<Response, ApiError> {
    let now = state.clock(params.now.as_deref())?;
    let item = state.pool.run(state.default_project.clone(), now, move |brain| brain.get_for(&caller, &id)).await?;
    item_response(StatusCode::OK, &item)
}

/// `PATCH /api/v2/items/{id}`: changes the fields the draft sets. With `If-Match: <version>`
/// a stale version is 412 and nothing changes.
pub async fn patch_item(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Params(params): Params<ItemParams>,
    Body(draft): Body<ItemDraft>,
) -> Result<Response, ApiError> {
    let now = state.clock(params.now.as_deref())?;
    let expected = if_match(&headers)?;
    if !state.may_set_clock(&axum::http::Method::PATCH) {
        brain_api::policy::refuse_dated(&draft)?;
    }
    let item = state
        .pool
        .run(state.default_project.clone(), now, move |brain| brain.edit_for(&caller, &id, &draft, expected))
        .await
        .map_err(|err| err.for_if_match(expected))?;
    item_response(StatusCode::OK, &item)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteParams {
    hard: Option<bool>,
    now: Option<String>,
}

/// `DELETE /api/v2/items/{id}`: archives the item (200 with it), or with `hard=true` erases
/// it (204). `If-Match` as for PATCH.
pub async fn delete_item(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Params(params): Params<DeleteParams>,
) -> Result<Response, ApiError> {
    let now = state.clock(params.now.as_deref())?;
    let expected = if_match(&headers)?;
    let hard = params.hard.unwrap_or(false);
    let outcome = state
        .pool
        .run(state.default_project.clone(), now, move |brain| brain.forget_for(&caller, &id, hard, expected))
        .await
        .map_err(|err| err.for_if_match(expected))?;
    match outcome {
        Some(item) => item_response(StatusCode::OK, &item),
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

async fn set_status(
    state: Arc<AppState>,
    caller: Caller,
    id: String,
    headers: &HeaderMap,
    now: Option<&str>,
    status: Status,
) -> Result<Response, ApiError> {
    let now = state.clock(now)?;
    let expected = if_match(headers)?;
    let item = state
        .pool
        .run(state.default_project.clone(), now, move |brain| brain.set_status_for(&caller, &id, status, expected))
        .await
        .map_err(|err| err.for_if_match(expected))?;
    item_response(StatusCode::OK, &item)
}

/// `POST /api/v2/items/{id}/approve`: a draft enters assembled context.
pub async fn approve_item(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Params(params): Params<ItemParams>,
) -> Result<Response, ApiError> {
    set_status(state, caller, id, &headers, params.now.as_deref(), Status::Approved).await
}

/// `POST /api/v2/items/{id}/deprecate`: kept and searchable, never injected.
pub async fn deprecate_item(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Params(params): Params<ItemParams>,
) -> Result<Response, ApiError> {
    set_status(state, caller, id, &headers, params.now.as_deref(), Status::Deprecated).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcParams {
    project: Option<String>,
    limit: Option<usize>,
    cursor: Option<String>,
    now: Option<String>,
}

/// `GET /api/v2/arcs`: the indexed vault's arcs of the project (its own and those without a
/// project), hottest first, paged by `cursor`. `inOtherProjects` counts the arcs of the other
/// projects the caller may read, so that an empty page can say why it is empty.
pub async fn arcs(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<ArcParams>,
) -> Result<Response, ApiError> {
    let project = state.project(params.project.as_deref())?;
    caller.require_read(&Scope::Project(project.clone()))?;
    let now = state.clock(params.now.as_deref())?;
    let limit = check_range("limit", params.limit.unwrap_or(20), 1, MAX_PAGE)?;
    let offset = parse_cursor(params.cursor.as_deref(), MAX_LIST_OFFSET)?;
    let (arcs, total, in_other_projects) = state
        .pool
        .run(project, now, move |brain| {
            let (own, others): (Vec<_>, Vec<_>) = brain_vault::arcs(brain, now, None)?
                .into_iter()
                .partition(|arc| arc.project.as_deref().is_none_or(|project| project == brain.project()));
            let in_other_projects = others
                .iter()
                .filter(|arc| {
                    arc.project.as_ref().is_some_and(|project| caller.can_read(&Scope::Project(project.clone())))
                })
                .count();
            let total = own.len();
            Ok((own.into_iter().skip(offset).take(limit).collect::<Vec<_>>(), total, in_other_projects))
        })
        .await?;
    let next = offset + arcs.len();
    let body = json!({
        "arcs": arcs,
        "total": total,
        "inOtherProjects": in_other_projects,
        "nextCursor": (next < total).then(|| next.to_string()),
    });
    Ok(json_response(StatusCode::OK, to_json(&body)?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UseParams {
    project: Option<String>,
    weeks: Option<usize>,
    now: Option<String>,
}

/// `GET /api/v2/use`: the project's use rate by week (`brain_api::usage`), oldest first.
pub async fn use_rate(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Params(params): Params<UseParams>,
) -> Result<Response, ApiError> {
    let project = state.project(params.project.as_deref())?;
    caller.require_read(&Scope::Project(project.clone()))?;
    let now = state.clock(params.now.as_deref())?;
    let weeks = check_range("weeks", params.weeks.unwrap_or(8), 1, 52)?;
    let rates = state.pool.run(project.clone(), now, move |brain| brain.use_rate(weeks)).await?;
    let weeks: Vec<serde_json::Value> = rates
        .iter()
        .map(|rate| {
            json!({
                "from": brain_core::time::format_timestamp(rate.from),
                "until": brain_core::time::format_timestamp(rate.until),
                "sessions": rate.sessions,
                "given": rate.given,
                "used": rate.used,
                "givenTokens": rate.given_tokens,
                "usedTokens": rate.used_tokens,
                "tokenShare": rate.token_share(),
            })
        })
        .collect();
    Ok(json_response(StatusCode::OK, to_json(&json!({"project": project, "weeks": weeks}))?))
}

/// The files of the vault feed a client may read.
pub const FEED_FILES: &[&str] =
    &["hot-arcs.md", "signals.md", "inject.md", "intent.md", "last-tick-diff.md", "health.jsonl"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedParams {
    project: Option<String>,
    now: Option<String>,
}

/// `GET /api/v2/feed/{name}`: one file of the vault feed (`brain tick` writes them), by its
/// name only: nothing outside the feed folder can be named. `hot-arcs.md`, `signals.md` and
/// `inject.md` are the project's (rendered from the index at `now`: its arcs, blocks and
/// signals, those of files without a project, the shared signals), for a caller who may read
/// the project; the other files cover the whole vault and need a read grant on every
/// project the vault names.
pub async fn feed(
    State(state): Shared,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    Params(params): Params<FeedParams>,
) -> Result<Response, ApiError> {
    let project = state.project(params.project.as_deref())?;
    caller.require_read(&Scope::Project(project.clone()))?;
    let Some(name) = FEED_FILES.iter().find(|known| **known == name) else {
        return Err(ApiError::not_found(format!("no feed file {name:?}"))
            .with_hint(format!("feed files: {}", FEED_FILES.join(", "))));
    };
    let now = state.clock(params.now.as_deref())?;
    let bytes = state
        .pool
        .run(project, now, move |brain| {
            let vault = brain_vault::vault_path(brain, None);
            if !vault.is_dir() {
                return Ok(None);
            }
            let location = brain_vault::Location::resolve(brain, None, None)?;
            // Only what a tick has written is served (a project's file as well).
            match std::fs::symlink_metadata(location.feed_dir.join(name)) {
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(BrainError::internal(format!("cannot read feed file {name}: {err}"))),
            }
            if let Some(text) = brain_vault::project_feed_file(brain, name, brain.project())? {
                return Ok(Some(text.into_bytes()));
            }
            for other in brain_vault::vault_projects(brain)? {
                let scope = Scope::Project(other);
                if !caller.can_read(&scope) {
                    return Err(BrainError::Forbidden {
                        message: format!(
                            "token {:?} may not read {name}: it covers the whole vault, {scope} included",
                            caller.name()
                        ),
                    });
                }
            }
            match std::fs::read(location.feed_dir.join(name)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(BrainError::internal(format!("cannot read feed file {name}: {err}"))),
            }
        })
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!("feed file {name} does not exist yet"))
                .with_hint("run `brain tick` to write the feed")
        })?;
    let content_type = if name.ends_with(".jsonl") { "application/x-ndjson" } else { "text/markdown; charset=utf-8" };
    let mut response = (StatusCode::OK, bytes).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(response)
}

/// `GET /healthz`: 200 with the store's generation when the store answers, else 503.
pub async fn healthz(State(state): Shared) -> Response {
    match state.generation().await {
        Ok(generation) => json_response(
            StatusCode::OK,
            serde_json::to_vec(&json!({"status": "ok", "generation": generation})).unwrap_or_default(),
        ),
        Err(err) => json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::to_vec(&json!({"status": "unavailable", "error": err.message})).unwrap_or_default(),
        ),
    }
}

/// `GET /metrics`: Prometheus / OpenMetrics text.
pub async fn metrics(State(state): Shared) -> Result<Response, ApiError> {
    let now = state.clock(None)?;
    let (items, generation) = state
        .pool
        .run(state.default_project.clone(), now, |brain| {
            Ok((brain.count(&ItemFilter::default())?, brain.generation()?))
        })
        .await?;
    state.metrics.items.set(i64::try_from(items).unwrap_or(i64::MAX));
    state.metrics.generation.set(i64::try_from(generation).unwrap_or(i64::MAX));
    let mut response = (StatusCode::OK, state.metrics.render()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    Ok(response)
}

/// `GET /openapi.json`: the API description, built from the route table in `openapi.rs`.
pub async fn openapi() -> Response {
    json_response(StatusCode::OK, serde_json::to_vec(&super::openapi::document()).unwrap_or_default())
}
