//! Fleet mode's routes and jobs: `/readyz` for load balancers and orchestrators (is the
//! database answering?), the vault tick run on a schedule by one replica at a time (a job
//! lock in the store) and on request (`GET|POST /api/v2/tick`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::state::AppState;

/// `GET /readyz`: 200 when the store answers a read started now, 503 with the reason when
/// it does not (the database is down or restarting). No auth, and no address of the
/// database in the answer.
pub async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let backend = if state.is_shared() { "postgresql" } else { "sqlite" };
    let (status, body) = match state.generation().await {
        Ok(generation) => (StatusCode::OK, json!({"status": "ready", "backend": backend, "generation": generation})),
        Err(err) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "unavailable", "backend": backend, "error": {"code": err.code, "message": err.message}}),
        ),
    };
    let mut response = (status, serde_json::to_vec(&body).unwrap_or_default()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Where the last tick's report is kept, for every replica to show (`vault_state`).
const LAST_TICK: &str = "last_tick";
/// Lists longer than this are cut in a stored tick report (their full length is kept).
const REPORT_LIST_LIMIT: usize = 50;
/// How often a replica looks whether the scheduled tick is due.
const SCHEDULE_CHECK: std::time::Duration = std::time::Duration::from_secs(30);

/// What started a tick.
#[derive(Clone, Copy, Debug)]
pub enum Trigger {
    Schedule,
    Request,
}

impl Trigger {
    fn name(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::Request => "request",
        }
    }
}

/// How a tick attempt ended.
#[derive(Debug)]
pub enum TickOutcome {
    /// It ran; its stored record.
    Ran(serde_json::Value),
    /// Another process or replica holds the tick lock.
    Busy,
    /// A scheduled tick found the last one recent enough.
    NotDue,
    /// This replica has no vault (the vault lives on the ticking replicas' shared volume).
    NoVault,
}

/// A tick report as stored: long lists cut to [`REPORT_LIST_LIMIT`] with their length kept
/// beside them (`<list>_total`).
fn bounded_report(report: serde_json::Value) -> serde_json::Value {
    let serde_json::Value::Object(fields) = report else { return report };
    let mut bounded = serde_json::Map::new();
    for (name, value) in fields {
        match value {
            serde_json::Value::Array(mut list) if list.len() > REPORT_LIST_LIMIT => {
                bounded.insert(format!("{name}_total"), json!(list.len()));
                list.truncate(REPORT_LIST_LIMIT);
                bounded.insert(name, serde_json::Value::Array(list));
            }
            other => {
                bounded.insert(name, other);
            }
        }
    }
    serde_json::Value::Object(bounded)
}

/// The stored record of the last tick, if any.
fn last_tick(brain: &brain_api::app::Brain) -> brain_api::error::BrainResult<Option<serde_json::Value>> {
    Ok(brain.vault_value(LAST_TICK)?.and_then(|text| serde_json::from_str(&text).ok()))
}

/// Runs the vault tick (phase 1) under the fleet's tick lock, so one replica at a time
/// ticks; a scheduled tick runs only when the last one (by any replica) is at least
/// `interval` old. The record of the run is stored for every replica to show.
pub fn tick_once(
    brain: &brain_api::app::Brain,
    trigger: Trigger,
    interval: Option<std::time::Duration>,
) -> brain_api::error::BrainResult<TickOutcome> {
    let vault = brain_vault::vault_path(brain, None);
    if !vault.is_dir() {
        return Ok(TickOutcome::NoVault);
    }
    let Some(_lock) = brain.try_lock_job("tick")? else {
        return Ok(TickOutcome::Busy);
    };
    // The schedule follows the wall clock, not a request's `now` (fixed in tests).
    let now = brain_core::Timestamp::now();
    let previous = last_tick(brain)?;
    let previous_at =
        |record: &serde_json::Value| record["at"].as_str().and_then(|at| brain_core::time::parse_timestamp(at).ok());
    if let Some(interval) = interval {
        let last_at = previous.as_ref().and_then(previous_at);
        let due = last_at.is_none_or(|at| brain_core::time::age_days(at, now) * 86_400.0 >= interval.as_secs_f64());
        if !due {
            return Ok(TickOutcome::NotDue);
        }
    }
    let location = brain_vault::Location::resolve(brain, None, None)?;
    let options =
        brain_vault::TickOptions { location, dry_run: false, no_ai: true, progress: &|_, _| {}, before_write: None };
    // When the last runs happened (any replica), newest last: one tick per interval shows.
    let mut history: Vec<serde_json::Value> =
        previous.as_ref().and_then(|record| record["history"].as_array().cloned()).unwrap_or_default();
    history.push(json!(brain_core::time::format_timestamp(now)));
    let skip = history.len().saturating_sub(20);
    let history: Vec<serde_json::Value> = history.into_iter().skip(skip).collect();
    let mut record = json!({
        "at": brain_core::time::format_timestamp(now),
        "trigger": trigger.name(),
        "history": history,
    });
    match brain_ai::tick(brain, &options) {
        Ok(report) => {
            record["ok"] = json!(true);
            record["report"] = bounded_report(serde_json::to_value(&report).unwrap_or_default());
        }
        Err(err) => {
            record["ok"] = json!(false);
            record["error"] = json!(err.to_string());
        }
    }
    let text = record.to_string();
    brain.set_vault_value(LAST_TICK, &text)?;
    Ok(TickOutcome::Ran(record))
}

/// Ticks on schedule (`[serve] tick_interval_secs`, 0 = never) until `shutdown` flips: every
/// replica looks every 30 s, and the one that takes the lock while the tick is due runs it.
pub async fn schedule_ticks(state: Arc<AppState>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let seconds = state.config.tick_interval_secs;
    if seconds == 0 {
        return;
    }
    let interval = std::time::Duration::from_secs(seconds);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(SCHEDULE_CHECK.min(interval)) => {}
            _ = shutdown.changed() => return,
        }
        let Ok(now) = state.clock(None) else { continue };
        let outcome = state
            .pool
            .run(state.default_project.clone(), now, move |brain| {
                Ok((tick_once(brain, Trigger::Schedule, Some(interval))?, vault_projects(brain)?))
            })
            .await;
        match outcome {
            Ok((TickOutcome::Ran(record), projects)) => {
                if record["ok"] != json!(true) {
                    eprintln!("brain serve: scheduled tick failed: {}", record["error"]);
                }
                state.announce_vault("tick", record, projects);
            }
            Ok(_) => {}
            Err(err) => eprintln!("brain serve: scheduled tick: {}", err.message),
        }
    }
}

/// The projects the indexed vault names.
fn vault_projects(brain: &brain_api::app::Brain) -> brain_api::error::BrainResult<Vec<String>> {
    Ok(brain_vault::vault_projects(brain)?.into_iter().collect())
}

/// The record of a tick covers the whole vault (arc titles, signal texts): only a caller who
/// may read every project the vault names sees it.
fn require_whole_vault(caller: &super::auth::Caller, projects: &[String]) -> Result<(), super::error::ApiError> {
    for project in projects {
        let scope = brain_core::Scope::Project(project.clone());
        if !caller.can_read(&scope) {
            return Err(super::error::ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "token {:?} may not read the tick record: it covers the whole vault, {scope} included",
                    caller.name()
                ),
            ));
        }
    }
    Ok(())
}

/// `GET /api/v2/tick`: the last tick's record (by any replica), the schedule, and whether
/// this replica can tick (has the vault). The record covers the whole vault: a read grant on
/// every project it names is needed.
pub async fn get_tick(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
) -> Result<Response, super::error::ApiError> {
    caller.require_read(&brain_core::Scope::Global)?;
    let now = state.clock(None)?;
    let (last, has_vault, projects) = state
        .pool
        .run(state.default_project.clone(), now, |brain| {
            Ok((last_tick(brain)?, brain_vault::vault_path(brain, None).is_dir(), vault_projects(brain)?))
        })
        .await?;
    require_whole_vault(&caller, &projects)?;
    let body = json!({
        "last": last,
        "intervalSecs": state.config.tick_interval_secs,
        "thisReplicaHasVault": has_vault,
    });
    Ok(json_body(StatusCode::OK, &body))
}

/// `POST /api/v2/tick`: runs a tick now (write grant on `global`: the vault and its feed
/// are everyone's; its record covers the whole vault, so a read grant on every project the
/// vault names too). At most one requested tick per `[serve] tick_request_min_secs` across
/// the fleet (429 with `Retry-After`); 409 while another replica ticks.
pub async fn post_tick(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
) -> Result<Response, super::error::ApiError> {
    use super::error::ApiError;
    caller.require_write(&brain_core::Scope::Global)?;
    let now = state.clock(None)?;
    let projects = state.pool.run(state.default_project.clone(), now, vault_projects).await?;
    require_whole_vault(&caller, &projects)?;
    let spacing = state.config.tick_request_min_secs;
    let (outcome, projects) = state
        .pool
        .run(state.default_project.clone(), now, move |brain| {
            let last = last_tick(brain)?;
            let wait = last
                .as_ref()
                .filter(|record| record["trigger"] == "request")
                .and_then(|record| record["at"].as_str().and_then(|at| brain_core::time::parse_timestamp(at).ok()))
                .map(|at| spacing as f64 - brain_core::time::age_days(at, brain_core::Timestamp::now()) * 86_400.0)
                .filter(|left| *left > 0.0);
            let outcome = match wait {
                Some(left) => Err(left.ceil() as u64),
                None => Ok(tick_once(brain, Trigger::Request, None)?),
            };
            Ok((outcome, vault_projects(brain)?))
        })
        .await?;
    match outcome {
        Err(retry_after) => {
            let mut response = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("a tick was requested less than {spacing} s ago; try again in {retry_after} s"),
            )
            .into_response();
            if let Ok(value) = HeaderValue::from_str(&retry_after.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            Ok(response)
        }
        Ok(TickOutcome::Ran(record)) => {
            state.announce_vault("tick", record.clone(), projects);
            Ok(json_body(StatusCode::OK, &record))
        }
        Ok(TickOutcome::Busy) => Err(ApiError::new(StatusCode::CONFLICT, "tick_running", "a tick is running already")
            .with_hint("GET /api/v2/tick shows the last one")),
        Ok(TickOutcome::NoVault) => {
            Err(ApiError::new(StatusCode::CONFLICT, "no_vault", "this replica has no vault to tick")
                .with_hint("initialise the vault (brain vault init) on the replicas' shared volume"))
        }
        Ok(TickOutcome::NotDue) => Err(ApiError::new(StatusCode::CONFLICT, "not_due", "no tick was due")),
    }
}

fn json_body(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, serde_json::to_vec(body).unwrap_or_default()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `GET /api/v2/signals` parameters.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SignalsParams {
    project: Option<String>,
    now: Option<String>,
}

/// `GET /api/v2/signals`: the active signals a session of the project sees (global and the
/// project's own, those the caller may read), items and vault alike in the one model and
/// order (`brain_core::signal`), with the generation they were read at (the dashboard lists
/// them; the remote user-prompt-submit hook surfaces new critical ones).
pub async fn signals(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
    super::extract::Params(params): super::extract::Params<SignalsParams>,
) -> Result<Response, super::error::ApiError> {
    let project = state.project(params.project.as_deref())?;
    caller.require_read(&brain_core::Scope::Project(project.clone()))?;
    let now = state.clock(params.now.as_deref())?;
    let generation = state.generation().await?;
    let signals = state.pool.run(project, now, brain_api::signals::visible).await?;
    let readable: Vec<_> = signals.into_iter().filter(|signal| caller.can_read(&signal.scope)).collect();
    Ok(json_body(StatusCode::OK, &json!({"generation": generation, "signals": readable})))
}
