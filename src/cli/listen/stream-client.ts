import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { AppError } from "../../errors.ts";
import { errorFromResponse } from "../client/api-error.ts";
import type { PreparedRequest } from "../client/http.ts";

/** How a stream ended, when it did not fail. */
export type StreamEnd = "replaced" | "ended" | "shutdown" | "closed" | "interrupted";

/** A stream that broke: `retry` says whether connecting again may help. */
export class StreamFailure extends Error {
  readonly retry: boolean;
  readonly error: AppError | null;

  constructor(message: string, options: { retry: boolean; error?: AppError }) {
    super(message);
    this.retry = options.retry;
    this.error = options.error ?? null;
  }
}

/** Before the `ready` event says the heartbeat, a stream may be silent this long. */
const firstSilenceMs = 30_000;
/** A stream silent for this many heartbeats is taken for dead. */
const heartbeatsMissed = 3;

/**
 * Reads one listen stream (server-sent events) until it ends, calling `onEvent` for each
 * event. Resolves with how it ended; rejects with a `StreamFailure` when the connection
 * failed, the server refused it, or it went silent for three heartbeats.
 */
export async function readStream(
  request: PreparedRequest,
  onEvent: (event: EventSourceMessage) => void,
  interrupt: AbortSignal,
): Promise<StreamEnd> {
  // An interrupt before the stream opens: an aborted signal fires no more "abort" events.
  if (isAborted(interrupt)) return "interrupted";
  const controller = new AbortController();
  const stop = () => {
    controller.abort(new Error("interrupted"));
  };
  interrupt.addEventListener("abort", stop, { once: true });
  let silenceMs = firstSilenceMs;
  // Changed by the callbacks: read through the object, not narrowed by the compiler.
  const state: { silent: boolean; ending: StreamEnd } = { silent: false, ending: "closed" };
  let watchdog: NodeJS.Timeout | undefined;
  const heard = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      state.silent = true;
      controller.abort(new Error("silent"));
    }, silenceMs);
  };
  const parser = createParser({
    onEvent(event) {
      if (event.event === "ready") {
        const heartbeat = (JSON.parse(event.data) as { heartbeat_ms?: unknown }).heartbeat_ms;
        if (typeof heartbeat === "number") silenceMs = heartbeat * heartbeatsMissed;
      }
      if (event.event === "replaced" || event.event === "ended" || event.event === "shutdown") {
        state.ending = event.event;
      }
      onEvent(event);
    },
  });
  try {
    heard();
    let response: Response;
    try {
      response = await fetch(request.url, {
        headers: { ...request.headers, Accept: "text/event-stream" },
        redirect: "manual",
        signal: controller.signal,
      });
    } catch (error) {
      if (isAborted(interrupt)) return "interrupted";
      throw new StreamFailure(state.silent ? "no answer" : reasonOf(error), { retry: true });
    }
    if (response.status !== 200) {
      const text = await response.text().catch(() => "");
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: errorFromResponse says so.
      }
      const error = errorFromResponse(response.status, body, text, request.url.origin);
      // The server stopping or overloaded may be back soon; a refusal will not change.
      throw new StreamFailure(error.message, { retry: response.status >= 500, error });
    }
    if (response.body === null) throw new StreamFailure("an empty answer", { retry: true });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        heard();
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch (error) {
      if (isAborted(interrupt)) return "interrupted";
      const reason = state.silent
        ? `nothing heard for ${Math.round(silenceMs / 1000)} s`
        : reasonOf(error);
      throw new StreamFailure(reason, { retry: true });
    }
    if (isAborted(interrupt)) return "interrupted";
    if (state.ending === "closed") {
      throw new StreamFailure("the server closed the stream", { retry: true });
    }
    return state.ending;
  } finally {
    clearTimeout(watchdog);
    interrupt.removeEventListener("abort", stop);
  }
}

/** Read afresh each time: the compiler would take one read of `aborted` for all. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

function reasonOf(error: unknown): string {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ?? cause.message;
  }
  return String(cause);
}
