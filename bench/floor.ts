/**
 * `npm run bench:floor [-- --rounds 3]`: how far below the raw limit the least possible
 * service already is on this machine. Each round measures the raw limit (bench/raw.ts), then
 * the same end-to-end run as `npm run bench` against bench/floor-relay.ts, a process that
 * only answers each publish and POSTs its signed notification (no database, no framework),
 * and reads the relay's CPU time per delivery from /proc. docs/PERFORMANCE.md compares it with
 * the service's.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { createTestCa } from "../test/support/tls.ts";
import { measureThroughput, warmUpCount } from "./measure.ts";
import { measureRawLimit } from "./raw.ts";
import { startBenchReceiver } from "./receiver.ts";
import type { BenchService } from "./service.ts";
import { argument, cpuMs, progress, round } from "./stats.ts";

const rounds = Number(argument("--rounds") ?? 3);
const count = 20_000;
const relayModule = fileURLToPath(new URL("./floor-relay.js", import.meta.url));

/** The relay as a process of its own, with the calls `measureThroughput` makes. */
async function startRelay(receiverUrl: string, caCertPath: string): Promise<BenchService> {
  const child = spawn(process.execPath, [relayModule, `${receiverUrl}/floor`], {
    env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: caCertPath },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (line: Buffer) => {
      resolve(Number(line.toString().trim()));
    });
    child.once("exit", (code) => {
      reject(new Error(`the floor relay exited ${code}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  return {
    url,
    workspaceId: "floor",
    token: "floor",
    process: child,
    workers: [],
    async call(method, path, body) {
      const response = await request(`${url}/v1/workspaces/floor${path}`, {
        dispatcher: agent,
        method,
        headers: { authorization: "Bearer floor", "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.statusCode, body: await response.body.json() };
    },
    peakRssMb: () => Promise.resolve(Number.NaN),
    rssMb: () => Promise.resolve(Number.NaN),
    async stop() {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      await agent.close();
    },
  };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "svc-floor-"));
  const ca = await createTestCa(join(dir, "ca"));
  const receiver = await startBenchReceiver(ca);
  const relay = await startRelay(receiver.url, ca.caCertPath);
  const pid = relay.process.pid ?? 0;
  try {
    await measureThroughput(relay, receiver, warmUpCount);
    for (let index = 1; index <= rounds; index += 1) {
      progress(`round ${index}/${rounds}: the raw limit, then the floor relay end to end…`);
      const raw = await measureRawLimit({
        url: receiver.url,
        caCertPem: ca.caCertPem,
        count,
        concurrency: 64,
        warmUp: warmUpCount,
      });
      const before = { relay: await cpuMs(`/proc/${pid}/stat`), bench: process.cpuUsage() };
      const floor = await measureThroughput(relay, receiver, count);
      const bench = process.cpuUsage(before.bench);
      process.stdout.write(
        `${JSON.stringify({
          raw_per_s: round(raw),
          floor_per_s: floor.deliveries_per_s,
          ratio_to_raw: round(floor.deliveries_per_s / raw, 3),
          relay_us: round((((await cpuMs(`/proc/${pid}/stat`)) - before.relay) * 1000) / count, 0),
          bench_us: round((bench.user + bench.system) / count, 0),
        })}\n`,
      );
    }
  } finally {
    await relay.stop();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
