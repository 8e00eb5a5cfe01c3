import { setTimeout as sleep } from "node:timers/promises";
import type { EventSourceMessage } from "eventsource-parser";
import {
  listenSessionListSchema,
  openedListenSessionSchema,
  streamReadySchema,
  streamedNotificationSchema,
  type StreamedNotification,
} from "../../contract/listen.ts";
import { deliverySchema } from "../../contract/delivery-log.ts";
import { deletionSchema } from "../../contract/destinations.ts";
import { AppError } from "../../errors.ts";
import { EVENT_SUBSCRIPTIONS, EVENT_TYPES } from "../../interfaces.ts";
import { parseDuration } from "../../lib/duration.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";
import { ApiError } from "../client/api-error.ts";
import { parseBody, pathSegment, workspacePath } from "../client/api-paths.ts";
import type { ApiSession } from "../client/session.ts";
import { openSession } from "../client/session.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { errorCode } from "../new-file.ts";
import { jsonText, type CommandResult } from "../output.ts";
import { printable } from "../render/printable.ts";
import { usageError } from "../usage.ts";
import { forward, type LocalResult } from "./forwarder.ts";
import { readStream, StreamFailure, type StreamEnd } from "./stream-client.ts";

const COMMAND = "listen";

export interface ListenOptions extends GlobalOptions {
  readonly forwardTo?: string;
  readonly route?: readonly string[];
  readonly events?: string;
  readonly name?: string;
  readonly list?: boolean;
  readonly end?: string;
  readonly reconnectFor?: string;
  readonly localTimeout?: string;
}

/** Where each event type goes: its route, else the default `--forward-to`. */
interface Routing {
  readonly fallback: string | null;
  readonly byType: ReadonlyMap<string, string>;
}

function localUrl(text: string, what: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(COMMAND, `${what} ${JSON.stringify(text)} is not a URL.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    // `localhost:3000/hooks` parses as the scheme "localhost:".
    const suggestion = /^[\w.-]+:\d/.test(text) ? `: did you mean http://${text}?` : ".";
    throw usageError(
      COMMAND,
      `${what} must be an http:// or https:// URL (not ${url.protocol})${suggestion}`,
    );
  }
  return url.href;
}

function parseRouting(options: ListenOptions): Routing {
  const fallback =
    options.forwardTo === undefined ? null : localUrl(options.forwardTo, "--forward-to");
  const byType = new Map<string, string>();
  for (const route of options.route ?? []) {
    const split = route.indexOf("=");
    const type = route.slice(0, Math.max(split, 0));
    if (split <= 0 || !(EVENT_TYPES as readonly string[]).includes(type)) {
      throw usageError(
        COMMAND,
        `--route takes <type>=<url>, the type one of ${EVENT_TYPES.join(", ")} (not ${JSON.stringify(route)}).`,
      );
    }
    byType.set(type, localUrl(route.slice(split + 1), `--route ${type}`));
  }
  if (fallback === null && byType.size === 0) {
    throw usageError(
      COMMAND,
      "--forward-to <url> is required (or --route <type>=<url>): where to POST each notification, e.g. http://localhost:3000/hooks.",
    );
  }
  return { fallback, byType };
}

/** The types to receive: `--events`, else all (with a default URL) or the routed ones. */
function eventsOf(options: ListenOptions, routing: Routing): string[] {
  if (options.events === undefined) {
    return routing.fallback === null ? [...routing.byType.keys()] : ["*"];
  }
  const names = options.events
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const unknown = names.filter(
    (name) => !(EVENT_SUBSCRIPTIONS as readonly string[]).includes(name),
  );
  if (names.length === 0 || unknown.length > 0) {
    throw usageError(
      COMMAND,
      `--events takes a comma-separated list of ${EVENT_SUBSCRIPTIONS.join(", ")}${unknown.length > 0 ? ` (not ${unknown.join(", ")})` : ""}.`,
    );
  }
  if (routing.fallback === null) {
    const unrouted = names.filter((name) => name === "*" || !routing.byType.has(name));
    if (unrouted.length > 0) {
      throw usageError(
        COMMAND,
        `${unrouted.join(", ")} would have nowhere to go: add --forward-to <url>, or a --route for each.`,
      );
    }
  }
  return names;
}

function durationOption(text: string | undefined, fallback: number, flag: string): number {
  if (text === undefined) return fallback;
  const ms = parseDuration(text);
  if (ms === null || ms <= 0) {
    throw usageError(COMMAND, `${flag} takes a duration such as 30s or 2m (not ${text}).`);
  }
  return ms;
}

/** One line per forwarded notification: time, type, id, the local answer and its time. */
function resultLine(notification: StreamedNotification, result: LocalResult, routed: boolean) {
  const time = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const answer =
    result.statusCode === null
      ? `error: ${result.error ?? "no answer"}`
      : String(result.statusCode);
  const attempt = notification.attempt > 1 ? `  (attempt ${notification.attempt})` : "";
  const where = routed ? `  → ${result.url}` : "";
  return printable(
    `${time}  ${notification.event_type.padEnd(20)}  ${notification.event_id}  ${answer}  ${Math.round(result.durationMs)} ms${attempt}${where}`,
  );
}

function jsonLine(notification: StreamedNotification, result: LocalResult) {
  return jsonText({
    time: new Date().toISOString(),
    type: notification.event_type,
    event_id: notification.event_id,
    delivery_id: notification.delivery_id,
    attempt: notification.attempt,
    url: result.url,
    status_code: result.statusCode,
    duration_ms: result.durationMs,
    error: result.error,
  });
}

/** The first `n` seconds of back-off between reconnections: 0.5 s doubling to 8 s. */
function backoffMs(failures: number): number {
  return Math.min(500 * 2 ** Math.max(failures - 1, 0), 8000);
}

/** Ctrl-C, SIGTERM, or the test's own signal. */
function interruptSignal(io: CliIo): { signal: AbortSignal; dispose: () => void } {
  if (io.interrupt !== undefined) return { signal: io.interrupt, dispose: () => undefined };
  const controller = new AbortController();
  const stop = () => {
    controller.abort();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    },
  };
}

/**
 * `svc listen`: opens (or resumes) a listen session, reads its stream, POSTs each
 * notification to the local URL with the headers the server signed, and reports each local
 * answer back. Reconnects with back-off; ends with exit 0 on Ctrl-C, or with an error when
 * the connection cannot be restored within `--reconnect-for`.
 */
export async function listen(options: ListenOptions, io: CliIo): Promise<CommandResult> {
  if (options.list === true) return listSessions(options, io);
  if (options.end !== undefined) return endSession(options.end, options, io);
  const routing = parseRouting(options);
  // From the start: a Ctrl-C while the session opens still ends it cleanly.
  const { signal, dispose } = interruptSignal(io);
  try {
    return await forwardUntilStopped(options, io, routing, signal);
  } finally {
    dispose();
  }
}

async function forwardUntilStopped(
  options: ListenOptions,
  io: CliIo,
  routing: Routing,
  signal: AbortSignal,
): Promise<CommandResult> {
  const events = eventsOf(options, routing);
  const reconnectForMs = durationOption(options.reconnectFor, 60_000, "--reconnect-for");
  const localTimeoutMs = durationOption(options.localTimeout, 10_000, "--local-timeout");
  const json = options.json === true || options.format === "json" || options.pretty === true;
  if (options.output !== undefined) await ExclusiveFile.check(options.output);
  const session = await openSession(options, io);
  const base = `${workspacePath(session.workspace, COMMAND)}/listen-sessions`;
  const openedResponse = await session.send({
    method: "POST",
    path: base,
    body: { events, ...(options.name === undefined ? {} : { name: options.name }) },
  });
  const opened = parseBody(openedListenSessionSchema, openedResponse);
  const notes: string[] = [];
  const say = (text: string) => {
    io.stderr.write(`${printable(text)}\n`);
  };
  if (opened.secret !== undefined) {
    await keepSecret(opened.secret, options.output, say, async () => {
      await session
        .send({ method: "DELETE", path: `${base}/${pathSegment(opened.id, "id", COMMAND)}` })
        .catch(() => undefined);
    });
  } else if (options.output !== undefined) {
    say(
      `Session ${opened.name ?? opened.id} resumed: its signing secret is the one issued when it was created (saved or printed then); ${options.output} was not written.`,
    );
  }
  const label = opened.name === null ? opened.id : `${opened.name} (${opened.id})`;
  const targets =
    routing.byType.size === 0
      ? (routing.fallback ?? "")
      : [
          ...[...routing.byType].map(([type, url]) => `${type} → ${url}`),
          ...(routing.fallback === null ? [] : [`others → ${routing.fallback}`]),
        ].join(", ");
  say(
    `${opened.created ? "Listening" : "Resumed"}: ${events.join(", ")} of workspace ${session.workspace} → ${targets}. Session ${label}${opened.pending > 0 ? `, ${opened.pending} waiting` : ""}. Ctrl-C to stop.`,
  );

  const streamPath = `${base}/${pathSegment(opened.id, "id", COMMAND)}/stream`;
  const resultsPath = `${base}/${pathSegment(opened.id, "id", COMMAND)}/results`;
  const inFlight = new Set<Promise<void>>();
  let forwarded = 0;

  // A local answer must come back within the server's lease, or the notification is sent
  // again meanwhile: the local time-out stays 5 s inside it.
  let timeoutMs = localTimeoutMs;
  const heedLease = (leaseMs: number) => {
    const most = Math.max(leaseMs - 5000, 1000);
    if (timeoutMs > most) {
      timeoutMs = most;
      say(
        `--local-timeout is ${Math.round(most / 1000)} s at most on this server (its delivery lease).`,
      );
    }
  };
  const handle = (notification: StreamedNotification) => {
    const url = routing.byType.get(notification.event_type) ?? routing.fallback;
    const work = (async () => {
      if (url === null) return; // Not subscribed: the server sends only what was asked.
      const result = await forward(notification, url, timeoutMs);
      forwarded += 1;
      io.stdout.write(
        `${json ? jsonLine(notification, result) : resultLine(notification, result, routing.byType.size > 0)}\n`,
      );
      await report(session, resultsPath, notification, result, say);
    })();
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const onEvent = (event: EventSourceMessage) => {
    if (event.event !== "notification") return;
    const parsed = streamedNotificationSchema.safeParse(JSON.parse(event.data));
    if (parsed.success) handle(parsed.data);
  };

  {
    let lostSince: number | null = null;
    let failures = 0;
    let lastReason = "";
    for (;;) {
      // What was forwarded is reported before the stream is opened again, so that a
      // reconnection sends again only what was truly lost in flight.
      await Promise.all(inFlight);
      let ending: StreamEnd;
      try {
        ending = await readStream(
          (streamSignal) => session.open({ method: "GET", path: streamPath }, streamSignal),
          (event) => {
            if (event.event === "ready") {
              heedLease(streamReadySchema.parse(JSON.parse(event.data)).lease_ms);
              if (lostSince !== null) say("Reconnected.");
              lostSince = null;
              failures = 0;
            }
            onEvent(event);
          },
          signal,
        );
      } catch (error) {
        if (!(error instanceof StreamFailure)) throw error;
        if (!error.retry)
          throw error.error ?? new AppError("listen_connection_lost", error.message);
        ending = "closed";
        lastReason = error.message;
      }
      if (ending === "interrupted") break;
      if (ending === "replaced") throw new AppError("listen_session_replaced");
      if (ending === "ended") throw new AppError("listen_session_ended");
      if (ending === "shutdown") lastReason = "the server is shutting down";
      lostSince ??= Date.now();
      failures += 1;
      if (Date.now() - lostSince >= reconnectForMs) {
        throw new AppError(
          "listen_connection_lost",
          `Lost the connection to the API at ${session.prepare({ method: "GET", path: streamPath }).url.origin} (${lastReason}) and could not restore it within ${Math.round(reconnectForMs / 1000)} s. ${opened.name === null ? "Name a session (--name) to keep what is published while svc listen is away." : `What is published meanwhile waits for the session: run svc listen --name ${opened.name} again to receive it.`}`,
        );
      }
      const wait = backoffMs(failures);
      say(`Connection lost (${lastReason}); reconnecting in ${wait / 1000} s…`);
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        break; // interrupted while waiting
      }
    }
    if (inFlight.size > 0) {
      say(
        `Waiting for ${inFlight.size} local answer(s) to report them (Ctrl-C again to quit now)…`,
      );
    }
    await Promise.all(inFlight);
  }
  if (opened.name === null) {
    // An unnamed session has no one to resume it: it ends with the command.
    await session
      .send({ method: "DELETE", path: `${base}/${pathSegment(opened.id, "id", COMMAND)}` })
      .catch(() => undefined);
    notes.push(`Stopped after ${forwarded} notification(s); session ${opened.id} ended.`);
  } else {
    notes.push(
      `Stopped after ${forwarded} notification(s). Session ${opened.name} keeps what is published meanwhile: svc listen --name ${opened.name} resumes it.`,
    );
  }
  return { data: { session: opened.id, forwarded }, streamed: true, notes };
}

/** The secret of a new session: to the `--output` file, else once on stderr. */
async function keepSecret(
  secret: string,
  output: string | undefined,
  say: (text: string) => void,
  endSession: () => Promise<void>,
): Promise<void> {
  if (output === undefined) {
    say(`This session's signing secret (shown once; --output <file> saves it instead): ${secret}`);
    return;
  }
  try {
    const file = await ExclusiveFile.create(output);
    await file.write(secret);
  } catch (error) {
    await endSession();
    throw new AppError(
      "secret_not_saved",
      `The listen session's signing secret could not be saved to ${output} (${errorCode(error)}); the session was ended.`,
      { param: "output", cause: error },
    );
  }
  say(`Signing secret saved to ${output} (mode 0600).`);
}

/** Reports a local answer; a claim taken back is said, not fatal (it comes again). */
async function report(
  session: ApiSession,
  path: string,
  notification: StreamedNotification,
  result: LocalResult,
  say: (text: string) => void,
): Promise<void> {
  const body = {
    delivery_id: notification.delivery_id,
    claim: notification.claim,
    status_code: result.statusCode,
    duration_ms: result.durationMs,
    error: result.error === null ? null : result.error.slice(0, 500),
    response_body: result.responseBody,
  };
  for (let attempt = 1; ; attempt += 1) {
    try {
      parseBody(deliverySchema, await session.send({ method: "POST", path, body }));
      return;
    } catch (error) {
      if (error instanceof ApiError && error.code === "listen_claim_expired") {
        say(`${notification.delivery_id}: the server took it back; it will be forwarded again.`);
        return;
      }
      const transient = !(error instanceof ApiError) || error.httpStatus >= 500;
      if (!transient || attempt >= 5) {
        const reason = error instanceof Error ? error.message : String(error);
        say(
          `Could not report the local answer for ${notification.delivery_id} (${reason})${transient ? "; it will be forwarded again" : ""}.`,
        );
        return;
      }
      await sleep(backoffMs(attempt));
    }
  }
}

async function listSessions(options: ListenOptions, io: CliIo): Promise<CommandResult> {
  const session = await openSession(options, io);
  const response = await session.send({
    method: "GET",
    path: `${workspacePath(session.workspace, COMMAND)}/listen-sessions`,
  });
  const page = parseBody(listenSessionListSchema, response);
  return {
    data: page.data,
    columns: ["id", "name", "events", "connected", "pending", "last_seen_at", "expires_at"],
    raw: response.text,
  };
}

/** Ends a session by id (`lsn_…`) or by name. */
async function endSession(
  which: string,
  options: ListenOptions,
  io: CliIo,
): Promise<CommandResult> {
  const session = await openSession(options, io);
  const base = `${workspacePath(session.workspace, COMMAND)}/listen-sessions`;
  let id = which;
  if (!which.startsWith("lsn_")) {
    const page = parseBody(
      listenSessionListSchema,
      await session.send({ method: "GET", path: base }),
    );
    const named = page.data.find((each) => each.name === which);
    if (named === undefined) {
      throw new AppError("not_found", `No live listen session named ${which} in this workspace.`);
    }
    id = named.id;
  }
  const response = await session.send({
    method: "DELETE",
    path: `${base}/${pathSegment(id, "session id", COMMAND)}`,
  });
  return { data: parseBody(deletionSchema, response), raw: response.text };
}
