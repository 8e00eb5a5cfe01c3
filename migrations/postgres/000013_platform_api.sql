-- The platform API (issue 29, decision 42).
-- Operator API keys belong to no workspace. A key may have a name and an expiry, after which
-- it is refused as if revoked.
ALTER TABLE api_keys ALTER COLUMN workspace_id DROP NOT NULL;
ALTER TABLE api_keys ADD COLUMN name TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;

CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id, created_at);

-- A workspace as a platform provisions it: its own customer id (`external_id`, unique on the
-- server when set), a small flat object of strings (JSON text), and when it last changed.
ALTER TABLE workspaces ADD COLUMN external_id TEXT;
ALTER TABLE workspaces ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE workspaces ADD COLUMN updated_at BIGINT;
UPDATE workspaces SET updated_at = created_at;

CREATE UNIQUE INDEX workspaces_by_external_id ON workspaces (external_id) WHERE external_id IS NOT NULL;
-- The list's order, newest first (`GET /v1/workspaces`).
CREATE INDEX workspaces_by_creation ON workspaces (created_at, id);
