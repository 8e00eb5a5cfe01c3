import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TestCa } from "../test/support/tls.ts";

/**
 * A lean HTTPS receiver for measurements: it answers 200 at once and keeps only the first
 * receipt time of each Webhook-Id, never the bodies, so that it costs the machine as little
 * as a receiver can.
 */
export interface BenchReceiver {
  readonly url: string;
  /**
   * Webhook-Id → when it first arrived (performance.now()); with `perPath`, each path's
   * receipt of it apart, keyed `<path> <Webhook-Id>`.
   */
  readonly firstReceipt: Map<string, number>;
  /** Every request, duplicates included. */
  received(): number;
  /** Resolves once `count` distinct ids have arrived. */
  waitForDistinct(count: number, timeoutMs: number): Promise<void>;
  /** The status it answers with: 200 unless told otherwise (503 plays a receiver that is down). */
  answerWith(status: number): void;
  /** Resolves once `count` requests in all have arrived. */
  waitForTotal(count: number, timeoutMs: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

export async function startBenchReceiver(
  ca: TestCa,
  options: { perPath?: boolean } = {},
): Promise<BenchReceiver> {
  const firstReceipt = new Map<string, number>();
  let received = 0;
  let status = 200;
  let waiter: { done: () => boolean; resolve: () => void } | null = null;
  const server = createServer(
    { key: ca.keyPem, cert: ca.certPem, keepAliveTimeout: 60_000 },
    (request, response) => {
      request.resume();
      request.on("end", () => {
        received += 1;
        const webhookId = String(request.headers["webhook-id"]);
        const id = options.perPath === true ? `${request.url ?? ""} ${webhookId}` : webhookId;
        if (status >= 300) {
          response.writeHead(status, { "content-length": "4" }).end("down");
          return;
        }
        if (!firstReceipt.has(id)) firstReceipt.set(id, performance.now());
        response.writeHead(200, { "content-length": "2" }).end("ok");
        if (waiter?.done() === true) {
          waiter.resolve();
          waiter = null;
        }
      });
    },
  );
  const waitUntil = (done: () => boolean, what: string, timeoutMs: number): Promise<void> => {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${what} did not arrive within ${timeoutMs} ms (${received} requests)`));
      }, timeoutMs);
      waiter = {
        done,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
    });
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    firstReceipt,
    received: () => received,
    answerWith(next) {
      status = next;
    },
    waitForDistinct: (count, timeoutMs) =>
      waitUntil(() => firstReceipt.size >= count, `${count} distinct notifications`, timeoutMs),
    waitForTotal: (count, timeoutMs) =>
      waitUntil(() => received >= count, `${count} requests`, timeoutMs),
    reset() {
      firstReceipt.clear();
      received = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
