import { spawnSync } from "node:child_process";
import { DatabaseSync } from "node:sqlite";

/**
 * A day of delivery history written straight into the database, in seconds rather than the
 * minutes the worker would take to make it: `count` attempts, one per delivery, spread evenly
 * over the last 23 hours (inside the delivery-stats window of 24 hourly buckets ending with the
 * current one), across `destinationIds` in turn; one in ten a 500, the others a 200. The rows
 * are what the worker writes (events, deliveries ended `delivered`/`failed`, one attempt each,
 * kept in the delivery's row as decision 53 keeps an attempt that ends its delivery), so that
 * every read of the delivery log sees them as real.
 *
 * The same statements run on both engines (`WITH RECURSIVE`, plain integers for times): SQLite
 * through node:sqlite, PostgreSQL through psql. Values are the bench's own (ids it made,
 * numbers), written into the text.
 *
 * Delivery statistics are read from counters kept per destination and hour as attempts are
 * recorded (decision 36): the last statement fills them from the seeded attempts, as
 * migration 10 does for the attempts an upgrade finds.
 */
export function seedAttempts(options: {
  /** The SQLite file, or a postgres:// URL. */
  database: string;
  workspaceId: string;
  destinationIds: readonly string[];
  count: number;
  now: number;
}): void {
  const statements = seedStatements(options);
  if (options.database.startsWith("postgres")) {
    const run = spawnSync(
      "psql",
      [options.database, "-v", "ON_ERROR_STOP=1", "-q", "-c", statements.join(";\n")],
      { encoding: "utf8" },
    );
    if (run.status !== 0) throw new Error(`seeding failed: ${run.stderr || String(run.error)}`);
    return;
  }
  const db = new DatabaseSync(options.database);
  try {
    // The server holds the same file open; wait for its writes rather than fail.
    db.exec("PRAGMA busy_timeout = 10000");
    db.exec("BEGIN IMMEDIATE");
    for (const statement of statements) db.exec(statement);
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** One SQL string literal of a value the bench made itself (ids are [a-z0-9_]). */
function literal(value: string): string {
  if (!/^[a-z0-9_]+$/.test(value)) throw new Error(`not a bench id: ${value}`);
  return `'${value}'`;
}

function seedStatements(options: {
  workspaceId: string;
  destinationIds: readonly string[];
  count: number;
  now: number;
}): string[] {
  const { count, now } = options;
  const destinations = options.destinationIds.length;
  const events = Math.ceil(count / destinations);
  const spacingMs = Math.floor((23 * 3_600_000) / count);
  const workspace = literal(options.workspaceId);
  const numbers = (last: number) =>
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${last})`;
  const destinationTable = options.destinationIds
    .map((id, index) => `(${index}, ${literal(id)})`)
    .join(", ");
  return [
    `${numbers(events - 1)}
     INSERT INTO events (id, workspace_id, type, body, created_at)
     SELECT 'evt_seed_' || i, ${workspace}, 'job.completed', '{"id":"job_seed"}',
       ${now} - (i * ${destinations} + ${destinations - 1}) * ${spacingMs} FROM n`,
    `${numbers(count - 1)}, dst(k, id) AS (VALUES ${destinationTable})
     INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
       attempts, last_attempt_at, last_status_code, created_at, updated_at, first_started_at,
       first_duration_ms, first_status_code)
     SELECT 'evt_seed_' || (i / ${destinations}), dst.id, ${workspace}, 'job.completed',
       CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'delivered' END, 1,
       ${now} - i * ${spacingMs}, CASE WHEN i % 10 = 0 THEN 500 ELSE 200 END,
       ${now} - i * ${spacingMs}, ${now} - i * ${spacingMs}, ${now} - i * ${spacingMs}, 40,
       CASE WHEN i % 10 = 0 THEN 500 ELSE 200 END
     FROM n JOIN dst ON dst.k = i % ${destinations}`,
    `INSERT INTO delivery_stats_hourly (workspace_id, destination_id, hour_start, succeeded,
       failed, last_attempt_at, last_status_code, last_success_at, last_failure_at, failing_since)
     SELECT workspace_id, destination_id, hour_start, SUM(ok), SUM(1 - ok), MAX(started_at),
       NULLIF(MAX(started_at * 1000 + status_code) % 1000, 0),
       MAX(CASE WHEN ok = 1 THEN started_at END), MAX(CASE WHEN ok = 0 THEN started_at END),
       MIN(CASE WHEN ok = 0 AND (hour_success IS NULL OR started_at > hour_success)
         THEN started_at END)
     FROM (
       SELECT t.*, MAX(CASE WHEN ok = 1 THEN started_at END)
         OVER (PARTITION BY destination_id, hour_start) AS hour_success
       FROM (
         SELECT workspace_id, destination_id, first_started_at AS started_at,
           first_status_code AS status_code,
           first_started_at - first_started_at % 3600000 AS hour_start,
           CASE WHEN first_status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END AS ok
         FROM deliveries
         WHERE workspace_id = ${workspace} AND event_id LIKE 'evt_seed_%'
       ) t
     ) b
     GROUP BY workspace_id, destination_id, hour_start`,
  ];
}
