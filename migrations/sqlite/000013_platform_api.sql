-- The platform API (issue 29, decision 42).
-- Operator API keys belong to no workspace: `workspace_id` becomes NULL-able, which SQLite can
-- only do by making the table again (nothing references api_keys, so it can be dropped).
-- A key may have a name and an expiry, after which it is refused as if revoked.
CREATE TABLE api_keys_new (
  id TEXT PRIMARY KEY,
  workspace_id TEXT REFERENCES workspaces (id),
  token_hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL, -- JSON array of scope names
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  last_used_at INTEGER,
  name TEXT,
  expires_at INTEGER
);

INSERT INTO api_keys_new (id, workspace_id, token_hash, scopes, created_at, revoked_at, last_used_at)
  SELECT id, workspace_id, token_hash, scopes, created_at, revoked_at, last_used_at FROM api_keys;

DROP TABLE api_keys;

ALTER TABLE api_keys_new RENAME TO api_keys;

CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, created_at);

-- A workspace as a platform provisions it: its own customer id (`external_id`, unique on the
-- server when set), a small flat object of strings (JSON text), and when it last changed.
ALTER TABLE workspaces ADD COLUMN external_id TEXT;
ALTER TABLE workspaces ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE workspaces ADD COLUMN updated_at INTEGER;
UPDATE workspaces SET updated_at = created_at;

CREATE UNIQUE INDEX workspaces_by_external_id ON workspaces (external_id) WHERE external_id IS NOT NULL;
-- The list's order, newest first (`GET /v1/workspaces`).
CREATE INDEX workspaces_by_creation ON workspaces (created_at, id);
