import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { AttemptReport, ClaimedDelivery } from "../../interfaces.ts";
import { tracingSettingsFrom } from "./tracing-settings.ts";

/**
 * The server's traces (decision 47), as the rest of the code sees them. Every holder keeps a
 * `Tracing | null`: null is "off", so that a path pays one comparison with null and nothing
 * else when no collector is configured. This module only names the seam: the OpenTelemetry
 * packages are imported by `open-telemetry.ts`, which `startTracing` loads when an endpoint is
 * set, and by nothing else.
 */
export interface Tracing {
  /**
   * A span for each request of `app` (HTTP server conventions), current for its hooks and
   * handler. Called on the app before any other hook is added.
   */
  instrumentApi(app: FastifyInstance): void;
  /**
   * Runs `publish` inside the event's span (a child of the request's), handing it the
   * `traceparent` to store with the event: null unless the span is sampled.
   */
  tracePublish<T>(
    event: PublishedEvent,
    publish: (traceparent: string | null) => Promise<T>,
  ): Promise<T>;
  /**
   * Runs one delivery attempt (and its record) inside a span of its own (HTTP client
   * conventions), linked to the publish's span when the event stored one. `attempt` is handed
   * the `traceparent` to send to the receiver when `propagate` (`propagateTraceContext`).
   */
  traceAttempt(
    delivery: ClaimedDelivery,
    propagate: boolean,
    attempt: (traceparent: string | null) => Promise<RecordedAttempt>,
  ): Promise<RecordedAttempt>;
  /** A span for a notification pushed on a listen session's stream, linked to its publish. */
  tracePush(delivery: ClaimedDelivery, sessionId: string): void;
  /** `trace_id` and `span_id` of the current span for a log line; empty when there is none. */
  logFields(): Record<string, string>;
  /** Where the exporter's own failures (a collector that cannot be reached) are told. */
  reportProblemsTo(logger: Logger): void;
  /** Exports what is buffered now (tests; shutdown). */
  flush(): Promise<void>;
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
}

/** What came of an attempt, as the worker recorded it. */
export interface RecordedAttempt {
  readonly report: AttemptReport;
  /** Whether the store took the report (false: the lease ran out first). */
  readonly recorded: boolean;
  /** How the attempt changed its destination's circuit, if it did. */
  readonly circuitChange: "open" | "close" | null;
}

/** What the event's span says of a publish. */
export interface PublishedEvent {
  readonly id: string;
  readonly type: string;
  readonly workspaceId: string;
  /** A test event to one destination (decision 40). */
  readonly test: boolean;
}

/**
 * The tracing the `OTEL_*` variables of `env` ask for, or null (off) when they set no
 * endpoint. Only then are the SDK and the one exporter of the configured protocol loaded.
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<Tracing | null> {
  const settings = tracingSettingsFrom(env);
  if (settings === null) return null;
  const { OpenTelemetryTracing } = await import("./open-telemetry.ts");
  return OpenTelemetryTracing.start(settings);
}
