import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type {
  AttemptReport,
  DeliveryRecord,
  EventType,
  Page,
  Store,
} from "../../src/interfaces.ts";
import { openDatabase, openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { claimUpTo } from "../support/delivery.ts";
import { tempDir } from "../support/temp.ts";

/** Walks every page of a list, `limit` at a time. */
async function allPages<T>(
  list: (page: { limit: number; cursor: string | null }) => Promise<Page<T>>,
  limit: number,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await list({ limit, cursor });
    assert.ok(page.items.length <= limit);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

const failedAttempt = (at: Date, error = "the receiver answered 503"): AttemptReport => ({
  attempt: {
    startedAt: at,
    durationMs: 12,
    statusCode: 503,
    errorClass: "http_status",
    responseBody: "down for maintenance",
  },
  result: { status: "failed", reason: "retries_exhausted" },
  error,
});

describe("the delivery log in the store (decision 30)", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  let location: string;
  const start = Date.UTC(2026, 10, 25, 12);
  const clock = manualClock(start);
  const workspace = "ws_log";
  const other = "ws_log_other";
  let counter = 0;

  const destination = async (workspaceId = workspace): Promise<string> => {
    counter += 1;
    const id = `dst_log${counter}`;
    await store.destinations.createDestination({
      id,
      workspaceId,
      url: `https://hooks.test/${counter}`,
      events: ["*"],
      secretCiphertext: "sealed",
    });
    return id;
  };
  /** Publishes an event at the clock's time; its id carries that time, as `newEventId`'s do. */
  const publish = async (type: EventType = "job.completed", workspaceId = workspace) => {
    counter += 1;
    const id = `evt_${clock.now().getTime().toString(16).padStart(12, "0")}${counter.toString(16).padStart(16, "0")}`;
    await store.queue.publishEvent({
      id,
      workspaceId,
      type,
      apiVersion: "2026-11-01",
      body: `{"id":"${id}","n":${counter}}`,
      createdAt: clock.now(),
    });
    return id;
  };
  /** Claims every due delivery and records `report` for each. */
  const attemptAll = async (report: (at: Date) => AttemptReport) => {
    for (const claimed of await claimUpTo(store, "worker", 1000, 60_000)) {
      assert.ok(await store.queue.finishAttempt(claimed.lease, claimed.seq, report(clock.now())));
    }
  };
  const deliveriesOf = (eventId: string) =>
    store.log.listDeliveries(workspace, { eventId }, { limit: 100, cursor: null });

  before(async () => {
    dir = await tempDir();
    location = await testDatabaseLocation(join(dir.path, "data"));
    store = await openStore(location, clock);
    await store.credentials.createWorkspace({ id: workspace, name: "log" });
    await store.credentials.createWorkspace({ id: other, name: "other" });
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  it("shows a delivery an older release queued without its workspace once housekeeping adopts it", async () => {
    const target = await destination();
    const eventId = await publish();
    // What a process of the release before migration 000006 writes: no workspace.
    const db = openDatabase(location);
    try {
      await db.execute("UPDATE deliveries SET workspace_id = NULL WHERE event_id = $1", [eventId]);
    } finally {
      await db.close();
    }
    assert.equal((await deliveriesOf(eventId)).items.length, 0, "the log cannot see it yet");
    assert.equal(await store.housekeeping.adoptOlderDeliveries(), 1);
    assert.equal((await deliveriesOf(eventId)).items[0]?.destinationId, target);
    assert.equal(await store.housekeeping.adoptOlderDeliveries(), 0, "nothing left to adopt");
  });

  it("gives each delivery a public id naming its event and its destination", async () => {
    const target = await destination();
    const eventId = await publish();
    const [delivery] = (await deliveriesOf(eventId)).items;
    assert.ok(delivery);
    assert.equal(delivery.id, `dlv_${eventId.slice(4)}_${target.slice(4)}`);
    assert.equal(delivery.id.slice(4, 16), eventId.slice(4, 16), "the event's time first");
    assert.equal((await store.log.getDelivery(workspace, delivery.id))?.id, delivery.id);
    assert.equal(delivery.eventId, eventId);
    assert.equal(delivery.status, "pending");
  });

  it("lists events newest first, page by page, never skipping or repeating one of the same time", async () => {
    const published: string[] = [];
    for (let index = 0; index < 7; index += 1) {
      published.push(await publish(index % 2 === 0 ? "job.completed" : "job.failed"));
      if (index % 3 === 2) clock.advance(1000);
    }
    const listed = await allPages(
      (page) => store.log.listEvents(workspace, { since: new Date(start) }, page),
      2,
    );
    const ids = listed.map((event) => event.id);
    assert.deepEqual(ids.slice(0, 7), [...published].reverse());
    assert.equal(new Set(ids).size, ids.length, "no event twice");
    const failed = await allPages(
      (page) => store.log.listEvents(workspace, { type: "job.failed" }, page),
      2,
    );
    assert.ok(failed.length >= 3 && failed.every((event) => event.type === "job.failed"));
    assert.equal(listed[0]?.apiVersion, "2026-11-01");
  });

  it("takes since as inclusive and until as exclusive", async () => {
    clock.advance(60_000);
    const at = clock.now();
    const first = await publish();
    clock.advance(1);
    const second = await publish();
    const window = await store.log.listEvents(
      workspace,
      { since: at, until: new Date(at.getTime() + 1) },
      { limit: 10, cursor: null },
    );
    assert.deepEqual(
      window.items.map((event) => event.id),
      [first],
    );
    const later = await store.log.listEvents(
      workspace,
      { since: new Date(at.getTime() + 1) },
      { limit: 10, cursor: null },
    );
    assert.deepEqual(
      later.items.map((event) => event.id),
      [second],
    );
  });

  it("gets an event with its body and one delivery per destination, within its workspace only", async () => {
    const second = await destination();
    const eventId = await publish();
    const event = await store.log.getEvent(workspace, eventId);
    assert.ok(event);
    assert.match(event.body, new RegExp(`"id":"${eventId}"`));
    assert.ok(event.deliveries.some((delivery) => delivery.destinationId === second));
    assert.equal(
      new Set(event.deliveries.map((d) => d.destinationId)).size,
      event.deliveries.length,
    );
    assert.equal(await store.log.getEvent(other, eventId), null);
    const [delivery] = event.deliveries;
    assert.ok(delivery);
    assert.equal(await store.log.getDelivery(other, delivery.id), null);
    assert.equal(await store.log.retryDelivery(other, delivery.id), null);
  });

  it("keeps each attempt with its error and the receiver's answer", async () => {
    await attemptAll((at) => failedAttempt(at));
    const eventId = await publish();
    await attemptAll((at) => ({
      ...failedAttempt(at),
      result: { status: "pending", nextAttemptAt: at },
    }));
    clock.advance(10);
    await attemptAll((at) => failedAttempt(at, "connection failed (ECONNREFUSED)"));
    const [record] = (await deliveriesOf(eventId)).items;
    assert.ok(record);
    const delivery = await store.log.getDelivery(workspace, record.id);
    assert.ok(delivery);
    assert.equal(delivery.status, "failed");
    assert.equal(delivery.attempts, 2);
    assert.deepEqual(
      delivery.attemptLog.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.error]),
      [
        [1, 503, "the receiver answered 503"],
        [2, 503, "connection failed (ECONNREFUSED)"],
      ],
    );
    assert.equal(delivery.attemptLog[0]?.responseBody, "down for maintenance");
    assert.equal(delivery.attemptLog[0].durationMs, 12);
  });

  it("filters deliveries by destination, status and time, newest first", async () => {
    const target = await destination();
    clock.advance(60_000);
    const since = clock.now();
    await publish();
    await publish();
    const pending = await allPages(
      (page) =>
        store.log.listDeliveries(
          workspace,
          { destinationId: target, since, status: "pending" },
          page,
        ),
      1,
    );
    assert.equal(pending.length, 2);
    assert.ok(pending.every((d) => d.destinationId === target && d.status === "pending"));
    assert.ok((pending[0]?.createdAt.getTime() ?? 0) >= (pending[1]?.createdAt.getTime() ?? 0));
    await attemptAll((at) => failedAttempt(at));
    const failed = await store.log.listDeliveries(
      workspace,
      { destinationId: target, status: "failed", since },
      { limit: 10, cursor: null },
    );
    assert.equal(failed.items.length, 2);
    const none = await store.log.listDeliveries(
      workspace,
      { destinationId: target, until: since },
      { limit: 10, cursor: null },
    );
    assert.deepEqual(none.items, [], "nothing of the destination before it was made");
    const elsewhere = await store.log.listDeliveries(other, {}, { limit: 10, cursor: null });
    assert.deepEqual(elsewhere.items, [], "another workspace's list holds none of these");
  });

  it("retries a failed delivery: pending, due now, the schedule counted from the retry", async () => {
    await attemptAll((at) => failedAttempt(at));
    const eventId = await publish();
    await attemptAll((at) => failedAttempt(at));
    const [failed] = (await deliveriesOf(eventId)).items;
    assert.equal(failed?.status, "failed");
    clock.advance(5000);
    const outcome = await store.log.retryDelivery(workspace, failed.id);
    assert.equal(outcome?.kind, "queued");
    assert.equal(outcome.delivery.status, "pending");
    assert.equal(outcome.delivery.nextAttemptAt?.getTime(), clock.now().getTime());
    const [claimed] = await claimUpTo(store, "worker", 1000, 60_000);
    assert.equal(claimed?.eventId, eventId);
    assert.equal(claimed.attempts, 1);
    assert.equal(claimed.retryBase, 1, "the next attempt is the schedule's first again");
    assert.equal(claimed.body, `{"id":"${eventId}","n":${counter}}`, "the same body");
  });

  it("refuses to retry a delivery a worker holds, and merges one that waits", async () => {
    const eventId = await publish();
    const [waiting] = (await deliveriesOf(eventId)).items;
    assert.ok(waiting);
    const merged = await store.log.retryDelivery(workspace, waiting.id);
    assert.equal(merged?.kind, "queued", "a waiting one is simply due now");
    const [claimed] = await claimUpTo(store, "worker", 1000, 60_000);
    assert.ok(claimed);
    assert.deepEqual(await store.log.retryDelivery(workspace, waiting.id), { kind: "in_flight" });
    const held = await store.log.getDelivery(workspace, waiting.id);
    assert.equal(held?.inFlight, true);
    assert.equal(held.nextAttemptAt, null);
    await store.queue.finishAttempt(claimed.lease, claimed.seq, failedAttempt(clock.now()));
  });

  it("refuses to retry a delivery whose destination is paused or deleted", async () => {
    const paused = await destination();
    const eventId = await publish();
    await attemptAll((at) => failedAttempt(at));
    const record = (await deliveriesOf(eventId)).items.find((d) => d.destinationId === paused);
    assert.ok(record);
    await store.destinations.updateDestination(workspace, paused, { active: false });
    assert.deepEqual(await store.log.retryDelivery(workspace, record.id), {
      kind: "destination_inactive",
    });
    await store.destinations.deleteDestination(workspace, paused);
    assert.deepEqual(await store.log.retryDelivery(workspace, record.id), {
      kind: "destination_inactive",
    });
  });

  it("recovers a destination's failed deliveries since a time, and only those", async () => {
    await attemptAll((at) => failedAttempt(at));
    const target = await destination();
    clock.advance(60_000);
    const before = await publish();
    await attemptAll((at) => failedAttempt(at));
    clock.advance(60_000);
    const since = clock.now();
    const recovered: string[] = [];
    for (let index = 0; index < 3; index += 1) recovered.push(await publish());
    await attemptAll((at) => failedAttempt(at));
    const stillPending = await publish();
    await store.queue.openCircuit(target, {
      until: new Date(clock.now().getTime() + 3_600_000),
      opens: 1,
      error: "10 attempts in a row failed",
      failCreatedBefore: new Date(0),
    });

    assert.equal(await store.log.recoverDeliveries(target, since), 3);
    const statuses = async (eventId: string): Promise<DeliveryRecord | undefined> =>
      (await deliveriesOf(eventId)).items.find((d) => d.destinationId === target);
    for (const eventId of recovered) assert.equal((await statuses(eventId))?.status, "pending");
    assert.equal((await statuses(before))?.status, "failed", "not before since");
    assert.equal((await statuses(stillPending))?.attempts, 0, "a pending one is not doubled");
    // Decision 40: the recovery goes through the circuit. Half-open now (its next claim is the
    // probe; failed, it opens for the next step), and what it held goes just after the probe.
    const circuit = await store.destinations.getCircuit(workspace, target);
    assert.equal(circuit?.state, "half_open");
    assert.equal(circuit.openUntil?.getTime(), clock.now().getTime());
    assert.equal(circuit.opens, 1, "a failed probe opens it for the next step");
    const held = await statuses(stillPending);
    assert.equal(held?.nextAttemptAt?.getTime(), clock.now().getTime() + 1);
    assert.equal(held.state, "waiting");
    assert.equal(await store.log.recoverDeliveries(target, since), 0, "nothing failed is left");
  });
});
