//! HTTP errors: every failure is `{"error": {"code", "message"}}` with a fitting status.
//! `BrainError` kinds map to statuses here; responses that axum or tower produce on their
//! own (404 route, 405, 408, 413) are rewritten into the same shape by `json_errors`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::BrainError;

/// An HTTP error response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), hint: None }
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
/// rejections) into the `{"error": …}` shape; JSON and successful responses pass unchanged.
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
    let (code, message) = match status {
        StatusCode::NOT_FOUND => ("not_found", "no such route; see /openapi.json".to_string()),
        StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "method not allowed on this route".to_string()),
        StatusCode::REQUEST_TIMEOUT => ("timeout", "the request took too long and was cut off".to_string()),
        StatusCode::PAYLOAD_TOO_LARGE => ("body_too_large", "the request body is larger than the limit".to_string()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ("unsupported_media_type", "send the body as JSON with Content-Type: application/json".to_string())
        }
        other => {
            let (_, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).trim().to_string();
            let message = if text.is_empty() { other.canonical_reason().unwrap_or("error").to_string() } else { text };
            return ApiError::new(other, "invalid_input", message).into_response();
        }
    };
    let mut rewritten = ApiError::new(status, code, message).into_response();
    // Keep headers like `Allow` that tell the client what would work.
    if let Some(allow) = response.headers().get(header::ALLOW) {
        rewritten.headers_mut().insert(header::ALLOW, allow.clone());
    }
    rewritten
}
