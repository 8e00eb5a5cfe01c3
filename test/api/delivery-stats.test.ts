import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { AttemptReport } from "../../src/interfaces.ts";
import { claimUpTo } from "../support/delivery.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";

interface StatsJson {
  since: string;
  bucket_seconds: number;
  buckets: { start: string; succeeded: number; failed: number }[];
  destinations: {
    destination_id: string;
    attempts: number;
    succeeded: number;
    success_rate: number;
    last_attempt_at: string | null;
    last_status_code: number | null;
    failing_since: string | null;
  }[];
}

const hour = 3_600_000;
/** A fixed clock in the middle of an hour, so that the buckets are known. */
const now = new Date("2026-11-25T12:30:00.000Z");

const answered = (at: Date, statusCode: number): AttemptReport => ({
  attempt: { startedAt: at, durationMs: 12, statusCode, errorClass: null, responseBody: "" },
  result:
    statusCode < 300 ? { status: "delivered" } : { status: "failed", reason: "retries_exhausted" },
  error: statusCode < 300 ? null : `the receiver answered ${statusCode}`,
});

/** `GET …/delivery-stats` (decision 35): what the dashboard's chart and health column draw. */
describe("delivery statistics over the API", () => {
  let api: InProcessApi;
  let healthy: string;
  let failing: string;

  const create = async (path: string) =>
    (
      await api.call("POST", "/webhooks", { body: { url: `https://${publicTestHost}/${path}` } })
    ).json<{ id: string }>().id;
  /** Publishes one event, then answers each destination's delivery as `answers` says. */
  const deliverOnce = async (answers: Map<string, { at: Date; status: number }>) => {
    const published = await api.call("POST", "/events", {
      body: { type: "job.completed", data: { object: { id: "job" } } },
    });
    assert.equal(published.statusCode, 202, published.body);
    for (const claimed of await claimUpTo(api.store, "test-worker", 100, 60_000)) {
      const answer = answers.get(claimed.destination.id);
      assert.ok(answer);
      await api.store.queue.finishAttempt(
        claimed.lease,
        claimed.seq,
        answered(answer.at, answer.status),
      );
    }
  };
  const stats = async (query = "") => {
    const response = await api.call("GET", `/delivery-stats${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<StatsJson>();
  };

  before(async () => {
    api = await inProcessApi({ clock: { now: () => now } });
    healthy = await create("healthy");
    failing = await create("failing");
    const at = (ms: number) => new Date(now.getTime() - ms);
    // Two hours ago both succeed; an hour ago the second starts failing; now it still fails.
    await deliverOnce(
      new Map([
        [healthy, { at: at(2 * hour), status: 200 }],
        [failing, { at: at(2 * hour), status: 204 }],
      ]),
    );
    await deliverOnce(
      new Map([
        [healthy, { at: at(hour), status: 200 }],
        [failing, { at: at(hour), status: 503 }],
      ]),
    );
    await deliverOnce(
      new Map([
        [healthy, { at: at(60_000), status: 201 }],
        [failing, { at: at(60_000), status: 500 }],
      ]),
    );
  });
  after(() => api.dispose());

  it("counts the workspace's attempts in 24 hourly buckets, the last being the current hour", async () => {
    const body = await stats();
    assert.equal(body.bucket_seconds, 3600);
    assert.equal(body.buckets.length, 24);
    assert.equal(body.since, "2026-11-24T13:00:00.000Z");
    assert.equal(body.buckets.at(-1)?.start, "2026-11-25T12:00:00.000Z");
    const nonEmpty = body.buckets.filter((bucket) => bucket.succeeded + bucket.failed > 0);
    assert.deepEqual(nonEmpty, [
      { start: "2026-11-25T10:00:00.000Z", succeeded: 2, failed: 0 },
      { start: "2026-11-25T11:00:00.000Z", succeeded: 1, failed: 1 },
      { start: "2026-11-25T12:00:00.000Z", succeeded: 1, failed: 1 },
    ]);
  });

  it("gives each destination's success rate, last attempt and the first failure after its last success", async () => {
    const body = await stats();
    const byId = new Map(body.destinations.map((each) => [each.destination_id, each]));
    assert.deepEqual(byId.get(healthy), {
      destination_id: healthy,
      attempts: 3,
      succeeded: 3,
      success_rate: 1,
      last_attempt_at: "2026-11-25T12:29:00.000Z",
      last_status_code: 201,
      failing_since: null,
    });
    assert.deepEqual(byId.get(failing), {
      destination_id: failing,
      attempts: 3,
      succeeded: 1,
      success_rate: 1 / 3,
      last_attempt_at: "2026-11-25T12:29:00.000Z",
      last_status_code: 500,
      failing_since: "2026-11-25T11:30:00.000Z",
    });
  });

  it("narrows to one destination with ?destination=", async () => {
    const body = await stats(`?destination=${failing}`);
    assert.deepEqual(
      body.destinations.map((each) => each.destination_id),
      [failing],
    );
    const total = body.buckets.reduce((sum, bucket) => sum + bucket.succeeded + bucket.failed, 0);
    assert.equal(total, 3);
  });

  it("needs events:read, and sees nothing of another workspace", async () => {
    const webhooksOnly = await api.key(["webhooks:read"]);
    const refused = await api.call("GET", "/delivery-stats", {
      headers: { authorization: `Bearer ${webhooksOnly}` },
    });
    assert.equal(refused.statusCode, 403);
    await api.store.credentials.createWorkspace({ id: "ws_other", name: "other" });
    const other = await api.call("GET", "/v1/workspaces/ws_other/delivery-stats");
    assert.equal(other.statusCode, 403);
  });

  it("computes an answer at most once a second per workspace and destination, shared by the requests meanwhile", async () => {
    const log = api.store.log;
    const original = log.attemptBuckets.bind(log);
    let computed = 0;
    log.attemptBuckets = (...args) => {
      computed += 1;
      return original(...args);
    };
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, () => stats()));
      assert.ok(computed <= 1, `computed ${computed} times for 5 requests at once`);
      assert.deepEqual(new Set(answers.map((answer) => JSON.stringify(answer))).size, 1);
    } finally {
      log.attemptBuckets = original;
    }
  });

  it("refuses an unknown query member", async () => {
    const response = await api.call("GET", "/delivery-stats?hours=3");
    assert.equal(response.statusCode, 400, response.body);
  });
});
