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
 * other server, so compare them only within one run. With `--postgres` each side's database
 * is on the same cluster, and each chunk also reads the CPU of the backends serving it (by
 * their process titles, `BackendsCpu`, which keeps what the backends a pool closes spent), so
 * the two builds' PostgreSQL CPU per delivery is compared under the same load too.
 */
import { measureThroughput, warmUpCount } from "./measure.ts";
import { BackendsCpu, databaseOf } from "./postgres.ts";
import { withBuildSides, type BuildSide } from "./sides.ts";
import { argument, cpuMs, progress, round } from "./stats.ts";

const trees = process.argv.slice(2).filter((word, index, words) => {
  const previous = words[index - 1];
  return !word.startsWith("--") && previous !== "--chunks" && previous !== "--size";
});
const postgres = process.argv.includes("--postgres");
const chunks = Number(argument("--chunks") ?? 6);
const size = Number(argument("--size") ?? 3000);

interface Side extends BuildSide {
  /** The CPU of the backends serving the side's database, with `--postgres`. */
  readonly backends: BackendsCpu | null;
  cpuMs: number;
  backendsMs: number;
}

interface PerDelivery {
  readonly server: number;
  readonly backends: number;
}

/** The server process's CPU time (all threads), in ms. */
function serverCpuMs(side: Side): Promise<number> {
  return cpuMs(`/proc/${side.service.process.pid ?? 0}/stat`);
}

/** The CPU time of the backends serving the side's database, in ms (0 on SQLite). */
function backendsCpuMs(side: Side): Promise<number> {
  return side.backends?.ms() ?? Promise.resolve(0);
}

async function main(): Promise<void> {
  if (trees.length !== 2) {
    process.stderr.write(
      "usage: npm run bench:paired -- <tree A> <tree B> [--postgres] [--chunks N] [--size N]\n",
    );
    process.exitCode = 2;
    return;
  }
  const options = {
    name: "paired",
    postgres,
    path: "/paired",
    extraEnv: { SVC_DELIVERY_CONCURRENCY: "256" },
  };
  await withBuildSides(trees, options, async (built) => {
    const sides: Side[] = [];
    try {
      for (const side of built) {
        const url = side.databaseUrl;
        const backends = url === null ? null : await BackendsCpu.start(databaseOf(url));
        sides.push({ ...side, backends, cpuMs: 0, backendsMs: 0 });
      }
      await compare(sides);
    } finally {
      for (const side of sides) side.backends?.stop();
    }
  });
}

/** The warm-up, then `chunks` chunks of `size` events to both sides at once. */
async function compare(sides: readonly Side[]): Promise<void> {
  progress(`both: ${warmUpCount} events of warm-up at once…`);
  await Promise.all(
    sides.map((side) => measureThroughput(side.service, side.receiver, warmUpCount)),
  );
  for (let chunk = 1; chunk <= chunks; chunk += 1) {
    const perDelivery = await Promise.all(
      sides.map(async (side) => {
        const [before, backendsBefore] = [await serverCpuMs(side), await backendsCpuMs(side)];
        await measureThroughput(side.service, side.receiver, size);
        const spent = (await serverCpuMs(side)) - before;
        const backends = (await backendsCpuMs(side)) - backendsBefore;
        side.cpuMs += spent;
        side.backendsMs += backends;
        return { server: (spent * 1000) / size, backends: (backends * 1000) / size };
      }),
    );
    const [a, b] = perDelivery as [PerDelivery, PerDelivery];
    const backends = postgres
      ? `; PostgreSQL A ${round(a.backends, 0)} µs, B ${round(b.backends, 0)} µs, ` +
        `B/A ${round(b.backends / a.backends, 3)}`
      : "";
    process.stdout.write(
      `chunk ${chunk}/${chunks}: A ${round(a.server, 0)} µs, B ${round(b.server, 0)} µs per ` +
        `delivery, B/A ${round(b.server / a.server, 3)}${backends}\n`,
    );
  }
  const [a, b] = sides as [Side, Side];
  const per = (ms: number): number => round((ms * 1000) / (chunks * size), 0);
  const line = (label: string, side: Side): string =>
    `${label} ${side.tree}: server ${per(side.cpuMs)} µs per delivery` +
    (postgres ? `, PostgreSQL ${per(side.backendsMs)} µs` : "") +
    "\n";
  process.stdout.write(
    line("A", a) +
      line("B", b) +
      `B/A ${round(b.cpuMs / a.cpuMs, 3)}` +
      (postgres ? `, PostgreSQL B/A ${round(b.backendsMs / a.backendsMs, 3)}` : "") +
      ` (${chunks} chunks of ${size})\n`,
  );
}

await main();
