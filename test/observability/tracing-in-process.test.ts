import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { StreamedNotification } from "../../src/contract/listen.ts";
import { startTracing, type Tracing } from "../../src/observability/tracing/tracing.ts";
import { tracingSettingsFrom } from "../../src/observability/tracing/tracing-settings.ts";
import { eventually } from "../support/eventually.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { openStream } from "../support/listen-stream.ts";
import { startOtlpCollector, type OtlpCollector } from "../support/otlp-collector.ts";

/** The `OTEL_*` variables as svc reads them (decision 47). */
describe("the OpenTelemetry settings", () => {
  it("is off without an endpoint, or when the SDK or the traces exporter is turned off", () => {
    assert.equal(tracingSettingsFrom({}), null);
    assert.equal(tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }), null);
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    assert.equal(tracingSettingsFrom({ ...on, OTEL_SDK_DISABLED: "true" }), null);
    assert.equal(tracingSettingsFrom({ ...on, OTEL_TRACES_EXPORTER: "none" }), null);
  });

  it("appends v1/traces to the base endpoint, and takes the traces endpoint as it is", () => {
    assert.deepEqual(tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }), {
      url: "http://c:4318/v1/traces",
      protocol: "http/protobuf",
    });
    assert.equal(
      tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://c/otlp/" })?.url,
      "https://c/otlp/v1/traces",
    );
    assert.equal(
      tracingSettingsFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:9999/traces",
      })?.url,
      "http://t:9999/traces",
    );
  });

  it("takes http/json or http/protobuf, the traces' own protocol first", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    const protocolOf = (env: NodeJS.ProcessEnv) =>
      tracingSettingsFrom({ ...endpoint, ...env })?.protocol;
    assert.equal(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }), "http/json");
    assert.equal(
      protocolOf({
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf",
      }),
      "http/protobuf",
    );
    assert.throws(
      () => protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
      /must be http\/protobuf or http\/json, not grpc/,
    );
    assert.throws(
      () => tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }),
      /must be an http:\/\/ or https:\/\/ URL/,
    );
  });
});

/** Spans of the API built in this process, exported to an in-process collector as JSON. */
describe("traces of the API in process", () => {
  let collector: OtlpCollector;
  let tracing: Tracing;
  let api: InProcessApi;
  let base: string;

  before(async () => {
    collector = await startOtlpCollector();
    const started = await startTracing({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
    });
    assert.ok(started);
    tracing = started;
    api = await inProcessApi({ settings: { listenHeartbeat: "100ms" }, tracing });
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await api.dispose();
    await tracing.shutdown();
    await collector.close();
  });

  it("links a notification pushed to svc listen to the event's publish span", async () => {
    const opened = await api.call("POST", "/listen-sessions", { body: { events: ["*"] } });
    const session = opened.json<{ id: string }>();
    const stream = await openStream(
      base,
      `/v1/workspaces/${api.workspaceId}/listen-sessions/${session.id}/stream`,
      api.token,
    );
    try {
      await stream.next("ready");
      const published = await api.call("POST", "/events", {
        body: { type: "job.completed", data: { object: {} } },
      });
      const eventId = published.json<{ id: string }>().id;
      const notification = JSON.parse(
        (await stream.next("notification")).data,
      ) as StreamedNotification;
      assert.equal(notification.event_id, eventId);
      const spans = await eventually(async () => {
        await tracing.flush();
        const publish = collector.spans.find(
          (span) => span.name === "publish event" && span.attributes["svc.event.id"] === eventId,
        );
        const push = collector.spans.find(
          (span) =>
            span.name === "push notification" && span.attributes["svc.event.id"] === eventId,
        );
        return publish && push ? { publish, push } : undefined;
      });
      assert.deepEqual(spans.push.links, [
        { traceId: spans.publish.traceId, spanId: spans.publish.spanId },
      ]);
      assert.equal(spans.push.kind, 4);
      assert.equal(spans.push.attributes["svc.listen_session.id"], session.id);
      assert.equal(spans.push.attributes["svc.destination.id"], session.id);
      assert.equal(spans.push.attributes["svc.delivery.attempt"], 1);
      assert.equal(spans.push.serviceName, "svc");
    } finally {
      stream.close();
    }
  });

  it("names a request's span by its route; a 4xx is not an error of the server", async () => {
    const refused = await api.call("POST", "/events", { body: { type: "nope" } });
    assert.equal(refused.statusCode, 400);
    const span = await eventually(async () => {
      await tracing.flush();
      return collector.spans.find(
        (each) =>
          each.name === "POST /v1/workspaces/:workspace/events" &&
          each.attributes["http.response.status_code"] === 400,
      );
    });
    assert.equal(span.kind, 2);
    assert.equal(span.attributes["http.route"], "/v1/workspaces/:workspace/events");
    assert.equal(span.attributes["url.path"], `/v1/workspaces/${api.workspaceId}/events`);
    // A 4xx is the client's error, not the server's: the span's status is left unset.
    assert.equal(span.statusCode, 0);
    assert.equal(span.attributes["error.type"], undefined);
  });
});
