-- Migration 12 (PostgreSQL): a token's review grant (scope patterns, like read and write).
-- Under `write_policy = "draft"` only a token holding it on an item's scope may approve the
-- item or change an approved one; tokens made before it review nothing. Shipped migrations
-- are never edited.

ALTER TABLE api_tokens ADD COLUMN review text[] NOT NULL DEFAULT '{}';
