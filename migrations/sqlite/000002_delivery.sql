-- Events (the transactional outbox) and their deliveries, one per matching destination.

-- `body` is the notification exactly as sent: serialised once, signed on every attempt.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

-- status: pending | delivered | failed. While pending, `next_attempt_at` is when it is due;
-- a claim moves it forward by the lease and sets `lease_owner`, so an abandoned claim becomes
-- due again by itself.
CREATE TABLE deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL REFERENCES events (id),
  destination_id TEXT NOT NULL REFERENCES destinations (id),
  event_type TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  next_attempt_at INTEGER,
  lease_owner TEXT,
  last_attempt_at INTEGER,
  last_status_code INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (event_id, destination_id)
);

CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_destination ON deliveries (destination_id, seq);

-- One row per attempt: when, how long, and the outcome; never a body or a secret.
CREATE TABLE delivery_attempts (
  delivery_seq INTEGER NOT NULL REFERENCES deliveries (seq),
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,
  error_class TEXT,
  PRIMARY KEY (delivery_seq, attempt)
);

CREATE INDEX delivery_attempts_by_time ON delivery_attempts (started_at);
