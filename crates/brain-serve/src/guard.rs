//! The request guard in front of every route (dashboard, API, events, metrics, MCP), before
//! auth. Three rules, each answering a way a web page in the user's browser could reach a
//! server on their loopback interface:
//!
//! 1. **Host** must name this server — the listen address, `localhost` and any loopback IP
//!    when listening on loopback, any IP literal when listening on all interfaces, plus
//!    `[serve] allowed_hosts` — else 421 `host_not_allowed`. A DNS-rebinding page reaches
//!    us under the attacker's own name, which is never on that list; an IP literal cannot
//!    be rebound. Ports are not compared: rebinding is about names, and tunnels and
//!    proxies change ports.
//! 2. **Origin**: a request whose `Origin` is neither this server's (same scheme-less host
//!    and port as `Host`) nor in `[serve] allowed_origins` is refused 403 `cross_origin`,
//!    whatever its method. Without `Origin`, `Sec-Fetch-Site: cross-site|same-site` is
//!    refused the same way, except a top-level navigation to the dashboard page (a link to
//!    `http://127.0.0.1:7077/` from elsewhere still opens it). Clients that are not
//!    browsers send neither header and pass.
//! 3. **JSON for state changes**: a POST, and any request with a body other than GET/HEAD,
//!    must say `Content-Type: application/json` (or `application/*+json`), else 415. No HTML
//!    form and no CORS "simple" request can carry that type without a preflight, which this
//!    server never grants, so this rule alone stops cross-site writes even from a browser
//!    that sends no `Origin`.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use brain_api::error::{BrainError, BrainResult};

/// Longest request target (path and query, bytes); longer ones get 414. Hyper's own bound
/// (64 KiB for the whole head, `conn::MAX_HEAD_BYTES`) applies before this one.
pub const MAX_URI_BYTES: usize = 16 * 1024;

/// The pages a cross-site link may open (top-level navigations only).
const NAVIGABLE_PAGES: &[&str] = &["/"];

/// A `host[:port]` as found in `Host` or an origin: the host lowercased, without a trailing
/// dot, IPv6 without brackets.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    /// Parses `name`, `name:port`, `1.2.3.4:port` or `[::1]:port`; `None` for anything else.
    fn parse(text: &str) -> Option<Authority> {
        let text = text.trim();
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest.split_once(']')?;
            inside.parse::<Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (inside.to_string(), port)
        } else {
            match text.split_once(':') {
                Some((host, port)) => (host.to_string(), Some(port)),
                None => (text.to_string(), None),
            }
        };
        let port = match port {
            None | Some("") => None,
            Some(digits) if digits.bytes().all(|byte| byte.is_ascii_digit()) => Some(digits.parse().ok()?),
            Some(_) => return None,
        };
        let mut host = host.to_ascii_lowercase();
        if host.ends_with('.') {
            host.pop();
        }
        let valid = !host.is_empty()
            && host.len() <= 253
            && host.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b':'));
        valid.then_some(Authority { host, port })
    }

    fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

/// An origin: `http` or `https` and an authority, with the scheme's default port filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Origin {
    secure: bool,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses a serialized origin (`http://127.0.0.1:7077`); `null`, other schemes and paths
    /// give `None`.
    fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        let (secure, rest) = if let Some(rest) = text.strip_prefix("http://") {
            (false, rest)
        } else {
            (true, text.strip_prefix("https://")?)
        };
        let authority = Authority::parse(rest)?;
        let port = authority.port.unwrap_or(if secure { 443 } else { 80 });
        Some(Origin { secure, host: authority.host, port })
    }

    /// Whether this origin is the server that `Host` names: a `Host` without a port was
    /// reached on the origin scheme's default port.
    fn is_same_as(&self, host: &Authority) -> bool {
        self.host == host.host && host.port.unwrap_or(if self.secure { 443 } else { 80 }) == self.port
    }
}

/// Who may call: the names of this server and the browser origins besides its own.
#[derive(Debug)]
pub struct Guard {
    /// `Host` values accepted as they are, without parsing (the bound address, and
    /// `localhost:PORT` on loopback): the common case stays cheap on the hot path.
    exact_hosts: Vec<String>,
    /// Accepted `Host` names with an optional port (`None`: any port).
    names: Vec<Authority>,
    listen_ip: IpAddr,
    allowed_origins: Vec<Origin>,
}

impl Guard {
    /// The guard of a server asked to listen on `listen` (as typed: its name is accepted
    /// too) and bound to `bound`, with the user's extra names and origins.
    pub fn new(
        listen: &str,
        bound: SocketAddr,
        allowed_hosts: &[String],
        allowed_origins: &[String],
    ) -> BrainResult<Guard> {
        let invalid = |key: &str, value: &str, example: &str| BrainError::Config {
            message: format!("[serve] {key}: invalid entry {value:?}"),
            hint: Some(format!("use entries like {example}")),
        };
        let mut names = Vec::new();
        for entry in allowed_hosts {
            names.push(
                Authority::parse(entry)
                    .ok_or_else(|| invalid("allowed_hosts", entry, "\"brain.lan\" or \"brain.lan:7077\""))?,
            );
        }
        let listen_ip = bound.ip();
        if listen_ip.is_loopback() || listen_ip.is_unspecified() {
            names.push(Authority { host: "localhost".into(), port: None });
        }
        // The name the user typed in `--listen` / `[serve] listen`, e.g. `brain.lan:7077`.
        if let Some(typed) = listen.rsplit_once(':').and_then(|(host, _)| Authority::parse(host))
            && typed.ip().is_none()
        {
            names.push(Authority { host: typed.host, port: None });
        }
        let mut origins = Vec::new();
        for entry in allowed_origins {
            origins.push(Origin::parse(entry).ok_or_else(|| {
                invalid("allowed_origins", entry, "\"https://app.example\" or \"http://localhost:3000\"")
            })?);
        }
        let mut exact_hosts = vec![bound.to_string()];
        if listen_ip.is_loopback() {
            exact_hosts.push(format!("localhost:{}", bound.port()));
        }
        Ok(Guard { exact_hosts, names, listen_ip, allowed_origins: origins })
    }

    /// Whether `[serve] allowed_origins` lists any origin (the CORS layer is then needed).
    pub fn has_allowed_origins(&self) -> bool {
        !self.allowed_origins.is_empty()
    }

    /// Whether `origin` (a serialized `Origin` header) is one of `[serve] allowed_origins`.
    pub fn is_allowed_origin(&self, origin: &str) -> bool {
        Origin::parse(origin).is_some_and(|origin| self.allowed_origins.contains(&origin))
    }

    fn allows_host(&self, host: &Authority) -> bool {
        if let Some(ip) = host.ip() {
            let ip = canonical(ip);
            let listen = canonical(self.listen_ip);
            let by_listen = listen.is_unspecified() || ip == listen || (listen.is_loopback() && ip.is_loopback());
            if by_listen {
                return true;
            }
        }
        self.names.iter().any(|name| {
            let same_host = match (name.ip(), host.ip()) {
                (Some(a), Some(b)) => canonical(a) == canonical(b),
                _ => name.host == host.host,
            };
            same_host && name.port.is_none_or(|port| host.port == Some(port))
        })
    }

    /// Runs the three rules (after the URI bound); the first broken one is the answer.
    fn admit(&self, method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<(), ApiError> {
        let length = uri.path_and_query().map_or(0, |target| target.as_str().len());
        if length > MAX_URI_BYTES {
            return Err(ApiError::new(
                StatusCode::URI_TOO_LONG,
                "uri_too_long",
                format!("the request URI is {length} bytes; the limit is {MAX_URI_BYTES}"),
            ));
        }
        // A non-browser client on the server's own address: nothing to compare an origin with.
        let exact = headers.get(header::HOST).is_some_and(|value| {
            self.exact_hosts.iter().any(|exact| exact.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
        });
        if exact && !headers.contains_key(header::ORIGIN) && !headers.contains_key("sec-fetch-site") {
            return check_content_type(method, headers);
        }
        let host = self.check_host(uri, headers)?;
        self.check_origin(method, uri, headers, &host)?;
        check_content_type(method, headers)
    }

    fn check_host(&self, uri: &Uri, headers: &HeaderMap) -> Result<Authority, ApiError> {
        let text = match headers.get(header::HOST) {
            Some(value) => value.to_str().unwrap_or("").to_string(),
            None => match uri.authority() {
                Some(authority) => authority.as_str().to_string(),
                None => {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "missing_host",
                        "the request has no Host header",
                    ));
                }
            },
        };
        let Some(host) = Authority::parse(&text) else {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_host",
                format!("invalid Host header {:?}", shorten(&text)),
            ));
        };
        if !self.allows_host(&host) {
            return Err(ApiError::new(
                StatusCode::MISDIRECTED_REQUEST,
                "host_not_allowed",
                format!("Host {:?} does not name this server", shorten(&text)),
            )
            .with_hint("if you reach brain by this name, add it to [serve] allowed_hosts in the user config"));
        }
        Ok(host)
    }

    fn check_origin(&self, method: &Method, uri: &Uri, headers: &HeaderMap, host: &Authority) -> Result<(), ApiError> {
        let refused = |from: String| {
            ApiError::new(StatusCode::FORBIDDEN, "cross_origin", format!("requests from {from} are refused"))
                .with_hint("a browser may call brain only from its own pages; add an origin to [serve] allowed_origins to allow it")
        };
        if headers.contains_key(header::ORIGIN) {
            for text in headers.get_all(header::ORIGIN).iter().map(|value| value.to_str().unwrap_or("null")) {
                let allowed = Origin::parse(text)
                    .is_some_and(|origin| origin.is_same_as(host) || self.allowed_origins.contains(&origin));
                if !allowed {
                    return Err(refused(format!("origin {:?}", shorten(text))));
                }
            }
            return Ok(());
        }
        let site = headers.get("sec-fetch-site").and_then(|value| value.to_str().ok()).unwrap_or("");
        if site.eq_ignore_ascii_case("cross-site") || site.eq_ignore_ascii_case("same-site") {
            let navigation = matches!(*method, Method::GET | Method::HEAD)
                && headers.get("sec-fetch-mode").is_some_and(|mode| mode.as_bytes().eq_ignore_ascii_case(b"navigate"))
                && NAVIGABLE_PAGES.contains(&uri.path());
            if !navigation {
                return Err(refused(format!("another site (Sec-Fetch-Site: {site})")));
            }
        }
        Ok(())
    }
}

/// IPv4-mapped IPv6 addresses compare as the IPv4 address they carry.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// Whether the request's content type is JSON (`application/json`, `application/*+json`).
pub fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn has_body(headers: &HeaderMap) -> bool {
    let length = headers.get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok());
    headers.contains_key(header::TRANSFER_ENCODING) || length.is_some_and(|length| length.trim() != "0")
}

fn check_content_type(method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    if (*method == Method::POST || has_body(headers)) && !is_json(headers) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("{method} needs Content-Type: application/json (an empty body is fine)"),
        ));
    }
    Ok(())
}

/// At most 100 characters of a header value for a message.
fn shorten(text: &str) -> String {
    text.chars().take(100).collect()
}

/// Middleware: refuses what the guard does not admit, before auth and routing.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    match guard.admit(request.method(), request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(err) => err.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard(listen: &str, bound: &str) -> Guard {
        Guard::new(
            listen,
            bound.parse().unwrap(),
            &["brain.lan".into(), "proxy.example:8443".into()],
            &["https://app.example".into()],
        )
        .unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(header::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn status(guard: &Guard, method: &str, path: &str, pairs: &[(&str, &str)]) -> u16 {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        match guard.admit(&method, &path.parse().unwrap(), &headers(pairs)) {
            Ok(()) => 200,
            Err(err) => err.status.as_u16(),
        }
    }

    #[test]
    fn host_names_this_server_or_is_misdirected() {
        let loopback = guard("127.0.0.1:7077", "127.0.0.1:7077");
        for host in [
            "127.0.0.1:7077",
            "localhost:7077",
            "LOCALHOST.",
            "127.0.0.2",
            "[::1]:9000",
            "brain.lan",
            "proxy.example:8443",
        ] {
            assert_eq!(status(&loopback, "GET", "/", &[("host", host)]), 200, "{host}");
        }
        for host in
            ["evil.example", "evil.example:7077", "proxy.example:443", "10.0.0.5:7077", "localhost.evil.example"]
        {
            assert_eq!(status(&loopback, "GET", "/api/v2/brain", &[("host", host)]), 421, "{host}");
        }
        assert_eq!(status(&loopback, "GET", "/", &[]), 400, "no Host at all");
        for garbage in ["a b", "[::1", "x:port", "::1", ""] {
            assert_eq!(status(&loopback, "GET", "/", &[("host", garbage)]), 400, "{garbage:?}");
        }
        // On every interface: any IP literal (it cannot be rebound), names only from the list.
        let public = guard("0.0.0.0:7077", "0.0.0.0:7077");
        assert_eq!(status(&public, "GET", "/", &[("host", "192.168.1.20:7077")]), 200);
        assert_eq!(status(&public, "GET", "/", &[("host", "evil.example:7077")]), 421);
        // A typed name is accepted; a specific address accepts itself, not loopback.
        let named = guard("brain.internal:7077", "10.0.0.5:7077");
        assert_eq!(status(&named, "GET", "/", &[("host", "brain.internal:7077")]), 200);
        assert_eq!(status(&named, "GET", "/", &[("host", "10.0.0.5")]), 200);
        assert_eq!(status(&named, "GET", "/", &[("host", "127.0.0.1:7077")]), 421);
        assert_eq!(status(&named, "GET", "/", &[("host", "localhost")]), 421);
    }

    #[test]
    fn cross_origin_requests_are_refused_and_same_origin_ones_pass() {
        let guard = guard("127.0.0.1:7077", "127.0.0.1:7077");
        let host = ("host", "127.0.0.1:7077");
        let json = ("content-type", "application/json");
        let same = [host, json, ("origin", "http://127.0.0.1:7077"), ("sec-fetch-site", "same-origin")];
        assert_eq!(status(&guard, "POST", "/api/v2/items", &same), 200);
        assert_eq!(status(&guard, "POST", "/api/v2/items", &[host, json, ("origin", "https://app.example")]), 200);
        for origin in
            ["http://evil.example", "null", "http://127.0.0.1:7078", "http://localhost:7077", "file://", "garbage"]
        {
            assert_eq!(status(&guard, "POST", "/api/v2/items", &[host, json, ("origin", origin)]), 403, "{origin}");
            assert_eq!(status(&guard, "GET", "/api/v2/brain", &[host, ("origin", origin)]), 403, "{origin}");
        }
        // Two Origin headers: every one must pass.
        let two = [host, json, ("origin", "http://127.0.0.1:7077"), ("origin", "http://evil.example")];
        assert_eq!(status(&guard, "POST", "/api/v2/items", &two), 403);
        // No Origin: fetch metadata decides; a link from elsewhere still opens the page.
        let cross = ("sec-fetch-site", "cross-site");
        assert_eq!(status(&guard, "GET", "/api/v2/session-start", &[host, cross, ("sec-fetch-mode", "no-cors")]), 403);
        assert_eq!(status(&guard, "GET", "/api/v2/brain", &[host, cross, ("sec-fetch-mode", "navigate")]), 403);
        assert_eq!(status(&guard, "GET", "/", &[host, cross, ("sec-fetch-mode", "navigate")]), 200);
        assert_eq!(
            status(&guard, "GET", "/", &[host, ("sec-fetch-site", "same-site"), ("sec-fetch-mode", "cors")]),
            403
        );
        assert_eq!(status(&guard, "GET", "/api/v2/brain", &[host, ("sec-fetch-site", "none")]), 200);
        // Behind a TLS proxy: https origin, Host without a port.
        let proxied =
            Guard::new("127.0.0.1:7077", "127.0.0.1:7077".parse().unwrap(), &["brain.example".into()], &[]).unwrap();
        let behind = [("host", "brain.example"), json, ("origin", "https://brain.example")];
        assert_eq!(status(&proxied, "POST", "/api/v2/items", &behind), 200);
    }

    #[test]
    fn state_changes_must_be_json() {
        let guard = guard("127.0.0.1:7077", "127.0.0.1:7077");
        let host = ("host", "127.0.0.1:7077");
        for form in ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"] {
            assert_eq!(
                status(&guard, "POST", "/api/v2/items/x/approve", &[host, ("content-type", form)]),
                415,
                "{form}"
            );
        }
        assert_eq!(status(&guard, "POST", "/api/v2/items/x/approve", &[host]), 415, "POST without a type");
        assert_eq!(status(&guard, "POST", "/x", &[host, ("content-type", "Application/JSON; charset=utf-8")]), 200);
        assert_eq!(status(&guard, "POST", "/x", &[host, ("content-type", "application/merge-patch+json")]), 200);
        assert_eq!(
            status(&guard, "PATCH", "/x", &[host, ("content-length", "2"), ("content-type", "text/plain")]),
            415
        );
        assert_eq!(status(&guard, "DELETE", "/x", &[host]), 200, "a DELETE without a body needs no type");
        assert_eq!(status(&guard, "DELETE", "/x", &[host, ("transfer-encoding", "chunked")]), 415);
        assert_eq!(status(&guard, "GET", "/x", &[host, ("content-type", "text/plain")]), 200);
    }

    #[test]
    fn bad_allowed_entries_are_config_errors() {
        let bound: SocketAddr = "127.0.0.1:7077".parse().unwrap();
        let host = Guard::new("127.0.0.1:7077", bound, &["not a name".into()], &[]).unwrap_err();
        assert!(host.to_string().contains("allowed_hosts"), "{host}");
        let origin = Guard::new("127.0.0.1:7077", bound, &[], &["app.example".into()]).unwrap_err();
        assert!(origin.to_string().contains("allowed_origins"), "{origin}");
    }
}
