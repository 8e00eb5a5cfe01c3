import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { resolveWorkspace } from "../workspace.ts";
import { resolveApiUrl } from "./api-url.ts";
import { resolveCredentials } from "./credentials.ts";
import { MAX_ATTEMPTS, sendWithRetries } from "./retry.ts";
import {
  prepareRequest,
  sendRequest,
  type ApiRequest,
  type ApiResponse,
  type PreparedRequest,
  type RequestTiming,
} from "./http.ts";

/** The whole exchange, connection to last byte; the API answers in milliseconds. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** The API as one command sees it: where, as whom, and in which workspace. */
export interface ApiSession {
  readonly workspace: string;
  /** The request as it would be sent (for `--dry-run`). */
  prepare(request: ApiRequest): PreparedRequest;
  send(request: ApiRequest): Promise<ApiResponse>;
}

/**
 * Settles everything a request needs before any is sent: SERVICE_API_URL, the credentials
 * and the workspace. `--timing` reports each request on stderr as it completes.
 */
export async function openSession(options: GlobalOptions, io: CliIo): Promise<ApiSession> {
  const base = resolveApiUrl(io.env);
  const { token } = await resolveCredentials(io.env);
  const workspace = resolveWorkspace(options.workspace, io.env);
  const onTiming =
    options.timing === true
      ? (timing: RequestTiming) => io.stderr.write(`${describeTiming(timing)}\n`)
      : undefined;
  const sendOnce = (prepared: PreparedRequest): Promise<ApiResponse> =>
    sendRequest(prepared, {
      timeoutMs: REQUEST_TIMEOUT_MS,
      ...(onTiming === undefined ? {} : { onTiming }),
    });
  return {
    workspace,
    prepare: (request) => prepareRequest(base, token, request),
    send: (request) => {
      const prepared = prepareRequest(base, token, request);
      // Sending again is safe for a read, and for a change that carries an Idempotency-Key.
      const repeatable =
        request.method === "GET" || request.headers?.["Idempotency-Key"] !== undefined;
      if (!repeatable) return sendOnce(prepared);
      return sendWithRetries(
        () => sendOnce(prepared),
        (error, delayMs, nextAttempt) => {
          io.stderr.write(
            `note: ${error.message.split(". ")[0] ?? error.code}; sending the same request again in ${delayMs} ms (try ${nextAttempt} of ${MAX_ATTEMPTS})\n`,
          );
        },
      );
    },
  };
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** `timing: GET http://…/v1/workspaces/ws_1/webhooks 200 in 4.2 ms (headers after 3.9 ms)` */
function describeTiming(timing: RequestTiming): string {
  const outcome = timing.status === null ? "no answer" : String(timing.status);
  const headers = timing.headersMs === null ? "" : ` (headers after ${ms(timing.headersMs)})`;
  return `timing: ${timing.method} ${timing.url.href} ${outcome} in ${ms(timing.totalMs)}${headers}`;
}
