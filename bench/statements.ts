/**
 * `npm run bench:statements -- [<tree>] [--count 10000]`: what PostgreSQL does per delivery,
 * statement by statement, from `pg_stat_statements` (issue 32, decision 49). Needs a server
 * with `shared_preload_libraries = 'pg_stat_statements'` and the extension created in its
 * `postgres` database, named by SVC_BENCH_POSTGRES_URL (never the shared one on 5432, which
 * is not to be restarted: a cluster of one's own, `pg_createcluster 15 NAME -p 54xx`).
 *
 * Starts `<tree>`'s server (this tree's by default) on a fresh database, warms it up, resets
 * the statistics, publishes `--count` events through the API to one endpoint at the ab
 * bench's concurrency, waits until every delivery has ended, and prints per delivery, for
 * each statement of the run's database: calls, execution and planning time (µs; planning
 * counts where `pg_stat_statements.track_planning` is on), rows, shared blocks hit
 * and dirtied, WAL bytes; then the tables' inserted, updated and HOT-updated rows and the
 * cluster's WAL, the run database's live backends' CPU and the whole cluster's CPU (the
 * postmaster's children, those that exited included: the cluster must be one's own and on this
 * machine) per delivery. Figures that do not depend on the machine's load (statements,
 * rows, blocks, WAL) compare two builds better than times do on a shared machine.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestCa } from "../test/support/tls.ts";
import { measureThroughput, register } from "./measure.ts";
import { BackendsCpu, postgresClusterCpuMs, postgresDatabase } from "./postgres.ts";
import { startBenchReceiver } from "./receiver.ts";
import { startBenchService } from "./service.ts";
import { argument, progress, round } from "./stats.ts";

const tree = resolve(
  process.argv.slice(2).find((word, index, words) => {
    return !word.startsWith("--") && words[index - 1] !== "--count";
  }) ?? join(import.meta.dirname, "../.."),
);
const count = Number(argument("--count") ?? 10_000);

function psql(url: string, sql: string): string {
  const result = spawnSync("psql", [url, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`psql: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

function json(url: string, sql: string): unknown {
  return JSON.parse(psql(url, `SELECT coalesce(json_agg(x), '[]') FROM (${sql}) x`));
}

interface StatementRow {
  query: string;
  calls: number;
  ms: number;
  plan_ms: number;
  rows: number;
  hit: number;
  read: number;
  dirtied: number;
  written: number;
  wal_bytes: number;
}

interface TableRow {
  relname: string;
  ins: number;
  upd: number;
  hot: number;
  del: number;
}

async function waitUntilEnded(url: string): Promise<void> {
  for (let tries = 0; tries < 600; tries += 1) {
    if (psql(url, "SELECT count(*) FROM deliveries WHERE status = 'pending'") === "0") return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error("deliveries still pending after a minute");
}

async function main(): Promise<void> {
  const pg = postgresDatabase();
  if ("skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
  const admin = new URL(pg.url);
  admin.pathname = "/postgres";
  const dir = await mkdtemp(join(tmpdir(), "svc-statements-"));
  const ca = await createTestCa(join(dir, "ca"));
  const receiver = await startBenchReceiver(ca);
  const service = await startBenchService({
    dir,
    caCertPath: ca.caCertPath,
    svcBin: join(tree, "dist/src/bin/svc.js"),
    extraEnv: { SVC_DELIVERY_CONCURRENCY: "256" },
    database: pg.url,
  });
  try {
    await register(service, `${receiver.url}/statements`, ["job.completed"]);
    progress(`${tree}: warm-up, 3000 events…`);
    await measureThroughput(service, receiver, 3000);
    await waitUntilEnded(pg.url);
    const database = new URL(pg.url).pathname.slice(1);
    const tables = `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot,
        n_tup_del AS del FROM pg_stat_user_tables`;
    psql(pg.url, "SELECT pg_stat_clear_snapshot()");
    const tablesBefore = json(pg.url, tables) as TableRow[];
    psql(admin.href, "SELECT pg_stat_statements_reset()");
    const walBefore = psql(admin.href, "SELECT pg_current_wal_lsn()");
    const backends = await BackendsCpu.start(database);
    const clusterBefore = await postgresClusterCpuMs(admin.href);
    progress(`${count} events…`);
    const throughput = await measureThroughput(service, receiver, count);
    await waitUntilEnded(pg.url);
    const backendsMs = await backends.ms();
    backends.stop();
    const clusterMs = (await postgresClusterCpuMs(admin.href)) - clusterBefore;
    // The statistics collector reports a backend's table counts at its next transaction end
    // or within a second; give it that.
    await new Promise((done) => setTimeout(done, 1500));
    const wal = Number(psql(admin.href, `SELECT pg_current_wal_lsn() - '${walBefore}'::pg_lsn`));
    const statements = json(
      admin.href,
      `SELECT query, calls, total_exec_time + total_plan_time AS ms, total_plan_time AS plan_ms, rows, shared_blks_hit AS hit,
         shared_blks_read AS read, shared_blks_dirtied AS dirtied,
         shared_blks_written AS written, wal_bytes
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = '${database}' ORDER BY total_exec_time DESC`,
    ) as StatementRow[];
    const tablesAfter = json(pg.url, tables) as TableRow[];
    const per = (value: number, digits = 2): number => round(value / count, digits);
    const out = statements
      .filter((row) => row.calls / count >= 0.001)
      .map((row) => ({
        calls: per(row.calls, 3),
        us: per(row.ms * 1000, 1),
        plan_us: per(row.plan_ms * 1000, 1),
        rows: per(row.rows),
        hit: per(row.hit, 1),
        dirtied: per(row.dirtied, 2),
        written: per(row.written, 2),
        wal_b: per(row.wal_bytes, 0),
        query: row.query.replace(/\s+/g, " ").slice(0, 160),
      }));
    const sum = (key: "calls" | "us" | "rows" | "hit" | "dirtied" | "wal_b"): number =>
      round(
        out.reduce((total, row) => total + row[key], 0),
        2,
      );
    process.stdout.write(
      `${JSON.stringify({ tree, count, deliveries_per_s: throughput.deliveries_per_s })}\n`,
    );
    for (const row of out) process.stdout.write(`${JSON.stringify(row)}\n`);
    process.stdout.write(
      `${JSON.stringify({
        total: {
          calls: sum("calls"),
          us: sum("us"),
          rows: sum("rows"),
          hit: sum("hit"),
          dirtied: sum("dirtied"),
          wal_b: sum("wal_b"),
        },
        cluster_wal_b: per(wal, 0),
        backends_cpu_us: per(backendsMs * 1000, 0),
        cluster_cpu_us: per(clusterMs * 1000, 0),
      })}\n`,
    );
    for (const after of tablesAfter) {
      const before = tablesBefore.find((row) => row.relname === after.relname);
      const diff = (key: "ins" | "upd" | "hot" | "del"): number =>
        per(after[key] - (before?.[key] ?? 0), 3);
      if (diff("ins") + diff("upd") + diff("del") === 0) continue;
      process.stdout.write(
        `${JSON.stringify({ table: after.relname, ins: diff("ins"), upd: diff("upd"), hot: diff("hot"), del: diff("del") })}\n`,
      );
    }
    // What the table takes per delivery, as the run left it and once vacuumed (decision 58:
    // the fillfactor's room against the rows' growth at their result).
    const bytesPerRow = (): number =>
      Number(psql(pg.url, "SELECT pg_relation_size('deliveries') / count(*) FROM deliveries"));
    const left = bytesPerRow();
    psql(pg.url, "VACUUM deliveries");
    process.stdout.write(
      `${JSON.stringify({ deliveries_bytes_per_row: left, after_vacuum: bytesPerRow() })}\n`,
    );
  } finally {
    await service.stop();
    await receiver.close();
    pg.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
