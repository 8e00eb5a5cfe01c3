import diagnostics from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { AppError } from "../../errors.ts";
import { SvcApiError } from "../../client/errors.ts";
import {
  parseAnswer,
  Transport,
  type PreparedRequest,
  type RetryPolicy,
} from "../../client/transport.ts";
import { VERSION } from "../../version.ts";
import { ApiError } from "./api-error.ts";

/**
 * The command line's side of the one request core (src/client/transport.ts, decision 46): its
 * retry policy, `--timing` from fetch's diagnostics, and the core's errors as the CLI's
 * (`AppError`s, whose codes give the exit status), with what to check on this machine.
 */

export type { ApiRequest, HttpMethod, PreparedRequest } from "../../client/transport.ts";

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
  readonly method: PreparedRequest["method"];
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

/** The whole exchange, connection to last byte; the API answers in milliseconds. */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * A command's retries: only what is worth another try at once, with its Idempotency-Key (so a
 * retry replays): an answer lost after the connection was made, and `idempotency_in_progress`
 * (the first try still running), up to 10 s of `Retry-After`. A 429 or 503 is reported at once
 * with its `retry_after`: a person or a script decides whether to wait.
 */
export const cliRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  retryStatuses: [],
  backoffMs: [250, 1000, 2000],
  maxRetryDelayMs: 10_000,
};

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

/** The core's hook on each try, reporting its timing. */
function timingOf(onTiming: (timing: RequestTiming) => void) {
  return (request: PreparedRequest) => {
    const started = performance.now();
    const steps = watchRequestSteps();
    return (status: number | null) => {
      const ended = performance.now();
      steps.stop();
      const { connecting, connected, sent, headers } = steps.seen;
      const out = connecting ?? sent ?? started;
      onTiming({
        method: request.method,
        url: request.url,
        status,
        connectMs:
          connecting === undefined || connected === undefined ? null : connected - connecting,
        headersMs: headers === undefined ? null : headers - out,
        totalMs: ended - out,
        setupMs: out - started,
      });
    };
  };
}

/**
 * The core's error as the CLI reports it: the API's code and status kept (exit statuses come
 * from the code), and what to check here when the fault may be SERVICE_API_URL.
 */
export function cliError(error: unknown): unknown {
  if (!(error instanceof SvcApiError)) return error;
  if (error.status === 0) {
    const hint =
      error.code === "api_unreachable"
        ? " Is the server running, and is SERVICE_API_URL right?"
        : "";
    return new AppError(error.code, `${error.message}${hint}`, { cause: error });
  }
  const redirect = error.status >= 300 && error.status < 400;
  const hint =
    error.code !== "bad_response"
      ? ""
      : redirect
        ? " Set SERVICE_API_URL to the API's own address."
        : " Is SERVICE_API_URL the svc API?";
  const cli = new ApiError(error.code, `${error.message}${hint}`, error.status, error.param);
  cli.retryAfterSeconds = error.retryAfterSeconds;
  return cli;
}

export interface CliTransportOptions {
  readonly base: URL;
  /** Null: a request without credentials (signing in). */
  readonly token: string | null;
  readonly onTiming?: ((timing: RequestTiming) => void) | undefined;
  /** Hears of each retry (the CLI's error), before its wait. */
  readonly onRetry?: (error: AppError, delayMs: number, nextAttempt: number) => void;
}

/** The core as svc's commands use it: their policy, their User-Agent, their hooks. */
export function cliTransport(options: CliTransportOptions): Transport {
  const { onTiming, onRetry } = options;
  return new Transport({
    baseUrl: options.base,
    token: options.token,
    userAgent: `svc/${VERSION}`,
    timeoutMs: REQUEST_TIMEOUT_MS,
    retry: cliRetryPolicy,
    ...(onTiming === undefined ? {} : { onAttempt: timingOf(onTiming) }),
    ...(onRetry === undefined
      ? {}
      : {
          onRetry: (error, delayMs, nextAttempt) => {
            onRetry(cliError(error) as AppError, delayMs, nextAttempt);
          },
        }),
  });
}

/** Sending again is safe for a read, and for a change that carries an Idempotency-Key. */
function repeatable(request: PreparedRequest): boolean {
  return request.method === "GET" || request.headers["Idempotency-Key"] !== undefined;
}

/**
 * Sends a prepared request: its 2xx answer as text and JSON, or the failure as the CLI's
 * error (a redirect is refused, not followed: the credentials would go with it).
 */
export async function sendPrepared(
  transport: Transport,
  request: PreparedRequest,
): Promise<ApiResponse> {
  try {
    const answer = await transport.send(request, { repeatable: repeatable(request) });
    return {
      status: answer.status,
      text: answer.text,
      body: parseAnswer(answer, request.url.origin),
    };
  } catch (error) {
    throw cliError(error);
  }
}
