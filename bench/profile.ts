/**
 * `npm run bench:profile [-- --postgres] [--count N] [--tree DIR]`: the end-to-end throughput
 * run with the server under `node --cpu-prof`. Writes the profiles of the server's main thread
 * and of its sender thread to bench/results/ (open them in Chrome DevTools or speedscope for the
 * flame graphs) and prints, for each, the functions with the most self time, grouped by
 * function and file, then by file (a package counts as one), each as a share of the thread's
 * samples and in µs per delivery. `--tree` profiles another build's server (a checkout built
 * with `npm run build`), to compare two builds' profiles under the same load.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
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
const tree = argument("--tree");

/** A profile frame's file: under dist/, else its package (node_modules/<package>), else its URL. */
function fileOf(url: string): string {
  const dist = /\/dist\/(.*)$/.exec(url);
  if (dist?.[1] !== undefined) return dist[1];
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return pkg?.[1] === undefined ? url : `node_modules/${pkg[1]}`;
}

/**
 * Self time per function (name and file), or per file with `byFile`, in µs of the thread's
 * samples and as shares of them.
 */
function summarise(
  profile: CpuProfile,
  byFile = false,
): { share: number; us: number; name: string }[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) return;
    const file =
      frame.url === "" ? "" : ` ${frame.url.replace(/^.*\/(node_modules|dist)\//, "$1/")}`;
    const name = byFile
      ? frame.url === ""
        ? frame.functionName
        : fileOf(frame.url)
      : `${frame.functionName || "(anonymous)"}${file}`;
    self.set(name, (self.get(name) ?? 0) + delta);
    total += delta;
  });
  return [...self]
    .map(([name, time]) => ({ name, us: time, share: time / total }))
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
      ...(tree === undefined ? {} : { svcBin: join(resolve(tree), "dist/src/bin/svc.js") }),
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
      const kept = new URL(
        `profile-${tree === undefined ? "" : `${basename(resolve(tree))}-`}${backend}-${thread}.cpuprofile`,
        resultsDir,
      );
      await copyFile(join(profileDir, file), kept);
      const profile = JSON.parse(await readFile(join(profileDir, file), "utf8")) as CpuProfile;
      process.stdout.write(`\nthe server's ${thread} thread, self time:\n`);
      const total = summarise(profile).reduce((sum, { us }) => sum + us, 0);
      process.stdout.write(`  (${round(total / count)} µs per delivery in all)\n`);
      for (const byFile of [false, true]) {
        if (byFile) process.stdout.write(`\nthe server's ${thread} thread, self time by file:\n`);
        for (const { share, us, name } of summarise(profile, byFile).slice(0, lines)) {
          process.stdout.write(
            `${String(round(share * 100)).padStart(5)}% ${String(round(us / count)).padStart(6)} µs  ${name}\n`,
          );
        }
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
