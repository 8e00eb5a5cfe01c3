-- The customer portal (issue 29, decision 43): a one-time link that opens a session scoped to
-- one workspace, with a role's scopes and no user account. One row is first the link, then,
-- once redeemed, the session it became: redeeming is one UPDATE of the row, so that two
-- openings of the same link cannot both win. Times are Unix milliseconds (INTEGER).
-- Only the SHA-256 of each token is kept, as for API keys and sessions.
-- role: viewer | member (their scopes are ROLE_SCOPES in src/interfaces.ts).
-- The rows go with their workspace (ON DELETE CASCADE): they are access to it, nothing more.
CREATE TABLE portal_sessions (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  link_token_hash TEXT NOT NULL UNIQUE,
  link_expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  redeemed_at INTEGER,
  session_token_hash TEXT UNIQUE,
  session_expires_at INTEGER,
  revoked_at INTEGER
);

CREATE INDEX portal_sessions_by_workspace ON portal_sessions (workspace_id);
