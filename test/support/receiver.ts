import type { IncomingMessage, ServerResponse } from "node:http";
import { STATUS_CODES, createServer as createPlainServer } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TestCa } from "./tls.ts";

/** One request as the receiver got it, recorded before it is answered. */
export interface ReceivedRequest {
  method: string;
  /** The request target as sent, with its query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as received, after any chunked framing is removed. */
  rawBody: Buffer;
  /** `rawBody` decoded as UTF-8. */
  bodyText: string;
  /** `Date.now()` when the whole body had arrived. */
  receivedAt: number;
}

/** How to answer one request. */
export interface ResponsePlan {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer: the connection stays open until the client gives up or `close()`. */
  hang?: boolean;
}

/** Decides the answer to a request; `index` counts the receiver's requests from 0. */
export type Responder = (
  request: ReceivedRequest,
  index: number,
) => ResponsePlan | Promise<ResponsePlan>;

export interface Receiver {
  /** `https://127.0.0.1:PORT` or `https://[::1]:PORT` (http:// without a CA), no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request received so far, in order of arrival. */
  readonly requests: ReceivedRequest[];
  setResponder(responder: Responder): void;
  /**
   * Resolves with the requests received so far once there are at least `count`; rejects
   * after `timeoutMs` (default 15000) saying how many arrived.
   */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening, drops every connection (hanging ones too) and cancels delayed answers. */
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** The test CA whose leaf certificate it serves; null: plain HTTP (`svc listen`'s local server). */
  ca: TestCa | null;
  /** The loopback address to listen on: `127.0.0.1` (default), another 127/8 address or `::1`. */
  host?: string;
  respond?: Responder;
}

/** Answers every request with `status` and its reason phrase as the body. */
export function always(status: number): Responder {
  return () => ({ status, body: STATUS_CODES[status] ?? "" });
}

/**
 * Answers with `plans` in order, then repeats the last one. Counts its own calls, so a
 * sequence installed with `setResponder` mid-test starts from its first plan.
 */
export function sequence(...plans: [ResponsePlan, ...ResponsePlan[]]): Responder {
  let calls = 0;
  return () => {
    const plan = plans[Math.min(calls, plans.length - 1)]!;
    calls += 1;
    return plan;
  };
}

/** Answers 302 Found with `Location: url`. */
export function redirectTo(url: string): Responder {
  return () => ({ status: 302, headers: { location: url }, body: "" });
}

const ok: Responder = () => ({ status: 200, body: "ok" });

interface Waiter {
  count: number;
  resolve: (requests: ReceivedRequest[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

function describeRequests(requests: readonly ReceivedRequest[]): string {
  if (requests.length === 0) return "";
  return `: ${requests.map((request) => `${request.method} ${request.path}`).join(", ")}`;
}

/**
 * An HTTPS server on loopback, with the test CA's leaf certificate (plain HTTP without a CA),
 * that records and answers as scripted.
 */
export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const host = options.host ?? "127.0.0.1";
  let responder = options.respond ?? ok;
  let closed = false;
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<Waiter>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const settleWaiters = (): void => {
    for (const waiter of waiters) {
      if (requests.length >= waiter.count) {
        waiters.delete(waiter);
        clearTimeout(waiter.timer);
        waiter.resolve([...requests]);
      }
    }
  };

  const answer = (response: ServerResponse, plan: ResponsePlan): void => {
    if (closed || response.destroyed) return;
    const body = plan.body ?? "";
    const headers: Record<string, string> = { ...plan.headers };
    const hasContentType = Object.keys(headers).some(
      (name) => name.toLowerCase() === "content-type",
    );
    if (body !== "" && !hasContentType) headers["content-type"] = "text/plain; charset=utf-8";
    response.writeHead(plan.status, headers);
    response.end(body);
  };

  const handle = async (
    request: IncomingMessage,
    response: ServerResponse,
    received: ReceivedRequest,
    index: number,
  ): Promise<void> => {
    let plan: ResponsePlan;
    try {
      plan = await responder(received, index);
    } catch (error) {
      plan = { status: 500, body: `receiver responder failed: ${String(error)}` };
    }
    if (plan.hang === true) return;
    const delayMs = plan.delayMs ?? 0;
    if (delayMs <= 0) {
      answer(response, plan);
      return;
    }
    // The listener goes once the answer is sent: a kept-alive socket carries many requests.
    const onClose = (): void => {
      clearTimeout(timer);
      timers.delete(timer);
    };
    const timer = setTimeout(() => {
      timers.delete(timer);
      request.socket.off("close", onClose);
      answer(response, plan);
    }, delayMs);
    timers.add(timer);
    request.socket.once("close", onClose);
  };

  const { ca } = options;
  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("error", () => {
      // The client went away mid-body: nothing to record or answer.
    });
    request.on("end", () => {
      const rawBody = Buffer.concat(chunks);
      const received: ReceivedRequest = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: { ...request.headers },
        rawBody,
        bodyText: rawBody.toString("utf8"),
        receivedAt: Date.now(),
      };
      const index = requests.push(received) - 1;
      settleWaiters();
      void handle(request, response, received, index);
    });
  };
  const server =
    ca === null
      ? createPlainServer({ keepAlive: true }, onRequest)
      : createServer({ key: ca.keyPem, cert: ca.certPem, keepAlive: true }, onRequest);
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {
    // A client that rejects the certificate, or hangs up mid-handshake: Node destroys the
    // socket; tests look at what the client saw.
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `${ca === null ? "http" : "https"}://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;

  return {
    url,
    port,
    requests,
    setResponder(next: Responder): void {
      responder = next;
    },
    waitForRequests(count: number, timeoutMs = 15_000): Promise<ReceivedRequest[]> {
      if (requests.length >= count) return Promise.resolve([...requests]);
      if (closed) {
        return Promise.reject(
          new Error(
            `receiver ${url} is closed: expected at least ${count} request(s), ` +
              `${requests.length} arrived${describeRequests(requests)}`,
          ),
        );
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          count,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(waiter);
            reject(
              new Error(
                `receiver ${url}: expected at least ${count} request(s) within ${timeoutMs} ms, ` +
                  `but ${requests.length} arrived${describeRequests(requests)}`,
              ),
            );
          }, timeoutMs),
        };
        waiters.add(waiter);
      });
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        for (const waiter of waiters) {
          clearTimeout(waiter.timer);
          waiter.reject(
            new Error(
              `receiver ${url} closed while waiting for ${waiter.count} request(s); ` +
                `${requests.length} arrived${describeRequests(requests)}`,
            ),
          );
        }
        waiters.clear();
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      });
      return closing;
    },
  };
}
