/**
 * The retry backlog's memory (issue 15): `count` events published as fast as 32 clients can to
 * a destination whose receiver answers 503, then the receiver recovers and the backlog drains.
 * The server's peak RSS during the build-up and during the drain, and its RSS once the drain
 * has settled. `npm run bench:retry-backlog [-- --quick] [--env NAME=value,…]` runs it alone
 * (`--env`: settings for the server, to compare); `npm run bench` includes it.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createTestCa, type TestCa } from "../test/support/tls.ts";
import { publish, publishers, register } from "./measure.ts";
import { startBenchReceiver } from "./receiver.ts";
import { startBenchService } from "./service.ts";
import { argument, pooled, progress, round } from "./stats.ts";

/**
 * Short waits, so that the drain starts within seconds of the receiver's recovery (the n-th
 * opening of a circuit in a row waits the schedule's n-th step, and the circuit opens about
 * every 2 s while the receiver is down), and a last one of an hour, so that nothing fails.
 */
const retrySchedule = [...Array.from({ length: 60 }, () => "2s"), "1h"].join(",");
/**
 * How long the server is left idle after the drain before its memory is read again: past the
 * senders' keep-alive (30 s), so that their connections have closed.
 */
const settleMs = 40_000;

export interface RetryBacklog {
  events: number;
  build_up_peak_rss_mb: number;
  drain_peak_rss_mb: number;
  after_drain_rss_mb: number;
  drain_seconds: number;
}

export async function measureRetryBacklog(
  dir: string,
  ca: TestCa,
  count: number,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<RetryBacklog> {
  await mkdir(dir, { recursive: true });
  const receiver = await startBenchReceiver(ca);
  receiver.answerWith(503);
  const service = await startBenchService({
    dir,
    caCertPath: ca.caCertPath,
    extraEnv: { SVC_RETRY_SCHEDULE: retrySchedule, ...extraEnv },
  });
  try {
    await register(service, `${receiver.url}/down`, ["job.completed"]);
    progress(`retry backlog: ${count} events to a receiver answering 503…`);
    await pooled(count, publishers, async (index) => {
      await publish(service, "job.completed", index);
    });
    const buildUp = await service.peakRssMb();
    progress("retry backlog: the receiver recovers; draining…");
    receiver.answerWith(200);
    const started = performance.now();
    await receiver.waitForDistinct(count, 900_000);
    const drainSeconds = (performance.now() - started) / 1000;
    const drain = await service.peakRssMb();
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return {
      events: count,
      build_up_peak_rss_mb: round(buildUp),
      drain_peak_rss_mb: round(drain),
      after_drain_rss_mb: round(await service.rssMb()),
      drain_seconds: round(drainSeconds),
    };
  } finally {
    await service.stop();
    await receiver.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-retry-backlog-"));
  try {
    const ca = await createTestCa(join(dir, "ca"));
    const count = process.argv.includes("--quick") ? 10_000 : 100_000;
    const settings = (argument("--env") ?? "")
      .split(",")
      .filter((pair) => pair.includes("="))
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]);
    const figures = await measureRetryBacklog(
      join(dir, "service"),
      ca,
      count,
      Object.fromEntries(settings) as NodeJS.ProcessEnv,
    );
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
