import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { testBackend } from "../support/database.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import {
  startOtlpCollector,
  type CollectedSpan,
  type OtlpCollector,
} from "../support/otlp-collector.ts";
import { sequence, startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { runSvc } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

/** OTLP's SpanKind values. */
const kind = { server: 2, client: 3, producer: 4 } as const;

const moduleRecorder = fileURLToPath(new URL("../support/module-recorder.js", import.meta.url));

/** A client's own trace, continued by the API's request span. */
const clientTraceId = randomBytes(16).toString("hex");
const clientSpanId = randomBytes(8).toString("hex");

/**
 * Traces (decision 47): the spans of a publish and of its delivery's attempts reach an
 * OTLP/HTTP collector, each attempt linked to the publish; on PostgreSQL across an api and a
 * worker process, the link travelling through the database.
 */
describe("OpenTelemetry traces", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let ca: TestCa;
  let collector: OtlpCollector;
  let receiver: Receiver;
  const servers: TestServer[] = [];

  before(async () => {
    dir = await tempDir();
    ca = await sharedTestCa();
    collector = await startOtlpCollector();
    receiver = await startReceiver({ ca });
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await receiver.close();
    await collector.close();
    await dir.cleanup();
  });

  /** Settings of every traced process: quick exports, the collector, traceparent sent on. */
  const tracedEnv = (service: string, protocol: string): NodeJS.ProcessEnv => ({
    ...deliveryEnv(ca),
    SVC_ENCRYPTION_KEY: encryptionKey,
    SVC_RETRY_SCHEDULE: "50ms,100ms",
    SVC_PROPAGATE_TRACE_CONTEXT: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: service,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  const encryptionKey = randomBytes(32).toString("base64");

  /** Publishes one event to a new destination at `path` of the receiver; its id. */
  const publishOne = async (api: TestServer, path: string): Promise<string> => {
    const owner = await initialise(api);
    const client = apiClient(api.url, owner.key);
    const created = await client.post<DestinationJson>(`/v1/workspaces/${owner.id}/webhooks`, {
      url: `${receiver.url}/${path}`,
    });
    assert.equal(created.status, 201, created.text);
    const response = await fetch(`${api.url}/v1/workspaces/${owner.id}/events`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${owner.key}`,
        "content-type": "application/json",
        traceparent: `00-${clientTraceId}-${clientSpanId}-01`,
      },
      body: JSON.stringify({ type: "job.completed", data: { object: { amount: 1 } } }),
    });
    assert.equal(response.status, 202, await response.clone().text());
    return ((await response.json()) as { id: string }).id;
  };

  const attemptSpansOf = (eventId: string, count: number): Promise<CollectedSpan[]> =>
    eventually(
      () => {
        const attempts = collector.spans.filter(
          (span) => span.kind === kind.client && span.attributes["svc.event.id"] === eventId,
        );
        return Promise.resolve(attempts.length >= count ? attempts : undefined);
      },
      { what: `${count} attempt spans of ${eventId}` },
    );

  const publishSpanOf = (eventId: string): Promise<CollectedSpan> =>
    eventually(
      () =>
        Promise.resolve(
          collector.spans.find(
            (span) => span.kind === kind.producer && span.attributes["svc.event.id"] === eventId,
          ),
        ),
      { what: `the publish span of ${eventId}` },
    );

  /**
   * The whole path of one notification that fails twice and then succeeds: the request's
   * span continuing the client's trace, the event's span in it, and three attempt spans, each
   * a trace of its own linked to the event's span, whose traceparent the receiver was sent.
   */
  const checkTrace = async (
    eventId: string,
    path: string,
    services: { api: string; worker: string },
  ): Promise<CollectedSpan[]> => {
    const publish = await publishSpanOf(eventId);
    const attempts = (await attemptSpansOf(eventId, 3)).sort(
      (a, b) =>
        Number(a.attributes["svc.delivery.attempt"]) - Number(b.attributes["svc.delivery.attempt"]),
    );
    const request = collector.spans.find((span) => span.spanId === publish.parentSpanId);
    assert.ok(request, "the publish span is a child of the request's span");
    assert.equal(request.name, "POST /v1/workspaces/:workspace/events");
    assert.equal(request.kind, kind.server);
    assert.equal(request.traceId, clientTraceId, "the request continues the client's trace");
    assert.equal(request.parentSpanId, clientSpanId);
    assert.equal(request.serviceName, services.api);
    assert.equal(request.attributes["http.request.method"], "POST");
    assert.equal(request.attributes["http.route"], "/v1/workspaces/:workspace/events");
    assert.equal(request.attributes["http.response.status_code"], 202);
    assert.match(String(request.attributes["url.path"]), /^\/v1\/workspaces\/ws_\w+\/events$/);
    assert.equal(request.attributes["server.address"], "127.0.0.1");
    assert.equal(request.attributes["url.scheme"], "http");

    assert.equal(publish.name, "publish event");
    assert.equal(publish.traceId, clientTraceId);
    assert.equal(publish.attributes["svc.event.type"], "job.completed");
    assert.equal(publish.attributes["messaging.message.id"], eventId);

    assert.deepEqual(
      attempts.map((span) => [
        span.attributes["svc.delivery.attempt"],
        span.attributes["http.response.status_code"],
        span.attributes["svc.delivery.outcome"],
        span.attributes["error.type"],
        span.statusCode,
      ]),
      [
        [1, 500, "retry", "500", 2],
        [2, 500, "retry", "500", 2],
        [3, 200, "delivered", undefined, 0],
      ],
    );
    const sent = receiver.requests.filter((request) => request.path === `/${path}`);
    for (const [index, attempt] of attempts.entries()) {
      assert.equal(attempt.name, "POST");
      assert.equal(attempt.serviceName, services.worker);
      assert.equal(attempt.parentSpanId, "", "an attempt is the root of a trace of its own");
      assert.notEqual(attempt.traceId, publish.traceId);
      assert.deepEqual(attempt.links, [{ traceId: publish.traceId, spanId: publish.spanId }]);
      assert.equal(attempt.attributes["http.request.method"], "POST");
      assert.equal(attempt.attributes["server.address"], "127.0.0.1");
      assert.equal(attempt.attributes["server.port"], receiver.port);
      assert.equal(attempt.attributes["url.full"], `${receiver.url}/${path}`);
      assert.equal(attempt.attributes["svc.circuit.state"], "closed");
      assert.match(String(attempt.attributes["svc.destination.id"]), /^dst_/);
      assert.equal(typeof attempt.attributes["svc.attempt.duration_ms"], "number");
      assert.equal(
        sent[index]?.headers.traceparent,
        `00-${attempt.traceId}-${attempt.spanId}-01`,
        "the receiver is sent the attempt's traceparent (propagateTraceContext)",
      );
    }
    return attempts;
  };

  /** Whether a log line carries `traceId`. */
  const carries = (line: string, traceId: string): boolean =>
    line.includes(`"trace_id":"${traceId}"`);

  it(
    "traces a publish and its failure, retry and success in one process (http/json)",
    { skip: testBackend !== "sqlite" && "SQLite run: one process; PostgreSQL runs two below" },
    async () => {
      receiver.setResponder(sequence({ status: 500 }, { status: 500 }, { status: 200 }));
      const server = await startTestServer({
        dataDir: join(dir.path, "one"),
        env: { ...tracedEnv("svc-all", "http/json"), SVC_LOG_LEVEL: "debug" },
      });
      servers.push(server);
      const eventId = await publishOne(server, "one");
      const attempts = await checkTrace(eventId, "one", { api: "svc-all", worker: "svc-all" });
      assert.ok(collector.contentTypes.every((type) => type.startsWith("application/json")));
      // Log lines carry the trace: the request's access line, and each attempt's line.
      await server.logged(
        (line) => carries(line, clientTraceId) && line.includes("request completed"),
        "the request's access line with its trace id",
      );
      for (const attempt of attempts) {
        await server.logged(
          (line) => carries(line, attempt.traceId) && line.includes("delivery attempted"),
          "the attempt's log line with its trace id",
        );
      }
    },
  );

  it(
    "links attempts in a worker process to the publish in an api process (PostgreSQL)",
    { skip: testBackend !== "postgres" && "PostgreSQL run only: processes share one database" },
    async () => {
      receiver.setResponder(sequence({ status: 500 }, { status: 500 }, { status: 200 }));
      const dataDir = join(dir.path, "two");
      // The api exports JSON, the worker protobuf: both encodings in one trace.
      const api = await startTestServer({
        dataDir,
        env: tracedEnv("svc-api", "http/json"),
        role: "api",
      });
      servers.push(api);
      const worker = await startTestServer({
        dataDir,
        env: { ...tracedEnv("svc-worker", "http/protobuf"), SVC_LOG_LEVEL: "debug" },
        role: "worker",
      });
      servers.push(worker);
      const eventId = await publishOne(api, "two");
      const attempts = await checkTrace(eventId, "two", { api: "svc-api", worker: "svc-worker" });
      assert.ok(collector.contentTypes.some((type) => type === "application/x-protobuf"));
      for (const attempt of attempts) {
        await worker.logged(
          (line) => carries(line, attempt.traceId),
          "a line of the attempt's trace",
        );
      }
    },
  );

  it("with tracing off loads no OpenTelemetry module, and traces nothing", async () => {
    receiver.setResponder(sequence({ status: 200 }));
    const moduleLog = join(dir.path, "modules-off.txt");
    const server = await startTestServer({
      dataDir: join(dir.path, "off"),
      env: {
        ...deliveryEnv(ca),
        SVC_ENCRYPTION_KEY: encryptionKey,
        SVC_PROPAGATE_TRACE_CONTEXT: "true",
        NODE_OPTIONS: `--import=${moduleRecorder}`,
        SVC_TEST_MODULE_LOG: moduleLog,
      },
    });
    servers.push(server);
    const spansBefore = collector.spans.length;
    const eventId = await publishOne(server, "off");
    const delivered = await eventually(
      () => Promise.resolve(receiver.requests.find((request) => request.path === "/off")),
      { what: "the notification" },
    );
    assert.equal(delivered.headers["webhook-id"], eventId);
    assert.equal(delivered.headers.traceparent, undefined, "no span, no traceparent");
    assert.equal(await server.stop(), 0);
    const modules = (await readFile(moduleLog, "utf8")).split("\n");
    assert.ok(
      modules.some((url) => url.includes("/runtime/server.js")),
      "the recorder saw the server",
    );
    // The API alone is there: prom-client imports it (its no-op facade) in every process.
    assert.deepEqual(
      modules.filter(
        (url) =>
          (url.includes("@opentelemetry") && !url.includes("@opentelemetry/api/")) ||
          url.includes("/tracing/open-telemetry"),
      ),
      [],
    );
    assert.equal(collector.spans.length, spansBefore);
  });

  it("loads the configured exporter alone, and no tracing for other commands", async () => {
    const serverModules = join(dir.path, "modules-on.txt");
    const server = await startTestServer({
      dataDir: join(dir.path, "on"),
      env: {
        ...tracedEnv("svc-on", "http/protobuf"),
        NODE_OPTIONS: `--import=${moduleRecorder}`,
        SVC_TEST_MODULE_LOG: serverModules,
      },
    });
    servers.push(server);
    assert.equal(await server.stop(), 0);
    const loaded = (await readFile(serverModules, "utf8")).split("\n");
    assert.ok(loaded.some((url) => url.includes("@opentelemetry/exporter-trace-otlp-proto/")));
    assert.ok(!loaded.some((url) => url.includes("@opentelemetry/exporter-trace-otlp-http/")));

    // A command other than the server, with the variables set, never loads tracing.
    const cliModules = join(dir.path, "modules-cli.txt");
    const run = await runSvc(["--version"], {
      env: {
        ...tracedEnv("svc-cli", "http/protobuf"),
        NODE_OPTIONS: `--import=${moduleRecorder}`,
        SVC_TEST_MODULE_LOG: cliModules,
      },
    });
    assert.equal(run.code, 0, run.stderr);
    const cli = (await readFile(cliModules, "utf8")).split("\n");
    assert.deepEqual(
      cli.filter((url) => url.includes("@opentelemetry") || url.includes("/tracing/")),
      [],
    );
  });

  it("refuses a protocol it does not speak, saying which variable", async () => {
    const run = await runSvc(["server", "--port", "0"], {
      env: {
        SVC_DATA_DIR: join(dir.path, "grpc"),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc",
      },
    });
    assert.notEqual(run.code, 0);
    assert.match(
      run.stderr,
      /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be http\/protobuf or http\/json, not grpc/,
    );
  });
});
