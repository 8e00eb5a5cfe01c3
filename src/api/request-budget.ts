import type { FastifyInstance, FastifyRequest } from "fastify";
import { hashToken } from "../crypto/tokens.ts";
import { AppError } from "../errors.ts";
import type { Clock } from "../interfaces.ts";
import { cookieToken } from "./auth/cookie-session.ts";
import { addressKey } from "./connection-limits.ts";

/** The request budget's settings (decision 45); each is a setting of the same name. */
export interface RequestBudgetLimits {
  /** Requests per second one client may send on average; 0: no budget (`requestRate`). */
  readonly requestRate: number;
  /** Requests one client may send at once beyond the rate: its bucket's size (`requestBurst`). */
  readonly requestBurst: number;
}

/**
 * Clients whose buckets this process keeps, at most. Past it the least recently seen is
 * forgotten: ~150 bytes each, so the map stays near 1.5 MB whatever a flood of new tokens or
 * addresses sends. A forgotten bucket comes back full, which is where it would be by then
 * unless its client is among the 10,000 most recent: a client cannot hide from its budget by
 * being forgotten without 10,000 others sending in between.
 */
export const MAX_BUCKETS = 10_000;

interface Bucket {
  /** Requests it may still send now, as of `at` (fractional while it refills). */
  tokens: number;
  /** When `tokens` was last worked out, in ms. */
  at: number;
  /** When a refusal of this client was last logged at `info`, in ms. */
  refusalLoggedAt?: number;
}

/** A client's refusals are logged at `info` once a second at most; the others at `debug`. */
const refusalLogEveryMs = 1000;

/**
 * Token buckets by client, refilled at `rate` per second up to `burst`, held in a map that is
 * also the LRU order (a bucket is moved to the end each time it is used).
 */
export class TokenBuckets {
  readonly #buckets = new Map<string, Bucket>();
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #maxBuckets: number;

  constructor(rate: number, burst: number, maxBuckets = MAX_BUCKETS) {
    this.#ratePerMs = rate / 1000;
    this.#burst = burst;
    this.#maxBuckets = maxBuckets;
  }

  /** Buckets kept now. */
  get size(): number {
    return this.#buckets.size;
  }

  has(key: string): boolean {
    return this.#buckets.has(key);
  }

  /**
   * Takes one request from `key`'s bucket: 0 if it may go, else how many ms until it may.
   * A refused request takes nothing, so a client that waits as told is served next time.
   */
  take(key: string, now: number): number {
    const kept = this.#buckets.get(key);
    const bucket: Bucket =
      kept === undefined
        ? { tokens: this.#burst, at: now }
        : {
            tokens: Math.min(
              this.#burst,
              kept.tokens + Math.max(0, now - kept.at) * this.#ratePerMs,
            ),
            at: Math.max(now, kept.at),
            ...(kept.refusalLoggedAt === undefined
              ? {}
              : { refusalLoggedAt: kept.refusalLoggedAt }),
          };
    this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > this.#maxBuckets) {
      const oldest = this.#buckets.keys().next();
      if (oldest.done !== true) this.#buckets.delete(oldest.value);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.#ratePerMs);
  }

  /**
   * Whether a refusal of `key` now is worth a line at `info`: the first in a second. A client
   * that ignores Retry-After is refused thousands of times a second, and a line for each
   * would make the log the cheapest way to load the server; `svc_http_requests_total` counts
   * them all.
   */
  logRefusal(key: string, now: number): boolean {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return true;
    const last = bucket.refusalLoggedAt;
    if (last !== undefined && now - last < refusalLogEveryMs && now >= last) return false;
    bucket.refusalLoggedAt = now;
    return true;
  }
}

/**
 * Who a request's budget is: the credential it presents (a bearer token, else the dashboard's
 * session cookie), named by a hash of the token, never the token; else its address. Read
 * before the credential is looked up, so a key that does not exist has a budget too. The hash
 * is the one the credential is stored under: kept on the request, authentication looks the
 * credential up by it without hashing the token again.
 */
function clientOf(request: FastifyRequest): { token: string | null; address: string } {
  const address = `address:${addressKey(request.socket.remoteAddress ?? "")}`;
  const header = request.headers.authorization;
  const bearer = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  let token = bearer?.[1];
  if (token === undefined && header === undefined) {
    try {
      token = cookieToken(request);
    } catch {
      // Two session cookies: authorisation refuses it; its budget is its address's.
    }
  }
  if (token === undefined) return { token: null, address };
  const hash = hashToken(token);
  request.presentedTokenHash = { token, hash };
  // 128 bits of the hash name the bucket: as distinct as the whole, and the map stays small.
  return { token: `token:${hash.slice(0, 32)}`, address };
}

/**
 * Every request but the exempt ones (probes, /metrics, listen streams: `budget: false` in the
 * route's config) spends one of its client's budget before anything else is done with it, in
 * the first `onRequest` hook: no credential lookup, no statement, for a request over budget.
 * A token seen for the first time (no bucket yet) also spends one of its address's, so that a
 * flood of made-up tokens, each new, is held to its address's budget; a known key is never
 * refused for what its neighbours at the same address send. A client's refusals are logged
 * once a second at `info`, the rest at `debug` (`quietLog`).
 */
export function registerRequestBudget(
  app: FastifyInstance,
  limits: RequestBudgetLimits,
  clock: Clock,
): void {
  if (limits.requestRate === 0) return;
  const buckets = new TokenBuckets(limits.requestRate, limits.requestBurst);
  const windowSeconds = Math.max(1, Math.ceil(limits.requestBurst / limits.requestRate));
  app.addHook("onRequest", (request, reply, done) => {
    const { config } = request.routeOptions;
    if (config.probe === true || config.budget === false) {
      done();
      return;
    }
    const now = clock.now().getTime();
    const client = clientOf(request);
    let waitMs = 0;
    let spent = client.address;
    if (client.token === null || !buckets.has(client.token)) {
      waitMs = buckets.take(client.address, now);
    }
    if (waitMs === 0 && client.token !== null) {
      spent = client.token;
      waitMs = buckets.take(client.token, now);
    }
    if (waitMs === 0) {
      done();
      return;
    }
    if (!buckets.logRefusal(spent, now)) request.quietLog = true;
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    // The IETF draft's fields (draft-ietf-httpapi-ratelimit-headers): the policy, as a quota of
    // `requestBurst` per the time it takes to refill, and what is left of it.
    void reply.header("ratelimit-policy", `"budget";q=${limits.requestBurst};w=${windowSeconds}`);
    void reply.header("ratelimit", `"budget";r=0;t=${retryAfterSeconds}`);
    done(new AppError("too_many_requests", undefined, { retryAfterSeconds }));
  });
}
