/**
 * `svc listen`'s latency (issue 20): events published at 100/s to a workspace whose only
 * subscriber is a listen session, forwarded by the built `svc listen` to a local receiver;
 * publish-to-local-receipt percentiles, beside the same run to a webhook destination on the
 * same receiver (the worker's path). `npm run bench:listen [-- --quick] [--postgres]`
 * (`--postgres`: on a database the run creates on SVC_BENCH_POSTGRES_URL's server, as
 * `npm run bench` does).
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createTestCa, type TestCa } from "../test/support/tls.ts";
import { publishPaced, register } from "./measure.ts";
import { postgresDatabase } from "./postgres.ts";
import { startBenchReceiver, type BenchReceiver } from "./receiver.ts";
import { startBenchService, type BenchService } from "./service.ts";
import { percentile, progress, round } from "./stats.ts";

const eventsPerSecond = 100;
const warmUpSeconds = 3;
const svcBin = fileURLToPath(new URL("../src/bin/svc.js", import.meta.url));

interface Latency {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Publishes for `seconds` at the pace, after a warm-up; publish-to-first-receipt, in ms. */
async function measure(
  service: BenchService,
  receiver: BenchReceiver,
  seconds: number,
): Promise<Latency> {
  receiver.reset();
  await publishPaced(service, warmUpSeconds * eventsPerSecond, eventsPerSecond);
  await receiver.waitForDistinct(warmUpSeconds * eventsPerSecond, 60_000);
  receiver.reset();
  const total = seconds * eventsPerSecond;
  const publishedAt = await publishPaced(service, total, eventsPerSecond);
  await receiver.waitForDistinct(total, 120_000);
  const latencies = [...publishedAt].map(
    ([id, sentAt]) => (receiver.firstReceipt.get(id) ?? Number.NaN) - sentAt,
  );
  return {
    p50_ms: round(percentile(latencies, 50), 2),
    p99_ms: round(percentile(latencies, 99), 2),
    max_ms: round(Math.max(...latencies), 2),
  };
}

/** `svc listen` to the receiver, until `stop()`; resolves once it listens. */
async function startListen(service: BenchService, ca: TestCa, url: string) {
  const child = spawn(process.execPath, [svcBin, "listen", "--forward-to", url], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SERVICE_API_URL: service.url,
      SERVICE_API_KEY: service.token,
      NODE_EXTRA_CA_CERTS: ca.caCertPath,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr }).on("line", (line) => {
      if (line.startsWith("Listening:")) resolve();
    });
    child.once("exit", (code) => {
      reject(new Error(`svc listen exited ${code}`));
    });
  });
  return {
    stop: async () => {
      child.kill("SIGINT");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

const dir = await mkdtemp(join(tmpdir(), "svc-bench-listen-"));
try {
  const ca = await createTestCa(join(dir, "ca"));
  const seconds = process.argv.includes("--quick") ? 5 : 20;
  const receiver = await startBenchReceiver(ca);
  try {
    await mkdir(join(dir, "listen"));
    const pg = process.argv.includes("--postgres") ? postgresDatabase() : null;
    if (pg !== null && "skipped" in pg) throw new Error(`no PostgreSQL: ${pg.skipped}`);
    const service = await startBenchService({
      dir: join(dir, "listen"),
      caCertPath: ca.caCertPath,
      ...(pg === null ? {} : { database: pg.url }),
    });
    let viaListen: Latency;
    let viaWebhook: Latency;
    try {
      progress(`svc listen: ${seconds} s at ${eventsPerSecond} events/s…`);
      const listening = await startListen(service, ca, `${receiver.url}/listen`);
      try {
        viaListen = await measure(service, receiver, seconds);
      } finally {
        await listening.stop();
      }
      progress(`a webhook destination: ${seconds} s at ${eventsPerSecond} events/s…`);
      await register(service, `${receiver.url}/webhook`, ["*"]);
      viaWebhook = await measure(service, receiver, seconds);
    } finally {
      await service.stop();
      pg?.drop();
    }
    process.stdout.write(
      `${JSON.stringify({
        engine: pg === null ? "sqlite" : "postgres",
        events_per_second: eventsPerSecond,
        seconds,
        listen: viaListen,
        webhook: viaWebhook,
      })}\n`,
    );
  } finally {
    await receiver.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
