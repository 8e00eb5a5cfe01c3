/**
 * `npm run bench:log -- [--rows 1000000] [--requests 400] [--sqlite-only | --postgres-only]`:
 * the delivery log's lists over one destination with `--rows` deliveries (issue 17). Fills a
 * fresh database of each engine with that many events and deliveries, each attempted once
 * through the worker's own recording (`finishAttempts`, in batches, which keeps the delivery
 * statistics' counters too): 2% failed, 1% pending, the rest delivered, a minute of events per
 * 6,000 rows. Then times list requests through the API (`inject()`, so the figures are the
 * server's own, without a network): the first page of the destination's deliveries, its first
 * page of failed ones, a page 50 pages deep, a time window an hour back, one delivery and one
 * event by id, and the workspace's events and failed deliveries. And the dashboard's delivery
 * statistics (decision 36), all `--rows` attempts inside their 24-hour window: computed as the
 * route does (the route keeps an answer a second, so repeated requests would time its cache),
 * of the workspace and of the destination; requested with a new `?destination=` each time
 * (issue 27's way around that cache); and of a second workspace with 1,000 destinations each
 * attempted 4 times an hour for 24 hours. Prints p50/p99 per request and engine.
 */
import { join } from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import type { Database } from "../src/store/database.ts";
import { migrate } from "../src/store/migrate.ts";
import { openDatabase } from "../src/store/open-store.ts";
import { finishAttempts, type FinishedAttempt } from "../src/store/sql/deliveries.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../test/support/in-process-api.ts";
import { postgresDatabase } from "./postgres.ts";
import { argument, percentile, progress, round } from "./stats.ts";

const rows = Number(argument("--rows") ?? 1_000_000);
const requests = Number(argument("--requests") ?? 400);
/** Rows per INSERT statement (and transaction): both engines take this comfortably. */
const chunk = 50_000;
/** Milliseconds between consecutive events: 6,000 a minute. */
const spacingMs = 10;

/** Results recorded per `finishAttempts` call: a large batch of the worker's. */
const resultBatch = 5_000;
const hourMs = 3_600_000;

/**
 * Events and deliveries numbered `from`…`to`, made by the engine itself (a recursive CTE on
 * SQLite, generate_series on PostgreSQL): `evt_` ids carrying their time, as the
 * service's own do. The deliveries are claimed (`lease_owner` 'bench'), for `recordResults`.
 */
function fillSql(db: Database, start: number): { events: string; deliveries: string } {
  const numbers =
    db.dialect === "sqlite"
      ? "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)"
      : "WITH n(i) AS (SELECT generate_series(CAST($1 AS BIGINT), CAST($2 AS BIGINT)))";
  const hex = (expression: string, width: number) =>
    db.dialect === "sqlite"
      ? `printf('%0${width}x', ${expression})`
      : `lpad(to_hex(${expression}), ${width}, '0')`;
  const time = `(${start} + i * ${spacingMs})`;
  const eventId = `'evt_' || ${hex(time, 12)} || ${hex("i", 16)}`;
  // The notification as the service writes it, which a get of the event answers.
  const body = `'{"id":"' || ${eventId} || '","type":"job.completed","api_version":"2026-11-01","created":' || CAST(${time} / 1000 AS BIGINT) || ',"data":{"object":{"id":"bench"}}}'`;
  return {
    events: `${numbers}
      INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
      SELECT ${eventId}, $3, 'job.completed', ${body}, '2026-11-01', ${time} FROM n`,
    deliveries: `${numbers}
      INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
                              attempts, next_attempt_at, lease_owner, created_at, updated_at)
      SELECT ${eventId}, $4, $3, 'job.completed', 'pending', 0, ${time}, 'bench', ${time},
             ${time}
      FROM n`,
  };
}

/**
 * One attempt of every claimed delivery, begun when it was created, recorded as the worker
 * records them: by `seq`, 2% failed (500), 1% to be retried (503), the rest delivered (200).
 */
async function recordResults(db: Database, now: number): Promise<void> {
  let after = 0;
  for (;;) {
    const rows = await db.query<{ seq: number | string; created_at: number | string }>(
      `SELECT seq, created_at FROM deliveries WHERE lease_owner = 'bench' AND seq > $1
       ORDER BY seq LIMIT ${resultBatch}`,
      [after],
    );
    if (rows.length === 0) return;
    const reports = rows.map(({ seq, created_at }): FinishedAttempt => {
      const n = Number(seq);
      const statusCode = n % 50 === 0 ? 500 : n % 100 === 1 ? 503 : 200;
      const startedAt = new Date(Number(created_at));
      return {
        lease: "bench",
        seq: n,
        report: {
          attempt: { startedAt, durationMs: 5, statusCode, errorClass: null, responseBody: "" },
          result:
            statusCode === 200
              ? { status: "delivered" }
              : statusCode === 500
                ? { status: "failed", reason: "retries_exhausted" }
                : { status: "pending", nextAttemptAt: new Date(now + hourMs) },
          error: statusCode === 200 ? null : `the receiver answered ${statusCode}`,
        },
      };
    });
    await finishAttempts(db, reports, now);
    after = Number(rows.at(-1)?.seq);
  }
}

/**
 * A second workspace at the documented limit of destinations (`wideDestinations`), each
 * attempted `perHour` times an hour for the last 24 hours, recorded as above: one event per
 * round, fanned out to every destination.
 */
const wideDestinations = 1_000;
const perHour = 4;
async function fillWideWorkspace(db: Database, workspaceId: string, now: number): Promise<void> {
  const numbers =
    db.dialect === "sqlite"
      ? "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)"
      : "WITH n(i) AS (SELECT generate_series(1, CAST($1 AS INTEGER)))";
  const rounds = 24 * perHour;
  const start = now - 24 * hourMs;
  await db.transaction(async (tx) => {
    await tx.execute(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, 'wide', $2)`, [
      workspaceId,
      now,
    ]);
    await tx.execute(
      `${numbers} INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext,
         created_at, updated_at)
       SELECT 'dst_wide_' || i, $2, 'https://hooks.test/wide', $3, 'sealed', $4, $4 FROM n`,
      [wideDestinations, workspaceId, db.dialect === "sqlite" ? 1 : true, now],
    );
    const time = `(CAST($3 AS BIGINT) + i * ${hourMs / perHour})`;
    await tx.execute(
      `${numbers} INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
       SELECT 'evt_wide_' || i, $2, 'job.completed', '{}', '2026-11-01', ${time} FROM n`,
      [rounds, workspaceId, start],
    );
    await tx.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
         attempts, next_attempt_at, lease_owner, created_at, updated_at)
       SELECT e.id, d.id, $1, 'job.completed', 'pending', 0, e.created_at, 'bench', e.created_at,
         e.created_at
       FROM events e JOIN destinations d ON d.workspace_id = e.workspace_id
       WHERE e.workspace_id = $1`,
      [workspaceId],
    );
  });
  await recordResults(db, now);
}

interface ListFigures {
  readonly p50_ms: number;
  readonly p99_ms: number;
}

async function timed(count: number, work: (index: number) => Promise<void>): Promise<ListFigures> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await work(index);
    times.push(performance.now() - started);
  }
  return { p50_ms: round(percentile(times, 50), 2), p99_ms: round(percentile(times, 99), 2) };
}

/** `path` (a function of the request's number, for a new query each time) `count` times. */
function timeList(
  api: InProcessApi,
  path: string | ((index: number) => string),
  count = requests,
): Promise<ListFigures> {
  return timed(count, async (index) => {
    const url = typeof path === "string" ? path : path(index);
    const response = await api.call("GET", url);
    if (response.statusCode !== 200)
      throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  });
}

/** The statistics as the route computes them, without its cache. */
function timeStats(
  api: InProcessApi,
  workspaceId: string,
  destinationId: string | null,
  now: number,
): Promise<ListFigures> {
  const since = new Date(now - (now % hourMs) - 23 * hourMs);
  return timed(requests, async () => {
    const [, health] = await Promise.all([
      api.store.log.attemptBuckets(workspaceId, destinationId, {
        since,
        bucketMs: hourMs,
        buckets: 24,
      }),
      api.store.log.destinationHealth(workspaceId, destinationId, since),
    ]);
    if (health.length === 0) throw new Error(`no statistics for ${workspaceId}`);
  });
}

async function measureEngine(location: string): Promise<Record<string, ListFigures>> {
  const api = await inProcessApi({ location });
  try {
    const created = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/bench` },
    });
    const destination = created.json<{ id: string }>().id;
    const db = openDatabase(location);
    const now = Date.now();
    const start = now - rows * spacingMs;
    try {
      await migrate(db);
      const sql = fillSql(db, start);
      for (let from = 1; from <= rows; from += chunk) {
        const to = Math.min(rows, from + chunk - 1);
        await db.transaction(async (tx) => {
          await tx.execute(sql.events, [from, to, api.workspaceId]);
          await tx.execute(sql.deliveries, [from, to, api.workspaceId, destination]);
        });
        if (to % 200_000 === 0 || to === rows) progress(`  ${to} rows`);
      }
      progress(`  recording ${rows} attempts`);
      await recordResults(db, now);
      progress(`  a workspace of ${wideDestinations} destinations`);
      await fillWideWorkspace(db, "ws_wide", now);
      if (db.dialect === "postgres") await db.execute("VACUUM ANALYZE");
    } finally {
      await db.close();
    }
    const list = `/deliveries?destination=${destination}`;
    let deep: string | null = null;
    for (let page = 0; page < 50; page += 1) {
      const response = await api.call("GET", `${list}${deep === null ? "" : `&cursor=${deep}`}`);
      deep = response.json<{ next_cursor: string | null }>().next_cursor;
    }
    const first = await api.call("GET", `${list}&limit=1`);
    const [newest] = first.json<{ data: { id: string; event_id: string }[] }>().data;
    if (newest === undefined) throw new Error("the list is empty");
    const hourAgo = new Date(start + rows * spacingMs - 3_600_000).toISOString();
    const twoHoursAgo = new Date(start + rows * spacingMs - 7_200_000).toISOString();
    return {
      "deliveries of the destination, first page": await timeList(api, list),
      "its failed deliveries, first page": await timeList(api, `${list}&status=failed`),
      "its deliveries, 50 pages deep": await timeList(api, `${list}&cursor=${deep ?? ""}`),
      "its deliveries an hour back (since, until)": await timeList(
        api,
        `${list}&since=${twoHoursAgo}&until=${hourAgo}`,
      ),
      "one delivery with its attempts (get)": await timeList(api, `/deliveries/${newest.id}`),
      "one event with its deliveries (get)": await timeList(api, `/events/${newest.event_id}`),
      "the workspace's events, first page": await timeList(api, "/events"),
      "the workspace's failed deliveries, first page": await timeList(
        api,
        "/deliveries?status=failed",
      ),
      "delivery statistics of the workspace (24 h), computed": await timeStats(
        api,
        api.workspaceId,
        null,
        now,
      ),
      "delivery statistics of the destination (24 h), computed": await timeStats(
        api,
        api.workspaceId,
        destination,
        now,
      ),
      "delivery statistics, a new ?destination= each request": await timeList(
        api,
        (index) => `/delivery-stats?destination=dst_${index}`,
      ),
      [`delivery statistics of a workspace of ${wideDestinations} destinations, computed`]:
        await timeStats(api, "ws_wide", null, now),
    };
  } finally {
    await api.dispose();
  }
}

const results: Record<string, Record<string, ListFigures>> = {};
if (!process.argv.includes("--postgres-only")) {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-log-"));
  try {
    progress(`delivery log on SQLite: ${rows} deliveries of one destination…`);
    results.sqlite = await measureEngine(join(dir, "svc.db"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
if (!process.argv.includes("--sqlite-only")) {
  const database = postgresDatabase();
  if ("skipped" in database) {
    progress(`PostgreSQL skipped: ${database.skipped}`);
  } else {
    try {
      progress(`delivery log on PostgreSQL: ${rows} deliveries of one destination…`);
      results.postgres = await measureEngine(database.url);
    } finally {
      database.drop();
    }
  }
}
process.stdout.write(`${JSON.stringify({ rows, requests, ...results }, null, 2)}\n`);
