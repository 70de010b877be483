//! SQLite's bearer-token table (migration 5; see [`crate::TokenRecord`]) and one-time claims
//! (migration 6).

use brain_core::time::{format_timestamp, parse_timestamp};
use rusqlite::{OptionalExtension, Row, params};

use super::{SqliteStore, WriteTx};
use crate::{StoreError, StoreResult, TokenRecord};

fn row_to_token(row: &Row<'_>) -> rusqlite::Result<Result<TokenRecord, String>> {
    let name: String = row.get(0)?;
    let read: String = row.get(2)?;
    let write: String = row.get(3)?;
    let created: String = row.get(4)?;
    let revoked: Option<String> = row.get(5)?;
    let review: String = row.get(6)?;
    let record = (|| {
        Ok(TokenRecord {
            name: name.clone(),
            sha256: row.get(1).map_err(|err: rusqlite::Error| err.to_string())?,
            read: serde_json::from_str(&read).map_err(|err| err.to_string())?,
            write: serde_json::from_str(&write).map_err(|err| err.to_string())?,
            review: serde_json::from_str(&review).map_err(|err| err.to_string())?,
            created_at: parse_timestamp(&created)?,
            revoked_at: revoked.as_deref().map(parse_timestamp).transpose()?,
        })
    })();
    Ok(record)
}

impl SqliteStore {
    pub(crate) fn tokens(&self) -> StoreResult<Vec<TokenRecord>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(
                "SELECT name, sha256, read, write, created_at, revoked_at, review FROM api_tokens ORDER BY name",
            )
            .map_err(|e| self.sqlite_error(e))?;
        let rows = statement.query_map([], row_to_token).map_err(|e| self.sqlite_error(e))?;
        let mut tokens = Vec::new();
        for row in rows {
            let record = row.map_err(|e| self.sqlite_error(e))?;
            tokens.push(record.map_err(|detail| StoreError::InvalidRow { id: "api_tokens".into(), detail })?);
        }
        Ok(tokens)
    }
}

impl WriteTx<'_> {
    pub(crate) fn insert_token(&mut self, token: &TokenRecord) -> StoreResult<()> {
        let json = |list: &[String]| serde_json::to_string(list).unwrap_or_else(|_| "[]".into());
        let inserted = self
            .tx
            .query_row(
                "INSERT INTO api_tokens (name, sha256, read, write, created_at, revoked_at, review) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING RETURNING name",
                params![
                    token.name,
                    token.sha256,
                    json(&token.read),
                    json(&token.write),
                    format_timestamp(token.created_at),
                    token.revoked_at.map(format_timestamp),
                    json(&token.review)
                ],
                |row| row.get::<_, String>(0),
            )
            .optional()
            .map_err(|e| self.error(e))?;
        if inserted.is_none() {
            return Err(StoreError::AlreadyExists { id: format!("token {}", token.name) });
        }
        self.changed = true;
        Ok(())
    }

    pub(crate) fn revoke_token(&mut self, name: &str, at: brain_core::Timestamp) -> StoreResult<bool> {
        let revoked = self
            .tx
            .execute(
                "UPDATE api_tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
                params![name, format_timestamp(at)],
            )
            .map_err(|e| self.error(e))?
            > 0;
        self.changed |= revoked;
        Ok(revoked)
    }

    pub(crate) fn forget_revoked_tokens(&mut self) -> StoreResult<u64> {
        let forgotten =
            self.tx.execute("DELETE FROM api_tokens WHERE revoked_at IS NOT NULL", []).map_err(|e| self.error(e))?;
        self.changed |= forgotten > 0;
        Ok(forgotten as u64)
    }
}

impl WriteTx<'_> {
    pub(crate) fn claim(&mut self, kind: &str, key: &str, at: brain_core::Timestamp) -> StoreResult<bool> {
        let inserted = self
            .tx
            .execute(
                "INSERT INTO claims (kind, key, claimed_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                params![kind, key, format_timestamp(at)],
            )
            .map_err(|e| self.error(e))?;
        Ok(inserted > 0)
    }

    pub(crate) fn release_claim(&mut self, kind: &str, key: &str) -> StoreResult<bool> {
        let removed = self
            .tx
            .execute("DELETE FROM claims WHERE kind = ?1 AND key = ?2", params![kind, key])
            .map_err(|e| self.error(e))?;
        Ok(removed > 0)
    }
}
