import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson } from "../support/api.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, redirectTo, sequence, startReceiver, type Receiver } from "../support/receiver.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

interface LastDeliveryJson {
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_attempt_at: string | null;
  event: string;
  notification_id: string;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
}

describe("delivery of notifications", () => {
  let ca: TestCa;
  let fixture: ServerFixture;
  let api: ApiClient;
  let hooks: string;
  let events: string;
  const receivers: Receiver[] = [];

  const receiver = async (respond?: Parameters<typeof startReceiver>[0]["respond"]) => {
    const started = await startReceiver({ ca, ...(respond ? { respond } : {}) });
    receivers.push(started);
    return started;
  };
  const register = async (url: string, eventNames?: string[]): Promise<DestinationJson> => {
    const response = await api.post<DestinationJson>(hooks, {
      url,
      ...(eventNames ? { events: eventNames } : {}),
    });
    assert.equal(response.status, 201, response.text);
    return response.body;
  };
  const publish = async (type: string, object: object = { id: "job_1" }) => {
    const response = await api.post<{
      id: string;
      type: string;
      api_version: string;
      created: number;
    }>(events, { type, data: { object } });
    assert.equal(response.status, 202, response.text);
    return response.body;
  };
  const lastDelivery = async (id: string): Promise<LastDeliveryJson | null> =>
    (await api.get<{ last_delivery: LastDeliveryJson | null }>(`${hooks}/${id}`)).body
      .last_delivery;
  const settled = (id: string, status: LastDeliveryJson["status"]) =>
    eventually(
      async () => {
        const last = await lastDelivery(id);
        return last?.status === status ? last : undefined;
      },
      { what: `delivery to ${id} to be ${status}` },
    );

  before(async () => {
    ca = await sharedTestCa();
    fixture = await serverFixture(deliveryEnv(ca));
    api = apiClient(fixture.server.url, fixture.owner.key);
    hooks = `/v1/workspaces/${fixture.owner.id}/webhooks`;
    events = `/v1/workspaces/${fixture.owner.id}/events`;
  });
  after(async () => {
    await Promise.all(receivers.map((item) => item.close()));
    await fixture.dispose();
  });

  it("POSTs a signed notification with the body members and headers of the contract", async () => {
    const target = await receiver();
    const destination = await register(`https://hooks.test:${target.port}/svc?x=1`, [
      "job.completed",
    ]);
    const before = Math.floor(Date.now() / 1000);
    const published = await publish("job.completed", { id: "job_42", state: "done" });
    const [request] = await target.waitForRequests(1);
    assert.ok(request);
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/svc?x=1");
    assert.equal(request.headers["content-type"], "application/json");
    assert.match(String(request.headers["user-agent"]), /^svc-webhooks\/\d+\.\d+\.\d+$/);
    assert.equal(request.headers["webhook-id"], published.id);
    assert.match(published.id, /^evt_[0-9a-f]{28}$/);
    assert.equal(
      Math.floor(parseInt(published.id.slice(4, 16), 16) / 1000),
      published.created,
      "the id starts with the creation time, in milliseconds",
    );
    const timestamp = verifiedTimestamp(request, destination.secret ?? "");
    assert.ok(Math.abs(timestamp - before) <= 5, "the timestamp is Unix seconds, now");
    assert.deepEqual(JSON.parse(request.bodyText), {
      id: published.id,
      type: "job.completed",
      api_version: published.api_version,
      created: published.created,
      data: { object: { id: "job_42", state: "done" } },
    });
    const last = await settled(destination.id, "delivered");
    assert.equal(last.attempts, 1);
    assert.equal(last.event, "job.completed");
    assert.equal(last.notification_id, published.id);
    assert.equal(last.last_status_code, 200);
  });

  it("reaches a destination on an IPv6 address", async () => {
    const target = await startReceiver({ ca, host: "::1" });
    receivers.push(target);
    const destination = await register(`${target.url}/v6`, ["job.failed"]);
    await publish("job.failed");
    const [request] = await target.waitForRequests(1);
    assert.ok(request);
    verifiedTimestamp(request, destination.secret ?? "");
  });

  it("delivers every event type to a * subscription", async () => {
    const target = await receiver();
    await register(`${target.url}/all`, ["*"]);
    const published = [
      await publish("job.completed"),
      await publish("job.failed"),
      await publish("collection.completed"),
    ];
    const requests = await target.waitForRequests(3);
    assert.deepEqual(
      requests.map((request) => request.headers["webhook-id"]).sort(),
      published.map((event) => event.id).sort(),
    );
  });

  it("sends nothing to a destination subscribed to other events, or inactive, or deleted", async () => {
    const target = await receiver();
    const other = await register(`${target.url}/other`, ["collection.completed"]);
    const inactive = await register(`${target.url}/inactive`, ["job.failed"]);
    await api.patch(`${hooks}/${inactive.id}`, { active: false });
    const deleted = await register(`${target.url}/deleted`, ["job.failed"]);
    await api.delete(`${hooks}/${deleted.id}`);
    const sentinel = await register(`${target.url}/sentinel`, ["job.failed"]);

    await publish("job.failed");
    // Deliveries are decided when the event is committed: none was queued for these three.
    assert.equal(await lastDelivery(other.id), null);
    assert.equal(await lastDelivery(inactive.id), null);
    await settled(sentinel.id, "delivered");
    assert.deepEqual(
      target.requests.map((request) => request.path),
      ["/sentinel"],
    );
  });

  it("drops deliveries already queued when the destination is deactivated or deleted", async () => {
    // Each first attempt fails, so the deliveries wait for a retry while the test changes them.
    // The receiver answers the first attempts only once both changes are made: a retry is
    // scheduled from the answer (50 ms later here), which a loaded machine could otherwise send
    // before the PATCH, as it should.
    const changed = Promise.withResolvers<undefined>();
    const target = await receiver(async () => {
      await changed.promise;
      return { status: 500 };
    });
    const deactivated = await register(`${target.url}/deactivated`, ["job.completed"]);
    const deleted = await register(`${target.url}/deleted`, ["job.completed"]);
    await publish("job.completed");
    await target.waitForRequests(2);
    await api.patch(`${hooks}/${deactivated.id}`, { active: false });
    await api.delete(`${hooks}/${deleted.id}`);
    changed.resolve(undefined);
    const last = await settled(deactivated.id, "failed");
    assert.match(last.last_error ?? "", /deactivated/);
    assert.equal(last.attempts, 1, "no attempt after the deactivation");
    assert.equal(target.requests.length, 2);
  });

  it("retries after a 500 and records delivered after attempt 2", async () => {
    const target = await receiver(sequence({ status: 500 }, { status: 200 }));
    const destination = await register(`${target.url}/flaky`, ["job.completed"]);
    const published = await publish("job.completed");
    const requests = await target.waitForRequests(2);
    const last = await settled(destination.id, "delivered");
    assert.equal(last.attempts, 2);
    assert.deepEqual(
      requests.map((request) => request.headers["webhook-id"]),
      [published.id, published.id],
      "the same notification id on every attempt",
    );
    assert.equal(requests[0]?.bodyText, requests[1]?.bodyText, "the same body bytes");
    for (const request of requests) verifiedTimestamp(request, destination.secret ?? "");
  });

  it("fails after the schedule is spent when the receiver always answers 500", async () => {
    const target = await receiver(always(500));
    const destination = await register(`${target.url}/down`, ["job.failed"]);
    await publish("job.failed");
    const last = await settled(destination.id, "failed");
    assert.equal(last.attempts, 3, "the first attempt and one per step of 50ms,100ms");
    assert.equal(last.last_status_code, 500);
    assert.match(last.last_error ?? "", /500; retries exhausted/);
    assert.equal(target.requests.length, 3);
  });

  it("does not follow a redirect and counts it as a failure", async () => {
    const elsewhere = await receiver();
    const target = await receiver(redirectTo(`${elsewhere.url}/elsewhere`));
    const destination = await register(`${target.url}/moved`, ["job.failed"]);
    await publish("job.failed");
    const last = await settled(destination.id, "failed");
    assert.equal(last.last_status_code, 302);
    assert.match(last.last_error ?? "", /redirect/);
    assert.equal(elsewhere.requests.length, 0);
  });

  it("times out a receiver that never answers", async () => {
    const target = await receiver(() => ({ status: 200, hang: true }));
    const destination = await register(`${target.url}/silent`, ["collection.completed"]);
    await publish("collection.completed");
    const last = await eventually(
      async () => {
        const current = await lastDelivery(destination.id);
        return current?.attempts === 1 ? current : undefined;
      },
      { what: "the first attempt to time out" },
    );
    assert.match(last.last_error ?? "", /no answer within 1000ms/);
    assert.equal(last.last_status_code, null);
  });

  it("refuses an event type outside the allowed set, and a body without data.object", async () => {
    const unknown = await api.post<{ error: { code: string; param: string } }>(events, {
      type: "job.started",
      data: { object: {} },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.param, "type");
    const missing = await api.post<{ error: { code: string } }>(events, { type: "job.failed" });
    assert.equal(missing.status, 400);
  });
});
