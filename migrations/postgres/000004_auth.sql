-- Users, their roles in workspaces, sign-in sessions, and the counters that rate-limit
-- sign-in attempts. Times are Unix milliseconds (BIGINT).

-- `email` is stored lower-cased, so that it is unique whatever case it is typed in.
-- `password_hash` is `scrypt$N$r$p$salt$hash` (base64); the password itself is never stored.
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

-- role: owner | member | viewer; the scopes each grants are fixed in code (ROLE_SCOPES in src/interfaces.ts).
CREATE TABLE memberships (
  user_id TEXT NOT NULL REFERENCES users (id),
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  role TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, workspace_id)
);

-- Only the SHA-256 of a session token is kept, as for API keys.
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id),
  token_hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT
);

CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- Failed sign-ins per subject (`account:<email>` or `address:<ip>`) in a fixed window that
-- starts at the first failure. In the database, so that limits hold across restarts and
-- across every API process sharing it.
CREATE TABLE sign_in_failures (
  subject TEXT PRIMARY KEY,
  window_started_at BIGINT NOT NULL,
  failures INTEGER NOT NULL
);
