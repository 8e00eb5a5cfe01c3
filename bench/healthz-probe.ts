/**
 * The `/healthz` probe of bench/abuse.ts, in a worker thread of its own: the bench's main
 * thread runs thousands of slow clients, and a probe on it would measure their time too.
 * Asks every `everyMs` over a new connection from 127.0.0.1 until `seconds` have passed, and
 * posts back each probe's time in ms, or null for one that failed or took over a second.
 */
import { request } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

const { port, seconds, everyMs } = workerData as { port: number; seconds: number; everyMs: number };

function probe(): Promise<number | null> {
  const started = performance.now();
  return new Promise((resolve) => {
    const call = request(
      { host: "127.0.0.1", port, path: "/healthz", agent: false, localAddress: "127.0.0.1" },
      (response) => {
        response.resume();
        response.on("end", () => {
          resolve(response.statusCode === 200 ? performance.now() - started : null);
        });
      },
    );
    call.setTimeout(1000, () => call.destroy());
    call.on("error", () => {
      resolve(null);
    });
    call.end();
  });
}

const until = performance.now() + seconds * 1000;
const results: (number | null)[] = [];
while (performance.now() < until) {
  results.push(await probe());
  await new Promise((resolve) => setTimeout(resolve, everyMs));
}
parentPort?.postMessage(results);
