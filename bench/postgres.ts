import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { openDatabase } from "../src/store/open-store.ts";
import { cpuMs, round, ticksPerSecond } from "./stats.ts";

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

/**
 * The CPU time of the backends serving `database`, counted across their ends: a pool closes
 * an idle connection and opens another later, and a backend's CPU leaves /proc with it, so
 * `postgresCpuMs` read at two moments loses what the closed ones spent. This reads every
 * backend's CPU every `everyMs` and keeps the last reading of each, ended or not; a backend
 * that ends loses what it spent since the last reading (all of it, if it lived between two).
 * `stop()` ends the readings.
 */
export class BackendsCpu {
  readonly #database: string;
  /**
   * Each backend's CPU in ms (by pid and start time) when first seen (0 if born since the
   * start) and at its last reading.
   */
  readonly #seen = new Map<string, { first: number; last: number }>();
  readonly #timer: NodeJS.Timeout;
  #started = false;
  /** A reading under way: the timer's next one skips while it runs. */
  #reading: Promise<void> | null = null;

  private constructor(database: string, everyMs: number) {
    this.#database = database;
    this.#timer = setInterval(() => void this.#read(), everyMs).unref();
  }

  static async start(database: string, everyMs = 250): Promise<BackendsCpu> {
    const backends = new BackendsCpu(database, everyMs);
    await backends.#read();
    backends.#started = true;
    return backends;
  }

  /** The backends' CPU in ms since `start`, read now. */
  async ms(): Promise<number> {
    await this.#read();
    let total = 0;
    for (const { first, last } of this.#seen.values()) total += last - first;
    return total;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #read(): Promise<void> {
    this.#reading ??= this.#readAll().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  async #readAll(): Promise<void> {
    for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
      try {
        if ((await readFile(`/proc/${pid}/comm`, "utf8")).trim() !== "postgres") continue;
        const title = (await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ");
        if (!title.split(" ").includes(this.#database)) continue;
        const stat = await readFile(`/proc/${pid}/stat`, "utf8");
        const fields = stat.split(") ")[1]?.split(" ") ?? [];
        const now = ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
        // A pid the kernel gave again is another backend: keyed with its start time too.
        const key = `${pid}@${fields[19] ?? ""}`;
        const known = this.#seen.get(key);
        if (known === undefined) this.#seen.set(key, { first: this.#started ? 0 : now, last: now });
        else known.last = Math.max(known.last, now);
      } catch {
        // The process ended meanwhile.
      }
    }
  }
}

/**
 * CPU time in ms of a whole PostgreSQL cluster of one's own (not a shared one): the
 * postmaster's, its live children's (backends, WAL writer, checkpointer…) and that of the
 * children that have exited, which the kernel adds to the postmaster's as it reaps them. Unlike
 * `postgresCpuMs`, it loses nothing when a pool closes an idle connection during the run.
 * Reads the postmaster's pid from the data directory: the server must be on this machine.
 */
export async function postgresClusterCpuMs(baseUrl: string): Promise<number> {
  const dataDirectory = spawnSync("psql", [baseUrl, "-X", "-At", "-c", "SHOW data_directory"], {
    encoding: "utf8",
  }).stdout.trim();
  const [pidLine = ""] = (await readFile(`${dataDirectory}/postmaster.pid`, "utf8")).split("\n", 1);
  const postmaster = pidLine.trim();
  const fields =
    (await readFile(`/proc/${postmaster}/stat`, "utf8")).split(") ")[1]?.split(" ") ?? [];
  // utime, stime, cutime, cstime: fields 14–17 of stat, 11–14 after the command's ") ".
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
  let total = (ticks * 1000) / ticksPerSecond;
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      if (stat.split(") ")[1]?.split(" ")[1] === postmaster)
        total += await cpuMs(`/proc/${pid}/stat`);
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** The database name of a postgres:// URL. */
export function databaseOf(url: string): string {
  return new URL(url).pathname.slice(1);
}

/**
 * The statements the measured deliveries ran, from pg_stat_statements when the server preloads
 * it (a cluster of one's own: `shared_preload_libraries = 'pg_stat_statements'`): per delivery,
 * each statement's calls, execution time and buffers, the costliest first. Null without it.
 */
export async function startStatementCounts(
  url: string,
): Promise<{ report: (count: number) => Promise<string> } | null> {
  const db = openDatabase(url);
  try {
    const [loaded] = await db.query<{ setting: string }>(
      "SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'",
    );
    if (loaded?.setting.includes("pg_stat_statements") !== true) return null;
    await db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await db.query("SELECT pg_stat_statements_reset()");
  } finally {
    await db.close();
  }
  return {
    async report(count) {
      const reader = openDatabase(url);
      try {
        const top = await reader.query<{
          query: string;
          calls: string;
          ms: number | string;
          blocks: string;
        }>(
          `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query, calls,
             total_exec_time AS ms, shared_blks_hit + shared_blks_read AS blocks
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database
             WHERE datname = current_database())
           ORDER BY total_exec_time DESC LIMIT 8`,
        );
        return top
          .map(
            (row) =>
              `  ${round((Number(row.ms) * 1000) / count, 1)} µs/delivery, ` +
              `${round(Number(row.calls) / count, 2)} calls, ` +
              `${round(Number(row.blocks) / count, 1)} blocks: ${row.query}`,
          )
          .join("\n");
      } finally {
        await reader.close();
      }
    },
  };
}

/**
 * Shared blocks the statements of `url`'s database touch from now until `finish`, found in
 * PostgreSQL's buffers (`hit`) or read from the operating system (`read`), from
 * `pg_stat_statements` (null where it is not loaded). Resets the statistics of every database.
 */
export async function startBlockCounts(
  url: string,
): Promise<{ finish: () => Promise<{ hit: number; read: number }> } | null> {
  if ((await startStatementCounts(url)) === null) return null;
  return {
    async finish() {
      const reader = openDatabase(url);
      try {
        const [sums] = await reader.query<{ hit: string | null; read: string | null }>(
          `SELECT sum(shared_blks_hit) AS hit, sum(shared_blks_read) AS read
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database
             WHERE datname = current_database())`,
        );
        return { hit: Number(sums?.hit ?? 0), read: Number(sums?.read ?? 0) };
      } finally {
        await reader.close();
      }
    },
  };
}
