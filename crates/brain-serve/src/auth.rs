//! Bearer tokens with per-scope read and write grants (SPEC §7.2, §9).
//!
//! Tokens come from `[[serve.tokens]]` in the user config, in clear or as SHA-256 hex, and
//! from the store (`brain token create`, refreshed whenever the store's generation moves,
//! so every replica sees a new or revoked token at once); only digests are kept in memory
//! and compared in constant time. Without tokens the server is open, which `serve` allows
//! on loopback addresses only; once any token exists, a running server requires one, and
//! so does every server started on a store that has ever had one (a revoked token stays in
//! the store: revoking the last one never reopens a server; `brain token reopen` forgets
//! the revoked ones, explicitly). A revoked token's grant is told so ([`Grant::revoked`]):
//! the requests and streams it holds end at once. What a token's grants allow is decided in
//! `brain_api::policy`, below every adapter.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use super::error::ApiError;
use brain_api::config::TokenConfig;
use brain_api::error::{BrainError, BrainResult};
use brain_api::policy::Grants;
pub use brain_api::policy::{Caller, check_grants};

/// One configured or stored token: the digest of its secret and its grants.
#[derive(Debug)]
pub struct Grant {
    digest: [u8; 32],
    grants: Arc<Grants>,
    /// Turns true when the token is revoked (stored tokens only).
    revoked: watch::Sender<bool>,
}

impl Grant {
    fn new(digest: [u8; 32], grants: Grants) -> Grant {
        Grant { digest, grants: Arc::new(grants), revoked: watch::Sender::new(false) }
    }

    /// The token's name.
    pub fn name(&self) -> &str {
        &self.grants.name
    }

    /// Resolves once the token is revoked (at once if it already is; never for a token of
    /// the config file), so that what its holder still holds can end.
    pub fn revoked(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.revoked.subscribe();
        async move {
            if receiver.wait_for(|revoked| *revoked).await.is_err() {
                // The grant is gone, and so is everything that held it.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// The configured tokens and the store's.
#[derive(Debug, Default)]
pub struct Auth {
    grants: Vec<Arc<Grant>>,
    /// The store's active tokens, replaced whole on every refresh.
    stored: RwLock<Vec<Arc<Grant>>>,
    /// Set once any token exists: from then on every non-public request needs one.
    required: AtomicBool,
}

fn digest(secret: &[u8]) -> [u8; 32] {
    Sha256::digest(secret).into()
}

/// Equality whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Shortest accepted secret: guessing must be hopeless.
const MIN_SECRET_CHARS: usize = 16;

impl Auth {
    pub fn from_config(tokens: &[TokenConfig]) -> BrainResult<Auth> {
        let mut grants = Vec::new();
        for token in tokens {
            let invalid = |why: String| BrainError::Config {
                message: format!("[[serve.tokens]] {:?}: {why}", token.name),
                hint: Some(
                    "each token needs a name, `token = \"…\"` or `token_sha256 = \"<64 hex>\"`, and grants".into(),
                ),
            };
            if token.name.trim().is_empty() {
                return Err(invalid("the name is empty".into()));
            }
            if grants.iter().any(|grant: &Arc<Grant>| grant.grants.name == token.name) {
                return Err(invalid("the name is used twice".into()));
            }
            let digest = match (&token.token, &token.token_sha256) {
                (Some(secret), None) if secret.chars().count() >= MIN_SECRET_CHARS => digest(secret.as_bytes()),
                (Some(_), None) => {
                    return Err(invalid(format!("the token is shorter than {MIN_SECRET_CHARS} characters")));
                }
                (None, Some(hex_digest)) => hex::decode(hex_digest.trim())
                    .ok()
                    .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
                    .ok_or_else(|| invalid("token_sha256 is not 64 hexadecimal characters".into()))?,
                _ => return Err(invalid("set exactly one of token and token_sha256".into())),
            };
            grants.push(Arc::new(Grant::new(
                digest,
                Grants::parse(&token.name, &token.read, &token.write, &token.review)?,
            )));
        }
        let required = AtomicBool::new(!grants.is_empty());
        Ok(Auth { grants, stored: RwLock::new(Vec::new()), required })
    }

    pub fn is_enabled(&self) -> bool {
        self.required.load(Ordering::Relaxed)
    }

    /// Replaces the store's tokens with the active ones of `records` (a token whose grants
    /// no longer parse is left out, with a warning). A token still active keeps its grant;
    /// every grant no longer active is told it was revoked. Any record at all, revoked ones
    /// included, means the store has had tokens: from then on one is required.
    pub fn set_stored(&self, records: &[brain_store::TokenRecord]) {
        if !records.is_empty() {
            self.required.store(true, Ordering::Relaxed);
        }
        let mut stored = self.stored.write().unwrap_or_else(|poison| poison.into_inner());
        let mut active = Vec::new();
        for record in records.iter().filter(|record| record.revoked_at.is_none()) {
            let digest = hex::decode(&record.sha256).ok().and_then(|bytes| <[u8; 32]>::try_from(bytes).ok());
            match (digest, Grants::parse(&record.name, &record.read, &record.write, &record.review)) {
                (Some(digest), Ok(grants)) => {
                    let unchanged = stored.iter().find(|grant| grant.digest == digest && *grant.grants == grants);
                    active.push(match unchanged {
                        Some(grant) => Arc::clone(grant),
                        None => Arc::new(Grant::new(digest, grants)),
                    });
                }
                _ => eprintln!("brain serve: stored token {:?} is malformed; ignored", record.name),
            }
        }
        for previous in stored.iter().filter(|previous| !active.iter().any(|grant| Arc::ptr_eq(grant, previous))) {
            previous.revoked.send_replace(true);
        }
        *stored = active;
    }

    /// The grant whose secret is `secret`, comparing against every token.
    pub(crate) fn find(&self, secret: &str) -> Option<Arc<Grant>> {
        let presented = digest(secret.as_bytes());
        let mut found = None;
        let stored = self.stored.read().unwrap_or_else(|poison| poison.into_inner());
        for grant in self.grants.iter().chain(stored.iter()) {
            if constant_time_eq(&grant.digest, &presented) {
                found = Some(Arc::clone(grant));
            }
        }
        found
    }
}

pub use brain_api::tokens::secret_digest;

fn unauthorized(message: &str) -> Response {
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
        .with_hint("send Authorization: Bearer <token> with a token from [[serve.tokens]]")
        .into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"brain\""));
    response
}

/// Middleware: identifies the caller and stores it in the request's extensions; a missing
/// or unknown token is 401 (the token itself is never echoed or logged).
pub async fn authenticate(State(auth): State<Arc<Auth>>, mut request: Request, next: Next) -> Response {
    if !auth.is_enabled() {
        request.extensions_mut().insert(Caller::Open);
        return next.run(request).await;
    }
    // Routes anyone may call (liveness, the API description, the dashboard's page and
    // assets, which hold no data): marked `public` in the route table.
    if super::openapi::is_public(request.uri().path()) {
        request.extensions_mut().insert(Caller::Open);
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")))
        .map(str::trim);
    let Some(secret) = presented else {
        return unauthorized("missing bearer token");
    };
    match auth.find(secret) {
        Some(grant) => {
            // The caller for the policy checks, and the token itself for what ends when it
            // is revoked (`holds`).
            request.extensions_mut().insert(Caller::Token(Arc::clone(&grant.grants)));
            request.extensions_mut().insert(grant);
            next.run(request).await
        }
        None => unauthorized("invalid bearer token"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brain_core::Scope;

    fn token(name: &str, secret: &str, read: &[&str], write: &[&str]) -> TokenConfig {
        TokenConfig {
            name: name.into(),
            token: Some(secret.into()),
            token_sha256: None,
            read: read.iter().map(|s| s.to_string()).collect(),
            write: write.iter().map(|s| s.to_string()).collect(),
            review: Vec::new(),
        }
    }

    #[test]
    fn grants_match_exact_scopes_kinds_and_everything() {
        let auth = Auth::from_config(&[
            token("a", "secret-aaaaaaaaaaaa", &["project/api"], &[]),
            token("b", "secret-bbbbbbbbbbbb", &[], &["project/*"]),
            token("c", "secret-cccccccccccc", &["*"], &["*"]),
        ])
        .unwrap();
        let caller = |secret: &str| Caller::Token(Arc::clone(&auth.find(secret).unwrap().grants));
        let api = Scope::parse("project/api").unwrap();
        let web = Scope::parse("project/web").unwrap();
        let team = Scope::parse("team/core").unwrap();
        let a = caller("secret-aaaaaaaaaaaa");
        assert!(a.can_read(&api) && !a.can_read(&web) && a.can_read(&Scope::Global));
        assert!(!a.can_write(&api) && !a.can_write(&Scope::Global));
        let b = caller("secret-bbbbbbbbbbbb");
        assert!(b.can_write(&api) && b.can_write(&web) && b.can_read(&web) && !b.can_write(&team));
        let c = caller("secret-cccccccccccc");
        assert!(c.can_write(&team) && c.can_write(&Scope::Global));
        assert!(auth.find("secret-dddddddddddd").is_none());
    }

    fn record(name: &str, secret: &str, revoked: bool) -> brain_store::TokenRecord {
        let at: brain_core::Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
        brain_store::TokenRecord {
            name: name.into(),
            sha256: secret_digest(secret),
            read: vec!["project/demo".into()],
            write: vec![],
            review: vec![],
            created_at: at,
            revoked_at: revoked.then_some(at),
        }
    }

    #[test]
    fn a_revoked_stored_token_is_told_so_and_the_store_keeps_requiring_tokens() {
        let auth = Auth::default();
        auth.set_stored(&[]);
        assert!(!auth.is_enabled(), "a store that never had a token");
        auth.set_stored(&[record("kept", "secret-kkkkkkkkkkkk", false), record("gone", "secret-gggggggggggg", false)]);
        let kept = auth.find("secret-kkkkkkkkkkkk").unwrap();
        let gone = auth.find("secret-gggggggggggg").unwrap();
        let revoked = |grant: &Arc<Grant>| futures_util::FutureExt::now_or_never(grant.revoked()).is_some();
        assert!(!revoked(&kept) && !revoked(&gone));
        auth.set_stored(&[record("kept", "secret-kkkkkkkkkkkk", false), record("gone", "secret-gggggggggggg", true)]);
        assert!(revoked(&gone) && auth.find("secret-gggggggggggg").is_none());
        // A refresh keeps the grant of a token still active: what it holds goes on.
        assert!(!revoked(&kept) && Arc::ptr_eq(&kept, &auth.find("secret-kkkkkkkkkkkk").unwrap()));
        // Only revoked rows left: a server started on this store still requires a token.
        let fresh = Auth::default();
        fresh.set_stored(&[record("gone", "secret-gggggggggggg", true)]);
        assert!(fresh.is_enabled());
        // Config tokens are never revoked.
        let config = Auth::from_config(&[token("a", "secret-aaaaaaaaaaaa", &["*"], &[])]).unwrap();
        config.set_stored(&[]);
        assert!(!revoked(&config.find("secret-aaaaaaaaaaaa").unwrap()));
    }

    #[test]
    fn bad_token_entries_are_config_errors_without_the_secret() {
        let short = Auth::from_config(&[token("a", "short", &[], &[])]).unwrap_err();
        assert!(short.to_string().contains("shorter than 16"), "{short}");
        assert!(!short.to_string().contains("short\""), "{short}");
        let bad_grant = Auth::from_config(&[token("a", "secret-aaaaaaaaaaaa", &["project/../x"], &[])]).unwrap_err();
        assert!(bad_grant.to_string().contains("invalid scope grant"), "{bad_grant}");
        let both = TokenConfig { token_sha256: Some("ab".repeat(32)), ..token("a", "secret-aaaaaaaaaaaa", &[], &[]) };
        assert!(Auth::from_config(&[both]).unwrap_err().to_string().contains("exactly one"));
        let hashed = TokenConfig {
            token: None,
            token_sha256: Some(hex::encode(digest(b"secret-eeeeeeeeeeee"))),
            ..token("e", "", &["*"], &[])
        };
        let auth = Auth::from_config(&[hashed]).unwrap();
        assert!(auth.find("secret-eeeeeeeeeeee").is_some());
        let twice = Auth::from_config(&[
            token("a", "secret-aaaaaaaaaaaa", &[], &[]),
            token("a", "secret-bbbbbbbbbbbb", &[], &[]),
        ]);
        assert!(twice.unwrap_err().to_string().contains("twice"));
    }
}
