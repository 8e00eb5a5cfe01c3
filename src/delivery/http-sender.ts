import type { LookupAddress, LookupOptions } from "node:dns";
import ipaddr from "ipaddr.js";
import { Pool, request } from "undici";
import { errorCodes } from "../lib/error-codes.ts";

export interface SendRequest {
  /**
   * Whose connections carry it (the destination's id): requests of different keys never wait
   * for each other's connections, even to the same host.
   */
  readonly poolKey: string;
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
  | { readonly kind: "response"; readonly statusCode: number; readonly retryAfter?: string }
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

/** Response bodies are read up to this many bytes and discarded. */
const responseBodyLimit = 4096;

/** A pool unused for this long is closed (its connections have timed out by then anyway). */
const idlePoolMs = 60_000;

export interface HttpSenderOptions {
  /**
   * Connections of each destination. The worker sends no more requests to one destination at
   * once, so a request never waits for a connection: its timeout is the exchange alone.
   */
  readonly connectionsPerDestination: number;
  readonly timeoutMs: number;
}

/** One destination's connections, and the addresses they may go to. */
interface DestinationPool {
  readonly pool: Pool;
  addresses: readonly string[];
  requests: number;
  lastUsed: number;
}

/**
 * POSTs notifications over keep-alive connections (undici), a pool per destination, so that
 * a destination that hangs holds only its own connections (decision 24). Redirects are never
 * followed (undici's `request` does not follow them). Connections are opened only to
 * addresses the caller has just checked: the pool's `lookup` answers from the addresses pinned
 * by the latest attempt, never from a second DNS query, so there is no window in which DNS
 * could rebind the name to a private address.
 */
export class HttpSender implements Sender {
  readonly #options: HttpSenderOptions;
  readonly #pools = new Map<string, DestinationPool>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: HttpSenderOptions) {
    this.#options = options;
    this.#sweeper = setInterval(() => {
      this.#closeIdlePools();
    }, idlePoolMs / 2);
    this.#sweeper.unref();
  }

  #poolFor(message: SendRequest): DestinationPool {
    const key = `${message.poolKey} ${message.url.origin}`;
    let entry = this.#pools.get(key);
    if (entry === undefined) {
      const { timeoutMs, connectionsPerDestination } = this.#options;
      const pool = new Pool(message.url.origin, {
        connections: connectionsPerDestination,
        keepAliveTimeout: 30_000,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connect: {
          timeout: timeoutMs,
          lookup: (hostname, options, callback) => {
            lookupPinned(created.addresses, hostname, options, callback);
          },
        },
      });
      const created: DestinationPool = { pool, addresses: [], requests: 0, lastUsed: 0 };
      entry = created;
      this.#pools.set(key, entry);
    }
    entry.addresses = message.addresses;
    entry.lastUsed = Date.now();
    return entry;
  }

  #closeIdlePools(): void {
    const before = Date.now() - idlePoolMs;
    for (const [key, entry] of this.#pools) {
      if (entry.requests > 0 || entry.lastUsed > before) continue;
      this.#pools.delete(key);
      void entry.pool.close().catch(() => undefined);
    }
  }

  async send(message: SendRequest): Promise<SendOutcome> {
    const entry = this.#poolFor(message);
    entry.requests += 1;
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
        dispatcher: entry.pool,
        method: "POST",
        headers: message.headers,
        body: message.body,
        signal,
      });
      await response.body.dump({ limit: responseBodyLimit, signal });
      const retryAfter = response.headers["retry-after"];
      return {
        kind: "response",
        statusCode: response.statusCode,
        ...(typeof retryAfter === "string" ? { retryAfter } : {}),
      };
    } catch (error) {
      return classifyError(error, signal.aborted, message.timeoutMs);
    } finally {
      clearTimeout(timer);
      entry.requests -= 1;
      entry.lastUsed = Date.now();
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map(({ pool }) => pool.close()));
  }
}

/** A `lookup` that answers only from `pinned`, the addresses the attempt just checked. */
function lookupPinned(
  pinned: readonly string[],
  hostname: string,
  options: LookupOptions,
  callback: LookupCallback,
): void {
  if (pinned.length === 0) {
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
