import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, sequence, startReceiver, type Receiver } from "../support/receiver.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

interface DeliveryJson {
  id: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  attempt_count?: number;
}

/**
 * Retry and recovery end to end (decision 30): a server process, a receiver on loopback that
 * fails and then recovers. The schedule is 50 ms, 100 ms: three attempts, then `failed`.
 */
describe("sending failed notifications again", () => {
  let ca: TestCa;
  let fixture: ServerFixture;
  let api: ApiClient;
  let workspacePath: string;
  const receivers: Receiver[] = [];

  const register = async (receiver: Receiver): Promise<DestinationJson & { secret: string }> => {
    const response = await api.post<DestinationJson & { secret: string }>(
      `${workspacePath}/webhooks`,
      { url: `https://hooks.test:${receiver.port}/hooks` },
    );
    assert.equal(response.status, 201, response.text);
    return response.body;
  };
  const publish = async (): Promise<string> => {
    const response = await api.post<{ id: string }>(`${workspacePath}/events`, {
      type: "job.failed",
      data: { object: { id: "job_9", reason: "ünïcode ✓" } },
    });
    assert.equal(response.status, 202, response.text);
    return response.body.id;
  };
  const deliveryOf = async (eventId: string, status: DeliveryJson["status"]) =>
    eventually(
      async () => {
        const list = await api.get<{ data: DeliveryJson[] }>(
          `${workspacePath}/deliveries?event=${eventId}`,
        );
        const [delivery] = list.body.data;
        return delivery?.status === status ? delivery : undefined;
      },
      { what: `the delivery of ${eventId} to be ${status}` },
    );

  before(async () => {
    ca = await sharedTestCa();
    fixture = await serverFixture(deliveryEnv(ca));
    api = apiClient(fixture.server.url, fixture.owner.key);
    workspacePath = `/v1/workspaces/${fixture.owner.id}`;
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await fixture.dispose();
  });

  it("retries a failed delivery: the same bytes under the same Webhook-Id, freshly signed, on a schedule started over", async () => {
    const receiver = await startReceiver({ ca, respond: always(500) });
    receivers.push(receiver);
    const destination = await register(receiver);
    const eventId = await publish();
    const failed = await deliveryOf(eventId, "failed");
    assert.equal(failed.attempts, 3, "the schedule's three attempts");
    const [first] = await receiver.waitForRequests(3);
    assert.ok(first);

    // One more failure after the retry, then success: a schedule started over lets it through,
    // where one counted from the first attempts would have ended it `failed` at once.
    receiver.setResponder(
      sequence({ status: 503, body: "still warming up" }, { status: 200, body: "ok" }),
    );
    const retried = await api.post<DeliveryJson>(
      `${workspacePath}/deliveries/${failed.id}/retry`,
      {},
    );
    assert.equal(retried.status, 202, retried.text);
    assert.equal(retried.body.status, "pending");
    await deliveryOf(eventId, "delivered");

    const requests = await receiver.waitForRequests(5);
    const [afterRetry, delivered] = requests.slice(3);
    assert.ok(afterRetry && delivered);
    for (const request of [afterRetry, delivered]) {
      assert.ok(request.rawBody.equals(first.rawBody), "the same body bytes");
      assert.equal(request.headers["webhook-id"], eventId);
      assert.equal(request.headers["webhook-id"], first.headers["webhook-id"]);
      const signedAt = verifiedTimestamp(request, destination.secret);
      assert.ok(
        Math.abs(signedAt - request.receivedAt / 1000) <= 2,
        "signed at the attempt's time, not the first attempt's",
      );
    }
    const detail = await api.get<
      DeliveryJson & { attempts: { status_code: number; response_body: string }[] }
    >(`${workspacePath}/deliveries/${failed.id}`);
    assert.deepEqual(
      detail.body.attempts.map((attempt) => attempt.status_code),
      [500, 500, 500, 503, 200],
      "every attempt, in order",
    );
    assert.equal(detail.body.attempts[3]?.response_body, "still warming up");
    assert.equal(detail.body.attempt_count, 5);
  });

  it("recovers a destination's failed deliveries since a time, each once, and they end delivered", async () => {
    const receiver = await startReceiver({ ca, respond: always(502) });
    receivers.push(receiver);
    const destination = await register(receiver);
    const since = new Date().toISOString();
    const events = [await publish(), await publish()];
    for (const eventId of events) await deliveryOf(eventId, "failed");
    const firstBodies = new Map(
      (await receiver.waitForRequests(6)).map((request) => [
        request.headers["webhook-id"],
        request.rawBody,
      ]),
    );

    receiver.setResponder(always(200));
    const recovered = await api.post<{ queued: number }>(
      `${workspacePath}/webhooks/${destination.id}/recover`,
      { since },
    );
    assert.equal(recovered.status, 202, recovered.text);
    assert.deepEqual(recovered.body, { queued: 2 });
    for (const eventId of events) await deliveryOf(eventId, "delivered");

    const sentAgain = (await receiver.waitForRequests(8)).slice(6);
    assert.deepEqual(
      sentAgain.map((request) => request.headers["webhook-id"]).sort(),
      [...events].sort(),
      "each recovered notification once",
    );
    for (const request of sentAgain) {
      const original = firstBodies.get(request.headers["webhook-id"]);
      assert.ok(original?.equals(request.rawBody), "the same body bytes");
      verifiedTimestamp(request, destination.secret);
    }
    const again = await api.post<{ queued: number }>(
      `${workspacePath}/webhooks/${destination.id}/recover`,
      { since },
    );
    assert.deepEqual(again.body, { queued: 0 }, "nothing delivered is sent again");
  });
});
