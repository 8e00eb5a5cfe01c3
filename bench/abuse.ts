/**
 * Abuse resistance under load (issue 27, decision 37): `npm run bench:abuse [-- --postgres]
 * [--seconds 30] [--slow 3000] [--without-stats] [--hammer] [--request-rate N]`. A real `svc server` with its default
 * settings, on a workspace seeded with 100,000 delivery attempts of the last day, for
 * `--seconds` at once:
 * - `--slow` slow-body connections (headers, then a byte every 5 s; a new one as soon as the
 *   server ends one), spread over 12 loopback addresses 127.0.0.10–21 so that each stays
 *   under the per-address cap (256) and every one is accepted: the worst case for memory,
 *   which only the request deadline bounds;
 * - 10 clients asking `GET …/delivery-stats?destination=<random id>` in a loop with an
 *   `events:read` key (`--without-stats` leaves them out), from 127.0.0.2. The server keeps its
 *   default request budget (decision 45: 100 requests a second per key, 200 at once); the
 *   clients wait as long as a 429's `Retry-After` says, as svc's client does, unless
 *   `--hammer`, where they send again at once, as an attacker would;
 * - a probe asking `/healthz` every 50 ms over a new connection from 127.0.0.1 (1 s: failed),
 *   in a thread of its own so that the slow clients' work does not count in its times;
 * - the server's RSS sampled every 500 ms (/proc/<pid>/status).
 * Prints one JSON line: the figures, the targets (`/healthz` p99 under 100 ms, RSS under
 * `rssBoundMb`) and whether they were met. Loopback only; ends by itself.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { Agent, request } from "undici";
import { createTestCa } from "../test/support/tls.ts";
import { postgresDatabase } from "./postgres.ts";
import { seedAttempts } from "./seed-attempts.ts";
import { startBenchService, type BenchService, type OperatorAccess } from "./service.ts";
import { startSlowClients } from "./slow-clients.ts";
import { argument, percentile, progress, round } from "./stats.ts";

// Longer than the request deadline (30 s), so that every slow connection meets it in the run.
const seconds = Number(argument("--seconds") ?? 40);
const slowCount = Number(argument("--slow") ?? 3000);
const withStats = !process.argv.includes("--without-stats");
const hammer = process.argv.includes("--hammer");
/** `--request-rate N`: the server's `requestRate` (0: no budget); its default otherwise. */
const requestRate = argument("--request-rate");
const attempts = 100_000;
const destinationCount = 10;
const statsClients = 10;
/** The target for the server's resident set at its peak, in MiB (decision 37). */
const rssBoundMb = 300;
const healthzP99TargetMs = 100;
const slowAddresses = Array.from({ length: 12 }, (_, index) => `127.0.0.${10 + index}`);

/** Latency figures of a set of requests, in ms. */
function latencies(values: readonly number[]) {
  return {
    p50_ms: round(percentile(values, 50), 1),
    p99_ms: round(percentile(values, 99), 1),
    // Not Math.max(...values): fast answers make more values than a call's arguments can be.
    max_ms: round(
      values.length === 0 ? Number.NaN : values.reduce((most, value) => Math.max(most, value)),
      1,
    ),
  };
}

/** The probe's times (null: failed), from a worker thread of its own (bench/healthz-probe.ts). */
function probeHealthz(port: number): Promise<(number | null)[]> {
  const worker = new Worker(new URL("./healthz-probe.js", import.meta.url), {
    workerData: { port, seconds, everyMs: 50 },
  });
  return new Promise((resolve, reject) => {
    worker.once("message", (results: (number | null)[]) => {
      resolve(results);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

/** Runs `task` again and again until `until`; what each returns is collected. */
async function loop<T>(until: number, task: () => Promise<T>, pauseMs = 0): Promise<T[]> {
  const results: T[] = [];
  while (performance.now() < until) {
    results.push(await task());
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return results;
}

/** A new key of the bench's workspace with `scopes`. */
async function newKey(service: BenchService & OperatorAccess, scopes: string): Promise<string> {
  const keyFile = join(tmpdir(), `svc-bench-abuse-${process.pid}-${Date.now()}.key`);
  await service.svc([
    "admin",
    "keys",
    "create",
    "--workspace",
    service.workspaceId,
    "--scopes",
    scopes,
    "--output",
    keyFile,
  ]);
  const key = (await readFile(keyFile, "utf8")).trim();
  await rm(keyFile);
  return key;
}

/** 10 destinations, 100,000 attempts. */
async function seed(service: BenchService & OperatorAccess, database: string): Promise<void> {
  const destinationIds: string[] = [];
  for (let index = 0; index < destinationCount; index += 1) {
    const created = await service.call("POST", "/webhooks", {
      url: `https://127.0.0.1:9/seed-${index}`,
      events: ["job.completed"],
    });
    if (created.status !== 201) throw new Error(`creating a destination: ${created.status}`);
    destinationIds.push((created.body as { id: string }).id);
  }
  seedAttempts({
    database,
    workspaceId: service.workspaceId,
    destinationIds,
    count: attempts,
    now: Date.now(),
  });
}

const randomId = () =>
  `dst_${Array.from({ length: 24 }, () => Math.floor(Math.random() * 16).toString(16)).join("")}`;

/**
 * `readKey`: the statistics clients'; `slowKey`: the slow bodies', another key, so that the
 * budget each spends is its own (decision 45: one key's flood does not refuse another's).
 */
async function measure(service: BenchService, readKey: string, slowKey: string) {
  const port = Number(new URL(service.url).port);
  const stats = new Agent({ connections: statsClients, localAddress: "127.0.0.2" });
  const statsOnce = async (): Promise<{ ms: number; status: number }> => {
    const started = performance.now();
    try {
      const response = await request(
        `${service.url}/v1/workspaces/${service.workspaceId}/delivery-stats?destination=${randomId()}`,
        { dispatcher: stats, headers: { authorization: `Bearer ${readKey}` } },
      );
      await response.body.dump();
      const ms = performance.now() - started;
      const retryAfter = Number(response.headers["retry-after"] ?? 1);
      if (response.statusCode === 429 && !hammer) {
        await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      }
      return { ms, status: response.statusCode };
    } catch {
      return { ms: performance.now() - started, status: 0 };
    }
  };
  const alone = await statsOnce();
  progress(`one delivery-stats alone: ${round(alone.ms)} ms (${alone.status})`);
  const rssBefore = await service.rssMb();
  progress(
    `${seconds} s: ${slowCount} slow bodies, ${withStats ? statsClients : 0} stats clients…`,
  );
  const slow = startSlowClients({
    port,
    path: `/v1/workspaces/${service.workspaceId}/events`,
    token: slowKey,
    count: slowCount,
    addresses: slowAddresses,
    byteEveryMs: 5000,
  });
  const until = performance.now() + seconds * 1000;
  const rss: number[] = [];
  const [probes, statsRuns] = await Promise.all([
    probeHealthz(port),
    withStats
      ? Promise.all(Array.from({ length: statsClients }, () => loop(until, statsOnce)))
      : Promise.resolve([]),
    loop(until, async () => rss.push(await service.rssMb()), 500),
  ]);
  const slowFigures = slow.stop();
  await stats.close();
  const answered = probes.filter((ms): ms is number => ms !== null);
  const statsAll = statsRuns.flat();
  const healthz = {
    probes: probes.length,
    failed: probes.length - answered.length,
    ...latencies(answered),
  };
  const peakMb = await service.peakRssMb();
  return {
    healthz,
    slow_bodies: slowFigures,
    delivery_stats: {
      alone_ms: round(alone.ms, 1),
      requests: statsAll.length,
      ok: statsAll.filter((run) => run.status === 200).length,
      refused_429: statsAll.filter((run) => run.status === 429).length,
      statuses: [...new Set(statsAll.map((run) => run.status))],
      ...latencies(statsAll.filter((run) => run.status === 200).map((run) => run.ms)),
    },
    rss_mb: {
      before: round(rssBefore),
      max_sampled: round(Math.max(...rss)),
      peak_hwm: round(peakMb),
    },
    met: {
      healthz_p99: healthz.failed === 0 && healthz.p99_ms < healthzP99TargetMs,
      rss: peakMb < rssBoundMb,
    },
  };
}

/** The server under measurement, once started: the guard below stops it too. */
let started: BenchService | undefined;
// Bounded however it goes: the start, the seeding and the run, with room to spare.
const guard = setTimeout(
  () => {
    progress("did not end in time; giving up");
    started?.process.kill("SIGKILL");
    process.exit(1);
  },
  (seconds + 300) * 1000,
);
guard.unref();
const dir = await mkdtemp(join(tmpdir(), "svc-bench-abuse-"));
const pg = process.argv.includes("--postgres") ? postgresDatabase() : null;
try {
  if (pg !== null && "skipped" in pg) throw new Error(`no PostgreSQL: ${pg.skipped}`);
  const ca = await createTestCa(join(dir, "ca"));
  const service = await startBenchService({
    dir,
    caCertPath: ca.caCertPath,
    ...(pg === null ? {} : { database: pg.url }),
    requestBudget: true,
    ...(requestRate === undefined ? {} : { extraEnv: { SVC_REQUEST_RATE: requestRate } }),
  });
  started = service;
  try {
    progress(`seeding ${attempts} attempts over ${destinationCount} destinations…`);
    const seedStarted = performance.now();
    await seed(service, pg?.url ?? join(dir, "data", "svc.db"));
    progress(`seeded in ${round((performance.now() - seedStarted) / 1000)} s`);
    const figures = await measure(
      service,
      await newKey(service, "events:read"),
      await newKey(service, "events:read"),
    );
    process.stdout.write(
      `${JSON.stringify({
        engine: pg === null ? "sqlite" : "postgres",
        seconds,
        slow_connections: slowCount,
        stats_clients: withStats ? statsClients : 0,
        request_rate:
          requestRate === undefined ? "default (100/s, burst 200)" : Number(requestRate),
        stats_clients_on_429: hammer ? "send again at once" : "wait Retry-After",
        load_average: loadavg().map((load) => round(load, 1)),
        targets: { healthz_p99_ms: healthzP99TargetMs, rss_mb: rssBoundMb },
        ...figures,
      })}\n`,
    );
  } finally {
    await service.stop();
  }
} finally {
  if (pg !== null && !("skipped" in pg)) pg.drop();
  await rm(dir, { recursive: true, force: true });
}
