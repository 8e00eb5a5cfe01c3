/**
 * The hourly counters the delivery statistics read (decision 36), kept in the statement (or
 * transaction) that records the attempts: one upsert per batch, one row per workspace,
 * destination and hour of the batch, so that a request reads 24 rows per destination however
 * many attempts the day had.
 */

export const statsHourMs = 3_600_000;

/** An attempt's outcome as the statistics judge it (decision 35): a 2xx answer succeeded. */
const ok = "CASE WHEN status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END";

/** The later of two times that may be NULL (SQLite's `max(a, b)` is NULL if either is). */
const later = (a: string, b: string): string =>
  `CASE WHEN ${a} IS NULL OR ${b} > ${a} THEN ${b} ELSE ${a} END`;
const earlier = (a: string, b: string): string =>
  `CASE WHEN ${a} IS NULL OR ${b} < ${a} THEN ${b} ELSE ${a} END`;

/**
 * `failing_since` of the hour once a batch is added to it: the first failure after the
 * hour's last success (or its first failure, when nothing succeeded). Each side's own
 * `failing_since` counts if it is after the combined last success. Exact when the batch's
 * attempts began after the row's, which is the order a destination's attempts are recorded in;
 * when concurrent attempts finish out of order it may be later than the truth, never beyond
 * the hour's last failure (`last_failure_at`, the fallback).
 */
function mergedFailingSince(): string {
  const lastSuccess = later("h.last_success_at", "excluded.last_success_at");
  const lastFailure = later("h.last_failure_at", "excluded.last_failure_at");
  const after = (time: string) =>
    `CASE WHEN ${lastSuccess} IS NULL OR ${time} > ${lastSuccess} THEN ${time} END`;
  return `CASE WHEN ${lastFailure} IS NULL OR ${lastFailure} <= ${lastSuccess} THEN NULL
    ELSE COALESCE(${earlier(after("h.failing_since"), after("excluded.failing_since"))}, ${lastFailure})
    END`;
}

/** The latest attempt with its status as one number, compared as the reads compare it. */
const lastKey = (row: string) =>
  `${row}.last_attempt_at * 1000 + COALESCE(${row}.last_status_code, 0)`;

/**
 * Adds the attempts of `source` (a subquery with `workspace_id`, `destination_id`,
 * `started_at`, `status_code`, one row per attempt recorded) to the hourly counters. A
 * delivery queued by an older release during a rolling upgrade may have no `workspace_id`
 * yet: its destination's is taken. Rows are written in key order, so that two batches at once
 * (PostgreSQL) lock the rows they share in the same order.
 */
export function countAttemptsSql(source: string): string {
  return `INSERT INTO delivery_stats_hourly AS h (workspace_id, destination_id, hour_start,
       succeeded, failed, last_attempt_at, last_status_code, last_success_at, last_failure_at,
       failing_since)
     SELECT workspace_id, destination_id, hour_start, SUM(ok), SUM(1 - ok), MAX(started_at),
       NULLIF(MAX(started_at * 1000 + COALESCE(status_code, 0)) % 1000, 0),
       MAX(CASE WHEN ok = 1 THEN started_at END), MAX(CASE WHEN ok = 0 THEN started_at END),
       MIN(CASE WHEN ok = 0 AND (hour_success IS NULL OR started_at > hour_success)
         THEN started_at END)
     FROM (
       SELECT t.*, MAX(CASE WHEN ok = 1 THEN started_at END)
         OVER (PARTITION BY workspace_id, destination_id, hour_start) AS hour_success
       FROM (
         SELECT COALESCE(s.workspace_id,
             (SELECT d.workspace_id FROM destinations d WHERE d.id = s.destination_id))
             AS workspace_id,
           s.destination_id, s.started_at, s.status_code,
           s.started_at - s.started_at % ${statsHourMs} AS hour_start, ${ok} AS ok
         FROM (${source}) s
       ) t
     ) b
     WHERE true
     GROUP BY workspace_id, destination_id, hour_start
     ORDER BY workspace_id, hour_start, destination_id
     ON CONFLICT (workspace_id, hour_start, destination_id) DO UPDATE SET
       succeeded = h.succeeded + excluded.succeeded,
       failed = h.failed + excluded.failed,
       last_attempt_at = ${later("h.last_attempt_at", "excluded.last_attempt_at")},
       last_status_code = CASE WHEN ${lastKey("excluded")} > ${lastKey("h")}
         THEN excluded.last_status_code ELSE h.last_status_code END,
       last_success_at = ${later("h.last_success_at", "excluded.last_success_at")},
       last_failure_at = ${later("h.last_failure_at", "excluded.last_failure_at")},
       failing_since = ${mergedFailingSince()}`;
}
