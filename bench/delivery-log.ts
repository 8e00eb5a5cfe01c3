/**
 * `npm run bench:log -- [--rows 1000000] [--requests 400] [--sqlite-only | --postgres-only]`:
 * the delivery log's lists over one destination with `--rows` deliveries (issue 17). Fills a
 * fresh database of each engine with that many events and deliveries (2% failed, 1% pending,
 * the rest delivered, a minute of events per 6,000 rows), then times list requests through
 * the API (`inject()`, so the figures are the server's own, without a network): the first
 * page of the destination's deliveries, its first page of failed ones, a page 50 pages deep,
 * a time window an hour back, one delivery and one event by id, and the workspace's events
 * and failed deliveries; and the dashboard's delivery statistics (one attempt per delivery, all
 * of them inside its 24-hour window), of the workspace and of the destination. Prints p50/p99
 * per request and engine.
 */
import { join } from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import type { Database } from "../src/store/database.ts";
import { migrate } from "../src/store/migrate.ts";
import { openDatabase } from "../src/store/open-store.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../test/support/in-process-api.ts";
import { postgresDatabase } from "./postgres.ts";
import { argument, percentile, progress, round } from "./stats.ts";

const rows = Number(argument("--rows") ?? 1_000_000);
const requests = Number(argument("--requests") ?? 400);
/** The statistics read every attempt of the window: fewer requests of them. */
const statsRequests = Math.max(5, Math.ceil(requests / 20));
/** Rows per INSERT statement (and transaction): both engines take this comfortably. */
const chunk = 50_000;
/** Milliseconds between consecutive events: 6,000 a minute. */
const spacingMs = 10;

/**
 * Events and deliveries numbered `from`…`to`, made by the engine itself (a recursive CTE on
 * SQLite, generate_series on PostgreSQL): `evt_` ids carrying their time, as the
 * service's own do.
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
                              attempts, next_attempt_at, last_attempt_at, last_status_code,
                              created_at, updated_at)
      SELECT ${eventId}, $4, $3, 'job.completed',
             CASE WHEN i % 50 = 0 THEN 'failed' WHEN i % 100 = 1 THEN 'pending'
                  ELSE 'delivered' END,
             1, CASE WHEN i % 100 = 1 THEN ${time} END, ${time},
             CASE WHEN i % 50 = 0 THEN 500 ELSE 200 END, ${time}, ${time}
      FROM n`,
  };
}

interface ListFigures {
  readonly p50_ms: number;
  readonly p99_ms: number;
}

async function timeList(api: InProcessApi, path: string, count = requests): Promise<ListFigures> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    const response = await api.call("GET", path);
    times.push(performance.now() - started);
    if (response.statusCode !== 200)
      throw new Error(`${path}: ${response.statusCode} ${response.body}`);
  }
  return { p50_ms: round(percentile(times, 50), 2), p99_ms: round(percentile(times, 99), 2) };
}

async function measureEngine(location: string): Promise<Record<string, ListFigures>> {
  const api = await inProcessApi({ location });
  try {
    const created = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/bench` },
    });
    const destination = created.json<{ id: string }>().id;
    const db = openDatabase(location);
    const start = Date.now() - rows * spacingMs;
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
      // One attempt per delivery, when it was last attempted: what the statistics count.
      await db.execute(
        `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code)
         SELECT seq, 1, last_attempt_at, 5, last_status_code FROM deliveries`,
      );
      if (db.dialect === "postgres") await db.execute("ANALYZE");
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
      "delivery statistics of the workspace (24 h)": await timeList(
        api,
        "/delivery-stats",
        statsRequests,
      ),
      "delivery statistics of the destination (24 h)": await timeList(
        api,
        `/delivery-stats?destination=${destination}`,
        statsRequests,
      ),
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
