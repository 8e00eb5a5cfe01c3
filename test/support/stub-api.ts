import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";

/** A request the stub received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A stand-in for the API on loopback, answering what a test scripts: for responses the real
 * server does not give yet (idempotency conflicts) or never gives (a foreign web server).
 */
export interface StubApi {
  readonly url: string;
  readonly received: ReceivedRequest[];
  answer(handler: (request: ReceivedRequest, response: ServerResponse) => void): void;
  close(): Promise<void>;
}

/** `tls`: serve HTTPS with this certificate (test/support/tls.ts makes them). */
export async function startStubApi(
  options: { tls?: { cert: string; key: string } } = {},
): Promise<StubApi> {
  const received: ReceivedRequest[] = [];
  let handler = (_request: ReceivedRequest, response: ServerResponse): void => {
    response.writeHead(500).end();
  };
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry = {
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(entry);
      handler(entry, response);
    });
  };
  const server =
    options.tls === undefined ? createServer(listener) : createHttpsServer(options.tls, listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address !== "object") throw new Error("stub did not listen");
  return {
    url: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${address.port}`,
    received,
    answer(next) {
      handler = next;
    },
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
      }),
  };
}

/** Answers JSON with a status and optional headers. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (_request: ReceivedRequest, response: ServerResponse): void => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };
}
