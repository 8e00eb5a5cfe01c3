/**
 * `npm run bench:paired -- <tree A> <tree B> [--postgres] [--chunks 6] [--size 3000]`: two
 * builds' servers side by side under the same load. Both start on fresh databases, each with
 * a receiver of its own, and take `warmUpCount` events of warm-up together; then each chunk
 * publishes `--size` events to both at once and reads each server process's CPU (all its
 * threads) per delivery. Prints each chunk's pair and ratio, then the totals.
 *
 * bench:ab runs the trees one after the other, so on a shared machine whose load moves from
 * minute to minute a pair's two runs meet different loads (their spread was ±15 % at load
 * 6–12); here both meet the same load at the same time, and the ratio B/A is what to read
 * (its chunks spread a few percent). The absolute µs are inflated by the load and by the
 * other server, so compare them only within one run.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createTestCa, type TestCa } from "../test/support/tls.ts";
import { measureThroughput, register, warmUpCount } from "./measure.ts";
import { postgresDatabase } from "./postgres.ts";
import { startBenchReceiver, type BenchReceiver } from "./receiver.ts";
import { startBenchService, type BenchService } from "./service.ts";
import { argument, cpuMs, progress, round } from "./stats.ts";

const trees = process.argv.slice(2).filter((word, index, words) => {
  const previous = words[index - 1];
  return !word.startsWith("--") && previous !== "--chunks" && previous !== "--size";
});
const postgres = process.argv.includes("--postgres");
const chunks = Number(argument("--chunks") ?? 6);
const size = Number(argument("--size") ?? 3000);

interface Side {
  readonly tree: string;
  readonly service: BenchService;
  readonly receiver: BenchReceiver;
  readonly drop: () => void;
  cpuMs: number;
}

async function startSide(tree: string, dir: string, ca: TestCa): Promise<Side> {
  const pg = postgres ? postgresDatabase() : null;
  if (pg !== null && "skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
  const receiver = await startBenchReceiver(ca);
  await mkdir(join(dir, "service"));
  const service = await startBenchService({
    dir: join(dir, "service"),
    caCertPath: ca.caCertPath,
    svcBin: join(tree, "dist/src/bin/svc.js"),
    extraEnv: { SVC_DELIVERY_CONCURRENCY: "256" },
    ...(pg === null ? {} : { database: pg.url }),
  });
  await register(service, `${receiver.url}/paired`, ["job.completed"]);
  return { tree, service, receiver, drop: () => pg?.drop(), cpuMs: 0 };
}

/** The server process's CPU time (all threads), in ms. */
function serverCpuMs(side: Side): Promise<number> {
  return cpuMs(`/proc/${side.service.process.pid ?? 0}/stat`);
}

async function main(): Promise<void> {
  if (trees.length !== 2) {
    process.stderr.write(
      "usage: npm run bench:paired -- <tree A> <tree B> [--postgres] [--chunks N] [--size N]\n",
    );
    process.exitCode = 2;
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), "svc-paired-"));
  const sides: Side[] = [];
  try {
    const ca = await createTestCa(join(dir, "ca"));
    for (const [index, tree] of trees.entries()) {
      const sideDir = join(dir, `side-${index}`);
      await mkdir(sideDir);
      sides.push(await startSide(resolve(tree), sideDir, ca));
    }
    progress(`both: ${warmUpCount} events of warm-up at once…`);
    await Promise.all(
      sides.map((side) => measureThroughput(side.service, side.receiver, warmUpCount)),
    );
    for (let chunk = 1; chunk <= chunks; chunk += 1) {
      const perDelivery = await Promise.all(
        sides.map(async (side) => {
          const before = await serverCpuMs(side);
          await measureThroughput(side.service, side.receiver, size);
          const spent = (await serverCpuMs(side)) - before;
          side.cpuMs += spent;
          return (spent * 1000) / size;
        }),
      );
      const [a = 0, b = 0] = perDelivery;
      process.stdout.write(
        `chunk ${chunk}/${chunks}: A ${round(a, 0)} µs, B ${round(b, 0)} µs per delivery, B/A ${round(b / a, 3)}\n`,
      );
    }
    const [a, b] = sides as [Side, Side];
    const total = (side: Side): number => round((side.cpuMs * 1000) / (chunks * size), 0);
    process.stdout.write(
      `A ${a.tree}: server ${total(a)} µs per delivery\nB ${b.tree}: server ${total(b)} µs ` +
        `per delivery\nB/A ${round(b.cpuMs / a.cpuMs, 3)} (${chunks} chunks of ${size})\n`,
    );
  } finally {
    for (const side of sides) {
      await side.service.stop();
      await side.receiver.close();
      side.drop();
    }
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
