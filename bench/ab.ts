/**
 * `npm run bench:ab -- <tree A> <tree B> [--postgres] [--pairs 3] [--count 15000] [--traced B]`:
 * compares
 * two builds of the service (two checkouts, each built with `npm run build`) by alternating
 * end-to-end throughput runs, A then B, `--pairs` times. Each run starts a fresh server from
 * that tree's `dist/` on a fresh database, publishes `warmUpCount` events of warm-up and then
 * `--count`, and reads from /proc the CPU time spent per delivery by the server (its main
 * thread apart), PostgreSQL's backends and this process (the publishers and the receiver),
 * and the machine's idle share. Prints each run as a JSON line, then the means per tree.
 *
 * `--traced B` (or `A`, `AB`) runs that tree's server with OpenTelemetry tracing on, at the
 * default sampler, exporting OTLP/HTTP protobuf to a sink in this process that reads and
 * drops each export (decision 47); A and B may then be the same tree.
 *
 * No raw limit: on a machine whose speed moves from minute to minute, the CPU each build
 * spends on a delivery compares two builds better than their rates do (docs/PERFORMANCE.md).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestCa } from "../test/support/tls.ts";
import { measureThroughput, register, warmUpCount } from "./measure.ts";
import { BackendsCpu, databaseOf, postgresClusterCpuMs, postgresDatabase } from "./postgres.ts";
import { startBenchReceiver, type BenchReceiver } from "./receiver.ts";
import { startBenchService } from "./service.ts";
import { argument, cpuMs, progress, round } from "./stats.ts";

const trees = process.argv.slice(2).filter((word, index, words) => {
  const previous = words[index - 1];
  return (
    !word.startsWith("--") &&
    previous !== "--pairs" &&
    previous !== "--count" &&
    previous !== "--traced"
  );
});
const traced = argument("--traced") ?? "";
const postgres = process.argv.includes("--postgres");
/**
 * `--cluster-cpu`: also the CPU of the whole PostgreSQL cluster (SVC_BENCH_POSTGRES_URL's, which
 * must be one's own and on this machine), its background processes (WAL writer, checkpointer,
 * autovacuum) included; the per-database figure (`BackendsCpu`) counts the run's backends
 * alone, those whose connection the pool closed during the run up to their last reading.
 */
const clusterCpu = process.argv.includes("--cluster-cpu");
const postgresBase = process.env.SVC_BENCH_POSTGRES_URL ?? "postgres://127.0.0.1:5432/postgres";
const pairs = Number(argument("--pairs") ?? 3);
const count = Number(argument("--count") ?? 15_000);

interface Run {
  label: "A" | "B";
  tree: string;
  deliveries_per_s: number;
  publish_p50_ms: number;
  server_us: number;
  main_thread_us: number;
  postgres_us: number;
  postgres_cluster_us: number;
  bench_us: number;
  idle_pct: number;
}

/** Idle and total jiffies of the whole machine. */
async function machineTimes(): Promise<{ idle: number; total: number }> {
  const [line = ""] = (await readFile("/proc/stat", "utf8")).split("\n", 1);
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  return {
    idle: (fields[3] ?? 0) + (fields[4] ?? 0),
    total: fields.reduce((sum, value) => sum + value, 0),
  };
}

/** An OTLP/HTTP endpoint that reads every export and answers 200, keeping nothing. */
async function startTraceSink(): Promise<{ url: string; exports: () => number; close(): void }> {
  let exports = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      exports += 1;
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

async function runOnce(
  label: "A" | "B",
  tree: string,
  dir: string,
  receiver: BenchReceiver,
  caCertPath: string,
  traceSink: string | null,
) {
  const pg = postgres ? postgresDatabase() : null;
  if (pg !== null && "skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
  const runDir = await mkdtemp(join(dir, "run-"));
  const service = await startBenchService({
    dir: runDir,
    caCertPath,
    svcBin: join(tree, "dist/src/bin/svc.js"),
    extraEnv: {
      SVC_DELIVERY_CONCURRENCY: "256",
      ...(traceSink === null
        ? {}
        : { OTEL_EXPORTER_OTLP_ENDPOINT: traceSink, OTEL_SERVICE_NAME: `bench-${label}` }),
    },
    ...(pg === null ? {} : { database: pg.url }),
  });
  let backends: BackendsCpu | null = null;
  try {
    await register(service, `${receiver.url}/ab`, ["job.completed"]);
    await measureThroughput(service, receiver, warmUpCount);
    const pid = service.process.pid ?? 0;
    backends = pg === null ? null : await BackendsCpu.start(databaseOf(pg.url));
    const before = {
      server: await cpuMs(`/proc/${pid}/stat`),
      main: await cpuMs(`/proc/${pid}/task/${pid}/stat`),
      cluster: pg === null || !clusterCpu ? 0 : await postgresClusterCpuMs(postgresBase),
      bench: process.cpuUsage(),
      machine: await machineTimes(),
    };
    const throughput = await measureThroughput(service, receiver, count);
    const bench = process.cpuUsage(before.bench);
    const machine = await machineTimes();
    const perDelivery = (ms: number): number => round((ms * 1000) / count, 0);
    return {
      label,
      tree: traceSink === null ? tree : `${tree} (traced)`,
      deliveries_per_s: throughput.deliveries_per_s,
      publish_p50_ms: throughput.publish_p50_ms,
      server_us: perDelivery((await cpuMs(`/proc/${pid}/stat`)) - before.server),
      main_thread_us: perDelivery((await cpuMs(`/proc/${pid}/task/${pid}/stat`)) - before.main),
      postgres_us: backends === null ? 0 : perDelivery(await backends.ms()),
      postgres_cluster_us:
        pg === null || !clusterCpu
          ? 0
          : perDelivery((await postgresClusterCpuMs(postgresBase)) - before.cluster),
      bench_us: perDelivery((bench.user + bench.system) / 1000),
      idle_pct: round(
        (100 * (machine.idle - before.machine.idle)) / (machine.total - before.machine.total),
        0,
      ),
    } satisfies Run;
  } finally {
    backends?.stop();
    await service.stop();
    if (pg !== null) pg.drop();
  }
}

async function main(): Promise<void> {
  if (trees.length !== 2) {
    process.stderr.write(
      "usage: npm run bench:ab -- <tree A> <tree B> [--postgres] [--pairs N] [--count N]\n",
    );
    process.exitCode = 2;
    return;
  }
  const [a, b] = trees.map((tree) => resolve(tree)) as [string, string];
  const dir = await mkdtemp(join(tmpdir(), "svc-ab-"));
  const ca = await createTestCa(join(dir, "ca"));
  const receiver = await startBenchReceiver(ca);
  const sink = traced === "" ? null : await startTraceSink();
  const runs: Run[] = [];
  try {
    for (let pair = 1; pair <= pairs; pair += 1) {
      for (const [label, tree] of [["A", a] as const, ["B", b] as const]) {
        const traceSink = sink !== null && traced.includes(label) ? sink.url : null;
        progress(`pair ${pair}/${pairs}: ${label} ${tree}, ${count} events after ${warmUpCount}…`);
        const run = await runOnce(label, tree, dir, receiver, ca.caCertPath, traceSink);
        runs.push(run);
        process.stdout.write(`${JSON.stringify(run)}\n`);
      }
    }
    if (sink !== null) process.stdout.write(`trace exports received: ${sink.exports()}\n`);
    for (const [label, tree] of [["A", a] as const, ["B", b] as const]) {
      const mine = runs.filter((run) => run.label === label);
      const mean = (key: keyof Omit<Run, "tree" | "label">): number =>
        round(mine.reduce((sum, run) => sum + run[key], 0) / mine.length, 0);
      process.stdout.write(
        `${label} ${mine[0]?.tree ?? tree}: ${mean("deliveries_per_s")}/s, server ${mean("server_us")} µs ` +
          `(main thread ${mean("main_thread_us")}), PostgreSQL ${mean("postgres_us")} µs ` +
          `(cluster ${mean("postgres_cluster_us")}), ` +
          `bench ${mean("bench_us")} µs per delivery; machine idle ${mean("idle_pct")}%\n`,
      );
    }
  } finally {
    await receiver.close();
    sink?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
