/**
 * `npm run bench:volume -- [--rows 10000000] [--expired 100000] [--deliveries 20000]
 * [--warmup 5000] [--requests 300] [--rounds 3] [--sqlite-only | --postgres-only] [--keep]`:
 * whether the service stays flat as its tables grow (issue 32, decision 50). For each engine, a
 * database with no history and one with `--rows` deliveries of history, each behind a running
 * `svc server` of its own, measured the same way in `--rounds` alternating rounds (empty, full,
 * empty, full…) so that a drift of the machine's speed falls on both; the table gives each
 * state's median over the rounds and the change of the medians. Each round measures:
 * - delivery throughput and publish p99 (`measureThroughput`: 32 publishers, every delivery
 *   received at a loopback HTTPS receiver), with the server's CPU and PostgreSQL backends' CPU
 *   per delivery;
 * - a delivery-log page's p50/p99: the destination's first page of 100, a page of 100 fifty
 *   pages deep, the workspace's first page of events; and after the rounds, the same pages
 *   of both states timed request by request in turn (`interleavedPages`), whose p99s a drift
 *   of the machine moves less;
 * - a retention pass (`pruneAttempts` and `pruneEvents` as the hourly maintenance runs them)
 *   over `--expired` deliveries past retention, the same in both databases: each round's pass
 *   has its own set of expired deliveries (the oldest set first, each a day older than the
 *   next) and a cutoff that takes that set alone; its time, its CPU (this process's, where
 *   SQLite's statements run; on PostgreSQL also the cluster's), the longest the pass held the
 *   process's main thread, and on PostgreSQL with `pg_stat_statements` the shared blocks its
 *   statements touched per row removed and the share of them read from the operating system
 *   (the work, apart from where it was found).
 *
 * The history is written by the engine itself (generate_series on PostgreSQL, a recursive CTE
 * on SQLite), in transactions of `chunk` events: half as many events as deliveries (each event
 * to two destinations, one the bench's receiver), spread over the 29 days before the last
 * hour; 2% failed after 3 attempts, 0.1% pending a retry due in 6 hours, the rest delivered at
 * the first; the first attempt of one delivered at the first in its row, and every other
 * attempt a row of its own, as the service records them (decision 53). The expired deliveries are the same mix, all ended,
 * 31 to 35 days old. PostgreSQL's is vacuumed and analysed after the fill, as autovacuum would.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { systemClock } from "../src/interfaces.ts";
import type { Database } from "../src/store/database.ts";
import { openDatabase, openStore } from "../src/store/open-store.ts";
import { createTestCa } from "../test/support/tls.ts";
import { measureThroughput, register } from "./measure.ts";
import {
  databaseOf,
  postgresClusterCpuMs,
  postgresCpuMs,
  postgresDatabase,
  startBlockCounts,
  startStatementCounts,
} from "./postgres.ts";
import { startBenchReceiver, type BenchReceiver } from "./receiver.ts";
import { startBenchService, type BenchService } from "./service.ts";
import { argument, cpuMs, percentile, progress, round } from "./stats.ts";

const rows = Number(argument("--rows") ?? 10_000_000);
const expired = Number(argument("--expired") ?? 100_000);
const deliveries = Number(argument("--deliveries") ?? 20_000);
const warmup = Number(argument("--warmup") ?? 5_000);
const requests = Number(argument("--requests") ?? 300);
const rounds = Number(argument("--rounds") ?? 3);
/** Keeps the full database for inspection (its location goes to stderr) instead of dropping it. */
const keep = process.argv.includes("--keep");
/**
 * Events per fill transaction (twice as many deliveries). The server runs on the same
 * database meanwhile: on SQLite a larger transaction held the write lock (and grew the WAL
 * its checkpointer copies) long enough, on a loaded machine, for a write of the server's to
 * outwait its 5 s busy timeout.
 */
const chunk = 20_000;
const dayMs = 86_400_000;

/** How old the newest delivery of expired set `set` (1 the oldest) is: 31 days for the last. */
function expiredSetAgeMs(set: number): number {
  return (31 + 2 * (rounds - set)) * dayMs;
}

interface Figures {
  deliveries_per_s: number;
  publish_p99_ms: number;
  server_us_per_delivery: number;
  postgres_us_per_delivery: number;
  log_first_page_p50_ms: number;
  log_first_page_p99_ms: number;
  log_deep_page_p50_ms: number;
  log_deep_page_p99_ms: number;
  events_page_p50_ms: number;
  events_page_p99_ms: number;
  retention_pass_ms: number;
  retention_rows: number;
  retention_longest_hold_ms: number;
  retention_longest_cpu_hold_ms: number;
  retention_cpu_ms: number;
  retention_postgres_cpu_ms: number;
  /** PostgreSQL: shared blocks the pass's statements touched per row removed. */
  retention_blocks_per_row: number;
  /** PostgreSQL: the share of those read from the operating system, not found in its buffers. */
  retention_blocks_read_pct: number;
  load_average: number;
}

/**
 * Events `from`…`to` of the history and their deliveries to `destinations` (two), published
 * `stepMs` apart from `start` (event `from` at `start`), with their attempts.
 */
async function fillChunk(
  db: Database,
  ids: { workspace: string; destinations: readonly [string, string] },
  range: { from: number; to: number; start: number; stepMs: number; pendingDueAt: number | null },
): Promise<void> {
  const numbers =
    db.dialect === "sqlite"
      ? "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)"
      : "WITH n(i) AS (SELECT generate_series(CAST($1 AS BIGINT), CAST($2 AS BIGINT)))";
  const hex = (expression: string, width: number): string =>
    db.dialect === "sqlite"
      ? `printf('%0${width}x', ${expression})`
      : `lpad(to_hex(${expression}), ${width}, '0')`;
  const time = `(CAST($3 AS BIGINT) + (i - $1) * $4)`;
  const eventId = `'evt_' || ${hex(time, 12)} || ${hex("i", 16)}`;
  const body = `'{"id":"' || ${eventId} || '","type":"job.completed","api_version":"2026-11-01","data":{"object":{"id":"volume"}}}'`;
  const pending = range.pendingDueAt === null ? "" : `WHEN i % 1000 = 7 THEN 'pending'`;
  const params = [range.from, range.to, range.start, range.stepMs];
  await db.transaction(async (tx) => {
    const [first] = await tx.query<{ seq: number | string | null }>(
      "SELECT MAX(seq) AS seq FROM deliveries",
    );
    const after = Number(first?.seq ?? 0);
    await tx.execute(
      `${numbers} INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
       SELECT ${eventId}, $5, 'job.completed', ${body}, '2026-11-01', ${time} FROM n`,
      [...params, ids.workspace],
    );
    await tx.execute(
      `${numbers}, s(i, status) AS (
         SELECT i, CASE WHEN i % 50 = 0 THEN 'failed' ${pending} ELSE 'delivered' END FROM n)
       INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
         attempts, next_attempt_at, last_attempt_at, last_status_code, last_error,
         failure_reason, created_at, updated_at, first_started_at, first_duration_ms,
         first_status_code, first_error_class)
       SELECT ${eventId}, dst.id, $5, 'job.completed', s.status,
         CASE s.status WHEN 'failed' THEN 3 ELSE 1 END,
         CASE s.status WHEN 'pending' THEN CAST($8 AS BIGINT) END,
         ${time} + CASE s.status WHEN 'failed' THEN 120000 ELSE 0 END,
         CASE s.status WHEN 'delivered' THEN 200 ELSE 503 END,
         CASE s.status WHEN 'delivered' THEN NULL ELSE 'the receiver answered 503' END,
         CASE s.status WHEN 'failed' THEN 'retries_exhausted' END,
         ${time}, ${time}, CASE s.status WHEN 'delivered' THEN ${time} END,
         CASE s.status WHEN 'delivered' THEN 40 END,
         CASE s.status WHEN 'delivered' THEN 200 END, NULL
       FROM s CROSS JOIN (SELECT CAST($6 AS TEXT) AS id UNION ALL SELECT CAST($7 AS TEXT)) dst`,
      [...params, ids.workspace, ...ids.destinations, range.pendingDueAt],
    );
    await tx.execute(
      `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms,
         status_code, error_class)
       SELECT d.seq, k.k, d.created_at + (k.k - 1) * 60000, 40,
         CASE WHEN d.status = 'delivered' THEN 200 ELSE 503 END,
         CASE WHEN d.status = 'delivered' THEN NULL ELSE 'http_status' END
       FROM deliveries d JOIN (SELECT 1 AS k UNION ALL SELECT 2 UNION ALL SELECT 3) k
         ON k.k <= d.attempts
       WHERE d.seq > $1 AND d.status <> 'delivered'`,
      [after],
    );
  });
}

/**
 * The history: `rounds` sets of `expired` deliveries past retention (set 1 the oldest, 31 + 2 ×
 * (rounds − k) to 33 + 2 × (rounds − k) days old for set k, published in that order, so that
 * the retention walk meets them oldest first), then `kept` deliveries, written in chunks.
 */
async function fillHistory(
  location: string,
  ids: { workspace: string; destinations: readonly [string, string] },
  kept: number,
  now: number,
): Promise<void> {
  const db = openDatabase(location);
  try {
    const fill = async (
      events: number,
      firstIndex: number,
      span: { start: number; end: number },
      pendingDueAt: number | null,
    ): Promise<void> => {
      if (events === 0) return;
      const stepMs = Math.max(1, Math.floor((span.end - span.start) / events));
      for (let from = firstIndex; from < firstIndex + events; from += chunk) {
        const to = Math.min(firstIndex + events - 1, from + chunk - 1);
        const start = span.start + (from - firstIndex) * stepMs;
        await fillChunk(db, ids, { from, to, start, stepMs, pendingDueAt });
        const done = (to - firstIndex + 1) * 2;
        if (done % 1_000_000 === 0 || to === firstIndex + events - 1) {
          progress(`  ${done} of ${events * 2} deliveries`);
        }
      }
    };
    for (let set = 1; set <= rounds; set += 1) {
      const newest = now - expiredSetAgeMs(set);
      await fill(
        expired / 2,
        1 + (set - 1) * (expired / 2),
        { start: newest - 2 * dayMs, end: newest },
        null,
      );
    }
    await fill(
      kept / 2,
      1 + rounds * (expired / 2),
      { start: now - 29 * dayMs, end: now - 3_600_000 },
      now + 6 * 3_600_000,
    );
    if (db.dialect === "postgres") {
      progress("  VACUUM ANALYZE");
      await db.execute("VACUUM ANALYZE");
    }
  } finally {
    await db.close();
  }
}

/** p50 and p99 of `count` sequential requests of `path`, in ms. */
async function timeRequests(
  service: BenchService,
  path: string,
): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let index = 0; index < requests; index += 1) {
    const started = performance.now();
    const response = await service.call("GET", path);
    times.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
  }
  return { p50: round(percentile(times, 50), 2), p99: round(percentile(times, 99), 2) };
}

/**
 * One retention pass as the maintenance runs it, from this process: its time, its CPU (this
 * process's, where SQLite's statements run; on PostgreSQL also the cluster's, from the
 * administrative URL `postgresAdmin`, its exited backends included: the pass's connections
 * close with its store), what it removed, and the longest the main thread was held
 * meanwhile, two ways: the event loop's longest delay (1 ms resolution), which on a loaded
 * machine includes waiting for a CPU, and the most CPU time the process spent between two
 * ticks of a 1 ms timer, which does not.
 */
async function retentionPass(
  location: string,
  cutoffMs: number,
  postgresAdmin: string | null,
): Promise<{
  ms: number;
  cpuMs: number;
  postgresCpuMs: number;
  rows: number;
  longestHoldMs: number;
  longestCpuHoldMs: number;
}> {
  const clusterBefore = postgresAdmin === null ? 0 : await postgresClusterCpuMs(postgresAdmin);
  const store = await openStore(location, systemClock);
  let figures;
  try {
    const cutoff = new Date(cutoffMs);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    let last = process.cpuUsage();
    let longestCpuUs = 0;
    const ticker = setInterval(() => {
      const used = process.cpuUsage(last);
      longestCpuUs = Math.max(longestCpuUs, used.user + used.system);
      last = process.cpuUsage();
    }, 1);
    delay.enable();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const attempts = await store.housekeeping.pruneAttempts(cutoff);
    const events = await store.housekeeping.pruneEvents(cutoff);
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    delay.disable();
    clearInterval(ticker);
    figures = {
      ms: round(ms, 0),
      cpuMs: round((cpu.user + cpu.system) / 1000, 0),
      rows: attempts + events,
      longestHoldMs: round(delay.max / 1e6, 1),
      longestCpuHoldMs: round(longestCpuUs / 1000, 1),
    };
  } finally {
    await store.close();
  }
  const clusterMs =
    postgresAdmin === null ? 0 : (await postgresClusterCpuMs(postgresAdmin)) - clusterBefore;
  return { ...figures, postgresCpuMs: round(clusterMs, 0) };
}

/** The cluster's `postgres` database, on the same server and user as `url`. */
function adminUrlOf(url: string): string {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  return admin.href;
}

/** A database behind a running server of its own, with the destinations the bench uses. */
interface State {
  readonly engine: "sqlite" | "postgres";
  readonly service: BenchService;
  readonly location: string;
  readonly destination: string;
  readonly now: number;
  readonly postgresUrl: string | null;
  dispose(): Promise<void>;
}

/** Starts a server on a new database and fills it with `historyRows` of history. */
async function prepareState(
  engine: "sqlite" | "postgres",
  historyRows: number,
  receiver: BenchReceiver,
  caCertPath: string,
  dir: string,
): Promise<State> {
  const pg = engine === "postgres" ? postgresDatabase() : null;
  if (pg !== null && "skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
  const runDir = await mkdtemp(join(dir, `${engine}-`));
  const service = await startBenchService({
    dir: runDir,
    caCertPath,
    extraEnv: { SVC_DELIVERY_CONCURRENCY: "256" },
    ...(pg === null ? {} : { database: pg.url }),
  });
  const location = pg === null ? join(runDir, "data", "svc.db") : pg.url;
  const dispose = async (): Promise<void> => {
    await service.stop();
    if (keep && historyRows > 0) {
      progress(`${engine}: kept ${location}`);
    } else {
      if (pg !== null) pg.drop();
      await rm(runDir, { recursive: true, force: true });
    }
  };
  try {
    const destination = await register(service, `${receiver.url}/volume`, ["job.completed"]);
    const other = await register(service, `${receiver.url}/other`, ["job.failed"]);
    const now = Date.now();
    progress(
      `${engine}: filling ${historyRows} deliveries of history, ${rounds} × ${expired} expired`,
    );
    const ids = { workspace: service.workspaceId, destinations: [destination, other] as const };
    await fillHistory(location, ids, historyRows, now);
    progress(`${engine}: ${warmup} deliveries to warm up`);
    await measureThroughput(service, receiver, warmup);
    return {
      engine,
      service,
      location,
      destination,
      now,
      postgresUrl: pg === null ? null : pg.url,
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** The log pages each round times: the destination's first, one 50 pages deep, the events'. */
async function pagesOf(state: State): Promise<{ first: string; deep: string; events: string }> {
  const list = `/deliveries?destination=${state.destination}&limit=100`;
  let deep: string | null = null;
  for (let page = 0; page < 50; page += 1) {
    const response = await state.service.call(
      "GET",
      `${list}${deep === null ? "" : `&cursor=${deep}`}`,
    );
    deep = (response.body as { next_cursor: string | null }).next_cursor;
  }
  return { first: list, deep: `${list}&cursor=${deep ?? ""}`, events: "/events?limit=100" };
}

/**
 * Each page's p50 and p99 in both states, timed request by request in turn (empty then full,
 * then full then empty, …), `requests` × `rounds` of each: a drift of the machine's speed, or a
 * burst of another process's work, falls on both states alike, where the rounds time one
 * state's requests in a block and their p99s swing by more than the states differ.
 */
async function interleavedPages(
  empty: State,
  full: State,
): Promise<
  { page: string; empty: { p50: number; p99: number }; full: { p50: number; p99: number } }[]
> {
  const [emptyPages, fullPages] = [await pagesOf(empty), await pagesOf(full)];
  const results = [];
  for (const page of ["first", "deep", "events"] as const) {
    const times = { empty: [] as number[], full: [] as number[] };
    for (let index = 0; index < requests * rounds; index += 1) {
      const order = index % 2 === 0 ? (["empty", "full"] as const) : (["full", "empty"] as const);
      for (const which of order) {
        const [state, path] =
          which === "empty" ? [empty, emptyPages[page]] : [full, fullPages[page]];
        const started = performance.now();
        const response = await state.service.call("GET", path);
        times[which].push(performance.now() - started);
        if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
      }
    }
    const summary = (values: number[]): { p50: number; p99: number } => ({
      p50: round(percentile(values, 50), 2),
      p99: round(percentile(values, 99), 2),
    });
    results.push({ page, empty: summary(times.empty), full: summary(times.full) });
  }
  return results;
}

/** One round's figures of `state`; `roundNumber` (from 1) picks the expired set its retention takes. */
async function measureRound(
  state: State,
  roundNumber: number,
  receiver: BenchReceiver,
): Promise<Figures> {
  const { service, postgresUrl } = state;
  const pid = service.process.pid ?? 0;
  const before = {
    server: await cpuMs(`/proc/${pid}/stat`),
    postgres: postgresUrl === null ? 0 : await postgresCpuMs(databaseOf(postgresUrl)),
  };
  const statements =
    postgresUrl !== null && roundNumber === 1 ? await startStatementCounts(postgresUrl) : null;
  const throughput = await measureThroughput(service, receiver, deliveries);
  if (statements !== null) progress(await statements.report(deliveries));
  const perDelivery = (ms: number): number => whole((ms * 1000) / deliveries);
  const serverUs = perDelivery((await cpuMs(`/proc/${pid}/stat`)) - before.server);
  const postgresUs =
    postgresUrl === null
      ? 0
      : perDelivery((await postgresCpuMs(databaseOf(postgresUrl))) - before.postgres);
  const pages = await pagesOf(state);
  const first = await timeRequests(service, pages.first);
  const deepPage = await timeRequests(service, pages.deep);
  const eventsPage = await timeRequests(service, pages.events);
  const blocks = postgresUrl === null ? null : await startBlockCounts(postgresUrl);
  const pass = await retentionPass(
    state.location,
    state.now - expiredSetAgeMs(roundNumber),
    postgresUrl === null ? null : adminUrlOf(postgresUrl),
  );
  const touched = blocks === null ? { hit: 0, read: 0 } : await blocks.finish();
  const blocksTouched = touched.hit + touched.read;
  return {
    deliveries_per_s: throughput.deliveries_per_s,
    publish_p99_ms: throughput.publish_p99_ms,
    server_us_per_delivery: serverUs,
    postgres_us_per_delivery: postgresUs,
    log_first_page_p50_ms: first.p50,
    log_first_page_p99_ms: first.p99,
    log_deep_page_p50_ms: deepPage.p50,
    log_deep_page_p99_ms: deepPage.p99,
    events_page_p50_ms: eventsPage.p50,
    events_page_p99_ms: eventsPage.p99,
    retention_pass_ms: pass.ms,
    retention_rows: pass.rows,
    retention_longest_hold_ms: pass.longestHoldMs,
    retention_longest_cpu_hold_ms: pass.longestCpuHoldMs,
    retention_cpu_ms: pass.cpuMs,
    retention_postgres_cpu_ms: pass.postgresCpuMs,
    retention_blocks_per_row: pass.rows === 0 ? 0 : round(blocksTouched / pass.rows, 2),
    retention_blocks_read_pct:
      blocksTouched === 0 ? 0 : round((100 * touched.read) / blocksTouched, 1),
    load_average: round(loadavg()[0] ?? 0, 1),
  };
}

const metrics: readonly (keyof Figures)[] = [
  "deliveries_per_s",
  "publish_p99_ms",
  "server_us_per_delivery",
  "postgres_us_per_delivery",
  "log_first_page_p50_ms",
  "log_first_page_p99_ms",
  "log_deep_page_p50_ms",
  "log_deep_page_p99_ms",
  "events_page_p50_ms",
  "events_page_p99_ms",
  "retention_pass_ms",
  "retention_rows",
  "retention_longest_hold_ms",
  "retention_longest_cpu_hold_ms",
  "retention_cpu_ms",
  "retention_postgres_cpu_ms",
  "retention_blocks_per_row",
  "retention_blocks_read_pct",
  "load_average",
];

const whole = (value: number): number => round(value, 0);

/** The median of each figure over the rounds. */
function medians(figures: readonly Figures[]): Figures {
  const result = {} as Record<keyof Figures, number>;
  for (const metric of metrics) {
    result[metric] = round(
      percentile(
        figures.map((figure) => figure[metric]),
        50,
      ),
      2,
    );
  }
  return result;
}

function change(empty: number, full: number): string {
  return empty === 0 ? "" : `${round((100 * full) / empty - 100, 0)}%`;
}

function table(engine: string, empty: readonly Figures[], full: readonly Figures[]): string {
  const lines = [
    `${engine}: empty vs ${rows.toLocaleString("en")} deliveries of history, ` +
      `medians of ${rounds} alternating rounds`,
    `| | empty | full | change | each round's change |`,
    `|---|---|---|---|---|`,
  ];
  const [emptyMedian, fullMedian] = [medians(empty), medians(full)];
  for (const metric of metrics) {
    const each = empty.map((figure, index) => change(figure[metric], full[index]?.[metric] ?? 0));
    lines.push(
      `| ${metric} | ${emptyMedian[metric]} | ${fullMedian[metric]} | ` +
        `${change(emptyMedian[metric], fullMedian[metric])} | ${each.join(", ")} |`,
    );
  }
  return lines.join("\n");
}

function pagesTable(engine: string, pages: Awaited<ReturnType<typeof interleavedPages>>): string {
  const lines = [
    `${engine}: the log pages, empty and full timed in turn, ${requests * rounds} requests each`,
    `| page | p50 empty | p50 full | change | p99 empty | p99 full | change |`,
    `|---|---|---|---|---|---|---|`,
  ];
  for (const { page, empty, full } of pages) {
    lines.push(
      `| ${page} | ${empty.p50} | ${full.p50} | ${change(empty.p50, full.p50)} | ` +
        `${empty.p99} | ${full.p99} | ${change(empty.p99, full.p99)} |`,
    );
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const engines = (["sqlite", "postgres"] as const).filter(
    (engine) => !process.argv.includes(engine === "sqlite" ? "--postgres-only" : "--sqlite-only"),
  );
  const dir = await mkdtemp(join(tmpdir(), "svc-volume-"));
  const ca = await createTestCa(join(dir, "ca"));
  const receiver = await startBenchReceiver(ca);
  try {
    for (const engine of engines) {
      progress(`${engine}: an empty database`);
      const emptyState = await prepareState(engine, 0, receiver, ca.caCertPath, dir);
      try {
        progress(`${engine}: ${rows} deliveries of history`);
        const fullState = await prepareState(engine, rows, receiver, ca.caCertPath, dir);
        try {
          const empty: Figures[] = [];
          const full: Figures[] = [];
          for (let round = 1; round <= rounds; round += 1) {
            progress(`${engine}: round ${round} of ${rounds}, empty`);
            empty.push(await measureRound(emptyState, round, receiver));
            progress(`${engine}: round ${round} of ${rounds}, full`);
            full.push(await measureRound(fullState, round, receiver));
          }
          progress(`${engine}: the log pages, both states in turn`);
          const pages = await interleavedPages(emptyState, fullState);
          process.stdout.write(`${table(engine, empty, full)}\n\n`);
          process.stdout.write(`${pagesTable(engine, pages)}\n\n`);
          process.stdout.write(
            `${JSON.stringify({ engine, rows, expired, empty, full, pages })}\n\n`,
          );
        } finally {
          await fullState.dispose();
        }
      } finally {
        await emptyState.dispose();
      }
    }
  } finally {
    await receiver.close();
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

await main();
