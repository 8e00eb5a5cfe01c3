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

const into = `INSERT INTO delivery_stats_hourly AS h (workspace_id, destination_id, hour_start,
       succeeded, failed, last_attempt_at, last_status_code, last_success_at, last_failure_at,
       failing_since)`;

/**
 * How an hour's row takes in what is added to it (`excluded`): counts add up, the latest
 * times win. Rows are written in key order, so that two batches at once (PostgreSQL) lock the
 * rows they share in the same order.
 */
const merged = `ORDER BY workspace_id, hour_start, destination_id
     ON CONFLICT (workspace_id, hour_start, destination_id) DO UPDATE SET
       succeeded = h.succeeded + excluded.succeeded,
       failed = h.failed + excluded.failed,
       last_attempt_at = ${later("h.last_attempt_at", "excluded.last_attempt_at")},
       last_status_code = CASE WHEN ${lastKey("excluded")} > ${lastKey("h")}
         THEN excluded.last_status_code ELSE h.last_status_code END,
       last_success_at = ${later("h.last_success_at", "excluded.last_success_at")},
       last_failure_at = ${later("h.last_failure_at", "excluded.last_failure_at")},
       failing_since = ${mergedFailingSince()}`;

/**
 * A delivery queued by an older release during a rolling upgrade may have no `workspace_id`
 * yet: its destination's is taken.
 */
const workspaceOf = (row: string): string =>
  `COALESCE(${row}.workspace_id,
     (SELECT d.workspace_id FROM destinations d WHERE d.id = ${row}.destination_id))`;

/**
 * Adds the attempts of `source` (a subquery with `workspace_id`, `destination_id`,
 * `started_at`, `status_code`, one row per attempt recorded) to the hourly counters, counted
 * by the statement: PostgreSQL's, whose record is one statement.
 */
export function countAttemptsSql(source: string): string {
  return `${into}
     SELECT workspace_id, destination_id, hour_start, SUM(ok), SUM(1 - ok), MAX(started_at),
       NULLIF(MAX(started_at * 1000 + COALESCE(status_code, 0)) % 1000, 0),
       MAX(CASE WHEN ok = 1 THEN started_at END), MAX(CASE WHEN ok = 0 THEN started_at END),
       MIN(CASE WHEN ok = 0 AND (hour_success IS NULL OR started_at > hour_success)
         THEN started_at END)
     FROM (
       SELECT t.*, MAX(CASE WHEN ok = 1 THEN started_at END)
         OVER (PARTITION BY workspace_id, destination_id, hour_start) AS hour_success
       FROM (
         SELECT ${workspaceOf("s")} AS workspace_id,
           s.destination_id, s.started_at, s.status_code,
           s.started_at - s.started_at % ${statsHourMs} AS hour_start, ${ok} AS ok
         FROM (${source}) s
       ) t
     ) b
     WHERE true
     GROUP BY workspace_id, destination_id, hour_start
     ${merged}`;
}

/** The columns of an hour's counts as `hourlyCounts` gives them, for `addHourlyCountsSql`. */
export const hourlyCountColumns = [
  ["workspace_id", "TEXT"],
  ["destination_id", "TEXT"],
  ["hour_start", "BIGINT"],
  ["succeeded", "INTEGER"],
  ["failed", "INTEGER"],
  ["last_attempt_at", "BIGINT"],
  ["last_status_code", "INTEGER"],
  ["last_success_at", "BIGINT"],
  ["last_failure_at", "BIGINT"],
  ["failing_since", "BIGINT"],
] as const;

/**
 * Adds hours already counted (`source`, rows of `hourlyCountColumns` from `hourlyCounts`) to
 * the hourly counters: SQLite's, which records a batch in several statements and counts its
 * attempts in the process (decision 59), where a window and a grouping cost its main thread
 * 27 µs a batch.
 */
export function addHourlyCountsSql(source: string): string {
  return `${into}
     SELECT ${workspaceOf("s")} AS workspace_id, s.destination_id, s.hour_start, s.succeeded,
       s.failed, s.last_attempt_at, s.last_status_code, s.last_success_at, s.last_failure_at,
       s.failing_since
     FROM (${source}) s
     WHERE true
     ${merged}`;
}

/** An attempt to count: where it went, when it started and what it was answered. */
export interface CountedAttempt {
  readonly workspaceId: string | null;
  readonly destinationId: string;
  readonly startedAt: number;
  readonly statusCode: number | null;
}

/**
 * The attempts counted by workspace, destination and hour, as `countAttemptsSql` counts them:
 * rows of `hourlyCountColumns`, one per destination and hour (a destination is of one
 * workspace for good). Where no attempt of a destination knew its workspace (an older
 * release's deliveries), the statement takes the destination's.
 */
export function hourlyCounts(attempts: readonly CountedAttempt[]): (string | number | null)[][] {
  interface Hour {
    workspaceId: string | null;
    destinationId: string;
    hourStart: number;
    succeeded: number;
    failed: number;
    /** The latest attempt with its status, as `countAttemptsSql`'s one number. */
    lastKey: number;
    lastSuccessAt: number | null;
    lastFailureAt: number | null;
    failures: number[];
  }
  const hours = new Map<string, Hour>();
  for (const { workspaceId, destinationId, startedAt, statusCode } of attempts) {
    const hourStart = startedAt - (startedAt % statsHourMs);
    const key = `${destinationId}\n${hourStart}`;
    let hour = hours.get(key);
    if (hour === undefined) {
      hour = {
        workspaceId,
        destinationId,
        hourStart,
        succeeded: 0,
        failed: 0,
        lastKey: -Infinity,
        lastSuccessAt: null,
        lastFailureAt: null,
        failures: [],
      };
      hours.set(key, hour);
    }
    hour.workspaceId ??= workspaceId;
    hour.lastKey = Math.max(hour.lastKey, startedAt * 1000 + (statusCode ?? 0));
    if (statusCode !== null && statusCode >= 200 && statusCode <= 299) {
      hour.succeeded += 1;
      hour.lastSuccessAt = Math.max(hour.lastSuccessAt ?? startedAt, startedAt);
    } else {
      hour.failed += 1;
      hour.lastFailureAt = Math.max(hour.lastFailureAt ?? startedAt, startedAt);
      hour.failures.push(startedAt);
    }
  }
  return [...hours.values()].map((hour) => {
    const lastSuccess = hour.lastSuccessAt;
    const since = hour.failures.filter((at) => lastSuccess === null || at > lastSuccess);
    return [
      hour.workspaceId,
      hour.destinationId,
      hour.hourStart,
      hour.succeeded,
      hour.failed,
      Math.floor(hour.lastKey / 1000),
      hour.lastKey % 1000 === 0 ? null : hour.lastKey % 1000,
      hour.lastSuccessAt,
      hour.lastFailureAt,
      since.length === 0 ? null : Math.min(...since),
    ];
  });
}
