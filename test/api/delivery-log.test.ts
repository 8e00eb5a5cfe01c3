import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import type { AttemptReport } from "../../src/interfaces.ts";
import { claimUpTo } from "../support/delivery.ts";
import { assertEnvelope } from "../support/envelope.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";

interface DeliveryJson {
  id: string;
  event_id: string;
  destination_id: string;
  event_type: string;
  status: string;
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  in_flight: boolean;
}
interface ListJson<T> {
  data: T[];
  next_cursor: string | null;
}

const failure = (at: Date): AttemptReport => ({
  attempt: {
    startedAt: at,
    durationMs: 40,
    statusCode: 500,
    errorClass: "http_status",
    responseBody: '{"error":"boom"}',
  },
  result: { status: "failed", reason: "retries_exhausted" },
  error: "the receiver answered 500",
});

describe("the delivery log and recovery over the API (CONTRACT.md, decision 30)", () => {
  let api: InProcessApi;
  let destination: string;
  const published: string[] = [];

  const get = <T>(path: string, token?: string) =>
    api
      .call(
        "GET",
        path,
        token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
      )
      .then((response) => {
        assert.equal(response.statusCode, 200, response.body);
        return response.json<T>();
      });
  const publish = async (type: string) => {
    const response = await api.call("POST", "/events", {
      body: { type, data: { object: { id: `job_${published.length}`, note: "ünïcode" } } },
    });
    assert.equal(response.statusCode, 202, response.body);
    const id = response.json<{ id: string }>().id;
    published.push(id);
    return id;
  };
  /** Attempts every due delivery, each failing with a 500. */
  const failAll = async () => {
    for (const claimed of await claimUpTo(api.store, "test-worker", 1000, 60_000)) {
      await api.store.queue.finishAttempt(claimed.lease, claimed.seq, failure(new Date()));
    }
  };
  const deliveryOf = async (eventId: string) => {
    const list = await get<ListJson<DeliveryJson>>(`/deliveries?event=${eventId}`);
    const [delivery] = list.data;
    assert.ok(delivery, `a delivery of ${eventId}`);
    return delivery;
  };

  before(async () => {
    api = await inProcessApi();
    const created = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/log` },
    });
    destination = created.json<{ id: string }>().id;
    for (const type of ["job.completed", "job.failed", "collection.completed", "job.failed"]) {
      await publish(type);
    }
  });
  after(async () => {
    await api.dispose();
  });

  describe("events", () => {
    it("lists the workspace's events newest first, as the notifications' heads", async () => {
      const list = await get<ListJson<Record<string, unknown>>>("/events");
      assert.deepEqual(
        list.data.map((event) => event.id),
        [...published].reverse(),
      );
      assert.deepEqual(Object.keys(list.data[0] ?? {}).sort(), [
        "api_version",
        "created",
        "id",
        "test",
        "type",
      ]);
      assert.equal(list.next_cursor, null);
    });

    it("pages with a cursor, and filters by type", async () => {
      const first = await get<ListJson<{ id: string }>>("/events?limit=3");
      assert.equal(first.data.length, 3);
      assert.ok(first.next_cursor);
      const second = await get<ListJson<{ id: string }>>(
        `/events?limit=3&cursor=${first.next_cursor}`,
      );
      assert.deepEqual(
        [...first.data, ...second.data].map((event) => event.id),
        [...published].reverse(),
      );
      const failed = await get<ListJson<{ type: string }>>("/events?type=job.failed");
      assert.deepEqual(
        failed.data.map((event) => event.type),
        ["job.failed", "job.failed"],
      );
    });

    it("filters by time: since inclusive, until exclusive", async () => {
      const future = new Date(Date.now() + 3_600_000).toISOString();
      assert.deepEqual((await get<ListJson<unknown>>(`/events?since=${future}`)).data, []);
      const past = "2020-01-01T00:00:00Z";
      assert.deepEqual((await get<ListJson<unknown>>(`/events?until=${past}`)).data, []);
      const all = await get<ListJson<unknown>>(`/events?since=${past}&until=${future}`);
      assert.equal(all.data.length, published.length);
    });

    it("gets an event: the notification as sent, with its data and one delivery per destination", async () => {
      const eventId = published[0] ?? "";
      const event = await get<Record<string, unknown> & { deliveries: DeliveryJson[] }>(
        `/events/${eventId}`,
      );
      assert.equal(event.id, eventId);
      assert.equal(event.type, "job.completed");
      assert.equal(event.api_version, "2026-11-01");
      assert.deepEqual(event.data, { object: { id: "job_0", note: "ünïcode" } });
      assert.equal(event.deliveries.length, 1);
      assert.equal(event.deliveries[0]?.destination_id, destination);
      assert.equal(
        event.deliveries[0].id,
        `dlv_${eventId.slice(4)}_${destination.slice(4)}`,
        "a delivery id names its event and destination",
      );
    });

    it("refuses malformed filters with 400, naming the parameter", async () => {
      for (const [query, param] of [
        ["type=job.started", "type"],
        ["since=yesterday", "since"],
        ["since=2026-11-25", "since"],
        ["since=2026-11-26T00:00:00Z&until=2026-11-25T00:00:00Z", "since"],
        ["limit=0", "limit"],
        ["cursor=nope", "cursor"],
        ["colour=red", "colour"],
      ] as const) {
        const response = await api.call("GET", `/events?${query}`);
        const error = assertEnvelope(response, undefined, query);
        assert.ok(["invalid_request", "invalid_cursor"].includes(error.code), query);
        assert.equal(error.param, param, query);
      }
    });

    it("answers 404 not_found for an unknown event, and event_expired for one past the retention", async () => {
      assertEnvelope(await api.call("GET", "/events/evt_unknown"), "not_found");
      // An id made a year ago: its time says it is past the 30 days events are kept.
      const old = `evt_${(Date.now() - 365 * 86_400_000).toString(16).padStart(12, "0")}0123456789abcdef`;
      const response = await api.call("GET", `/events/${old}`);
      assertEnvelope(response, "event_expired");
    });
  });

  describe("deliveries", () => {
    it("lists deliveries with the contract's members, filtered by destination, event and status", async () => {
      const all = await get<ListJson<DeliveryJson>>(`/deliveries?destination=${destination}`);
      assert.equal(all.data.length, published.length);
      const [newest] = all.data;
      assert.ok(newest);
      for (const member of [
        "id",
        "event_id",
        "destination_id",
        "event_type",
        "status",
        "attempts",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "last_status_code",
      ]) {
        assert.ok(member in newest, `a delivery has ${member}`);
      }
      assert.equal(newest.event_id, published.at(-1));
      assert.equal(newest.status, "pending");
      assert.deepEqual((await get<ListJson<unknown>>("/deliveries?status=failed")).data, []);
      assertEnvelope(await api.call("GET", "/deliveries?status=lost"), "invalid_request");
    });

    it("filters deliveries by their event's type, and refuses a type that is not one", async () => {
      const failed = await get<ListJson<DeliveryJson>>("/deliveries?type=job.failed");
      assert.equal(failed.data.length, 2);
      assert.ok(failed.data.every((delivery) => delivery.event_type === "job.failed"));
      const one = await get<ListJson<DeliveryJson>>("/deliveries?type=job.failed&limit=1");
      assert.equal(one.data.length, 1);
      assert.ok(one.next_cursor !== null, "pages as any list");
      const rest = await get<ListJson<DeliveryJson>>(
        `/deliveries?type=job.failed&limit=1&cursor=${encodeURIComponent(one.next_cursor)}`,
      );
      assert.equal(rest.data[0]?.event_type, "job.failed");
      assertEnvelope(await api.call("GET", "/deliveries?type=job.lost"), "invalid_request");
    });

    it("gets a delivery with each attempt: time, duration, status code, error and the answer", async () => {
      await failAll();
      const delivery = await deliveryOf(published[1] ?? "");
      const detail = await get<{
        status: string;
        attempts: {
          attempt: number;
          attempted_at: string;
          duration_ms: number;
          status_code: number;
          error: string;
          response_body: string;
        }[];
        attempt_count: number;
      }>(`/deliveries/${delivery.id}`);
      assert.equal(detail.status, "failed");
      assert.equal(detail.attempt_count, 1);
      assert.equal(detail.attempts.length, 1);
      const [attempt] = detail.attempts;
      assert.equal(attempt?.attempt, 1);
      assert.equal(attempt.status_code, 500);
      assert.equal(attempt.duration_ms, 40);
      assert.equal(attempt.error, "the receiver answered 500");
      assert.equal(attempt.response_body, '{"error":"boom"}');
      assert.ok(!Number.isNaN(Date.parse(attempt.attempted_at)));
      const failed = await get<ListJson<DeliveryJson>>("/deliveries?status=failed");
      assert.equal(failed.data.length, published.length);
    });

    it("retries a failed delivery: 202, pending and due now", async () => {
      const delivery = await deliveryOf(published[2] ?? "");
      const response = await api.call("POST", `/deliveries/${delivery.id}/retry`);
      assert.equal(response.statusCode, 202, response.body);
      const retried = response.json<DeliveryJson>();
      assert.equal(retried.id, delivery.id);
      assert.equal(retried.status, "pending");
      assert.ok(retried.next_attempt_at !== null);
      assert.equal(retried.attempts, 1, "the attempts made are kept");
    });

    it("refuses to retry a delivery a worker holds: 409 delivery_in_flight, Retry-After 5", async () => {
      const delivery = await deliveryOf(published[2] ?? "");
      const [claimed] = await claimUpTo(api.store, "test-worker", 1000, 60_000);
      assert.ok(claimed);
      const response = await api.call("POST", `/deliveries/${delivery.id}/retry`);
      assertEnvelope(response, "delivery_in_flight");
      assert.equal(response.headers["retry-after"], "5");
      assert.equal((await deliveryOf(published[2] ?? "")).in_flight, true);
      await api.store.queue.finishAttempt(claimed.lease, claimed.seq, failure(new Date()));
    });

    it("answers 404 for unknown, malformed and expired delivery ids", async () => {
      assertEnvelope(await api.call("GET", "/deliveries/dlv_unknown"), "not_found");
      assertEnvelope(await api.call("POST", "/deliveries/dlv_unknown/retry"), "not_found");
      assertEnvelope(await api.call("GET", "/deliveries/%00"), "not_found");
      const time = (Date.now() - 365 * 86_400_000).toString(16).padStart(12, "0");
      const old = `dlv_${time}0123456789abcdef_${destination.slice(4)}`;
      assertEnvelope(await api.call("GET", `/deliveries/${old}`), "delivery_expired");
      assertEnvelope(await api.call("POST", `/deliveries/${old}/retry`), "delivery_expired");
    });
  });

  describe("recovery", () => {
    it("requeues the destination's failed deliveries since a time: 202 with how many", async () => {
      const response = await api.call("POST", `/webhooks/${destination}/recover`, {
        body: { since: "2020-01-01T00:00:00Z" },
      });
      assert.equal(response.statusCode, 202, response.body);
      assert.deepEqual(response.json(), { queued: published.length });
      const failed = await get<ListJson<unknown>>("/deliveries?status=failed");
      assert.deepEqual(failed.data, []);
      const again = await api.call("POST", `/webhooks/${destination}/recover`, {
        body: { since: "2020-01-01T00:00:00Z" },
      });
      assert.deepEqual(again.json(), { queued: 0 }, "nothing failed is left: nothing is doubled");
    });

    it("refuses a since that is not a time, an unknown destination, and a paused one", async () => {
      const bad = await api.call("POST", `/webhooks/${destination}/recover`, {
        body: { since: "2h" },
      });
      assert.equal(assertEnvelope(bad, "invalid_request").param, "since");
      assertEnvelope(
        await api.call("POST", `/webhooks/${destination}/recover`, { body: {} }),
        "invalid_request",
      );
      assertEnvelope(
        await api.call("POST", "/webhooks/dst_unknown/recover", {
          body: { since: "2020-01-01T00:00:00Z" },
        }),
        "not_found",
      );
      await api.call("PATCH", `/webhooks/${destination}`, { body: { active: false } });
      assertEnvelope(
        await api.call("POST", `/webhooks/${destination}/recover`, {
          body: { since: "2020-01-01T00:00:00Z" },
        }),
        "destination_inactive",
      );
      const delivery = await deliveryOf(published[0] ?? "");
      await failAll();
      assertEnvelope(
        await api.call("POST", `/deliveries/${delivery.id}/retry`),
        "destination_inactive",
      );
      await api.call("PATCH", `/webhooks/${destination}`, { body: { active: true } });
    });
  });

  describe("scopes and workspaces", () => {
    it("reading needs events:read and sending again events:write", async () => {
      const webhooksOnly = await api.key(["webhooks:write"]);
      const reader = await api.key(["events:read"]);
      const writer = await api.key(["events:write"]);
      const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
      const delivery = await deliveryOf(published[0] ?? "");
      for (const path of [
        "/events",
        `/events/${published[0]}`,
        "/deliveries",
        `/deliveries/${delivery.id}`,
      ]) {
        assertEnvelope(await api.call("GET", path, as(webhooksOnly)), "insufficient_scope", path);
        assert.equal((await api.call("GET", path, as(reader))).statusCode, 200, path);
        assert.equal(
          (await api.call("GET", path, as(writer))).statusCode,
          200,
          "write implies read",
        );
      }
      assertEnvelope(
        await api.call("POST", `/deliveries/${delivery.id}/retry`, as(reader)),
        "insufficient_scope",
      );
      const recover = { ...as(reader), body: { since: "2020-01-01T00:00:00Z" } };
      assertEnvelope(
        await api.call("POST", `/webhooks/${destination}/recover`, recover),
        "insufficient_scope",
      );
      assert.equal(
        (await api.call("POST", `/deliveries/${delivery.id}/retry`, as(writer))).statusCode,
        202,
      );
    });

    it("answers 404 for another workspace's event, delivery and destination", async () => {
      const otherToken = newApiToken();
      await api.store.credentials.createWorkspace({ id: "ws_other", name: "other" });
      await api.store.credentials.createApiKey({
        id: "key_other",
        workspaceId: "ws_other",
        tokenHash: hashToken(otherToken),
        scopes: ["events:write", "webhooks:write"],
      });
      const delivery = await deliveryOf(published[0] ?? "");
      const asOther = { headers: { authorization: `Bearer ${otherToken}` } };
      const base = "/v1/workspaces/ws_other";
      assertEnvelope(await api.call("GET", `${base}/events/${published[0]}`, asOther), "not_found");
      assertEnvelope(
        await api.call("GET", `${base}/deliveries/${delivery.id}`, asOther),
        "not_found",
      );
      assertEnvelope(
        await api.call("POST", `${base}/deliveries/${delivery.id}/retry`, asOther),
        "not_found",
      );
      const recover = { ...asOther, body: { since: "2020-01-01T00:00:00Z" } };
      assertEnvelope(
        await api.call("POST", `${base}/webhooks/${destination}/recover`, recover),
        "not_found",
      );
      const lists = await api.call("GET", `${base}/deliveries`, asOther);
      assert.deepEqual(lists.json<ListJson<unknown>>().data, []);
    });
  });
});
