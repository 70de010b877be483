//! HTTP errors: every failure is `{"error": {"code", "message"}}` with a fitting status.
//! `BrainError` kinds map to statuses here; responses that axum or tower produce on their
//! own (404 route, 405, 408, 413) are rewritten into the same shape by `json_errors`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use brain_api::error::BrainError;

/// An HTTP error response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

impl ApiError {
    /// The message is redacted: rejections quote the offending value, which may be a secret.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        let message = message.into();
        let message = match brain_core::redact::redact_str(&message) {
            std::borrow::Cow::Owned(clean) => clean,
            std::borrow::Cow::Borrowed(_) => message,
        };
        ApiError { status, code, message, hint: None }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_input", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }

    /// This error for a request that carried `If-Match`: a version conflict is then 412.
    pub fn for_if_match(self, expected: Option<u64>) -> ApiError {
        if expected.is_none() || self.status != StatusCode::CONFLICT {
            return self;
        }
        ApiError::new(StatusCode::PRECONDITION_FAILED, "precondition_failed", self.message)
            .with_hint("GET the item for its current version (ETag) and apply your change again")
    }
}

impl From<BrainError> for ApiError {
    fn from(err: BrainError) -> ApiError {
        let hint = err.hint().map(str::to_string);
        let code = err.code();
        let (status, message) = match err {
            BrainError::User { message, .. } => (StatusCode::BAD_REQUEST, message),
            BrainError::NotFound { message, .. } => (StatusCode::NOT_FOUND, message),
            BrainError::Conflict { message } => (StatusCode::CONFLICT, message),
            BrainError::Forbidden { message } => (StatusCode::FORBIDDEN, message),
            // The database is down or restarting: say so, without its address; clients retry.
            BrainError::Unavailable { message } => {
                eprintln!("brain serve: database unavailable: {message}");
                return ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    code,
                    "the database is unavailable; retry in a moment",
                );
            }
            // Details of server-side failures (paths, SQL) go to the server log, not the client.
            BrainError::Config { message, .. } | BrainError::Internal { message } => {
                eprintln!("brain serve: error: {message}");
                return ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, code, "internal error; see the server log");
            }
        };
        // CLI hints name CLI commands; over HTTP only the message and code are meaningful.
        let hint = hint.filter(|hint| !hint.contains("brain "));
        ApiError { status, code, message, hint }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(hint) = self.hint {
            error["hint"] = json!(hint);
        }
        let body = serde_json::to_vec(&json!({ "error": error })).unwrap_or_default();
        let mut response = (self.status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

/// Rewrites error responses that are not JSON (axum's 404/405, tower's 408/413, extractor
/// rejections, rmcp's plain-text answers on `/mcp`) into the `{"error": …}` shape, keeping
/// their text as the message when they have one; JSON and successful responses pass
/// unchanged, and so do headers like `Allow` that tell the client what would work.
/// `X-Content-Type-Options: nosniff` on every answer (the dashboard's assets set more): a
/// browser never reads an item's text in a JSON or feed answer as HTML or script.
pub async fn no_sniffing(mut response: Response) -> Response {
    response
        .headers_mut()
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(axum::http::HeaderValue::from_static("nosniff"));
    response
}

pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if is_json {
        return response;
    }
    // (code, message when the body says nothing better, whether its text says something better)
    let (code, default_message, keep_text) = match status {
        StatusCode::NOT_FOUND => ("not_found", "no such route; see /openapi.json", true),
        StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "method not allowed on this route", false),
        StatusCode::NOT_ACCEPTABLE => {
            ("not_acceptable", "the Accept header names no type this route answers with", true)
        }
        StatusCode::REQUEST_TIMEOUT => ("timeout", "the request took too long and was cut off", false),
        StatusCode::PAYLOAD_TOO_LARGE => ("body_too_large", "the request body is larger than the limit", false),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ("unsupported_media_type", "send the body as JSON with Content-Type: application/json", false)
        }
        // Server errors keep their details in the log, never in the answer.
        other if other.is_server_error() => ("internal", "internal error; see the server log", false),
        _ => ("invalid_input", status.canonical_reason().unwrap_or("error"), true),
    };
    let (parts, body) = response.into_parts();
    let text = if keep_text {
        let bytes = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
        String::from_utf8_lossy(&bytes).trim().to_string()
    } else {
        String::new()
    };
    let message = if text.is_empty() { default_message.to_string() } else { text };
    let mut rewritten = ApiError::new(status, code, message).into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        rewritten.headers_mut().insert(header::ALLOW, allow.clone());
    }
    rewritten
}

/// A panic in a handler becomes a JSON 500 (the panic's message goes to the server log).
pub fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    eprintln!("brain serve: error: a request panicked: {message}");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error; see the server log").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_json(response: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().build().unwrap()
    }

    #[test]
    fn plain_text_errors_become_json_keeping_useful_text_and_hiding_server_details() {
        runtime().block_on(async {
            let plain = |status: StatusCode, text: &'static str| {
                let mut response = (status, text).into_response();
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET"));
                response
            };
            let session = json_errors(plain(StatusCode::NOT_FOUND, "Not Found: Session not found")).await;
            assert_eq!(session.headers()[header::CONTENT_TYPE], "application/json");
            let body = body_json(session).await;
            assert_eq!(
                (body["error"]["code"].as_str(), body["error"]["message"].as_str()),
                (Some("not_found"), Some("Not Found: Session not found"))
            );
            let method = json_errors(plain(StatusCode::METHOD_NOT_ALLOWED, "")).await;
            assert_eq!(method.headers()[header::ALLOW], "GET", "Allow survives");
            assert_eq!(body_json(method).await["error"]["code"], "method_not_allowed");
            let internal = body_json(json_errors(plain(StatusCode::BAD_GATEWAY, "db at /secret/path")).await).await;
            assert_eq!(internal["error"]["message"], "internal error; see the server log");
            let teapot = body_json(json_errors(plain(StatusCode::IM_A_TEAPOT, "")).await).await;
            assert_eq!(teapot["error"]["message"], "I'm a teapot");
        });
    }

    #[test]
    fn a_panic_is_a_json_500() {
        let response = panic_response(Box::new("index out of bounds"));
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = runtime().block_on(body_json(response));
        assert_eq!(body["error"]["code"], "internal");
    }
}
