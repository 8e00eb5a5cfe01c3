import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { QueueBacklog } from "../../src/store/delivery-queue.ts";
import { DeliveryEvents, type AttemptFinished } from "../../src/observability/delivery-events.ts";
import { ServiceMetrics } from "../../src/observability/metrics.ts";
import { manualClock } from "../support/clock.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";
import { sample } from "../support/metrics.ts";

const scrape = async (api: InProcessApi): Promise<string> => {
  const response = await api.app.inject({ method: "GET", url: "/metrics" });
  assert.equal(response.statusCode, 200);
  return response.body;
};

describe("the backlog gauges, read from the store", () => {
  const clock = manualClock(Date.parse("2026-03-01T12:00:00Z"));
  let api: InProcessApi;

  before(async () => {
    api = await inProcessApi({ clock });
  });
  after(() => api.dispose());

  it("show the pending deliveries, and how long the oldest due one has waited", async () => {
    const created = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/backlog` },
    });
    assert.equal(created.statusCode, 201, created.body);
    // No worker runs here: every delivery stays pending, due from its publish.
    for (let published = 0; published < 3; published += 1) {
      const response = await api.call("POST", "/events", {
        body: { type: "job.completed", data: { object: {} } },
      });
      assert.equal(response.statusCode, 202, response.body);
      clock.advance(10_000);
    }
    clock.advance(60_000);
    const exposition = await scrape(api);
    assert.equal(sample(exposition, "svc_deliveries_pending"), 3);
    // The first was published 90 s ago (three times 10 s, then 60 s).
    assert.equal(sample(exposition, "svc_delivery_lag_seconds"), 90);
  });

  it("count each accepted publish once, and a refused one not at all", async () => {
    const published = async () => sample(await scrape(api), "svc_events_published_total") ?? 0;
    const before = await published();
    const refused = await api.call("POST", "/events", { body: { type: "no.such" } });
    assert.equal(refused.statusCode, 400);
    const accepted = await api.call("POST", "/events", {
      body: { type: "job.failed", data: { object: {} } },
    });
    assert.equal(accepted.statusCode, 202);
    assert.equal((await published()) - before, 1);
  });
});

describe("the metrics of the worker's attempts and of the backlog", () => {
  const finished = (overrides: Partial<AttemptFinished>): AttemptFinished => ({
    destinationId: "dst_a",
    eventId: "evt_a",
    attempt: 1,
    outcome: "delivered",
    exchange: { durationMs: 30, statusCode: 200, errorClass: null },
    error: null,
    nextAttemptAt: null,
    recorded: true,
    ...overrides,
  });

  it("count attempts by outcome from the worker's events, and time each exchange", async () => {
    const clock = manualClock(0);
    const metrics = new ServiceMetrics({
      backlog: () => Promise.resolve({ pending: 0, oldestDueAt: null }),
      clock,
      onBacklogError: (error) => {
        throw error;
      },
    });
    const events = new DeliveryEvents();
    events.subscribe(metrics);
    events.attemptStarted({ destinationId: "dst_a", eventId: "evt_a" });
    assert.equal(sample(await metrics.exposition(), "svc_delivery_attempts_in_flight"), 1);
    events.attemptFinished(
      finished({ exchange: { durationMs: 30, statusCode: 200, errorClass: null } }),
    );
    const retry = { durationMs: 2000, statusCode: 503, errorClass: "http_status" };
    events.attemptFinished(finished({ outcome: "retry", exchange: retry }));
    events.attemptFinished(finished({ outcome: "failed", exchange: null }));
    const exposition = await metrics.exposition();
    const attempts = (outcome: string) =>
      sample(exposition, "svc_delivery_attempts_total", { outcome });
    assert.deepEqual([attempts("delivered"), attempts("retry"), attempts("failed")], [1, 1, 0]);
    const bucket = (le: string) =>
      sample(exposition, "svc_delivery_attempt_duration_seconds_bucket", { le });
    assert.deepEqual([bucket("0.05"), bucket("2.5"), bucket("+Inf")], [1, 2, 2]);
    assert.equal(sample(exposition, "svc_delivery_attempt_duration_seconds_sum"), 2.03);
  });

  it("read the backlog at most once per 5 s, however many scrapes come", async () => {
    const clock = manualClock(Date.parse("2026-03-01T12:00:00Z"));
    let reads = 0;
    let answer: ((backlog: QueueBacklog) => void) | undefined;
    const metrics = new ServiceMetrics({
      backlog: () => {
        reads += 1;
        return new Promise((resolve) => (answer = resolve));
      },
      clock,
      onBacklogError: (error) => {
        throw error;
      },
    });
    const scrapes = [metrics.exposition(), metrics.exposition()];
    answer?.({ pending: 7, oldestDueAt: new Date(clock.now().getTime() - 2000) });
    for (const exposition of await Promise.all(scrapes)) {
      assert.equal(sample(exposition, "svc_deliveries_pending"), 7);
      assert.equal(sample(exposition, "svc_delivery_lag_seconds"), 2);
    }
    assert.equal(reads, 1, "two scrapes at once read once");
    clock.advance(4999);
    await metrics.exposition();
    assert.equal(reads, 1, "a scrape within 5 s reads nothing");
    clock.advance(1);
    const later = metrics.exposition();
    answer?.({ pending: 0, oldestDueAt: null });
    assert.equal(sample(await later, "svc_deliveries_pending"), 0);
    assert.equal(reads, 2);
  });

  it("keep the last backlog read when a reading fails, and report the failure", async () => {
    const clock = manualClock(0);
    const failures: unknown[] = [];
    let fail = false;
    const metrics = new ServiceMetrics({
      backlog: () =>
        fail
          ? Promise.reject(new Error("database unreachable"))
          : Promise.resolve({ pending: 4, oldestDueAt: null }),
      clock,
      onBacklogError: (error) => failures.push(error),
    });
    assert.equal(sample(await metrics.exposition(), "svc_deliveries_pending"), 4);
    fail = true;
    clock.advance(5000);
    assert.equal(sample(await metrics.exposition(), "svc_deliveries_pending"), 4);
    assert.equal(failures.length, 1);
  });
});
