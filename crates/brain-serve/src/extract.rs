//! Extractors whose rejections are JSON errors naming what was wrong, and the conditional
//! request headers (`If-None-Match`, `If-Match`).

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// Query parameters; unknown or malformed ones are 400.
#[derive(Debug)]
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Params(value)),
            Err(QueryRejection::FailedToDeserializeQueryString(err)) => {
                Err(ApiError::bad_request(format!("invalid query parameters: {}", err.body_text())))
            }
            Err(other) => Err(ApiError::bad_request(other.body_text())),
        }
    }
}

/// A JSON body: malformed JSON and wrong types are 400, a missing JSON content type 415, a
/// body over the limit 413.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Body(value)),
            Err(JsonRejection::JsonSyntaxError(err)) => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("malformed JSON: {}", err.body_text()),
            )),
            Err(JsonRejection::JsonDataError(err)) => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_body",
                format!("invalid body: {}", err.body_text()),
            )),
            Err(JsonRejection::MissingJsonContentType(_)) => Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with Content-Type: application/json",
            )),
            Err(JsonRejection::BytesRejection(err)) if err.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "body_too_large",
                    "the request body is larger than the limit ([serve] max_body_bytes)",
                ))
            }
            Err(other) => Err(ApiError::new(other.status(), "invalid_body", other.body_text())),
        }
    }
}

/// Whether `If-None-Match` lists `etag` (or `*`); weak validators compare by their value.
pub fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers.get_all(header::IF_NONE_MATCH).iter().filter_map(|value| value.to_str().ok()).any(|value| {
        value.split(',').map(str::trim).any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
    })
}

/// The version an `If-Match` header demands: `"3"`, `3` or `W/"3"`; `*` demands none.
pub fn if_match(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or("").trim();
    if text == "*" {
        return Ok(None);
    }
    text.trim_start_matches("W/")
        .trim_matches('"')
        .parse::<u64>()
        .map(Some)
        .map_err(|_| ApiError::bad_request(format!("invalid If-Match {text:?}: use the item's version, e.g. \"3\"")))
}

/// The strong validator of an item version.
pub fn version_etag(version: u64) -> String {
    format!("\"{version}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn if_none_match_accepts_lists_weak_tags_and_star() {
        let etag = "\"0123456789abcdef\"";
        assert!(none_match(&headers(header::IF_NONE_MATCH, etag), etag));
        assert!(none_match(&headers(header::IF_NONE_MATCH, "\"x\", W/\"0123456789abcdef\""), etag));
        assert!(none_match(&headers(header::IF_NONE_MATCH, "*"), etag));
        assert!(!none_match(&headers(header::IF_NONE_MATCH, "\"0123456789abcdee\""), etag));
        assert!(!none_match(&HeaderMap::new(), etag));
    }

    #[test]
    fn if_match_reads_versions_and_rejects_garbage() {
        assert_eq!(if_match(&headers(header::IF_MATCH, "\"3\"")).unwrap(), Some(3));
        assert_eq!(if_match(&headers(header::IF_MATCH, "7")).unwrap(), Some(7));
        assert_eq!(if_match(&headers(header::IF_MATCH, "W/\"2\"")).unwrap(), Some(2));
        assert_eq!(if_match(&headers(header::IF_MATCH, "*")).unwrap(), None);
        assert_eq!(if_match(&HeaderMap::new()).unwrap(), None);
        assert_eq!(if_match(&headers(header::IF_MATCH, "\"v3\"")).unwrap_err().status, StatusCode::BAD_REQUEST);
    }
}
