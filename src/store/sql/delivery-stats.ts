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

/** Every bucket of the window, oldest first, those without attempts as zeros. */
export async function selectAttemptBuckets(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string | null,
  window: AttemptWindow,
): Promise<AttemptBucket[]> {
  const since = window.since.getTime();
  const values: SqlValue[] = [workspaceId, since, window.bucketMs];
  let destinationCondition = "";
  if (destinationId !== null) {
    values.push(destinationId);
    destinationCondition = `AND d.destination_id = $${values.length}`;
  }
  const rows = await db.query<{
    bucket: number | string;
    succeeded: number | string;
    total: number | string;
  }>(
    `SELECT CAST((a.started_at - $2) / $3 AS INTEGER) AS bucket,
       SUM(${success}) AS succeeded, COUNT(*) AS total
     FROM delivery_attempts a JOIN deliveries d ON d.seq = a.delivery_seq
     WHERE a.started_at >= $2 AND d.workspace_id = $1 ${destinationCondition}
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
  last_success_at: number | string | null;
  first_failure_after: number | string | null;
}

/** The health of each destination of the workspace that was attempted since `since`. */
export async function selectDestinationHealth(
  db: SqlExecutor,
  workspaceId: string,
  since: Date,
): Promise<DestinationHealth[]> {
  const rows = await db.query<HealthRow & { last_status_code: number | string | null }>(
    `WITH tried AS (
       SELECT d.destination_id, a.started_at, a.status_code, ${success} AS ok
       FROM delivery_attempts a JOIN deliveries d ON d.seq = a.delivery_seq
       WHERE a.started_at >= $2 AND d.workspace_id = $1
     ),
     last_success AS (
       SELECT destination_id, MAX(CASE WHEN ok = 1 THEN started_at END) AS at
       FROM tried GROUP BY destination_id
     )
     SELECT t.destination_id, COUNT(*) AS attempts, SUM(t.ok) AS succeeded,
       MAX(t.started_at) AS last_attempt_at, s.at AS last_success_at,
       MIN(CASE WHEN t.ok = 0 AND (s.at IS NULL OR t.started_at > s.at)
         THEN t.started_at END) AS first_failure_after,
       (SELECT l.status_code FROM tried l WHERE l.destination_id = t.destination_id
        ORDER BY l.started_at DESC LIMIT 1) AS last_status_code
     FROM tried t JOIN last_success s ON s.destination_id = t.destination_id
     GROUP BY t.destination_id, s.at`,
    [workspaceId, since.getTime()],
  );
  return rows.map((row) => ({
    destinationId: row.destination_id,
    attempts: Number(row.attempts),
    succeeded: Number(row.succeeded),
    lastAttemptAt: toNullableDate(row.last_attempt_at),
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    failingSince: toNullableDate(row.first_failure_after),
  }));
}
