/**
 * What each SQLite statement costs the server's main thread (decision 59), two ways:
 *
 * - as a preload of the bench's servers: `SVC_BENCH_SERVER_NODE_OPTIONS="--import
 *   $PWD/dist/bench/statement-cpu.js" SVC_BENCH_PRELOAD_STATEMENTS=<dir> node dist/bench/ab.js A B
 *   --pairs 1`. Each server's main thread times every statement it runs (thread CPU around
 *   `all`, `run`, `get` and `exec`) and writes, every second, its totals by statement text to
 *   `<dir>/<pid>.json`, with the build it runs;
 * - as a command: `node dist/bench/statement-cpu.js <dir> --deliveries N` prints, for each
 *   build found there (the mean of its servers), µs and calls per delivery by statement, and
 *   the totals. N is what each server delivered (ab's warm-up and `--count`: 15,000 + 15,000).
 *
 * Measure a build against another under the same harness only: the threads' CPU moves with
 * the machine as the servers' does.
 */
import { readdir, readFile } from "node:fs/promises";
import { isMainThread } from "node:worker_threads";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { argument } from "./stats.ts";

interface Totals {
  calls: number;
  us: number;
}

interface Report {
  readonly build: string;
  readonly statements: [string, Totals][];
}

const outDir = process.env.SVC_BENCH_PRELOAD_STATEMENTS;

/** A statement's text as a key: its whitespace folded, its first 160 characters. */
function keyOf(sql: string): string {
  return sql.replace(/\s+/g, " ").trim().slice(0, 160);
}

async function record(dir: string): Promise<void> {
  const { DatabaseSync, StatementSync } = await import("node:sqlite");
  const totals = new Map<string, Totals>();
  const add = (key: string, us: number): void => {
    const seen = totals.get(key) ?? { calls: 0, us: 0 };
    seen.calls += 1;
    seen.us += us;
    totals.set(key, seen);
  };
  const timed = <T extends object>(
    prototype: T,
    method: keyof T & string,
    keyFor: (self: T, args: unknown[]) => string,
  ): void => {
    const original = prototype[method] as (...args: unknown[]) => unknown;
    Object.defineProperty(prototype, method, {
      value: function (this: T, ...args: unknown[]) {
        const start = process.threadCpuUsage();
        try {
          return original.apply(this, args);
        } finally {
          const { user, system } = process.threadCpuUsage(start);
          add(keyFor(this, args), user + system);
        }
      },
    });
  };
  for (const method of ["all", "run", "get"] as const) {
    timed(StatementSync.prototype, method, (statement) => keyOf(statement.sourceSQL));
  }
  timed(DatabaseSync.prototype, "exec", (_db, args) => `EXEC ${keyOf(String(args[0]))}`);
  const build = process.argv.find((word) => word.endsWith("svc.js"))?.split("/dist/")[0] ?? "?";
  setInterval(() => {
    const report: Report = { build, statements: [...totals] };
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(report));
  }, 1000).unref();
}

async function print(dir: string, deliveries: number): Promise<void> {
  const byBuild = new Map<string, Map<string, Totals>[]>();
  for (const file of (await readdir(dir)).filter((name) => name.endsWith(".json"))) {
    const report = JSON.parse(await readFile(join(dir, file), "utf8")) as Report;
    const runs = byBuild.get(report.build) ?? [];
    runs.push(new Map(report.statements));
    byBuild.set(report.build, runs);
  }
  const builds = [...byBuild.keys()];
  const perDelivery = (build: string, key: string, field: keyof Totals): number => {
    const runs = byBuild.get(build) ?? [];
    const sum = runs.reduce((total, run) => total + (run.get(key)?.[field] ?? 0), 0);
    return sum / runs.length / deliveries;
  };
  const keys = [
    ...new Set(
      builds.flatMap((build) => (byBuild.get(build) ?? []).flatMap((run) => [...run.keys()])),
    ),
  ];
  const most = (key: string) => Math.max(...builds.map((build) => perDelivery(build, key, "us")));
  console.log(builds.map((build, index) => `${"AB"[index] ?? index}: ${build}`).join("\n"));
  for (const key of keys.sort((a, b) => most(b) - most(a)).filter((key) => most(key) >= 0.1)) {
    const cells = builds.map(
      (build) =>
        `${perDelivery(build, key, "us").toFixed(2).padStart(6)} µs ${perDelivery(build, key, "calls").toFixed(3)}`,
    );
    console.log(`${cells.join("  ")}  ${key.slice(0, 100)}`);
  }
  const totals = builds.map((build) =>
    keys.reduce((total, key) => total + perDelivery(build, key, "us"), 0).toFixed(1),
  );
  console.log(`all statements, µs per delivery: ${totals.join(" / ")}`);
}

if (outDir !== undefined && isMainThread && process.argv.some((word) => word.endsWith("svc.js"))) {
  await record(outDir);
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dir = process.argv[2];
  if (dir === undefined) throw new Error("usage: statement-cpu.js <dir> --deliveries N");
  await print(dir, Number(argument("--deliveries") ?? 30_000));
}
