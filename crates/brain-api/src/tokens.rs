//! Bearer tokens kept in the store, for fleets (`brain token create|list|revoke`): made and
//! revoked from any machine that reaches the database, seen by every `brain serve` replica
//! at once (a token change moves the store's generation, which each replica follows). The
//! secret is shown once, when it is made; only its SHA-256 is stored. Tokens of the config
//! file (`[[serve.tokens]]`) keep working beside these. A revoked token stays listed, and a
//! store that has ever had a token keeps requiring one in every server started on it, until
//! the operator forgets the revoked ones (`brain token reopen`).

use brain_core::Timestamp;
use brain_store::TokenRecord;
use serde::Serialize;

use crate::app::Brain;
use crate::error::{BrainError, BrainResult};

/// Random bytes of a secret (256 bits).
const SECRET_BYTES: usize = 32;
/// Prefix of every secret, so a leaked one is recognisable (the redactor names it
/// `brain-token`).
const SECRET_PREFIX: &str = "brain_";

/// A stored token as listed (never its secret; the first hex digits of its digest tell two
/// apart).
#[derive(Clone, Debug, Serialize)]
pub struct TokenView {
    pub name: String,
    pub read: Vec<String>,
    pub write: Vec<String>,
    /// Scopes whose items it may approve, and change once approved, under
    /// `write_policy = "draft"`.
    pub review: Vec<String>,
    #[serde(with = "brain_core::time::serde_rfc3339")]
    pub created_at: Timestamp,
    #[serde(with = "brain_core::time::serde_rfc3339::option")]
    pub revoked_at: Option<Timestamp>,
    pub active: bool,
    pub sha256_prefix: String,
}

impl TokenView {
    fn of(record: &TokenRecord) -> TokenView {
        TokenView {
            name: record.name.clone(),
            read: record.read.clone(),
            write: record.write.clone(),
            review: record.review.clone(),
            created_at: record.created_at,
            revoked_at: record.revoked_at,
            active: record.revoked_at.is_none(),
            sha256_prefix: record.sha256.chars().take(12).collect(),
        }
    }
}

/// A token just made: its secret (shown once) and how it is listed.
#[derive(Clone, Debug, Serialize)]
pub struct CreatedToken {
    pub secret: String,
    pub token: TokenView,
}

/// A token name: one path-safe word a log or a metric can show.
fn check_name(name: &str) -> BrainResult<()> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        return Ok(());
    }
    Err(BrainError::user_with_hint(
        format!("invalid token name {name:?}"),
        "use 1 to 64 letters, digits, '-', '_' or '.' (e.g. ci-agent)",
    ))
}

/// Makes a token with these grants (the syntax of `[[serve.tokens]]`: `global`,
/// `project/NAME`, `project/*`, `*`, …) and returns its secret, once.
pub fn create(
    brain: &Brain,
    name: &str,
    read: &[String],
    write: &[String],
    review: &[String],
) -> BrainResult<CreatedToken> {
    check_name(name)?;
    if read.is_empty() && write.is_empty() && review.is_empty() {
        return Err(BrainError::user_with_hint(
            format!("token {name:?} would have no grants"),
            "give --read, --write and/or --review scopes, e.g. --read 'project/*' --write project/api",
        ));
    }
    crate::policy::check_grants(name, read, write, review).map_err(|err| BrainError::User {
        message: err.to_string().replacen("[[serve.tokens]] ", "token ", 1),
        hint: err.hint().map(str::to_string),
    })?;
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).map_err(|err| BrainError::internal(format!("no randomness for the secret: {err}")))?;
    let secret = format!("{SECRET_PREFIX}{}", hex::encode(bytes));
    let record = TokenRecord {
        name: name.to_string(),
        sha256: secret_digest(&secret),
        read: read.to_vec(),
        write: write.to_vec(),
        review: review.to_vec(),
        created_at: brain.now,
        revoked_at: None,
    };
    brain.store.write(|tx| tx.insert_token(&record)).map_err(|err| match err {
        brain_store::StoreError::AlreadyExists { .. } => BrainError::user_with_hint(
            format!("a token named {name:?} already exists"),
            "pick another name, or revoke it first (`brain token revoke NAME`) — names stay taken after revoking",
        ),
        other => other.into(),
    })?;
    Ok(CreatedToken { secret, token: TokenView::of(&record) })
}

/// Every stored token as the store keeps it (digests, not secrets), revoked ones too: what
/// a server checks requests against.
pub fn stored(brain: &Brain) -> BrainResult<Vec<TokenRecord>> {
    Ok(brain.store.tokens()?)
}

/// Every stored token, revoked ones too.
pub fn list(brain: &Brain) -> BrainResult<Vec<TokenView>> {
    Ok(brain.store.tokens()?.iter().map(TokenView::of).collect())
}

/// What `brain token reopen` did: how many revoked tokens it forgot.
#[derive(Clone, Debug, Serialize)]
pub struct Reopened {
    pub forgotten: u64,
}

/// Forgets every revoked token, so that a server started on this store from now on — without
/// `[[serve.tokens]]` — serves without a token again (on loopback only). Refused while a
/// stored token is active: the store still requires it. Servers already running keep
/// requiring tokens until they restart.
pub fn reopen(brain: &Brain) -> BrainResult<Reopened> {
    let active: Vec<String> =
        brain.store.tokens()?.into_iter().filter(|token| token.revoked_at.is_none()).map(|token| token.name).collect();
    if let Some(name) = active.first() {
        return Err(BrainError::user_with_hint(
            format!("token {name:?} is still active ({} active in all); nothing was forgotten", active.len()),
            format!("revoke every active token first (`brain token revoke {name}`), then reopen"),
        ));
    }
    let forgotten = brain.store.write(|tx| tx.forget_revoked_tokens())?;
    Ok(Reopened { forgotten })
}

/// Revokes a stored token: every replica refuses it from its next refresh on (at once).
pub fn revoke(brain: &Brain, name: &str) -> BrainResult<TokenView> {
    check_name(name)?;
    let now = brain.now;
    if !brain.store.write(|tx| tx.revoke_token(name, now))? {
        let exists = brain.store.tokens()?.into_iter().any(|token| token.name == name);
        return Err(if exists {
            BrainError::user(format!("token {name:?} is already revoked"))
        } else {
            BrainError::NotFound {
                message: format!("no stored token named {name:?}"),
                hint: Some("list them with `brain token list` (config-file tokens are edited in config.toml)".into()),
            }
        });
    }
    list(brain)?
        .into_iter()
        .find(|token| token.name == name)
        .ok_or_else(|| BrainError::internal("the revoked token vanished"))
}
/// The stored form of a token's secret: its SHA-256, in hex (the secret itself is shown once
/// and never stored).
pub fn secret_digest(secret: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(secret.as_bytes()))
}
