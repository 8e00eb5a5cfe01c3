/**
 * `npm run bench:cpu-parts -- <tree A> <tree B> [--postgres] [--seconds 15]`: where two builds'
 * servers spend their CPU, side by side under the same load, by the samples of the kernel's
 * profiler (`perf`, Debian's linux-perf), not V8's: V8's samples a thread when it is next
 * scheduled, so a thread that wakes another (a `postMessage`, a file write handed to the
 * thread pool, an fsync) is charged for the time it was descheduled, while `perf` counts the
 * CPU alone, every thread's, native code and the kernel's included.
 *
 * Runs `bench:paired` on the two trees with each server's JIT symbols written for `perf`
 * (`--perf-basic-prof-only-functions`), waits for its first chunk (the warm-up done), records
 * both servers at once for `--seconds` (999 samples a second, call graphs off), and prints each
 * part's samples for A and B and the difference. Both servers deliver the same events in the
 * same seconds, so their samples compare as CPU per delivery does. The parts: SQLite's C code,
 * the kernel, V8's builtins, its runtime and its garbage collector, Node's C++, OpenSSL, libc,
 * and JavaScript by file (the service's own under dist/src by folder, a package as one), then
 * the symbols that moved most. Needs `perf` and permission to attach to one's own processes.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { argument, progress } from "./stats.ts";

const trees = process.argv.slice(2).filter((word, index, words) => {
  return !word.startsWith("--") && words[index - 1] !== "--seconds";
});
const postgres = process.argv.includes("--postgres");
const seconds = Number(argument("--seconds") ?? 15);

/** The part of the server a sample is charged to, from its object file and symbol. */
function partOf(object: string, symbol: string): string {
  if (object.startsWith("[kernel")) return "kernel";
  if (object.startsWith("[JIT]") || symbol.startsWith("JS:")) {
    const own = /\/dist\/src\/([\w-]+)\//.exec(symbol);
    if (own?.[1] !== undefined) return `JS src/${own[1]}`;
    const dependency = /\/node_modules\/((?:@[\w.-]+\/)?[\w.-]+)\//.exec(symbol);
    if (dependency?.[1] !== undefined) return `JS ${dependency[1]}`;
    const builtin = /\bnode:([\w/]+)/.exec(symbol);
    if (builtin?.[1] !== undefined) return `JS node:${builtin[1].split("/")[0] ?? ""}`;
    return "JS (other: wasm, stubs)";
  }
  if (object.startsWith("libc")) return "libc";
  if (object !== "node") return object;
  if (/^(sqlite3|pcache|btree|wal|vdbe|json|pager)/i.test(symbol)) return "SQLite";
  if (symbol.startsWith("Builtins_")) return "V8 builtins";
  if (/Scaveng|MarkCompact|Sweeper|Heap::|heap::|ConcurrentMarking|Marking/.test(symbol))
    return "V8 garbage collector";
  if (symbol.startsWith("v8::")) return "V8 runtime";
  if (/^(node::|napi_)/.test(symbol)) return "Node C++";
  if (/^uv_|^uv__/.test(symbol)) return "libuv";
  if (/SSL|EVP_|ossl_|OPENSSL|CRYPTO_|BN_|aes|gcm|sha\d|ChaCha|poly1305/i.test(symbol))
    return "OpenSSL";
  return "node (other)";
}

/** `perf report`'s samples by object file and symbol. */
function samplesOf(data: string): Map<string, { object: string; symbol: string; count: number }> {
  const report = spawnSync(
    "perf",
    ["report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-g", "none", "-n"],
    { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  if (report.status !== 0) throw new Error(`perf report failed: ${report.stderr}`);
  const samples = new Map<string, { object: string; symbol: string; count: number }>();
  for (const line of report.stdout.split("\n")) {
    const match = /^\s*[\d.]+%\s+(\d+)\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (match?.[1] === undefined || match[2] === undefined || match[3] === undefined) continue;
    // Each server's JIT symbols name its own tree and thread: the same function in both
    // builds has one name once those are taken out.
    const object = match[2].startsWith("[JIT]") ? "[JIT]" : match[2];
    const symbol = match[3].trim().replace(/\/work\/[^/\s]+\//g, "/…/");
    const key = `${object} ${symbol}`;
    const entry = samples.get(key) ?? { object, symbol, count: 0 };
    entry.count += Number(match[1]);
    samples.set(key, entry);
  }
  return samples;
}

async function serverPid(parent: number, tree: string): Promise<number | null> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, "utf8");
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== parent) continue;
      const command = (await readFile(`/proc/${entry}/cmdline`, "utf8")).split("\0");
      if (command.includes("server") && command.some((word) => word.startsWith(`${tree}/`)))
        return Number(entry);
    } catch {
      // The process ended meanwhile.
    }
  }
  return null;
}

async function main(): Promise<void> {
  if (trees.length !== 2) {
    throw new Error("usage: cpu-parts.js <tree A> <tree B> [--postgres] [--seconds 15]");
  }
  const [a, b] = trees.map((tree) => resolve(tree)) as [string, string];
  const dir = await mkdtemp(join(tmpdir(), "svc-cpu-parts-"));
  const paired = spawn(
    process.execPath,
    [
      join(import.meta.dirname, "paired.js"),
      a,
      b,
      "--chunks",
      // Enough chunks to outlast the recording (a chunk takes 2–4 s on two cores).
      String(Math.ceil(seconds / 2) + 4),
      ...(postgres ? ["--postgres"] : []),
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, SVC_BENCH_SERVER_NODE_OPTIONS: "--perf-basic-prof-only-functions" },
    },
  );
  const pairedPid = paired.pid;
  if (pairedPid === undefined) throw new Error("bench:paired did not start");
  const ended = new Promise<void>((done) =>
    paired.once("close", () => {
      done();
    }),
  );
  try {
    let output = "";
    await new Promise<void>((started, failed) => {
      paired.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (/^chunk 1\//m.test(output)) started();
      });
      paired.once("close", () => {
        failed(new Error(`bench:paired ended early:\n${output}`));
      });
    });
    const pids = await Promise.all([serverPid(pairedPid, a), serverPid(pairedPid, b)]);
    if (pids.includes(null)) throw new Error("the two servers were not found");
    progress(`perf: recording both servers for ${seconds} s…`);
    const recorded = pids.map((pid, index) => {
      const record = spawn(
        "perf",
        ["record", "-F", "999", "-p", String(pid), "-o", join(dir, `${index}.data`)],
        { stdio: "ignore" },
      );
      return new Promise<void>((done) => {
        record.once("close", () => {
          done();
        });
        setTimeout(() => record.kill("SIGINT"), seconds * 1000);
      });
    });
    await Promise.all(recorded);
    const [samplesA, samplesB] = [0, 1].map((index) => samplesOf(join(dir, `${index}.data`))) as [
      ReturnType<typeof samplesOf>,
      ReturnType<typeof samplesOf>,
    ];
    printParts(a, b, samplesA, samplesB);
  } finally {
    // bench:paired stops its servers itself when its chunks are done.
    await ended;
    await rm(dir, { recursive: true, force: true });
  }
}

function printParts(
  a: string,
  b: string,
  samplesA: ReturnType<typeof samplesOf>,
  samplesB: ReturnType<typeof samplesOf>,
): void {
  const total = (samples: ReturnType<typeof samplesOf>): number =>
    [...samples.values()].reduce((sum, entry) => sum + entry.count, 0);
  const byPart = (samples: ReturnType<typeof samplesOf>): Map<string, number> => {
    const parts = new Map<string, number>();
    for (const { object, symbol, count } of samples.values()) {
      const part = partOf(object, symbol);
      parts.set(part, (parts.get(part) ?? 0) + count);
    }
    return parts;
  };
  const [totalA, totalB] = [total(samplesA), total(samplesB)];
  console.log(
    `A ${a}: ${totalA} samples\nB ${b}: ${totalB} samples, B/A ${(totalB / totalA).toFixed(3)}\n`,
  );
  const partsA = byPart(samplesA);
  const partsB = byPart(samplesB);
  const rows = (
    keys: Iterable<string>,
    countA: (key: string) => number,
    countB: (key: string) => number,
  ): [string, number, number][] =>
    [...new Set(keys)]
      .map((key): [string, number, number] => [key, countA(key), countB(key)])
      .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
  console.log("part                                      A        B     B−A");
  for (const [part, inA, inB] of rows(
    [...partsA.keys(), ...partsB.keys()],
    (key) => partsA.get(key) ?? 0,
    (key) => partsB.get(key) ?? 0,
  )) {
    if (Math.max(inA, inB) < totalA / 500) continue;
    console.log(
      `${part.padEnd(38)} ${String(inA).padStart(7)}  ${String(inB).padStart(7)}  ${(inB - inA >= 0 ? "+" : "") + String(inB - inA)}`,
    );
  }
  console.log("\nthe symbols that moved most:");
  for (const [key, inA, inB] of rows(
    [...samplesA.keys(), ...samplesB.keys()],
    (key) => samplesA.get(key)?.count ?? 0,
    (key) => samplesB.get(key)?.count ?? 0,
  ).slice(0, 25)) {
    console.log(
      `${String(inA).padStart(6)} ${String(inB).padStart(6)} ${(inB - inA >= 0 ? "+" : "") + String(inB - inA)}  ${key.slice(0, 110)}`,
    );
  }
}

await main();
