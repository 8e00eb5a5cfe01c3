-- Idempotency keys, per workspace, kept 24 hours. While `state` is 'in_progress' the key is
-- locked until `locked_until`; a request that died leaves a lock that simply expires.
-- `response_body` is sealed (AES-256-GCM): a create's response carries the signing secret.
CREATE TABLE idempotency_keys (
  workspace_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  locked_until INTEGER,
  response_status INTEGER,
  response_content_type TEXT,
  response_body TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, idempotency_key)
);

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
