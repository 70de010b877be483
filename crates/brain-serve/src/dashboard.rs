//! The dashboard (SPEC §7.5) at `/`: one page of plain HTML, CSS and JavaScript embedded in
//! the binary (no Node toolchain, no build step), working through the HTTP API like any
//! client. The assets carry no data, so they are public; the API calls they make need the
//! token the user types in (kept in the tab's session storage) when the server has tokens.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("dashboard/index.html");
const SCRIPT: &str = include_str!("dashboard/app.js");
const STYLE: &str = include_str!("dashboard/style.css");
const FAVICON: &str = include_str!("dashboard/favicon.svg");

/// Scripts and styles from this server only; no framing, no inline code.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

pub async fn index() -> Response {
    asset(INDEX, "text/html; charset=utf-8")
}

pub async fn script() -> Response {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

pub async fn style() -> Response {
    asset(STYLE, "text/css; charset=utf-8")
}

/// The tab's icon (the page links it, so browsers do not ask for a missing `/favicon.ico`).
pub async fn favicon() -> Response {
    asset(FAVICON, "image/svg+xml")
}

/// The API paths the page calls, for the test that every one of them is routed.
pub fn api_paths() -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = SCRIPT
        .split('"')
        .filter(|part| part.starts_with("/api/v2/"))
        .map(|part| part.split('?').next().unwrap_or(part))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths
}
