/**
 * `npm run fuzz -- [--runs 20000] [--seed N]`: the test suite's fuzz run over every endpoint
 * (test/api/fuzz.test.ts) for longer, on SQLite through `inject()`, printing its figures:
 * requests, distinct shapes, answers of 500 or more (must be 0), the slowest request, the
 * longest the event loop was held; then the time of the costliest requests the limits allow,
 * each alone.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fuzzApi } from "../test/support/fuzz.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../test/support/in-process-api.ts";
import { argument, progress } from "./stats.ts";

const runs = Number(argument("--runs") ?? 20_000);
const seedArgument = argument("--seed");
const seed =
  seedArgument === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(seedArgument);
progress(`fuzz: ${runs} requests, seed ${seed}…`);
const api = await inProcessApi();
try {
  const started = performance.now();
  const figures = await fuzzApi(api, runs, seed);
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify({ seed, seconds: Math.round(seconds), ...figures })}\n`);
  process.stdout.write(`${JSON.stringify(await worstCases(api))}\n`);
} finally {
  await api.dispose();
}

/**
 * The costliest bodies within the default limits, as one client would send them: the longest
 * each held the event loop (`monitorEventLoopDelay`, 1 ms resolution).
 */
async function worstCases(api: InProcessApi): Promise<Record<string, number>> {
  const publish = (object: string) => `{"type":"job.completed","data":{"object":${object}}}`;
  const keys = Array.from({ length: 20_000 }, (_, index) => `"k${index}":1`).join(",");
  const cases: Record<string, string> = {
    "publish, 256 KiB of 20,000 members": publish(`{${keys}}`),
    "publish, 256 KiB of nested arrays 32 deep": publish(
      `{"a":${"[".repeat(31)}${Array(60_000).fill(0).join(",")}${"]".repeat(31)}}`,
    ),
    "publish, 4,500 deep (refused)": publish(`${"[".repeat(4500)}${"]".repeat(4500)}`),
    "create, 16 KiB list of 8,000 zeros (refused)": `{"url":"https://${publicTestHost}/","events":[${Array(8000).fill(0).join(",")}]}`,
    "create, 1 MiB list of zeros (refused unread)": `{"url":"https://${publicTestHost}/","events":[${Array(500_000).fill(0).join(",")}]}`,
  };
  const times: Record<string, number> = {};
  for (const [name, body] of Object.entries(cases)) {
    const path = name.startsWith("publish") ? "/events" : "/webhooks";
    // The least of five: what the request holds the event loop for, not what else ran then.
    let least = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round += 1) {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const response = await api.call("POST", path, { body });
      delay.disable();
      least = Math.min(least, delay.max / 1e6);
      if (response.statusCode >= 500) throw new Error(`${name}: ${response.body}`);
    }
    times[`${name}: event loop held, ms`] = Math.round(least * 10) / 10;
  }
  return times;
}
