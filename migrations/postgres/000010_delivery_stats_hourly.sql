-- Delivery statistics from counters (issue 27, decision 36): what `GET …/delivery-stats` reads,
-- kept per workspace, destination and hour as attempts are recorded, so that a request reads
-- 24 rows per destination, never the day's attempts.

-- One row per destination and hour with attempts (hour_start: Unix ms, a whole UTC hour).
-- A 2xx answer is a success; any other status, or none, a failure (decision 35).
-- last_status_code: the status of the hour's latest attempt (NULL: no answer).
-- failing_since: the hour's first failure after its last success, or its first failure when
-- nothing in the hour succeeded; NULL when no failure came after the last success.
-- fillfactor 70: room on each page, so that a count (which changes no indexed column) is a
-- HOT update that writes no index.
CREATE TABLE delivery_stats_hourly (
  workspace_id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  hour_start BIGINT NOT NULL,
  succeeded INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  last_attempt_at BIGINT NOT NULL,
  last_status_code INTEGER,
  last_success_at BIGINT,
  last_failure_at BIGINT,
  failing_since BIGINT,
  PRIMARY KEY (workspace_id, hour_start, destination_id)
) WITH (fillfactor = 70);

-- One destination's window (`?destination=`), and the retention's prune by hour. Both are
-- written only when a destination's hour gets its first attempt, not on every count.
CREATE INDEX delivery_stats_hourly_by_destination ON delivery_stats_hourly (workspace_id, destination_id, hour_start);
CREATE INDEX delivery_stats_hourly_by_hour ON delivery_stats_hourly (hour_start);

-- The counters of the attempts already kept, from the hour 24 hours ago on: the dashboard's
-- window shows its history right after an upgrade. Older hours are never read.
INSERT INTO delivery_stats_hourly (workspace_id, destination_id, hour_start, succeeded, failed,
  last_attempt_at, last_status_code, last_success_at, last_failure_at, failing_since)
SELECT workspace_id, destination_id, hour_start, SUM(ok), SUM(1 - ok), MAX(started_at),
  NULLIF(MAX(started_at * 1000 + COALESCE(status_code, 0)) % 1000, 0),
  MAX(CASE WHEN ok = 1 THEN started_at END), MAX(CASE WHEN ok = 0 THEN started_at END),
  MIN(CASE WHEN ok = 0 AND (hour_success IS NULL OR started_at > hour_success) THEN started_at END)
FROM (
  SELECT t.*, MAX(CASE WHEN ok = 1 THEN started_at END)
    OVER (PARTITION BY workspace_id, destination_id, hour_start) AS hour_success
  FROM (
    SELECT COALESCE(dl.workspace_id, d.workspace_id) AS workspace_id, dl.destination_id,
      a.started_at, a.status_code, a.started_at - a.started_at % 3600000 AS hour_start,
      CASE WHEN a.status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END AS ok
    FROM delivery_attempts a
    JOIN deliveries dl ON dl.seq = a.delivery_seq
    JOIN destinations d ON d.id = dl.destination_id
    WHERE a.started_at >= (CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT) - 86400000) / 3600000 * 3600000
  ) t
) b
GROUP BY workspace_id, destination_id, hour_start;
