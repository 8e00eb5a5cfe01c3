import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { AppError } from "../../errors.ts";
import { resolveClientWorkspace } from "../workspace.ts";
import { resolveApiUrl } from "./api-url.ts";
import { whoAmI } from "./auth-api.ts";
import { resolveCredentials, type Credentials } from "./credentials.ts";
import { printable } from "../render/printable.ts";
import {
  cliError,
  cliRetryPolicy,
  cliTransport,
  sendPrepared,
  type ApiRequest,
  type ApiResponse,
  type PreparedRequest,
  type RequestTiming,
} from "./http.ts";

/** The API as one command sees it: where and as whom, through the one request core. */
export interface ApiClient {
  /** The request as it would be sent (for `--dry-run`). */
  prepare(request: ApiRequest): PreparedRequest;
  send(request: ApiRequest): Promise<ApiResponse>;
  /** A stream's 2xx Response, its body unread; never tried twice (the caller reconnects). */
  open(request: ApiRequest, signal: AbortSignal): Promise<Response>;
}

/** The API as a workspace's command sees it: also in which workspace. */
export interface ApiSession extends ApiClient {
  readonly workspace: string;
}

/**
 * The workspaces the credentials reach, for the fallback when none is named: those saved at
 * sign-in, else (an API key in SERVICE_API_KEY) the server's answer to "who am I", asked only
 * now. A dry run sends nothing, so it cannot ask.
 */
function reachableWorkspaces(
  credentials: Credentials,
  base: URL,
  dryRun: boolean,
  onTiming: ((timing: RequestTiming) => void) | undefined,
) {
  return async (): Promise<readonly { id: string }[]> => {
    if (credentials.saved !== null) return credentials.saved.workspaces;
    if (dryRun) {
      throw new AppError(
        "no_workspace",
        "No workspace selected. Pass --workspace <id> or set SERVICE_WORKSPACE_ID: --dry-run sends nothing, so it cannot ask the API which workspace the key belongs to.",
      );
    }
    return (await whoAmI(base, credentials.token, onTiming)).workspaces;
  };
}

/**
 * Settles everything a request needs before any is sent: the API's URL, the credentials
 * (SERVICE_API_KEY, else those saved by `svc auth login`) and the workspace. `--timing`
 * reports each request on stderr as it completes, the "who am I" that finds the workspace
 * included.
 */
export async function openSession(options: GlobalOptions, io: CliIo): Promise<ApiSession> {
  const credentials = await resolveCredentials(io.env);
  const base = resolveApiUrl(io.env, credentials.saved?.api_url);
  const onTiming = timingReporter(options, io);
  const workspace = await resolveClientWorkspace(
    options.workspace,
    io.env,
    credentials.saved?.default_workspace ?? null,
    reachableWorkspaces(credentials, base, options.dryRun === true, onTiming),
  );
  return { workspace, ...clientOf(credentials.token, base, onTiming, io) };
}

/**
 * The API without a workspace of its own: the operator's commands (`svc workspaces`, decision
 * 42), which name the workspace in their path when they act on one.
 */
export async function openClient(options: GlobalOptions, io: CliIo): Promise<ApiClient> {
  const credentials = await resolveCredentials(io.env);
  const base = resolveApiUrl(io.env, credentials.saved?.api_url);
  return clientOf(credentials.token, base, timingReporter(options, io), io);
}

function clientOf(
  token: string,
  base: URL,
  onTiming: ((timing: RequestTiming) => void) | undefined,
  io: CliIo,
): ApiClient {
  const transport = cliTransport({
    base,
    token,
    onTiming,
    onRetry: (error, delayMs, nextAttempt) => {
      io.stderr.write(
        `note: ${printable(error.message.split(". ")[0] ?? error.code)}; sending the same request again in ${delayMs} ms (try ${nextAttempt} of ${cliRetryPolicy.maxAttempts})\n`,
      );
    },
  });
  return {
    prepare: (request) => transport.prepare(request),
    send: (request) => sendPrepared(transport, transport.prepare(request)),
    open: async (request, signal) => {
      try {
        return await transport.open(transport.prepare(request, "text/event-stream"), {
          repeatable: false,
          signal,
        });
      } catch (error) {
        throw cliError(error);
      }
    },
  };
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;

/**
 * `timing: GET http://…/v1/workspaces/ws_1/webhooks 200 in 4.2 ms (connect 0.8 ms, headers
 * after 3.9 ms)`, and what svc spent before sending when it is worth saying (the first
 * request loads fetch).
 */
export function describeTiming(timing: RequestTiming): string {
  const outcome = timing.status === null ? "no answer" : String(timing.status);
  const parts = [
    ...(timing.connectMs === null ? [] : [`connect ${ms(timing.connectMs)}`]),
    ...(timing.headersMs === null ? [] : [`headers after ${ms(timing.headersMs)}`]),
  ];
  const steps = parts.length === 0 ? "" : ` (${parts.join(", ")})`;
  const setup = timing.setupMs >= 1 ? `; svc's own start-up before it: ${ms(timing.setupMs)}` : "";
  return `timing: ${timing.method} ${timing.url.href} ${outcome} in ${ms(timing.totalMs)}${steps}${setup}`;
}

/** What `--timing` does with each request's timing: a line on stderr. */
export function timingReporter(
  options: GlobalOptions,
  io: CliIo,
): ((timing: RequestTiming) => void) | undefined {
  return options.timing === true
    ? (timing) => io.stderr.write(`${describeTiming(timing)}\n`)
    : undefined;
}
