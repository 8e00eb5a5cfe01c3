import { createParser, type EventSourceMessage } from "eventsource-parser";
import { AppError } from "../../errors.ts";
import { ApiError } from "../client/api-error.ts";

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
 * event. `open` asks the API for it through the request core (credentials, headers, the
 * error an answer carries: src/client/transport.ts); this reads it. Resolves with how it
 * ended; rejects with a `StreamFailure` when the connection failed, the server refused it, or
 * it went silent for three heartbeats.
 */
export async function readStream(
  open: (signal: AbortSignal) => Promise<Response>,
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
      response = await open(controller.signal);
    } catch (error) {
      if (isAborted(interrupt)) return "interrupted";
      if (error instanceof ApiError) {
        // The server stopping or overloaded may be back soon; a refusal will not change.
        throw new StreamFailure(error.message, { retry: error.status >= 500, error });
      }
      const reason = error instanceof AppError ? noAnswerReason(error) : reasonOf(error);
      throw new StreamFailure(state.silent ? "no answer" : reason, { retry: true });
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

/** Why the core's `api_unreachable` had no answer: the system's word (ECONNREFUSED) or its time-out. */
function noAnswerReason(error: AppError): string {
  // The CLI's error wraps the core's, which wraps what fetch threw.
  const fetchError = error.cause instanceof Error ? error.cause.cause : undefined;
  return fetchError instanceof DOMException ? "no answer" : reasonOf(fetchError ?? error);
}

function reasonOf(error: unknown): string {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ?? cause.message;
  }
  return String(cause);
}
