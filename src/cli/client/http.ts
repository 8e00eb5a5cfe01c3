import diagnostics from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { AppError } from "../../errors.ts";
import { errorCodes } from "../../lib/error-codes.ts";
import { retryAfterMs } from "../../client/retry.ts";
import { VERSION } from "../../version.ts";
import { ApiError, errorFromResponse } from "./api-error.ts";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/** A request to the API, before it is given a base URL and credentials. */
export interface ApiRequest {
  readonly method: HttpMethod;
  /** Relative to the API's base URL, without a leading slash: `v1/workspaces/ws_1/webhooks`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Headers of this request alone, such as Idempotency-Key. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The request exactly as it goes on the wire; `--dry-run` shows this, redacted. */
export interface PreparedRequest {
  readonly method: HttpMethod;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

export interface ApiResponse {
  readonly status: number;
  /** The body as received, for `--raw`. */
  readonly text: string;
  /** The body parsed as JSON; null when empty. */
  readonly body: unknown;
}

/**
 * One request's time, from the moment it went to the network (connecting, or sending on a
 * connection kept open) to its answer's last byte: what the API and the network took, not
 * svc's own start-up (loading fetch, on the first request).
 */
export interface RequestTiming {
  readonly method: HttpMethod;
  readonly url: URL;
  /** Null when no answer came. */
  readonly status: number | null;
  /** Opening the connection; null when one kept open was used. */
  readonly connectMs: number | null;
  /** Until the response's headers arrived; null when they did not. */
  readonly headersMs: number | null;
  readonly totalMs: number;
  /** svc's own time before the request went out (loading fetch, preparing it). */
  readonly setupMs: number;
}

/**
 * When the request in flight reached each step, from fetch's diagnostics channels (undici's):
 * svc sends one request at a time, so the steps seen while it is in flight are its own.
 */
function watchRequestSteps() {
  const seen: { connecting?: number; connected?: number; sent?: number; headers?: number } = {};
  const steps = {
    "undici:client:beforeConnect": "connecting",
    "undici:client:connected": "connected",
    "undici:client:sendHeaders": "sent",
    "undici:request:headers": "headers",
  } as const;
  const listeners = Object.entries(steps).map(([channel, step]) => {
    const listener = () => {
      seen[step] ??= performance.now();
    };
    diagnostics.subscribe(channel, listener);
    return () => diagnostics.unsubscribe(channel, listener);
  });
  return {
    seen,
    stop: () => {
      for (const unsubscribe of listeners) unsubscribe();
    },
  };
}

export interface SendOptions {
  readonly timeoutMs: number;
  readonly onTiming?: (timing: RequestTiming) => void;
}

/** `token` null: a request without credentials (signing in). */
export function prepareRequest(
  base: URL,
  token: string | null,
  request: ApiRequest,
): PreparedRequest {
  const url = new URL(request.path, base);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    url.searchParams.set(name, value);
  }
  const headers: Record<string, string> = {
    Accept: "application/json",
    ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    "User-Agent": `svc/${VERSION}`,
  };
  if (request.body !== undefined) headers["Content-Type"] = "application/json";
  Object.assign(headers, request.headers);
  const body = request.body === undefined ? null : JSON.stringify(request.body);
  return { method: request.method, url, headers, body };
}

/** The API's address for messages: what SERVICE_API_URL points at. */
function apiAddress(url: URL): string {
  return url.origin;
}

function unreachable(request: PreparedRequest, error: unknown, timeoutMs: number): AppError {
  const address = apiAddress(request.url);
  if (error instanceof Error && error.name === "TimeoutError") {
    return new AppError(
      "api_unreachable",
      `The API at ${address} did not answer within ${timeoutMs / 1000} s. Is the server running, and is SERVICE_API_URL right?`,
      { cause: error },
    );
  }
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  const reason =
    errorCodes(error).at(-1) ?? (cause instanceof Error ? cause.message : String(cause));
  return new AppError(
    "api_unreachable",
    `Could not reach the API at ${address} (${reason}). Is the server running, and is SERVICE_API_URL right?`,
    { cause: error },
  );
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === "") return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Sends one request with Node's fetch. Every outcome other than a 2xx JSON answer is an
 * AppError: a network failure or time-out names the API's address (`api_unreachable`), an
 * error body keeps the API's code and message, and a redirect is refused rather than followed
 * (the API never redirects; following one would carry the credentials elsewhere).
 */
export async function sendRequest(
  request: PreparedRequest,
  options: SendOptions,
): Promise<ApiResponse> {
  const started = performance.now();
  const steps = options.onTiming === undefined ? null : watchRequestSteps();
  let status: number | null = null;
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    status = response.status;
    const text = await response.text();
    return interpret(request, response, text);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw unreachable(request, error, options.timeoutMs);
  } finally {
    const ended = performance.now();
    if (steps !== null) {
      steps.stop();
      const { connecting, connected, sent, headers } = steps.seen;
      const out = connecting ?? sent ?? started;
      options.onTiming?.({
        method: request.method,
        url: request.url,
        status,
        connectMs:
          connecting === undefined || connected === undefined ? null : connected - connecting,
        headersMs: headers === undefined ? null : headers - out,
        totalMs: ended - out,
        setupMs: out - started,
      });
    }
  }
}

function interpret(request: PreparedRequest, response: Response, text: string): ApiResponse {
  const address = apiAddress(request.url);
  const parsed = parseJson(text);
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get("location") ?? "elsewhere";
    throw new ApiError(
      "bad_response",
      `The API at ${address} answered with a redirect (HTTP ${response.status}) to ${location}; svc does not follow redirects. Set SERVICE_API_URL to the API's own address.`,
      response.status,
    );
  }
  if (!response.ok) {
    const error = errorFromResponse(
      response.status,
      parsed.ok ? parsed.value : null,
      text,
      address,
    );
    const retryAfter = retryAfterMs(response.headers.get("retry-after"));
    if (error instanceof ApiError && retryAfter !== null)
      error.retryAfterSeconds = retryAfter / 1000;
    throw error;
  }
  if (!parsed.ok) {
    throw new ApiError(
      "bad_response",
      `The API at ${address} answered HTTP ${response.status} with a body that is not JSON. Is SERVICE_API_URL the svc API?`,
      response.status,
    );
  }
  return { status: response.status, text, body: parsed.value };
}
