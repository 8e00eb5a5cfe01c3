import type { Database, SqlValue } from "../database.ts";
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
 * `INDEXED BY delivery_stats_hourly_by_destination` on SQLite, for reads of one destination's
 * hours: without statistics (the store never runs ANALYZE) SQLite takes the primary key's
 * range (workspace_id, hour_start) instead and reads every destination's hours of the window,
 * 24,000 rows at 1,000 destinations for each one. PostgreSQL plans by its statistics.
 */
function byDestination(db: Database): string {
  return db.dialect === "sqlite" ? "INDEXED BY delivery_stats_hourly_by_destination" : "";
}

/**
 * The counters of the window, `$1` the workspace, `$2` the window's start: the workspace's
 * rows from `since` on, a range of the primary key (workspace_id, hour_start,
 * destination_id) in the order of the hours; or one destination's, a range of
 * `delivery_stats_hourly_by_destination` (workspace_id, destination_id, hour_start).
 */
function windowRows(db: Database, destinationId: string | null, values: SqlValue[]): string {
  if (destinationId === null) {
    return "FROM delivery_stats_hourly WHERE workspace_id = $1 AND hour_start >= $2";
  }
  values.push(destinationId);
  return `FROM delivery_stats_hourly ${byDestination(db)}
    WHERE workspace_id = $1 AND destination_id = $${values.length} AND hour_start >= $2`;
}

/** The counters are hourly: a window must start on an hour and its buckets be whole hours. */
function assertHourly(since: number, bucketMs: number): void {
  if (since % statsHourMs !== 0 || bucketMs % statsHourMs !== 0) {
    throw new Error(`A statistics window of whole hours is needed, not ${since}/${bucketMs} ms`);
  }
}

/** Every bucket of the window, oldest first, those without attempts as zeros. */
export async function selectAttemptBuckets(
  db: Database,
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
     ${windowRows(db, destinationId, values)}
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
 * its hourly counters: one aggregate of the window's rows by destination. The last attempt's
 * status code comes with its time as one number (`last_attempt_at * 1000 + status`, 0 for no
 * answer), so that one aggregate finds both. `failing_since`: the first failure after the
 * last success is the `failing_since` of the first hour, from the last success's on, that has
 * one (that hour's is the first failure after its last success; a later hour has no success,
 * so its own is its first failure, and it has one); with no success in the window, of its
 * first hour. A probe per destination finds it, a range of
 * `delivery_stats_hourly_by_destination` in hour order that stops at its first row with one:
 * one or two rows. (A window function over the rows took SQLite 30 ms more at 1,000
 * destinations; the earliest of every hour's from the last success's on, up to 24 rows a
 * destination, 15 ms more when all of them failed.)
 */
export async function selectDestinationHealth(
  db: Database,
  workspaceId: string,
  destinationId: string | null,
  since: Date,
): Promise<DestinationHealth[]> {
  assertHourly(since.getTime(), statsHourMs);
  const values: SqlValue[] = [workspaceId, since.getTime()];
  const rows = await db.query<HealthRow>(
    `SELECT g.destination_id, g.attempts, g.succeeded, g.last_attempt_at, g.last_attempt_key,
       (SELECT x.failing_since FROM delivery_stats_hourly x ${byDestination(db)}
        WHERE x.workspace_id = $1 AND x.destination_id = g.destination_id
          AND x.hour_start >= CASE WHEN g.last_success_at IS NULL THEN $2
            ELSE g.last_success_at - g.last_success_at % ${statsHourMs} END
          AND x.failing_since IS NOT NULL
        ORDER BY x.hour_start LIMIT 1
       ) AS first_failure_after
     FROM (
       SELECT destination_id, SUM(succeeded + failed) AS attempts, SUM(succeeded) AS succeeded,
         MAX(last_attempt_at) AS last_attempt_at,
         MAX(last_attempt_at * 1000 + COALESCE(last_status_code, 0)) AS last_attempt_key,
         MAX(last_success_at) AS last_success_at
       ${windowRows(db, destinationId, values)}
       GROUP BY destination_id
     ) g`,
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
