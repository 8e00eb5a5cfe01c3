import type { SqlExecutor, SqlValue } from "../database.ts";
import { statsHourMs } from "./count-attempts.ts";
import { toNullableDate } from "./rows.ts";

/**
 * What the dashboard's chart and health column read (decisions 35 and 36): counts of attempts,
 * not of deliveries, because an attempt is what a receiver answered and when. A 2xx answer is
 * a success, as the worker judges it; anything else (another status, no answer) a failure.
 * Both statements read the hourly counters kept as attempts are recorded
 * (`delivery_stats_hourly`, see ./count-attempts.ts), never the attempts: a window is one range
 * of the counters' key, 24 rows per destination attempted in it, whatever the day's volume.
 */

/** Attempts in one bucket of time that began at `start`. */
export interface AttemptBucket {
  readonly start: Date;
  readonly succeeded: number;
  readonly failed: number;
}

/** How one destination has fared in the window. */
export interface DestinationHealth {
  readonly destinationId: string;
  readonly attempts: number;
  readonly succeeded: number;
  readonly lastAttemptAt: Date | null;
  readonly lastStatusCode: number | null;
  /**
   * The first failed attempt after the last success: when it began failing, as far as the
   * window shows. Null when the last attempt succeeded.
   */
  readonly failingSince: Date | null;
}

export interface AttemptWindow {
  readonly since: Date;
  readonly bucketMs: number;
  readonly buckets: number;
}

/**
 * The counters of the window: the workspace's rows from `since` on, a range of the primary
 * key (workspace_id, hour_start, destination_id); or one destination's, a range of
 * `delivery_stats_hourly_by_destination`. `$1` is the workspace, `$2` the window's start.
 */
function windowRows(destinationId: string | null, values: SqlValue[]): string {
  let onlyDestination = "";
  if (destinationId !== null) {
    values.push(destinationId);
    onlyDestination = `AND destination_id = $${values.length}`;
  }
  return `SELECT destination_id, hour_start, succeeded, failed, last_attempt_at,
      last_status_code, last_success_at, failing_since
    FROM delivery_stats_hourly WHERE workspace_id = $1 AND hour_start >= $2 ${onlyDestination}`;
}

/** The counters are hourly: a window must start on an hour and its buckets be whole hours. */
function assertHourly(since: number, bucketMs: number): void {
  if (since % statsHourMs !== 0 || bucketMs % statsHourMs !== 0) {
    throw new Error(`A statistics window of whole hours is needed, not ${since}/${bucketMs} ms`);
  }
}

/** Every bucket of the window, oldest first, those without attempts as zeros. */
export async function selectAttemptBuckets(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string | null,
  window: AttemptWindow,
): Promise<AttemptBucket[]> {
  const since = window.since.getTime();
  assertHourly(since, window.bucketMs);
  const values: SqlValue[] = [workspaceId, since];
  const rows = await db.query<{
    hour_start: number | string;
    succeeded: number | string;
    failed: number | string;
  }>(
    `SELECT hour_start, SUM(succeeded) AS succeeded, SUM(failed) AS failed
     FROM (${windowRows(destinationId, values)}) h
     GROUP BY hour_start`,
    values,
  );
  const buckets = Array.from({ length: window.buckets }, (_, index) => ({
    start: new Date(since + index * window.bucketMs),
    succeeded: 0,
    failed: 0,
  }));
  for (const row of rows) {
    const bucket = buckets[Math.floor((Number(row.hour_start) - since) / window.bucketMs)];
    if (bucket === undefined) continue;
    bucket.succeeded += Number(row.succeeded);
    bucket.failed += Number(row.failed);
  }
  return buckets;
}

interface HealthRow extends Record<string, unknown> {
  destination_id: string;
  attempts: number | string;
  succeeded: number | string;
  last_attempt_at: number | string | null;
  last_attempt_key: number | string | null;
  first_failure_after: number | string | null;
}

/**
 * The health of each destination of the workspace (or of one) attempted since `since`, from
 * its hourly counters. The last attempt's status code comes with its time as one number
 * (`last_attempt_at * 1000 + status`, 0 for no answer), so that one aggregate finds both.
 * `failing_since`: the hour of the last success holds the first failure after it; a later
 * hour, which has no success, its first failure; with no success in the window, every hour
 * its first failure. The earliest of those is the first failure after the last success.
 */
export async function selectDestinationHealth(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string | null,
  since: Date,
): Promise<DestinationHealth[]> {
  assertHourly(since.getTime(), statsHourMs);
  const values: SqlValue[] = [workspaceId, since.getTime()];
  const rows = await db.query<HealthRow>(
    `WITH h AS (${windowRows(destinationId, values)}),
     last_success AS (
       SELECT destination_id, MAX(last_success_at) AS at FROM h GROUP BY destination_id
     )
     SELECT h.destination_id, SUM(h.succeeded + h.failed) AS attempts,
       SUM(h.succeeded) AS succeeded, MAX(h.last_attempt_at) AS last_attempt_at,
       MAX(h.last_attempt_at * 1000 + COALESCE(h.last_status_code, 0)) AS last_attempt_key,
       MIN(CASE WHEN s.at IS NULL OR h.hour_start > s.at OR h.last_success_at = s.at
         THEN h.failing_since END) AS first_failure_after
     FROM h JOIN last_success s ON s.destination_id = h.destination_id
     GROUP BY h.destination_id`,
    values,
  );
  return rows.map((row) => {
    const lastStatusCode = Number(row.last_attempt_key ?? 0) % 1000;
    return {
      destinationId: row.destination_id,
      attempts: Number(row.attempts),
      succeeded: Number(row.succeeded),
      lastAttemptAt: toNullableDate(row.last_attempt_at),
      lastStatusCode: lastStatusCode === 0 ? null : lastStatusCode,
      failingSince: toNullableDate(row.first_failure_after),
    };
  });
}
