import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestCa } from "../test/support/tls.ts";
import { register } from "./measure.ts";
import { postgresDatabase } from "./postgres.ts";
import { startBenchReceiver, type BenchReceiver } from "./receiver.ts";
import { startBenchService, type BenchService } from "./service.ts";

/** One build's server, with a receiver of its own, for the benches that compare two builds. */
export interface BuildSide {
  readonly tree: string;
  readonly service: BenchService;
  readonly receiver: BenchReceiver;
  /** Its fresh PostgreSQL database, with `postgres`; else null (SQLite). */
  readonly databaseUrl: string | null;
}

/**
 * Starts each tree's built server (`dist/src/bin/svc.js`) on a fresh database of its own (a
 * PostgreSQL one with `postgres`, on SVC_BENCH_POSTGRES_URL's server), each with a loopback
 * receiver subscribed to `job.completed` at `path`, runs `work` with them, then stops them and
 * drops their databases and files, whatever `work` did.
 */
export async function withBuildSides<T>(
  trees: readonly string[],
  options: {
    readonly name: string;
    readonly postgres: boolean;
    readonly path: string;
    readonly extraEnv?: NodeJS.ProcessEnv;
  },
  work: (sides: readonly BuildSide[]) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `svc-${options.name}-`));
  const sides: BuildSide[] = [];
  /** What to undo, last first: each database, receiver and server as it is made. */
  const undo: (() => unknown)[] = [];
  try {
    const ca = await createTestCa(join(dir, "ca"));
    for (const [index, tree] of trees.entries()) {
      const serviceDir = join(dir, `side-${index}`, "service");
      await mkdir(serviceDir, { recursive: true });
      const pg = options.postgres ? postgresDatabase() : null;
      if (pg !== null && "skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
      if (pg !== null) undo.push(pg.drop);
      const receiver = await startBenchReceiver(ca);
      undo.push(() => receiver.close());
      const service = await startBenchService({
        dir: serviceDir,
        caCertPath: ca.caCertPath,
        svcBin: join(resolve(tree), "dist/src/bin/svc.js"),
        ...(options.extraEnv === undefined ? {} : { extraEnv: options.extraEnv }),
        ...(pg === null ? {} : { database: pg.url }),
      });
      undo.push(() => service.stop());
      await register(service, `${receiver.url}${options.path}`, ["job.completed"]);
      sides.push({ tree: resolve(tree), service, receiver, databaseUrl: pg?.url ?? null });
    }
    return await work(sides);
  } finally {
    for (const step of undo.reverse()) await step();
    await rm(dir, { recursive: true, force: true });
  }
}
