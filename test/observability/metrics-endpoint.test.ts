import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { promtoolCheck, sample } from "../support/metrics.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

/** The series CONTRACT.md ("Observability") promises, and one of the runtime's. */
const contractSeries = [
  "svc_events_published_total",
  "svc_delivery_attempts_total",
  "svc_delivery_attempt_duration_seconds_count",
  "svc_deliveries_pending",
  "svc_delivery_lag_seconds",
  "svc_http_requests_total",
  "svc_process_cpu_seconds_total",
];

async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(new URL("/metrics", baseUrl));
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of a series, which must be there. */
function value(exposition: string, name: string, labels: Record<string, string> = {}): number {
  const found = sample(exposition, name, labels);
  assert.notEqual(found, undefined, `${name}${JSON.stringify(labels)} is exposed`);
  return found as number;
}

const attempts = (exposition: string, outcome: string): number =>
  value(exposition, "svc_delivery_attempts_total", { outcome });

describe("GET /metrics of a server running the API and the worker", () => {
  let ca: TestCa;
  let fixture: ServerFixture;
  let api: ApiClient;
  let hooks: string;
  const receivers: Receiver[] = [];

  /** A destination on a new receiver, subscribed to `event` alone. */
  const destination = async (event: string, receiver: Receiver): Promise<DestinationJson> => {
    const created = await api.post<DestinationJson>(hooks, {
      url: `https://hooks.test:${receiver.port}/metrics-test`,
      events: [event],
    });
    assert.equal(created.status, 201, created.text);
    return created.body;
  };
  const publish = async (type: string): Promise<void> => {
    const response = await api.post(`/v1/workspaces/${fixture.owner.id}/events`, {
      type,
      data: { object: { id: "job_1" } },
    });
    assert.equal(response.status, 202, response.text);
  };
  /** Scrapes until `ready` holds of the exposition (the attempt is counted once recorded). */
  const scrapeUntil = (what: string, ready: (exposition: string) => boolean) =>
    eventually(
      async () => {
        const exposition = await scrape(fixture.server.url);
        return ready(exposition) ? exposition : undefined;
      },
      { what },
    );

  before(async () => {
    ca = await sharedTestCa();
    fixture = await serverFixture(deliveryEnv(ca));
    api = apiClient(fixture.server.url, fixture.owner.key);
    hooks = `/v1/workspaces/${fixture.owner.id}/webhooks`;
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await fixture.dispose();
  });

  it("answers without credentials, in the exposition format promtool accepts, every name svc_", async () => {
    // A request's count is there once it is answered: this one's, by the scrape.
    assert.equal((await fetch(new URL("/healthz", fixture.server.url))).status, 200);
    const exposition = await scrape(fixture.server.url);
    await promtoolCheck(exposition);
    for (const name of contractSeries) {
      assert.match(exposition, new RegExp(`^${name}(\\{| )`, "m"), `${name} is exposed`);
    }
    const names = exposition
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"))
      .map((line) => /^[^{ ]+/.exec(line)?.[0] ?? line);
    assert.deepEqual(
      names.filter((name) => !name.startsWith("svc_")),
      [],
    );
  });

  it("counts a publish, and its delivery as an attempt delivered, in the histogram too", async () => {
    const receiver = await startReceiver({ ca });
    receivers.push(receiver);
    await destination("job.completed", receiver);
    const before = await scrape(fixture.server.url);
    await publish("job.completed");
    await receiver.waitForRequests(1);
    const after = await scrapeUntil(
      "the delivered attempt to be counted",
      (exposition) => attempts(exposition, "delivered") > attempts(before, "delivered"),
    );
    assert.equal(
      value(after, "svc_events_published_total") - value(before, "svc_events_published_total"),
      1,
    );
    assert.equal(attempts(after, "delivered") - attempts(before, "delivered"), 1);
    const histogram = (exposition: string) =>
      value(exposition, "svc_delivery_attempt_duration_seconds_count");
    assert.equal(histogram(after) - histogram(before), 1);
    assert.equal(attempts(after, "retry"), attempts(before, "retry"));
    await promtoolCheck(after);
  });

  it("counts a failed attempt with a retry left as retry, and the last one as failed", async () => {
    const receiver = await startReceiver({ ca, respond: always(500) });
    receivers.push(receiver);
    await destination("job.failed", receiver);
    const before = await scrape(fixture.server.url);
    await publish("job.failed");
    // The schedule (50ms, 100ms) allows two retries: three attempts, the last one final.
    await receiver.waitForRequests(3);
    const after = await scrapeUntil(
      "the failed delivery to be counted",
      (exposition) => attempts(exposition, "failed") > attempts(before, "failed"),
    );
    assert.equal(attempts(after, "retry") - attempts(before, "retry"), 2);
    assert.equal(attempts(after, "failed") - attempts(before, "failed"), 1);
    assert.equal(
      value(after, "svc_delivery_attempt_duration_seconds_count") -
        value(before, "svc_delivery_attempt_duration_seconds_count"),
      3,
    );
  });

  it("counts requests by their route's template and status, and unknown paths as unmatched", async () => {
    assert.equal((await api.get(`${hooks}/dst_00000000000000000000000000`)).status, 404);
    assert.equal((await api.get("/no/such/path")).status, 404);
    const exposition = await scrape(fixture.server.url);
    const requests = (route: string, status: string) =>
      value(exposition, "svc_http_requests_total", { method: "GET", route, status });
    assert.ok(requests("/v1/workspaces/:workspace/webhooks/:id", "404") >= 1);
    assert.ok(requests("unmatched", "404") >= 1);
    assert.ok(requests("/metrics", "200") >= 1);
  });

  it("carries no id, URL or tenant's text in any label", async () => {
    const exposition = await scrape(fixture.server.url);
    for (const forbidden of ["dst_", "evt_", "ws_", "key_", "https://", "hooks.test", "job_1"]) {
      assert.ok(!exposition.includes(forbidden), `nothing in the exposition contains ${forbidden}`);
    }
    assert.ok(!exposition.includes(fixture.owner.id));
  });
});

describe("the listener of a worker-only server", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let worker: TestServer;

  before(async () => {
    dir = await tempDir();
    worker = await startTestServer({ dataDir: join(dir.path, "data"), role: "worker" });
  });
  after(async () => {
    await worker.stop();
    await dir.cleanup();
  });

  it("serves /metrics with the worker's series, in the exposition format", async () => {
    const exposition = await scrape(worker.url);
    await promtoolCheck(exposition);
    assert.equal(attempts(exposition, "delivered"), 0);
    assert.equal(value(exposition, "svc_deliveries_pending"), 0);
  });

  it("logs its requests in the access log's one line, and probes not at info", async () => {
    assert.equal((await fetch(new URL("/healthz", worker.url))).status, 200);
    assert.equal((await fetch(new URL("/readyz", worker.url))).status, 200);
    await scrape(worker.url);
    assert.equal((await fetch(new URL("/marker", worker.url))).status, 404);
    // The log is one ordered stream: once the marker's line is in, the probes' would be too.
    const lines = await eventually(
      () => {
        const parsed = worker
          .log()
          .split("\n")
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        return Promise.resolve(parsed.some((line) => line.url === "/marker") ? parsed : undefined);
      },
      { what: "the marker request's line" },
    );
    const requestLines = lines.filter((line) => line.reqId !== undefined);
    assert.deepEqual(
      requestLines.map((line) => [line.msg, line.url, line.status_code]),
      [["request completed", "/marker", 404]],
    );
  });
});
