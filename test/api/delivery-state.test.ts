import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { attemptDelivery, type AttemptDependencies } from "../../src/delivery/attempt.ts";
import type { Sender, SendOutcome, SendRequest } from "../../src/delivery/http-sender.ts";
import { RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import { SigningKeys } from "../../src/delivery/signing-keys.ts";
import type { ClaimedDelivery } from "../../src/interfaces.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { PortSet } from "../../src/net/port-set.ts";
import { tableResolver } from "../../src/net/resolver.ts";
import { manualClock } from "../support/clock.ts";
import { claimUpTo } from "../support/delivery.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { isolatedConfigHome } from "../support/svc.ts";

interface DeliveryJson {
  id: string;
  event_id: string;
  destination_id: string;
  status: string;
  state: string;
  failure_reason: string | null;
  last_error: string | null;
  next_attempt_at: string | null;
  attempts: number;
  test: boolean;
}
interface AttemptJson {
  status_code: number | null;
  request_headers: Record<string, string> | null;
}
interface CircuitJson {
  state: string;
  open_until: string | null;
  opens: number;
  reason: string | null;
}

/**
 * Decision 40 in process: where each kind of delivery stands and why a failed one failed, a
 * destination's circuit on its page, the request an attempt was sent with, and test events.
 * Attempts are made by the worker's own `attemptDelivery`, with a sender that answers as told
 * and keeps what it was sent; the store's clock is the test's.
 */
describe("every delivery says where it stands (decision 40)", () => {
  const clock = manualClock(Date.parse("2026-11-25T12:00:00Z"));
  let api: InProcessApi;
  const sent: SendRequest[] = [];
  let answer: SendOutcome = { kind: "response", statusCode: 200 };
  const sender: Sender = {
    send(message) {
      sent.push(message);
      return Promise.resolve(answer);
    },
    close: () => Promise.resolve(),
  };
  /** The worker's attempt, with the in-process API's key (SecretBox of 7s) and one retry. */
  const dependencies = (ports = ["443"]): AttemptDependencies => ({
    signingKeys: new SigningKeys(new SecretBox(Buffer.alloc(32, 7))),
    resolver: tableResolver(new Map([[publicTestHost, ["93.184.215.14"]]]), {
      resolve: (hostname) => Promise.reject(new Error(`${hostname} is not in the test's table`)),
    }),
    addressPolicy: new AddressPolicy(),
    destinationPorts: new PortSet(ports),
    sender,
    schedule: new RetrySchedule([60_000], () => 0.5),
    clock,
    timeoutMs: 1000,
  });

  const register = async (path: string, events?: string[]) => {
    const response = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/${path}`, ...(events ? { events } : {}) },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json<{ id: string; secret: string }>();
  };
  const publish = async (extra: Record<string, unknown> = {}) => {
    const response = await api.call("POST", "/events", {
      body: { type: "job.completed", data: { object: { id: "job_1" } }, ...extra },
    });
    assert.equal(response.statusCode, 202, response.body);
    return response.json<{ id: string; test: boolean }>();
  };
  const deliveryOf = async (eventId: string, destinationId: string) => {
    const response = await api.call(
      "GET",
      `/deliveries?event=${eventId}&destination=${destinationId}`,
    );
    const [delivery] = response.json<{ data: DeliveryJson[] }>().data;
    assert.ok(delivery, `a delivery of ${eventId} to ${destinationId}`);
    return delivery;
  };
  const circuitOf = async (destinationId: string) =>
    (await api.call("GET", `/webhooks/${destinationId}`)).json<{ circuit: CircuitJson }>().circuit;
  /** Claims what is due and attempts it with the worker's code; returns the claims. */
  const attemptDue = async (
    change: (claimed: ClaimedDelivery) => ClaimedDelivery = (claimed) => claimed,
    deps = dependencies(),
  ) => {
    const claims = await claimUpTo(api.store, "test-worker", 100, 60_000);
    for (const claimed of claims) {
      const report = await attemptDelivery(change(claimed), deps);
      await api.store.queue.finishAttempt(claimed.lease, claimed.seq, report);
    }
    return claims;
  };

  before(async () => {
    api = await inProcessApi({ clock });
  });
  after(async () => {
    await api.dispose();
  });

  it("waiting, in flight, a retry scheduled, delivered: each says so, with its last error and next attempt", async () => {
    const destination = await register("states");
    const event = await publish();
    const waiting = await deliveryOf(event.id, destination.id);
    assert.equal(waiting.state, "waiting");
    assert.equal(waiting.next_attempt_at, clock.now().toISOString());
    assert.equal(waiting.failure_reason, null);

    const [claimed] = await claimUpTo(api.store, "test-worker", 100, 60_000);
    assert.ok(claimed);
    const inFlight = await deliveryOf(event.id, destination.id);
    assert.equal(inFlight.state, "in_flight");
    assert.equal(inFlight.next_attempt_at, null, "a lease's end is not an attempt");

    answer = { kind: "response", statusCode: 503, body: "down for maintenance" };
    await api.store.queue.finishAttempt(
      claimed.lease,
      claimed.seq,
      await attemptDelivery(claimed, dependencies()),
    );
    const retrying = await deliveryOf(event.id, destination.id);
    assert.equal(retrying.state, "retry_scheduled");
    assert.equal(retrying.status, "pending");
    assert.equal(retrying.last_error, "the receiver answered 503");
    assert.equal(retrying.next_attempt_at, new Date(clock.now().getTime() + 60_000).toISOString());

    clock.advance(60_000);
    answer = { kind: "response", statusCode: 204 };
    await attemptDue();
    const delivered = await deliveryOf(event.id, destination.id);
    assert.equal(delivered.state, "delivered");
    assert.equal(delivered.failure_reason, null);
    assert.equal(delivered.next_attempt_at, null);
  });

  it("a failed delivery says why: retries spent, refused for good, deactivated, deleted", async () => {
    const destination = await register("reasons");
    const reasonOf = async (eventId: string) => {
      const delivery = await deliveryOf(eventId, destination.id);
      assert.equal(delivery.state, "failed");
      return { reason: delivery.failure_reason, error: delivery.last_error };
    };

    answer = { kind: "error", errorClass: "timeout", message: "no answer within 1s" };
    const spent = await publish();
    await attemptDue();
    clock.advance(60_000);
    await attemptDue();
    assert.deepEqual(await reasonOf(spent.id), {
      reason: "retries_exhausted",
      error: "no answer within 1s; retries exhausted",
    });

    const refused = await publish();
    await attemptDue(undefined, dependencies(["8443"]));
    assert.equal((await reasonOf(refused.id)).reason, "destination_refused");

    const paused = await publish();
    await attemptDue((claimed) => ({
      ...claimed,
      destination: { ...claimed.destination, active: false },
    }));
    assert.deepEqual(await reasonOf(paused.id), {
      reason: "destination_inactive",
      error: "the destination was deactivated before delivery",
    });

    const deleted = await publish();
    await attemptDue((claimed) => ({
      ...claimed,
      destination: { ...claimed.destination, deleted: true },
    }));
    assert.equal((await reasonOf(deleted.id)).reason, "destination_deleted");
  });

  it("an open circuit holds a delivery until it ends, ends one whose retries run out inside it, and shows on the destination's page", async () => {
    const destination = await register("circuit");
    assert.deepEqual(await circuitOf(destination.id), {
      state: "closed",
      open_until: null,
      opens: 0,
      reason: null,
    });
    answer = { kind: "response", statusCode: 503 };
    const attempted = await publish();
    await attemptDue();
    const held = await publish();
    const until = new Date(clock.now().getTime() + 600_000);
    await api.store.queue.openCircuit(destination.id, {
      until,
      opens: 1,
      error: "an attempt failed (last: the receiver answered 503)",
      failCreatedBefore: new Date(clock.now().getTime() + 1),
    });

    assert.deepEqual(await circuitOf(destination.id), {
      state: "open",
      open_until: until.toISOString(),
      opens: 1,
      reason: "an attempt failed (last: the receiver answered 503)",
    });
    const waiting = await deliveryOf(held.id, destination.id);
    assert.equal(waiting.state, "circuit_open");
    assert.equal(waiting.next_attempt_at, until.toISOString(), "held until the circuit ends");
    const ended = await deliveryOf(attempted.id, destination.id);
    assert.equal(ended.state, "failed");
    assert.equal(ended.failure_reason, "circuit_open");
    assert.match(ended.last_error ?? "", /retries ran out while the destination's circuit/);

    // A retry lets the work through at once: the circuit is half-open now, the retry is due now.
    const retried = await api.call("POST", `/deliveries/${ended.id}/retry`, { body: {} });
    assert.equal(retried.statusCode, 202, retried.body);
    const body = retried.json<DeliveryJson>();
    assert.equal(body.state, "retry_scheduled");
    assert.equal(body.failure_reason, null);
    assert.equal(body.next_attempt_at, clock.now().toISOString());
    assert.deepEqual(await circuitOf(destination.id), {
      state: "half_open",
      open_until: clock.now().toISOString(),
      opens: 1,
      reason: "an attempt failed (last: the receiver answered 503)",
    });
    const released = await deliveryOf(held.id, destination.id);
    assert.equal(released.state, "waiting", "what the circuit held goes after the probe");
    assert.equal(released.next_attempt_at, new Date(clock.now().getTime() + 1).toISOString());
  });

  it("each attempt shows the request it was sent with: the signature verifies over the body with the secret", async () => {
    const destination = await register("headers");
    answer = { kind: "response", statusCode: 200 };
    const event = await publish();
    sent.length = 0;
    await attemptDue();
    // Every destination so far subscribes to it: the one sent to this destination's URL.
    const request = sent.find(
      (message) =>
        message.headers["webhook-id"] === event.id && message.url.pathname === "/headers",
    );
    assert.ok(request);

    const delivery = await deliveryOf(event.id, destination.id);
    const detail = (await api.call("GET", `/deliveries/${delivery.id}`)).json<{
      attempts: AttemptJson[];
    }>();
    const headers = detail.attempts[0]?.request_headers;
    assert.ok(headers);
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
      ),
      request.headers,
      "the headers as sent",
    );
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(headers["Webhook-Signature"] ?? "");
    assert.ok(match);
    const expected = createHmac("sha256", destination.secret)
      .update(`${match[1]}.${request.body}`)
      .digest("hex");
    assert.equal(match[2], expected, "verifies against the body and the destination's secret");
    const eventBody = (await api.call("GET", `/events/${event.id}`)).json<{ id: string }>();
    assert.equal(eventBody.id, headers["Webhook-Id"]);
    assert.ok(!JSON.stringify(detail).includes("whsec_"), "never the secret");
  });

  it("a test event goes to one destination alone, whatever it subscribes to, and shows as a test", async () => {
    const target = await register("test-target", ["job.failed"]);
    const bystander = await register("bystander");
    const test = await publish({ destination: target.id });
    assert.equal(test.test, true);
    const detail = (await api.call("GET", `/events/${test.id}`)).json<{
      test: boolean;
      deliveries: DeliveryJson[];
    }>();
    assert.equal(detail.test, true);
    assert.deepEqual(
      detail.deliveries.map((delivery) => delivery.destination_id),
      [target.id],
      "one delivery, to the test's destination, though it subscribes to job.failed only",
    );
    assert.equal((await publish()).test, false);
    const listed = (await api.call("GET", "/events?limit=2")).json<{
      data: { id: string; test: boolean }[];
    }>();
    assert.deepEqual(
      listed.data.map((event) => event.test),
      [false, true],
    );
    const bystanders = await api.call(
      "GET",
      `/deliveries?event=${test.id}&destination=${bystander.id}`,
    );
    assert.deepEqual(bystanders.json<{ data: unknown[] }>().data, [], "nor to one subscribed to *");

    const unknown = await api.call("POST", "/events", {
      body: {
        type: "job.completed",
        data: { object: {} },
        destination: "dst_000000000000000000000000",
      },
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json<{ error: { param: string } }>().error.param, "destination");
    await api.call("PATCH", `/webhooks/${target.id}`, { body: { active: false } });
    const paused = await api.call("POST", "/events", {
      body: { type: "job.completed", data: { object: {} }, destination: target.id },
    });
    assert.equal(paused.statusCode, 409);
    assert.equal(paused.json<{ error: { code: string } }>().error.code, "destination_inactive");
  });

  it("a test event's delivery says it is a test, in the list, on its own and in its event; another's does not", async () => {
    const destination = await register("test-flag");
    const test = await publish({ destination: destination.id });
    const normal = await publish();
    const listed = await deliveryOf(test.id, destination.id);
    assert.equal(listed.test, true, "in the list");
    const got = (await api.call("GET", `/deliveries/${listed.id}`)).json<DeliveryJson>();
    assert.equal(got.test, true, "on its own");
    const event = (await api.call("GET", `/events/${test.id}`)).json<{
      deliveries: DeliveryJson[];
    }>();
    assert.deepEqual(
      event.deliveries.map((delivery) => delivery.test),
      [true],
    );
    const other = await deliveryOf(normal.id, destination.id);
    assert.equal(other.test, false, "a publish's delivery is no test");
    assert.equal(
      (await api.call("GET", `/deliveries/${other.id}`)).json<DeliveryJson>().test,
      false,
    );
    const page = (await api.call("GET", `/deliveries?destination=${destination.id}`)).json<{
      data: DeliveryJson[];
    }>();
    assert.deepEqual(
      page.data.map((delivery) => [delivery.event_id, delivery.test]),
      [
        [normal.id, false],
        [test.id, true],
      ],
    );
  });

  it("a retry of a delivery held by an open circuit answers it due now, and the next claim takes it", async () => {
    const destination = await register("held-retry");
    answer = { kind: "response", statusCode: 503 };
    const event = await publish();
    await attemptDue();
    const until = new Date(clock.now().getTime() + 3_600_000);
    await api.store.queue.openCircuit(destination.id, {
      until,
      opens: 1,
      error: "an attempt failed (last: the receiver answered 503)",
      failCreatedBefore: new Date(0),
    });
    const held = await deliveryOf(event.id, destination.id);
    assert.equal(held.state, "circuit_open");
    assert.equal(held.next_attempt_at, until.toISOString());

    const retried = await api.call("POST", `/deliveries/${held.id}/retry`, { body: {} });
    assert.equal(retried.statusCode, 202, retried.body);
    const body = retried.json<DeliveryJson>();
    assert.equal(body.state, "retry_scheduled");
    assert.equal(
      body.next_attempt_at,
      clock.now().toISOString(),
      "due now, not at the circuit's end",
    );
    assert.equal((await circuitOf(destination.id)).state, "half_open");
    const listed = await deliveryOf(event.id, destination.id);
    assert.equal(listed.state, "retry_scheduled");
    assert.equal(listed.next_attempt_at, clock.now().toISOString());

    answer = { kind: "response", statusCode: 200 };
    const claims = await attemptDue();
    assert.ok(
      claims.some((claim) => claim.eventId === event.id && claim.destination.id === destination.id),
      "the worker takes it now, as the probe",
    );
    assert.equal((await deliveryOf(event.id, destination.id)).state, "delivered");
  });

  it("svc events send --destination sends a test event; svc deliveries get and svc webhooks get say where things stand", async () => {
    await api.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = api.app.server.address() as AddressInfo;
    const env = {
      SERVICE_API_URL: `http://127.0.0.1:${port}`,
      SERVICE_API_KEY: api.token,
      SERVICE_WORKSPACE_ID: api.workspaceId,
      XDG_CONFIG_HOME: isolatedConfigHome,
    };
    const svc = (args: readonly string[]) => runCliInMemory(args, { env });
    const destination = await register("cli");

    const sentTest = await svc([
      "events",
      "send",
      "--type",
      "job.failed",
      "--destination",
      destination.id,
      "--json",
    ]);
    assert.equal(sentTest.status, 0, sentTest.stderr);
    const { data } = JSON.parse(sentTest.stdout) as { data: { id: string; test: boolean } };
    assert.equal(data.test, true);

    answer = { kind: "response", statusCode: 500, body: "boom" };
    await attemptDue();
    await api.store.queue.openCircuit(destination.id, {
      until: new Date(clock.now().getTime() + 600_000),
      opens: 1,
      error: "an attempt failed (last: the receiver answered 500)",
      failCreatedBefore: new Date(0),
    });
    const delivery = await deliveryOf(data.id, destination.id);
    const got = await svc(["deliveries", "get", delivery.id]);
    assert.equal(got.status, 0, got.stderr);
    assert.match(got.stdout, /^state: {8}circuit_open$/m);
    assert.match(
      got.stdout,
      /^next attempt: \S+ \(held by the destination's open circuit until then\)$/m,
    );
    assert.match(got.stdout, /^last error: {3}the receiver answered 500$/m);
    assert.match(got.stdout, /^event: {8}evt_\S+ \(job\.failed, a test event\)$/m);
    const listed = await svc(["deliveries", "list", "--destination", destination.id]);
    assert.equal(listed.status, 0, listed.stderr);
    const [header, row] = listed.stdout.trimEnd().split("\n");
    assert.equal(header?.split(/\s+/).at(-1), "TEST");
    assert.equal(row?.split(/\s+/).at(-1), "true");

    const webhook = await svc(["webhooks", "get", destination.id]);
    assert.equal(webhook.status, 0, webhook.stderr);
    assert.match(webhook.stdout, /circuit:/);
    assert.match(webhook.stdout, /state: +open/);
    assert.match(webhook.stdout, /reason: +an attempt failed \(last: the receiver answered 500\)/);
  });
});
