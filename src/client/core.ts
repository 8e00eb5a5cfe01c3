import type { OperationId } from "../contract/operations.ts";
import { errorFromAnswer, SvcApiError } from "./errors.ts";
import { retryAfterMs, withRetries } from "./retry.ts";
import { routes } from "./routes.ts";
import type { Answer, OperationInput, OperationOutput } from "./types.ts";

export interface ClientOptions {
  /** The API's address: `https://hooks.example.com` (the `/v1` paths are appended). */
  readonly baseUrl: string | URL;
  /** An API key (`sk_…`), an operator key, or a session token; sent as `Authorization: Bearer`. */
  readonly token?: string;
  /** Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Each try's limit, connection to last byte. Default 30 s. */
  readonly timeoutMs?: number;
  /** Tries in all for a request that is safe to send again (GET, or with a key). Default 3. */
  readonly maxAttempts?: number;
  /** The longest `Retry-After` waited for; a longer one is returned as the error. Default 30 s. */
  readonly maxRetryDelayMs?: number;
  /**
   * Checks each answer against the contract's schema (loads zod on first use); an answer that
   * does not match is `bad_response`. Off by default.
   */
  readonly validate?: boolean;
  /** Sent as `User-Agent`. */
  readonly userAgent?: string;
}

/** Statuses that mean "not now": the same request may succeed after `Retry-After`. */
const retryableStatuses = new Set([429, 503]);
/** Waits when a retryable answer names none (every 503 of svc names one). */
const defaultBackoffMs = [500, 1000, 2000, 4000];
/** Connections that broke after the request may have gone out: a keyed retry replays it. */
const lostAnswerCodes = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let at: unknown = error; at instanceof Error; at = at.cause) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  return codes;
}

/** Fills `{workspace}` and `{id}` with the parameters, each encoded as one segment. */
export function expandPath(template: string, params: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (typeof value !== "string" || value === "" || value === "." || value === "..") {
      throw new SvcApiError("invalid_request", `${name} must be a non-empty id.`, 0, {
        param: name,
      });
    }
    return encodeURIComponent(value);
  });
}

type Validator = (operation: OperationId, body: unknown) => string | null;
let validator: Promise<Validator> | undefined;

/** The contract's schemas, loaded only when an answer is to be checked. */
function loadValidator(): Promise<Validator> {
  validator ??= import("../contract/operations.ts").then(({ operations }) => {
    return (operation, body) => {
      const result = operations[operation].success.schema.safeParse(body);
      if (result.success) return null;
      const issue = result.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
      return `${where}: ${issue?.message ?? "invalid"}`;
    };
  });
  return validator;
}

/**
 * The one way to call the API: builds the request from the routes table, sends it with a
 * time-out, retries what is safe to retry (a GET, or a change with an Idempotency-Key) on
 * 429/503 after `Retry-After` and on a lost answer, and turns every failure into a
 * SvcApiError.
 */
export class ClientCore {
  readonly #base: URL;
  readonly #options: ClientOptions;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    const base = new URL(options.baseUrl);
    if (!base.pathname.endsWith("/")) base.pathname += "/";
    this.#base = base;
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** Calls `operation` and answers its body. */
  async call<K extends OperationId>(
    operation: K,
    input: OperationInput<K>,
  ): Promise<OperationOutput<K>> {
    return (await this.send(operation, input)).body;
  }

  /** Calls `operation` and answers its body with the answer's status and headers. */
  async send<K extends OperationId>(
    operation: K,
    input: OperationInput<K>,
  ): Promise<Answer<OperationOutput<K>>> {
    const response = await this.request(operation, input, "application/json");
    const text = await response.text();
    const body = parseJson(text, response.status);
    if (this.#options.validate === true) {
      const problem = (await loadValidator())(operation, body);
      if (problem !== null) {
        throw new SvcApiError(
          "bad_response",
          `The API answered ${operation} with a body the contract does not allow (${problem}).`,
          response.status,
        );
      }
    }
    return {
      status: response.status,
      body: body as OperationOutput<K>,
      replayed: response.headers.get("idempotent-replayed") === "true",
      headers: response.headers,
    };
  }

  /**
   * The 2xx Response of `operation`, its body unread (a stream's, for one); any other outcome
   * is thrown as a SvcApiError.
   */
  async request<K extends OperationId>(
    operation: K,
    input: OperationInput<K>,
    accept: string,
  ): Promise<Response> {
    const route = routes[operation];
    const method = route.method.toUpperCase();
    const url = new URL(
      expandPath(route.path, (input.params ?? {}) as Record<string, unknown>).slice(1),
      this.#base,
    );
    // Query members are strings or numbers (the types allow no other).
    const query = (input.query ?? {}) as Record<string, string | number | undefined>;
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { Accept: accept };
    if (this.#options.token !== undefined) headers.Authorization = `Bearer ${this.#options.token}`;
    if (this.#options.userAgent !== undefined) headers["User-Agent"] = this.#options.userAgent;
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    if (body !== undefined) headers["Content-Type"] = "application/json";
    // The server keeps keys for the operations a scope guards; sign-in and sign-out take none
    // (no workspace), so sending them again is never safe, key or not.
    const keyed = route.access !== "none" && route.access !== "credential";
    const key =
      input.idempotencyKey ??
      (method !== "GET" && keyed ? `svc-${crypto.randomUUID()}` : undefined);
    if (key !== undefined) headers["Idempotency-Key"] = key;
    const repeatable = method === "GET" || (keyed && key !== undefined);
    const maxAttempts = repeatable ? (this.#options.maxAttempts ?? 3) : 1;
    const stream = accept === "text/event-stream";
    const once = () => this.#once(url, method, headers, body, input.signal, !stream);
    return withRetries(
      once,
      (error, attempt) => this.#delayFor(error, attempt, maxAttempts),
      undefined,
      input.signal,
    );
  }

  #delayFor(error: unknown, attempt: number, maxAttempts: number): number | null {
    if (!(error instanceof SvcApiError)) return null;
    // Over the request budget nothing was done (decision 45), so even a request that is not
    // safe to send twice (a sign-in, a change without a key) may be sent again.
    const most =
      error.code === "too_many_requests" ? (this.#options.maxAttempts ?? 3) : maxAttempts;
    if (attempt >= most) return null;
    const fallback = defaultBackoffMs[attempt - 1] ?? 4000;
    const answered =
      retryableStatuses.has(error.status) ||
      (error.status === 409 && error.code === "idempotency_in_progress");
    const lost =
      error.code === "api_unreachable" && causeCodes(error).some((c) => lostAnswerCodes.has(c));
    if (!answered && !lost) return null;
    const wait = error.retryAfterSeconds === undefined ? fallback : error.retryAfterSeconds * 1000;
    return wait > (this.#options.maxRetryDelayMs ?? 30_000) ? null : wait;
  }

  async #once(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
    timeBody: boolean,
  ): Promise<Response> {
    const timeoutMs = this.#options.timeoutMs ?? 30_000;
    const timer = new AbortController();
    // Unref'd: a finished request's timer keeps no process alive.
    const clock = setTimeout(() => {
      timer.abort(new DOMException("timed out", "TimeoutError"));
    }, timeoutMs).unref();
    const timeout = timer.signal;
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        // The API never redirects; following one would carry the token elsewhere.
        redirect: "manual",
        signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      const reason = timeout.aborted
        ? `no answer within ${timeoutMs / 1000} s`
        : (causeCodes(error).at(-1) ?? (error instanceof Error ? error.message : String(error)));
      throw new SvcApiError(
        "api_unreachable",
        `Could not reach the API at ${url.origin} (${reason}).`,
        0,
        { cause: error },
      );
    }
    if (response.ok) {
      // A stream lasts as long as it is read: the time-out is for its head alone.
      if (!timeBody) clearTimeout(clock);
      return response;
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: errorFromAnswer quotes the text.
    }
    const after = retryAfterMs(response.headers.get("retry-after"));
    throw errorFromAnswer(response.status, parsed, text, after === null ? undefined : after / 1000);
  }
}

function parseJson(text: string, status: number): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new SvcApiError(
      "bad_response",
      `The API answered HTTP ${status} with a body that is not JSON.`,
      status,
      { cause: error },
    );
  }
}
