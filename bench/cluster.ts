/**
 * `npm run bench:cluster -- [--workers 2] [--count 15000] [--warmup 5000]`: the CPU a
 * delivery costs each part of a PostgreSQL cluster (issue 32, the capacity model of
 * docs/PERFORMANCE.md): one `--role api` process and `--workers` `--role worker` processes on
 * one database, 32 publishers and a loopback HTTPS receiver. Reads from /proc the CPU time the
 * API process, the workers together and the database's backends spent over `--count`
 * deliveries (after `--warmup` not counted), and prints each per delivery and as deliveries a
 * second per core of it. SVC_BENCH_POSTGRES_URL picks the server (a cluster of one's own
 * keeps other work out of its backends' figures).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCa } from "../test/support/tls.ts";
import { measureThroughput, register } from "./measure.ts";
import { databaseOf, postgresCpuMs, postgresDatabase, startStatementCounts } from "./postgres.ts";
import { startBenchReceiver } from "./receiver.ts";
import { startBenchService } from "./service.ts";
import { argument, cpuMs, progress, round } from "./stats.ts";

const workers = Number(argument("--workers") ?? 2);
const count = Number(argument("--count") ?? 15_000);
const warmup = Number(argument("--warmup") ?? 5_000);

async function main(): Promise<void> {
  const pg = postgresDatabase();
  if ("skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
  const dir = await mkdtemp(join(tmpdir(), "svc-cluster-"));
  const ca = await createTestCa(join(dir, "ca"));
  const receiver = await startBenchReceiver(ca);
  const service = await startBenchService({
    dir,
    caCertPath: ca.caCertPath,
    database: pg.url,
    workers,
    extraEnv: { SVC_DELIVERY_CONCURRENCY: "256" },
  });
  try {
    await register(service, `${receiver.url}/cluster`, ["job.completed"]);
    progress(`${warmup} deliveries to warm up, then ${count} measured`);
    await measureThroughput(service, receiver, warmup);
    const cpu = async () => ({
      api: await cpuMs(`/proc/${service.process.pid ?? 0}/stat`),
      workers: (
        await Promise.all(service.workers.map((worker) => cpuMs(`/proc/${worker.pid ?? 0}/stat`)))
      ).reduce((sum, ms) => sum + ms, 0),
      postgres: await postgresCpuMs(databaseOf(pg.url)),
    });
    const statements = await startStatementCounts(pg.url);
    const before = await cpu();
    const throughput = await measureThroughput(service, receiver, count);
    const after = await cpu();
    if (statements !== null) progress(await statements.report(count));
    const perDelivery = (ms: number): number => round((ms * 1000) / count, 0);
    const figures = {
      workers,
      deliveries_per_s: throughput.deliveries_per_s,
      publish_p99_ms: throughput.publish_p99_ms,
      api_us: perDelivery(after.api - before.api),
      workers_us: perDelivery(after.workers - before.workers),
      postgres_us: perDelivery(after.postgres - before.postgres),
      load_average: round(loadavg()[0] ?? 0, 1),
    };
    const perCore = (us: number): number => (us === 0 ? 0 : Math.round(1_000_000 / us));
    process.stdout.write(
      `${JSON.stringify(figures)}\n` +
        `deliveries/s per core: API ${perCore(figures.api_us)}, worker ${perCore(figures.workers_us)}, ` +
        `PostgreSQL ${perCore(figures.postgres_us)}\n`,
    );
  } finally {
    await service.stop();
    await receiver.close();
    pg.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
