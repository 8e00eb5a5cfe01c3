-- The delivery log and recovery (issue 17, decision 30).

-- The notification's version marker, for lists that do not read bodies. Every event so far
-- was published as 2026-11-01; the publish sets it from now on.
ALTER TABLE events ADD COLUMN api_version TEXT NOT NULL DEFAULT '2026-11-01';

-- The workspace, as the event's: a workspace's deliveries are listed without a join.
ALTER TABLE deliveries ADD COLUMN workspace_id TEXT;
UPDATE deliveries SET workspace_id = (SELECT e.workspace_id FROM events e WHERE e.id = deliveries.event_id);

-- A retry or a recovery starts the schedule over: its step is `attempts - retry_base`, and its
-- retries are spent counting from `schedule_started_at` (NULL: from `created_at`).
ALTER TABLE deliveries ADD COLUMN retry_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN schedule_started_at INTEGER;

-- What each attempt met: the error in words, and the first 2 KiB of the receiver's answer.
ALTER TABLE delivery_attempts ADD COLUMN error TEXT;
ALTER TABLE delivery_attempts ADD COLUMN response_body TEXT;

-- Lists are newest first by (created_at, seq), filtered by workspace, destination, time, and
-- by the failed ones, which are few (a partial index costs a write only when one fails).
DROP INDEX deliveries_by_destination;
CREATE INDEX deliveries_by_destination ON deliveries (destination_id, created_at, seq);
CREATE INDEX deliveries_by_workspace ON deliveries (workspace_id, created_at, seq);
CREATE INDEX deliveries_failed_by_destination ON deliveries (destination_id, created_at, seq) WHERE status = 'failed';
CREATE INDEX deliveries_failed_by_workspace ON deliveries (workspace_id, created_at, seq) WHERE status = 'failed';
CREATE INDEX events_by_workspace ON events (workspace_id, created_at, seq);
