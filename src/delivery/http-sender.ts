import type { LookupAddress, LookupOptions } from "node:dns";
import ipaddr from "ipaddr.js";
import { Agent, request } from "undici";
import { errorCodes } from "../lib/error-codes.ts";
import { storableText } from "../lib/storable-text.ts";

export interface SendRequest {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The whole exchange: connection, request, response head and (capped) body. */
  readonly timeoutMs: number;
  /** The addresses of the URL's host that were just checked; the connection uses only these. */
  readonly addresses: readonly string[];
}

export type ErrorClass = "timeout" | "connection" | "tls" | "protocol";

export type SendOutcome =
  | {
      readonly kind: "response";
      readonly statusCode: number;
      readonly retryAfter?: string;
      /** The first `answerBytes` of the answer, as text; absent when it was empty. */
      readonly body?: string;
    }
  | { readonly kind: "error"; readonly errorClass: ErrorClass; readonly message: string };

/** What the delivery worker sends with: an `HttpSender` here, or one in a thread. */
export interface Sender {
  /** Never rejects for the receiver's sake: every failure to reach it is a `SendOutcome`. */
  send(message: SendRequest): Promise<SendOutcome>;
  close(): Promise<void>;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * Response bodies are read up to this many bytes, so that the connection can be used again;
 * a longer one closes it.
 */
const responseBodyLimit = 4096;
/** How much of an answer the attempt keeps, for the delivery log (decision 30). */
export const answerBytes = 2048;

export interface HttpSenderOptions {
  readonly timeoutMs: number;
}

/**
 * POSTs notifications with keep-alive connection pools per origin (undici). A pool opens a
 * connection whenever all of its own are busy: no request ever waits for a connection, so a
 * request's timeout is its exchange alone (connect, TLS, request, answer), and one
 * destination's requests never queue behind another's. How many are in flight, and so how
 * many connections there are, is the worker's to bound (per destination, per workspace and
 * in all: decision 24). Redirects are never followed (undici's `request` does not follow them). Connections are opened only to
 * addresses the caller has just checked: the agent's `lookup` answers from the addresses
 * pinned for the host name by the attempt, never from a second DNS query, so there is no
 * window in which DNS could rebind the name to a private address.
 */
export class HttpSender implements Sender {
  readonly #pinned = new Map<string, readonly string[]>();
  readonly #agent: Agent;

  constructor(options: HttpSenderOptions) {
    this.#agent = new Agent({
      // No limit per origin (undici's default): the worker bounds what is in flight.
      connections: null,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: {
        timeout: options.timeoutMs,
        lookup: (...args) => {
          this.#lookup(...args);
        },
      },
    });
  }

  #lookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
    const pinned = this.#pinned.get(hostname);
    if (pinned === undefined || pinned.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} has no checked address`);
      error.code = "ENOTFOUND";
      callback(error, []);
      return;
    }
    const wanted = options.family === 4 || options.family === 6 ? options.family : null;
    const answers = pinned
      .map((address) => ({ address, family: ipaddr.parse(address).kind() === "ipv6" ? 6 : 4 }))
      .filter((answer) => wanted === null || answer.family === wanted);
    const [first] = answers;
    if (options.all === true) callback(null, answers);
    else if (first === undefined)
      callback(new Error(`${hostname} has no IPv${wanted ?? ""} address`), []);
    else callback(null, first.address, first.family);
  }

  async send(message: SendRequest): Promise<SendOutcome> {
    this.#pinned.set(message.url.hostname, message.addresses);
    // A timer cleared as soon as the exchange ends, not `AbortSignal.timeout`: its timer (and
    // what hangs on its signal) would live for the whole timeout after every request, tens of
    // thousands of them under load, each surviving into the old generation.
    const controller = new AbortController();
    const { signal } = controller;
    const timer = setTimeout(() => {
      controller.abort();
    }, message.timeoutMs);
    timer.unref();
    try {
      const response = await request(message.url, {
        dispatcher: this.#agent,
        method: "POST",
        headers: message.headers,
        body: message.body,
        signal,
      });
      const length = Number(response.headers["content-length"] ?? Number.NaN);
      const bytes =
        length <= responseBodyLimit
          ? new Uint8Array(await response.body.arrayBuffer(), 0, Math.min(length, answerBytes))
          : await readAnswer(response.body);
      const body = answerText(bytes);
      const retryAfter = response.headers["retry-after"];
      return {
        kind: "response",
        statusCode: response.statusCode,
        ...(typeof retryAfter === "string" ? { retryAfter } : {}),
        ...(body === "" ? {} : { body }),
      };
    } catch (error) {
      return classifyError(error, signal.aborted, message.timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/**
 * Reads an answer of unknown or large length up to `responseBodyLimit` bytes, keeping the
 * first `answerBytes`; one that goes on is cut off, and its connection closed, as undici's
 * `dump` would. (A short answer whose length is declared is read whole, in one piece: undici
 * holds it to its `Content-Length`, and that costs a fraction of this loop.)
 */
async function readAnswer(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Buffer> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (keptBytes < answerBytes) {
      const part = chunk.subarray(0, answerBytes - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    if (read > responseBodyLimit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(kept, keptBytes);
}

const utf8 = new TextDecoder("utf-8");

/**
 * The kept bytes as text: UTF-8, an invalid or cut sequence as U+FFFD, and NUL as U+FFFD too
 * (PostgreSQL's text cannot hold it).
 */
export function answerText(bytes: Uint8Array): string {
  return storableText(utf8.decode(bytes));
}

const timeoutCodes = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function classifyError(error: unknown, timedOut: boolean, timeoutMs: number): SendOutcome {
  const [code = ""] = errorCodes(error);
  if (timedOut || timeoutCodes.has(code)) {
    return { kind: "error", errorClass: "timeout", message: `no answer within ${timeoutMs}ms` };
  }
  if (/CERT|TLS|SSL|SIGNATURE/.test(code)) {
    return { kind: "error", errorClass: "tls", message: `TLS failed (${code})` };
  }
  if (code.startsWith("UND_ERR") && code !== "UND_ERR_SOCKET") {
    return { kind: "error", errorClass: "protocol", message: `HTTP failed (${code})` };
  }
  return {
    kind: "error",
    errorClass: "connection",
    message: `connection failed (${code || "unknown"})`,
  };
}
