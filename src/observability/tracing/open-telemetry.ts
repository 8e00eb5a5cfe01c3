import {
  context,
  defaultTextMapGetter,
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { parseTraceParent, W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from "@opentelemetry/semantic-conventions";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { AppError } from "../../errors.ts";
import type { AttemptReport, ClaimedDelivery } from "../../interfaces.ts";
import { VERSION } from "../../version.ts";
import type { PublishedEvent, RecordedAttempt, Tracing } from "./tracing.ts";
import type { TracingSettings } from "./tracing-settings.ts";

/** The attributes of svc's own, beside the semantic conventions' (docs/telemetry.md). */
const attr = {
  workspaceId: "svc.workspace.id",
  eventId: "svc.event.id",
  eventType: "svc.event.type",
  eventTest: "svc.event.test",
  destinationId: "svc.destination.id",
  deliverySeq: "svc.delivery.seq",
  attempt: "svc.delivery.attempt",
  outcome: "svc.delivery.outcome",
  failureReason: "svc.delivery.failure_reason",
  nextAttemptAt: "svc.delivery.next_attempt_at",
  durationMs: "svc.attempt.duration_ms",
  recorded: "svc.delivery.recorded",
  circuitState: "svc.circuit.state",
  circuitOpens: "svc.circuit.opens",
  circuitChange: "svc.circuit.change",
  listenSessionId: "svc.listen_session.id",
} as const;

/** The W3C `traceparent` of a span: version 00, trace id, span id, flags. */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, "0")}`;
}

function isSampled(span: Span): boolean {
  return (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** The publish's span, as a link of an attempt's (none when it was not traced). */
function linksTo(traceparent: string | null): Link[] {
  if (traceparent === null) return [];
  const linked = parseTraceParent(traceparent);
  return linked === null ? [] : [{ context: linked }];
}

/**
 * A destination's URL as a span may show it: no user information, and the query's values
 * replaced, since either may carry a credential (the conventions' advice for `url.full`).
 */
function shownUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.username = "";
  shown.password = "";
  for (const key of new Set(shown.searchParams.keys())) shown.searchParams.set(key, "REDACTED");
  return shown.href;
}

/** The port a URL reaches, its scheme's default when it names none. */
function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/**
 * The tracing of a server process with the OpenTelemetry SDK: a tracer provider with the
 * sampler of `OTEL_TRACES_SAMPLER` (the SDK reads it), a batch span processor (`OTEL_BSP_*`),
 * and the OTLP/HTTP exporter of the configured encoding. Its context manager is set globally
 * once per process (AsyncLocalStorage), so that a request's span is current in its handler.
 */
export class OpenTelemetryTracing implements Tracing {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator = new W3CTraceContextPropagator();
  /** Each traced request's context, current again for its handler (see instrumentApi). */
  readonly #requests = new WeakMap<FastifyRequest, { span: Span; context: Context }>();

  private constructor(provider: BasicTracerProvider) {
    this.#provider = provider;
    this.#tracer = provider.getTracer("svc", VERSION);
  }

  static async start(settings: TracingSettings): Promise<OpenTelemetryTracing> {
    const exporter = await exporterFor(settings);
    // Ours first; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win.
    const resource = defaultResource()
      .merge(
        resourceFromAttributes({ [ATTR_SERVICE_NAME]: "svc", [ATTR_SERVICE_VERSION]: VERSION }),
      )
      .merge(detectResources({ detectors: [envDetector] }));
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    // A second server in one process (tests) keeps the first's manager: it is the same kind.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    return new OpenTelemetryTracing(provider);
  }

  instrumentApi(app: FastifyInstance): void {
    app.addHook("onRequest", (request, _reply, done) => {
      const parent = this.#propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
      const route = request.routeOptions.url;
      const span = this.#tracer.startSpan(
        route === undefined ? request.method : `${request.method} ${route}`,
        { kind: SpanKind.SERVER, attributes: requestAttributes(request, route) },
        parent,
      );
      const current = trace.setSpan(parent, span);
      this.#requests.set(request, { span, context: current });
      context.with(current, done);
    });
    // The body is read between the two: enter the request's context again for the handler.
    app.addHook("preHandler", (request, _reply, done) => {
      const traced = this.#requests.get(request);
      if (traced === undefined) done();
      else context.with(traced.context, done);
    });
    app.addHook("onResponse", (request, reply, done) => {
      this.#endRequest(request, reply, null);
      done();
    });
    app.addHook("onRequestAbort", (request, done) => {
      this.#endRequest(request, null, "aborted");
      done();
    });
  }

  #endRequest(request: FastifyRequest, reply: FastifyReply | null, errorType: string | null): void {
    const traced = this.#requests.get(request);
    if (traced === undefined) return;
    this.#requests.delete(request);
    const { span } = traced;
    if (reply !== null) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      // Server spans: only 5xx are errors of the server (4xx are the client's).
      if (reply.statusCode >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(reply.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    if (errorType !== null) {
      span.setAttribute(ATTR_ERROR_TYPE, errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  async tracePublish<T>(
    event: PublishedEvent,
    publish: (traceparent: string | null) => Promise<T>,
  ): Promise<T> {
    const span = this.#tracer.startSpan("publish event", {
      kind: SpanKind.PRODUCER,
      attributes: {
        "messaging.system": "svc",
        "messaging.operation.type": "send",
        "messaging.operation.name": "publish",
        "messaging.message.id": event.id,
        [attr.eventId]: event.id,
        [attr.eventType]: event.type,
        [attr.workspaceId]: event.workspaceId,
        [attr.eventTest]: event.test,
      },
    });
    try {
      return await context.with(trace.setSpan(context.active(), span), () =>
        publish(isSampled(span) ? traceparentOf(span) : null),
      );
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  async traceAttempt(
    delivery: ClaimedDelivery,
    propagate: boolean,
    attempt: (traceparent: string | null) => Promise<RecordedAttempt>,
  ): Promise<RecordedAttempt> {
    // A root of its own, whatever is current (a hand-over runs in the publish's request):
    // an attempt is linked to the publish that caused it, not a part of its request.
    const span = this.#tracer.startSpan(
      "POST",
      {
        kind: SpanKind.CLIENT,
        links: linksTo(delivery.traceparent),
        attributes: attemptAttributes(delivery),
      },
      ROOT_CONTEXT,
    );
    try {
      const recorded = await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
        attempt(propagate ? traceparentOf(span) : null),
      );
      const { report, circuitChange } = recorded;
      span.setAttributes(reportAttributes(report));
      span.setAttribute(attr.recorded, recorded.recorded);
      if (circuitChange !== null) {
        span.setAttribute(attr.circuitChange, circuitChange === "open" ? "opened" : "closed");
      }
      if (report.result.status !== "delivered") {
        span.setStatus({ code: SpanStatusCode.ERROR, message: report.error ?? undefined });
      }
      return recorded;
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  tracePush(delivery: ClaimedDelivery, sessionId: string): void {
    this.#tracer
      .startSpan(
        "push notification",
        {
          kind: SpanKind.PRODUCER,
          links: linksTo(delivery.traceparent),
          attributes: {
            [attr.listenSessionId]: sessionId,
            [attr.destinationId]: delivery.destination.id,
            [attr.workspaceId]: delivery.destination.workspaceId,
            [attr.eventId]: delivery.eventId,
            [attr.eventType]: delivery.eventType,
            [attr.deliverySeq]: delivery.seq,
            [attr.attempt]: delivery.attempts + 1,
          },
        },
        ROOT_CONTEXT,
      )
      .end();
  }

  logFields(): Record<string, string> {
    const span = trace.getSpan(context.active());
    // A new object each time: pino merges the line into what its mixin returns.
    if (span === undefined) return {};
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }

  reportProblemsTo(logger: Logger): void {
    const warn = (message: string, ...args: unknown[]): void => {
      logger.warn({ detail: args.map(String).join(" ") }, `OpenTelemetry: ${message}`);
    };
    const quiet = (): void => undefined;
    diag.setLogger(
      { error: warn, warn, info: quiet, debug: quiet, verbose: quiet },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  }

  async flush(): Promise<void> {
    await this.#provider.forceFlush();
  }

  async shutdown(): Promise<void> {
    await this.#provider.shutdown();
  }
}

/** The exporter of the configured encoding; the other one is never loaded. */
async function exporterFor(settings: TracingSettings): Promise<SpanExporter> {
  const options = { url: settings.url };
  switch (settings.protocol) {
    case "http/json": {
      const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
      return new OTLPTraceExporter(options);
    }
    case "http/protobuf": {
      const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
      return new OTLPTraceExporter(options);
    }
  }
}

function failed(span: Span, error: unknown): void {
  span.setAttribute(
    ATTR_ERROR_TYPE,
    error instanceof AppError ? error.code : error instanceof Error ? error.name : "unknown",
  );
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The HTTP server conventions' attributes known when a request arrives. */
function requestAttributes(request: FastifyRequest, route: string | undefined): Attributes {
  const query = request.url.indexOf("?");
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: request.method,
    [ATTR_URL_PATH]: query === -1 ? request.url : request.url.slice(0, query),
    [ATTR_URL_SCHEME]: request.protocol,
    [ATTR_SERVER_ADDRESS]: request.hostname,
    [ATTR_NETWORK_PROTOCOL_VERSION]: request.raw.httpVersion,
    [ATTR_CLIENT_ADDRESS]: request.ip,
  };
  if (route !== undefined) attributes[ATTR_HTTP_ROUTE] = route;
  if (request.port !== null) attributes[ATTR_SERVER_PORT] = request.port;
  const userAgent = request.headers["user-agent"];
  if (userAgent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
  return attributes;
}

/** The HTTP client conventions' attributes of an attempt, and svc's, before it is made. */
function attemptAttributes(delivery: ClaimedDelivery): Attributes {
  const { destination } = delivery;
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: "POST",
    [attr.destinationId]: destination.id,
    [attr.workspaceId]: destination.workspaceId,
    [attr.eventId]: delivery.eventId,
    [attr.eventType]: delivery.eventType,
    [attr.deliverySeq]: delivery.seq,
    [attr.attempt]: delivery.attempts + 1,
    // Claims take no delivery of an open circuit: an attempt is made closed, or half-open
    // (the probe that decides whether it closes).
    [attr.circuitState]: destination.circuitOpens > 0 ? "half_open" : "closed",
    [attr.circuitOpens]: destination.circuitOpens,
  };
  const url = URL.parse(destination.url);
  if (url !== null) {
    attributes[ATTR_URL_FULL] = shownUrl(url);
    attributes[ATTR_SERVER_ADDRESS] = url.hostname;
    attributes[ATTR_SERVER_PORT] = portOf(url);
  }
  return attributes;
}

/** What came of an attempt: the answer's status, or the error's class, and the delivery's fate. */
function reportAttributes({ attempt, result }: AttemptReport): Attributes {
  const attributes: Attributes = {
    [attr.outcome]: result.status === "pending" ? "retry" : result.status,
  };
  if (result.status === "failed") attributes[attr.failureReason] = result.reason;
  if (result.status === "pending") {
    attributes[attr.nextAttemptAt] = result.nextAttemptAt.toISOString();
  }
  if (attempt === null) {
    // Nothing was sent: the destination was deleted or paused before its turn.
    if (result.status === "failed") attributes[ATTR_ERROR_TYPE] = result.reason;
    return attributes;
  }
  attributes[attr.durationMs] = attempt.durationMs;
  if (attempt.statusCode !== null) {
    attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = attempt.statusCode;
  }
  // The conventions' error.type: the status code for an answer of 4xx/5xx, else the class.
  if (attempt.errorClass !== null) {
    attributes[ATTR_ERROR_TYPE] =
      attempt.errorClass === "http_status" && attempt.statusCode !== null
        ? String(attempt.statusCode)
        : attempt.errorClass;
  }
  return attributes;
}
