import { errorFromAnswer, SvcApiError } from "./errors.ts";
import { retryAfterMs, withRetries } from "./retry.ts";

/**
 * The one way svc's code calls its API (decision 46): the typed client (`ClientCore`) and the
 * `svc` command line both send through a `Transport`. It owns what a call is on the wire: the
 * base URL, the `Authorization: Bearer` header, JSON bodies, the time-out, refusing redirects,
 * the error envelope read into a `SvcApiError` with the catalog's code, and the retries a
 * `RetryPolicy` allows (429/503 after `Retry-After`, a key still in progress, an answer lost
 * after sending). What differs between its users is given to it: the policy, and hooks to hear
 * of each try (`--timing`) and of each retry (the CLI's note). It loads no zod.
 */

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/** A request to the API, before it is given a base URL and credentials. */
export interface ApiRequest {
  readonly method: HttpMethod;
  /** Relative to the API's base URL, without a leading slash: `v1/workspaces/ws_1/webhooks`. */
  readonly path: string;
  /** Members left undefined are not sent. */
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Headers of this request alone, such as Idempotency-Key. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The request exactly as it goes on the wire; `svc --dry-run` shows this, redacted. */
export interface PreparedRequest {
  readonly method: HttpMethod;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

/** A 2xx answer, its body read as text (byte for byte what came, for `svc --raw`). */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** When a failed try is tried again, and how often. */
export interface RetryPolicy {
  /** Tries in all, the first included, for a request that is safe to send again. */
  readonly maxAttempts: number;
  /** Answers that mean "not now" and are tried again after their `Retry-After`. */
  readonly retryStatuses: readonly number[];
  /** Waits before the second, third… try when the answer named none (the last one repeats). */
  readonly backoffMs: readonly number[];
  /** The longest wait accepted; a longer `Retry-After` is returned as the error instead. */
  readonly maxRetryDelayMs: number;
}

export interface TransportOptions {
  /** The API's address, paths appended to it (a trailing slash is added). */
  readonly baseUrl: string | URL;
  /** Sent as `Authorization: Bearer`; null: a request without credentials (signing in). */
  readonly token: string | null;
  readonly userAgent?: string;
  /** Default: the global `fetch` (which trusts `NODE_EXTRA_CA_CERTS` besides Node's store). */
  readonly fetch?: typeof fetch;
  /** Each try's limit, connection to last byte (a stream's: to its head). */
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  /** Hears of each wait before a retry starts. */
  readonly onRetry?: (error: SvcApiError, delayMs: number, nextAttempt: number) => void;
  /**
   * Called as each try goes out; what it returns is called when that try ends, with the
   * answer's status (null when none came). `svc --timing` reports from these.
   */
  readonly onAttempt?: (request: PreparedRequest) => (status: number | null) => void;
}

/** Per call: whether sending it twice is safe, and a signal to abort it. */
export interface SendOptions {
  /** A GET, or a change with an Idempotency-Key: only then is a failed try tried again. */
  readonly repeatable: boolean;
  readonly signal?: AbortSignal | undefined;
}

/** Connections that broke after the request may have gone out: a keyed retry replays it. */
const lostAnswerCodes = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** The `code`s along an error's `cause` chain, outermost first (fetch wraps the errno). */
function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let at: unknown = error; typeof at === "object" && at !== null;) {
    const { code, cause } = at as { code?: unknown; cause?: unknown };
    if (typeof code === "string") codes.push(code);
    at = cause;
  }
  return codes;
}

/** Why no answer came, in a word when the system gave one (`ECONNREFUSED`). */
function unreachableReason(error: unknown): string {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  return causeCodes(error).at(-1) ?? (cause instanceof Error ? cause.message : String(cause));
}

/**
 * Whether the failure of a try is worth another, and after how long (null: give up). A request
 * that is not `repeatable` is tried once, unless the request budget refused it (429
 * `too_many_requests`, decision 45): then nothing was done, so even a change without a key or
 * a sign-in may go again after `Retry-After`, whatever the policy's statuses.
 */
export function retryDelay(
  policy: RetryPolicy,
  error: unknown,
  attempt: number,
  repeatable = true,
): number | null {
  if (attempt >= policy.maxAttempts || !(error instanceof SvcApiError)) return null;
  const overBudget = error.code === "too_many_requests";
  if (!repeatable && !overBudget) return null;
  const answered =
    overBudget ||
    policy.retryStatuses.includes(error.status) ||
    (error.status === 409 && error.code === "idempotency_in_progress");
  const lost =
    error.code === "api_unreachable" && causeCodes(error).some((code) => lostAnswerCodes.has(code));
  if (!answered && !lost) return null;
  const wait =
    error.retryAfterSeconds === undefined
      ? (policy.backoffMs[attempt - 1] ?? policy.backoffMs.at(-1) ?? 1000)
      : error.retryAfterSeconds * 1000;
  return wait > policy.maxRetryDelayMs ? null : wait;
}

/**
 * A 2xx answer's JSON; null when empty. Anything else is `bad_response`, naming the address
 * (another web server at that URL, most likely).
 */
export function parseAnswer(answer: RawAnswer, origin: string): unknown {
  if (answer.text === "") return null;
  try {
    return JSON.parse(answer.text) as unknown;
  } catch (error) {
    throw new SvcApiError(
      "bad_response",
      `The API at ${origin} answered HTTP ${answer.status} with a body that is not JSON.`,
      answer.status,
      { cause: error },
    );
  }
}

export class Transport {
  readonly #base: URL;
  readonly #options: TransportOptions;
  readonly #fetch: typeof fetch;

  constructor(options: TransportOptions) {
    const base = new URL(options.baseUrl);
    if (!base.pathname.endsWith("/")) base.pathname += "/";
    this.#base = base;
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** The request as it would go on the wire, credentials included. */
  prepare(request: ApiRequest, accept = "application/json"): PreparedRequest {
    const url = new URL(request.path, this.#base);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const { token, userAgent } = this.#options;
    const headers: Record<string, string> = {
      Accept: accept,
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
      ...(userAgent === undefined ? {} : { "User-Agent": userAgent }),
    };
    if (request.body !== undefined) headers["Content-Type"] = "application/json";
    Object.assign(headers, request.headers);
    const body = request.body === undefined ? null : JSON.stringify(request.body);
    return { method: request.method, url, headers, body };
  }

  /** Sends, retrying as the policy allows, and answers the 2xx answer with its body read. */
  send(request: PreparedRequest, options: SendOptions): Promise<RawAnswer> {
    return this.#withRetries(options, async () => {
      const { response, ended } = await this.#exchange(request, options.signal, true);
      try {
        const text = await response.text();
        return { status: response.status, headers: response.headers, text };
      } catch (error) {
        throw this.#unreachable(request, error, options.signal);
      } finally {
        ended();
      }
    });
  }

  /**
   * Opens a stream: the 2xx Response with its body unread; the time-out covers its head alone
   * (a stream lasts as long as it is read).
   */
  open(request: PreparedRequest, options: SendOptions): Promise<Response> {
    return this.#withRetries(options, async () => {
      const { response, ended } = await this.#exchange(request, options.signal, false);
      ended();
      return response;
    });
  }

  #withRetries<T>(options: SendOptions, once: () => Promise<T>): Promise<T> {
    const { retry, onRetry } = this.#options;
    return withRetries(
      once,
      (error, attempt) => retryDelay(retry, error, attempt, options.repeatable),
      onRetry === undefined
        ? undefined
        : (error, delayMs, nextAttempt) => {
            onRetry(error as SvcApiError, delayMs, nextAttempt);
          },
      options.signal,
    );
  }

  /**
   * One try: a 2xx Response (its body to be read within the time-out when `timeBody`), or a
   * SvcApiError: no answer, a redirect, or the error the answer carries.
   */
  async #exchange(
    request: PreparedRequest,
    signal: AbortSignal | undefined,
    timeBody: boolean,
  ): Promise<{ response: Response; ended: () => void }> {
    const { timeoutMs } = this.#options;
    const timer = new AbortController();
    // Unref'd: a finished request's timer keeps no process alive.
    const clock = setTimeout(() => {
      timer.abort(new DOMException("timed out", "TimeoutError"));
    }, timeoutMs).unref();
    const attemptEnded = this.#options.onAttempt?.(request);
    let status: number | null = null;
    const ended = () => {
      clearTimeout(clock);
      attemptEnded?.(status);
    };
    let response: Response;
    try {
      response = await this.#fetch(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body === null ? {} : { body: request.body }),
        // The API never redirects; following one would carry the token elsewhere.
        redirect: "manual",
        signal: signal === undefined ? timer.signal : AbortSignal.any([timer.signal, signal]),
      });
    } catch (error) {
      ended();
      throw this.#unreachable(request, error, signal);
    }
    status = response.status;
    if (response.ok) {
      if (!timeBody) clearTimeout(clock);
      return { response, ended };
    }
    try {
      throw await this.#refusal(request, response);
    } finally {
      ended();
    }
  }

  /** The error a non-2xx answer stands for. */
  async #refusal(request: PreparedRequest, response: Response): Promise<SvcApiError> {
    const origin = request.url.origin;
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = response.headers.get("location") ?? "elsewhere";
      return new SvcApiError(
        "bad_response",
        `The API at ${origin} answered with a redirect (HTTP ${response.status}) to ${location}, which is not followed: the credentials would go with it.`,
        response.status,
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return unreachable(request, error, this.#options.timeoutMs);
    }
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: errorFromAnswer quotes the text.
    }
    const after = retryAfterMs(response.headers.get("retry-after"));
    return errorFromAnswer(
      response.status,
      parsed,
      text,
      origin,
      after === null ? undefined : after / 1000,
    );
  }

  /** No answer (refused, reset, timed out): `api_unreachable`; the caller's abort as it is. */
  #unreachable(request: PreparedRequest, error: unknown, signal: AbortSignal | undefined): unknown {
    return signal?.aborted === true ? error : unreachable(request, error, this.#options.timeoutMs);
  }
}

function unreachable(request: PreparedRequest, error: unknown, timeoutMs: number): SvcApiError {
  const timedOut = error instanceof DOMException && error.name === "TimeoutError";
  const reason = timedOut ? `no answer within ${timeoutMs / 1000} s` : unreachableReason(error);
  return new SvcApiError(
    "api_unreachable",
    `Could not reach the API at ${request.url.origin} (${reason}).`,
    0,
    { cause: error },
  );
}
