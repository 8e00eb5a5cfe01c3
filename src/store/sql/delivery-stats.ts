import type { SqlExecutor, SqlValue } from "../database.ts";
import { toNullableDate } from "./rows.ts";

/**
 * What the dashboard's chart and health column read (decision 35): counts of attempts, not of
 * deliveries, because an attempt is what a receiver answered and when. A 2xx answer is a
 * success, as the worker judges it; anything else (another status, no answer) a failure.
 * Both statements read the attempts of one window through `delivery_attempts_by_time` and join
 * their deliveries for the workspace: a dashboard's window is a day, a few thousand rows a
 * minute at the rates the service is measured at.
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

const success = "CASE WHEN a.status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END";

/** `AND d.destination_id = $n` when one destination is asked for, its value added to `values`. */
function destinationCondition(destinationId: string | null, values: SqlValue[]): string {
  if (destinationId === null) return "";
  values.push(destinationId);
  return `AND d.destination_id = $${values.length}`;
}

/** Every bucket of the window, oldest first, those without attempts as zeros. */
export async function selectAttemptBuckets(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string | null,
  window: AttemptWindow,
): Promise<AttemptBucket[]> {
  const since = window.since.getTime();
  const values: SqlValue[] = [workspaceId, since, window.bucketMs];
  const onlyDestination = destinationCondition(destinationId, values);
  const rows = await db.query<{
    bucket: number | string;
    succeeded: number | string;
    total: number | string;
  }>(
    `SELECT CAST((a.started_at - $2) / $3 AS INTEGER) AS bucket,
       SUM(${success}) AS succeeded, COUNT(*) AS total
     FROM delivery_attempts a JOIN deliveries d ON d.seq = a.delivery_seq
     WHERE a.started_at >= $2 AND d.workspace_id = $1 ${onlyDestination}
     GROUP BY 1`,
    values,
  );
  const counts = new Map(rows.map((row) => [Number(row.bucket), row]));
  return Array.from({ length: window.buckets }, (_, index) => {
    const row = counts.get(index);
    const succeeded = Number(row?.succeeded ?? 0);
    return {
      start: new Date(since + index * window.bucketMs),
      succeeded,
      failed: Number(row?.total ?? 0) - succeeded,
    };
  });
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
 * The health of each destination of the workspace (or of one) attempted since `since`. The last
 * attempt's status code comes with its time as one number (`started_at * 1000 + status`, 0
 * for no answer), so that one aggregate finds both: a subquery per destination would read the
 * window again for each.
 */
export async function selectDestinationHealth(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string | null,
  since: Date,
): Promise<DestinationHealth[]> {
  const values: SqlValue[] = [workspaceId, since.getTime()];
  const onlyDestination = destinationCondition(destinationId, values);
  const rows = await db.query<HealthRow>(
    `WITH tried AS (
       SELECT d.destination_id, a.started_at, a.status_code, ${success} AS ok
       FROM delivery_attempts a JOIN deliveries d ON d.seq = a.delivery_seq
       WHERE a.started_at >= $2 AND d.workspace_id = $1 ${onlyDestination}
     ),
     last_success AS (
       SELECT destination_id, MAX(CASE WHEN ok = 1 THEN started_at END) AS at
       FROM tried GROUP BY destination_id
     )
     SELECT t.destination_id, COUNT(*) AS attempts, SUM(t.ok) AS succeeded,
       MAX(t.started_at) AS last_attempt_at,
       MAX(t.started_at * 1000 + COALESCE(t.status_code, 0)) AS last_attempt_key,
       MIN(CASE WHEN t.ok = 0 AND (s.at IS NULL OR t.started_at > s.at)
         THEN t.started_at END) AS first_failure_after
     FROM tried t JOIN last_success s ON s.destination_id = t.destination_id
     GROUP BY t.destination_id`,
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
