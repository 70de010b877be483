//! PostgreSQL's bearer-token table (see [`crate::TokenRecord`]) and one-time claims.

use postgres::Row;

use super::rows::{Params, whole_seconds};
use super::{PgStore, WriteTx};
use crate::{StoreError, StoreResult, TokenRecord};

const TOKEN_COLUMNS: &str = "name, sha256, read, write, created_at, revoked_at, review";

fn row_to_token(row: &Row) -> Result<TokenRecord, postgres::Error> {
    Ok(TokenRecord {
        name: row.try_get(0)?,
        sha256: row.try_get(1)?,
        read: row.try_get(2)?,
        write: row.try_get(3)?,
        created_at: row.try_get(4)?,
        revoked_at: row.try_get(5)?,
        review: row.try_get(6)?,
    })
}

impl PgStore {
    pub(crate) fn tokens(&self) -> StoreResult<Vec<TokenRecord>> {
        let rows = self.rows(&format!("SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY name"), &Params::new())?;
        rows.iter().map(row_to_token).collect::<Result<_, _>>().map_err(|err| self.error(err))
    }
}

impl WriteTx<'_> {
    pub(crate) fn insert_token(&mut self, token: &TokenRecord) -> StoreResult<()> {
        let created = whole_seconds(token.created_at);
        let revoked = token.revoked_at.map(whole_seconds);
        let inserted = self.query(
            &format!(
                "INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT DO NOTHING RETURNING name"
            ),
            &[&token.name, &token.sha256, &token.read, &token.write, &created, &revoked, &token.review],
        )?;
        if inserted.is_empty() {
            return Err(StoreError::AlreadyExists { id: format!("token {}", token.name) });
        }
        self.mark_changed();
        Ok(())
    }

    pub(crate) fn revoke_token(&mut self, name: &str, at: brain_core::Timestamp) -> StoreResult<bool> {
        let at = whole_seconds(at);
        let revoked = self
            .execute("UPDATE api_tokens SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL", &[&name, &at])?
            > 0;
        if revoked {
            self.mark_changed();
        }
        Ok(revoked)
    }

    pub(crate) fn forget_revoked_tokens(&mut self) -> StoreResult<u64> {
        let forgotten = self.execute("DELETE FROM api_tokens WHERE revoked_at IS NOT NULL", &[])?;
        if forgotten > 0 {
            self.mark_changed();
        }
        Ok(forgotten)
    }
}

impl WriteTx<'_> {
    pub(crate) fn claim(&mut self, kind: &str, key: &str, at: brain_core::Timestamp) -> StoreResult<bool> {
        let at = whole_seconds(at);
        let inserted = self.execute(
            "INSERT INTO claims (kind, key, claimed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            &[&kind, &key, &at],
        )?;
        Ok(inserted > 0)
    }

    pub(crate) fn release_claim(&mut self, kind: &str, key: &str) -> StoreResult<bool> {
        Ok(self.execute("DELETE FROM claims WHERE kind = $1 AND key = $2", &[&kind, &key])? > 0)
    }
}
