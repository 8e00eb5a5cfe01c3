/**
 * "Noisy neighbours" (issue 15): 50 destinations, 5 of them hanging, at 1,000 deliveries/s
 * (20 events/s, each to all 50); the healthy destinations' publish-to-receipt, against the
 * same run with all 50 healthy. `npm run bench:noisy [-- --quick] [--tree <checkout>]` runs it
 * alone (on another built checkout's `svc`, to compare); `npm run bench` includes it.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createTestCa, type TestCa } from "../test/support/tls.ts";
import { publishPaced, register } from "./measure.ts";
import { startBenchReceiver, type BenchReceiver } from "./receiver.ts";
import { startBenchService } from "./service.ts";
import { argument, percentile, progress, round } from "./stats.ts";

const destinations = 50;
const hangingDestinations = 5;
const eventsPerSecond = 20;
/** Published before the measured run, and not counted. */
const warmUpSeconds = 3;

export interface NoisyNeighbours {
  /** The 45 healthy destinations' publish-to-receipt, ms. */
  healthy_p50_ms: number;
  healthy_p99_ms: number;
  /** The same run with every destination healthy. */
  quiet_p50_ms: number;
  quiet_p99_ms: number;
  /** Requests the hanging destinations received (each held until the sender gave up). */
  hanging_requests: number;
  seconds: number;
}

/** An HTTPS server that takes requests and never answers them. */
interface HangingReceiver {
  readonly url: string;
  requests(): number;
  close(): Promise<void>;
}

async function startHangingReceiver(ca: TestCa): Promise<HangingReceiver> {
  let requests = 0;
  const server: Server = createServer({ key: ca.keyPem, cert: ca.certPem }, (request) => {
    requests += 1;
    request.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** One run: a fresh service, 50 destinations (`hanging` of them never answer). */
async function run(
  dir: string,
  ca: TestCa,
  receiver: BenchReceiver,
  hanging: number,
  seconds: number,
  svcBin: string | undefined,
): Promise<{ p50: number; p99: number; hangingRequests: number }> {
  await mkdir(dir);
  const hangingReceiver = await startHangingReceiver(ca);
  const service = await startBenchService({
    dir,
    caCertPath: ca.caCertPath,
    ...(svcBin === undefined ? {} : { svcBin }),
  });
  try {
    const healthyPaths: string[] = [];
    for (let index = 0; index < destinations; index += 1) {
      if (index < hanging) {
        await register(service, `${hangingReceiver.url}/hangs/${index}`, ["*"]);
      } else {
        healthyPaths.push(`/healthy/${index}`);
        await register(service, `${receiver.url}/healthy/${index}`, ["*"]);
      }
    }
    // Warm-up, not counted: the healthy destinations' connections are open and the server's
    // code compiled, as in a server that has run a while; the hanging ones hang meanwhile.
    receiver.reset();
    await publishPaced(service, warmUpSeconds * eventsPerSecond, eventsPerSecond);
    await receiver.waitForDistinct(warmUpSeconds * eventsPerSecond * healthyPaths.length, 60_000);
    receiver.reset();
    const total = seconds * eventsPerSecond;
    const publishedAt = await publishPaced(service, total, eventsPerSecond);
    await receiver.waitForDistinct(total * healthyPaths.length, 300_000);
    const latencies: number[] = [];
    for (const [id, sentAt] of publishedAt) {
      for (const path of healthyPaths) {
        latencies.push((receiver.firstReceipt.get(`${path} ${id}`) ?? Number.NaN) - sentAt);
      }
    }
    return {
      p50: round(percentile(latencies, 50), 2),
      p99: round(percentile(latencies, 99), 2),
      hangingRequests: hangingReceiver.requests(),
    };
  } finally {
    await service.stop();
    await hangingReceiver.close();
  }
}

/** Both runs, in `dir` (which must exist): quiet first, then with the hanging destinations. */
export async function measureNoisyNeighbours(
  dir: string,
  ca: TestCa,
  seconds: number,
  svcBin?: string,
): Promise<NoisyNeighbours> {
  const receiver = await startBenchReceiver(ca, { perPath: true });
  try {
    progress(`noisy neighbours: ${destinations} healthy destinations, ${seconds} s at 1,000/s…`);
    const quiet = await run(join(dir, "quiet"), ca, receiver, 0, seconds, svcBin);
    progress(`noisy neighbours: ${hangingDestinations} of ${destinations} hanging…`);
    const noisy = await run(join(dir, "noisy"), ca, receiver, hangingDestinations, seconds, svcBin);
    return {
      healthy_p50_ms: noisy.p50,
      healthy_p99_ms: noisy.p99,
      quiet_p50_ms: quiet.p50,
      quiet_p99_ms: quiet.p99,
      hanging_requests: noisy.hangingRequests,
      seconds,
    };
  } finally {
    await receiver.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-noisy-"));
  try {
    const ca = await createTestCa(join(dir, "ca"));
    const seconds = process.argv.includes("--quick") ? 5 : 20;
    const tree = argument("--tree");
    const svcBin = tree === undefined ? undefined : join(tree, "dist/src/bin/svc.js");
    const figures = await measureNoisyNeighbours(dir, ca, seconds, svcBin);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
