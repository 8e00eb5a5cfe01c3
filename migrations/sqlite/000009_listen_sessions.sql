-- Listen sessions (issue 20, decision 34): a destination of another kind, whose deliveries the
-- process holding the session's stream takes, never a worker.

-- kind: webhook | listen. `name`: a listen session's name, if it was given one.
-- `last_seen_at`: when its stream was last connected (it expires some time after).
-- `listen_stream`: the claim token of the stream that holds it now, if any.
ALTER TABLE destinations ADD COLUMN kind TEXT NOT NULL DEFAULT 'webhook';
ALTER TABLE destinations ADD COLUMN name TEXT;
ALTER TABLE destinations ADD COLUMN last_seen_at INTEGER;
ALTER TABLE destinations ADD COLUMN listen_stream TEXT;

CREATE UNIQUE INDEX listen_sessions_by_name ON destinations (workspace_id, name)
  WHERE kind = 'listen' AND deleted_at IS NULL AND name IS NOT NULL;
CREATE INDEX listen_sessions_by_last_seen ON destinations (last_seen_at)
  WHERE kind = 'listen' AND deleted_at IS NULL;

-- A session's pending delivery is due at `listen_due_at` (its `next_attempt_at` stays NULL, so
-- no worker's claim ever reads it); only these rows are in this index.
ALTER TABLE deliveries ADD COLUMN listen_due_at INTEGER;
CREATE INDEX deliveries_listen_due ON deliveries (destination_id, listen_due_at, seq)
  WHERE status = 'pending' AND listen_due_at IS NOT NULL;
