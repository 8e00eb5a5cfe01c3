import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { cpuMs } from "./stats.ts";

/**
 * A fresh PostgreSQL database for the run, on SVC_BENCH_POSTGRES_URL's server (default the
 * local one), created and dropped with psql; or the reason there is none.
 */
export function postgresDatabase(): { url: string; drop: () => void } | { skipped: string } {
  const base = new URL(process.env.SVC_BENCH_POSTGRES_URL ?? "postgres://127.0.0.1:5432/postgres");
  const name = `svc_bench_${randomBytes(4).toString("hex")}`;
  const psql = (sql: string) =>
    spawnSync("psql", [base.href, "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8" });
  const created = psql(`CREATE DATABASE ${name}`);
  if (created.error !== undefined || created.status !== 0) {
    return {
      skipped: (created.stderr || String(created.error)).trim().split("\n")[0] ?? "psql failed",
    };
  }
  const url = new URL(base.href);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: () => {
      psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * CPU time in ms of PostgreSQL's backends serving `database` (their process titles name it),
 * so that other databases' work on the same server (tests, other runs) does not count. Shared
 * background processes (WAL writer, checkpointer) are left out for the same reason.
 */
export async function postgresCpuMs(database: string): Promise<number> {
  let total = 0;
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    try {
      if ((await readFile(`/proc/${pid}/comm`, "utf8")).trim() !== "postgres") continue;
      const title = (await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ");
      if (title.split(" ").includes(database)) total += await cpuMs(`/proc/${pid}/stat`);
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}
