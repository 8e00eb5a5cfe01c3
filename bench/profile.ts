/**
 * `npm run bench:profile [-- --postgres] [--count N]`: the end-to-end throughput run with
 * the server under `node --cpu-prof`. Writes the profiles of the server's main thread and of
 * its sender thread to bench/results/ (open them in Chrome DevTools or speedscope for the
 * flame graphs) and prints, for each, the functions with the most self time, grouped by
 * function and file.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createTestCa } from "../test/support/tls.ts";
import { measureThroughput, register } from "./measure.ts";
import { postgresDatabase } from "./postgres.ts";
import { startBenchReceiver } from "./receiver.ts";
import { startBenchService } from "./service.ts";
import { argument, progress, round } from "./stats.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const backend = process.argv.includes("--postgres") ? "postgres" : "sqlite";
const count = Number(argument("--count") ?? 10_000);
const top = Number(argument("--top") ?? 30);

/** Self time per function (name and file), as shares of all samples. */
function summarise(profile: CpuProfile): { share: number; name: string }[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) return;
    const file =
      frame.url === "" ? "" : ` ${frame.url.replace(/^.*\/(node_modules|dist)\//, "$1/")}`;
    const name = `${frame.functionName || "(anonymous)"}${file}`;
    self.set(name, (self.get(name) ?? 0) + delta);
    total += delta;
  });
  return [...self]
    .map(([name, time]) => ({ name, share: time / total }))
    .sort((a, b) => b.share - a.share);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "svc-profile-"));
  const profileDir = join(dir, "profile");
  const ca = await createTestCa(join(dir, "ca"));
  const receiver = await startBenchReceiver(ca);
  const pg = backend === "postgres" ? postgresDatabase() : null;
  try {
    if (pg !== null && "skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
    await mkdir(join(dir, "service"));
    const service = await startBenchService({
      dir: join(dir, "service"),
      caCertPath: ca.caCertPath,
      ...(pg === null ? {} : { database: pg.url }),
      extraEnv: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` },
    });
    await register(service, `${receiver.url}/hooks`, ["job.completed"]);
    progress(`${backend}: ${count} events under --cpu-prof…`);
    const throughput = await measureThroughput(service, receiver, count);
    await service.stop();
    progress(`${throughput.deliveries_per_s}/s (slower than unprofiled)`);
    // One profile per process and thread: the init command's, and the server's main thread,
    // its sender thread and its checkpoint thread. The server's main thread has the most
    // samples, its sender thread the second most.
    const files = (await readdir(profileDir)).filter((name) => name.endsWith(".cpuprofile"));
    const sizes = await Promise.all(
      files.map(async (name) => ({ name, size: (await stat(join(profileDir, name))).size })),
    );
    const [main, sender] = sizes.sort((a, b) => b.size - a.size).map((file) => file.name);
    if (main === undefined || sender === undefined) throw new Error("the server wrote no profile");
    const resultsDir = new URL("../../bench/results/", import.meta.url);
    await mkdir(resultsDir, { recursive: true });
    for (const [thread, file, lines] of [
      ["main", main, top],
      ["sender", sender, Math.ceil(top / 2)],
    ] as const) {
      const kept = new URL(`profile-${backend}-${thread}.cpuprofile`, resultsDir);
      await copyFile(join(profileDir, file), kept);
      const profile = JSON.parse(await readFile(join(profileDir, file), "utf8")) as CpuProfile;
      process.stdout.write(`\nthe server's ${thread} thread, self time:\n`);
      for (const { share, name } of summarise(profile).slice(0, lines)) {
        process.stdout.write(`${String(round(share * 100)).padStart(5)}%  ${name}\n`);
      }
      progress(`profile: bench/results/${basename(kept.pathname)}`);
    }
  } finally {
    if (pg !== null && !("skipped" in pg)) pg.drop();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
