-- Workspaces, API keys and webhook destinations. Times are Unix milliseconds (INTEGER).

CREATE TABLE instance (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  first_workspace_id TEXT NOT NULL,
  initialised_at INTEGER NOT NULL
);

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  token_hash TEXT NOT NULL UNIQUE,
  scopes TEXT NOT NULL, -- JSON array of scope names
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

-- `seq` gives list pages a stable order that new rows never disturb; `id` is the public name.
-- A deleted destination keeps its row (deliveries will refer to it) but loses its secret.
CREATE TABLE destinations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  url TEXT NOT NULL,
  active INTEGER NOT NULL,
  secret_ciphertext TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);

CREATE INDEX destinations_by_workspace ON destinations (workspace_id, seq) WHERE deleted_at IS NULL;

-- One row per subscribed event name (or '*'), so that matching an event is a plain join.
CREATE TABLE destination_events (
  destination_id TEXT NOT NULL REFERENCES destinations (id),
  event TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (destination_id, event)
);
