import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { deliveryId, parseDeliveryId } from "../../src/crypto/tokens.ts";
import type { AttemptReport, EventType, Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { claimUpTo } from "../support/delivery.ts";
import { tempDir } from "../support/temp.ts";

const lease = { leaseMs: 60_000, inFlight: 16 };

/**
 * Listen sessions in the store (decision 34), on the run's engine: destinations of another
 * kind, whose deliveries only their stream's claim takes.
 */
describe("listen sessions in the store", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  const clock = manualClock(Date.UTC(2026, 10, 25, 12));
  let workspace: string;
  let counter = 0;

  const open = async (name: string | null = null, events: string[] = ["*"], limit = 20) => {
    counter += 1;
    const opened = await store.listen.open(
      {
        id: `lsn_${counter.toString(16).padStart(24, "0")}`,
        workspaceId: workspace,
        name,
        events: events as never,
        secretCiphertext: "sealed",
      },
      limit,
    );
    assert.ok(opened, "within the limit");
    return opened;
  };
  const publish = async (type: EventType = "job.completed"): Promise<string> => {
    counter += 1;
    const id = `evt_${counter.toString(16).padStart(28, "0")}`;
    await store.queue.publishEvent({
      id,
      workspaceId: workspace,
      type,
      apiVersion: "2026-11-01",
      body: `{"n":${counter}}`,
      createdAt: clock.now(),
    });
    return id;
  };
  const answered = (statusCode: number, result: AttemptReport["result"]): AttemptReport => ({
    attempt: { startedAt: clock.now(), durationMs: 3, statusCode, errorClass: null },
    result,
    error: statusCode < 300 ? null : `the receiver answered ${statusCode}`,
  });
  const claimed = async (id: string, token: string, inFlight = lease.inFlight) => {
    const claim = await store.listen.claim(id, token, { ...lease, inFlight });
    assert.equal(claim.kind, "claimed");
    return claim.deliveries;
  };

  before(async () => {
    dir = await tempDir();
    store = await openStore(await testDatabaseLocation(dir.path), clock);
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });
  beforeEach(async () => {
    clock.advance(86_400_000);
    counter += 1000;
    workspace = (await store.credentials.createWorkspace({ id: `ws_${counter}`, name: "l" })).id;
  });

  it("a session's deliveries are never a worker's, nor due for one, nor a destination", async () => {
    const { session } = await open();
    await publish();
    await publish();
    assert.deepEqual(await claimUpTo(store, "worker", 100, 60_000), []);
    assert.equal(await store.queue.nextDueAt(), null, "no worker wakes for them");
    assert.equal((await store.queue.backlog()).pending, 2, "they are pending all the same");
    assert.equal(
      (await store.destinations.listDestinations(workspace, { limit: 10, cursor: null })).items
        .length,
      0,
    );
    assert.equal(await store.destinations.getDestination(workspace, session.id), null);
    assert.equal(await store.destinations.deleteDestination(workspace, session.id), false);
    assert.equal((await store.listen.get(workspace, session.id))?.pending, 2);
  });

  it("its stream claims them in publish order, at most inFlight at once, and reports like a worker", async () => {
    const { session } = await open(null, ["job.completed"]);
    const events = [await publish(), await publish("job.failed"), await publish()];
    assert.equal(await store.listen.takeOver(session.id, "stream_a"), true);
    const first = await claimed(session.id, "stream_a", 1);
    assert.deepEqual(
      first.map((each) => each.eventId),
      [events[0]],
    );
    assert.deepEqual(await claimed(session.id, "stream_a", 1), [], "one in flight is the most");
    const [delivery] = first;
    assert.ok(delivery);
    const reported = await store.listen.report(session, delivery.eventId, delivery.lease, () =>
      answered(200, { status: "delivered" }),
    );
    assert.deepEqual(reported, { kind: "recorded" });
    const again = await store.listen.report(session, delivery.eventId, delivery.lease, () =>
      answered(200, { status: "delivered" }),
    );
    assert.deepEqual(again, { kind: "claim_expired" }, "a claim reports once");
    const elsewhere = await store.listen.report(
      { workspaceId: "ws_other", id: session.id },
      delivery.eventId,
      delivery.lease,
      () => answered(200, { status: "delivered" }),
    );
    assert.deepEqual(elsewhere, { kind: "not_found" }, "another workspace's result is refused");
    const next = await claimed(session.id, "stream_a");
    assert.deepEqual(
      next.map((each) => each.eventId),
      [events[2]],
    );
    const record = await store.log.getDelivery(workspace, deliveryId(delivery.eventId, session.id));
    assert.equal(record?.status, "delivered");
    assert.deepEqual(
      record.attemptLog.map((attempt) => attempt.statusCode),
      [200],
    );
  });

  it("a failed local answer waits for its retry in the session's own time", async () => {
    const { session } = await open();
    await publish();
    await store.listen.takeOver(session.id, "stream_a");
    const [delivery] = await claimed(session.id, "stream_a");
    assert.ok(delivery);
    const retryAt = new Date(clock.now().getTime() + 5000);
    await store.listen.report(session, delivery.eventId, delivery.lease, () =>
      answered(500, { status: "pending", nextAttemptAt: retryAt }),
    );
    assert.deepEqual(await store.listen.nextDueAt(session.id), retryAt);
    assert.equal(await store.queue.nextDueAt(), null, "still no worker's");
    assert.deepEqual(await claimed(session.id, "stream_a"), [], "not before its time");
    clock.advance(5000);
    const [retried] = await claimed(session.id, "stream_a");
    assert.equal(retried?.attempts, 1);
    const listed = await store.log.getDelivery(workspace, deliveryId(delivery.eventId, session.id));
    assert.equal(listed?.inFlight, true);
  });

  it("a new stream takes the session: what the old one held comes again, and the old one is told", async () => {
    const { session } = await open();
    await publish();
    await store.listen.takeOver(session.id, "stream_old");
    const [lost] = await claimed(session.id, "stream_old");
    assert.ok(lost);
    await store.listen.takeOver(session.id, "stream_new");
    assert.deepEqual(await store.listen.claim(session.id, "stream_old", lease), {
      kind: "replaced",
    });
    const [again] = await claimed(session.id, "stream_new");
    assert.equal(again?.eventId, lost.eventId);
    const late = await store.listen.report(session, lost.eventId, lost.lease, () =>
      answered(200, { status: "delivered" }),
    );
    assert.deepEqual(late, { kind: "claim_expired" }, "the old claim cannot report");
  });

  it("a stream not heard of for three minutes is taken for gone: not connected, and the session expires", async () => {
    const { session } = await open("crashed");
    await store.listen.takeOver(session.id, "stream_dead");
    assert.equal((await store.listen.get(workspace, session.id))?.connected, true);
    clock.advance(180_001);
    assert.equal((await store.listen.get(workspace, session.id))?.connected, false);
    await store.housekeeping.expireListenSessions(new Date(clock.now().getTime() - 60_000));
    assert.equal(await store.listen.get(workspace, session.id), null);
  });

  it("a claim with no room says so, so that its stream does not look again at once", async () => {
    const { session } = await open();
    await publish();
    await publish();
    await store.listen.takeOver(session.id, "stream_a");
    const first = await store.listen.claim(session.id, "stream_a", { ...lease, inFlight: 1 });
    assert.deepEqual(first.kind === "claimed" && first.full, true);
    const second = await store.listen.claim(session.id, "stream_a", { ...lease, inFlight: 1 });
    assert.deepEqual(second, { kind: "claimed", deliveries: [], full: true });
  });

  it("a lease that runs out makes its delivery due again (the holding process died)", async () => {
    const { session } = await open();
    await publish();
    await store.listen.takeOver(session.id, "stream_a");
    const [first] = await claimed(session.id, "stream_a");
    assert.deepEqual(await claimed(session.id, "stream_a"), []);
    clock.advance(lease.leaseMs);
    const [again] = await claimed(session.id, "stream_a");
    assert.equal(again?.eventId, first?.eventId);
  });

  it("a name resumes its live session with new event types; the session keeps its place", async () => {
    const created = await open("laptop", ["job.failed"]);
    assert.equal(created.created, true);
    await publish("job.failed");
    const resumed = await open("laptop", ["job.completed"]);
    assert.equal(resumed.created, false);
    assert.equal(resumed.session.id, created.session.id);
    assert.deepEqual(resumed.session.events, ["job.completed"]);
    assert.equal(resumed.session.pending, 1, "what it missed is kept");
    await publish("job.failed");
    assert.equal((await store.listen.get(workspace, created.session.id))?.pending, 1);
    const other = await open("desktop");
    assert.notEqual(other.session.id, created.session.id);
    assert.deepEqual(
      (await store.listen.list(workspace, 10)).map((each) => each.name),
      ["desktop", "laptop"],
    );
  });

  it("ending a session, or its expiry, ends what it still waited for", async () => {
    const ended = await open();
    const expiring = await open("old");
    const event = await publish();
    assert.equal(await store.listen.end(workspace, ended.session.id, "listen session ended"), true);
    assert.equal(await store.listen.end(workspace, ended.session.id, "again"), false);
    const endedDelivery = await store.log.getDelivery(
      workspace,
      deliveryId(event, ended.session.id),
    );
    assert.equal(endedDelivery?.status, "failed");
    assert.equal(endedDelivery.lastError, "listen session ended");

    clock.advance(3_600_000);
    // Sessions of earlier tests, a day older and more, may go here too.
    await store.housekeeping.expireListenSessions(new Date(clock.now().getTime() - 7_200_000));
    assert.ok(await store.listen.get(workspace, expiring.session.id), "seen an hour ago: kept");
    assert.ok((await store.housekeeping.expireListenSessions(clock.now())) >= 1);
    assert.equal(await store.listen.get(workspace, expiring.session.id), null);
    const expired = await store.log.getDelivery(workspace, deliveryId(event, expiring.session.id));
    assert.equal(expired?.status, "failed");
    assert.equal(expired.lastError, "listen session expired");
    assert.equal(await store.queue.nextDueAt(), null);
  });

  it("a workspace's live sessions are bounded; resuming one by name is not a new one", async () => {
    await open("a");
    await open(null);
    const refused = await store.listen.open(
      {
        id: "lsn_refused",
        workspaceId: workspace,
        name: null,
        events: ["*"],
        secretCiphertext: "s",
      },
      2,
    );
    assert.equal(refused, null);
    assert.equal((await open("a", ["*"], 2)).created, false);
  });

  it("an unnamed session goes sooner than a named one", async () => {
    const unnamed = await open(null);
    const named = await open("kept");
    clock.advance(3_600_000 + 1);
    const now = clock.now().getTime();
    await store.housekeeping.expireListenSessions(
      new Date(now - 72 * 3_600_000),
      new Date(now - 3_600_000),
    );
    assert.equal(await store.listen.get(workspace, unnamed.session.id), null);
    assert.ok(await store.listen.get(workspace, named.session.id));
  });

  it("a retry by a user makes it due for its stream, not for a worker", async () => {
    const { session } = await open();
    const event = await publish();
    await store.listen.end(workspace, session.id, "x");
    const { session: live } = await open();
    await store.listen.takeOver(live.id, "stream_a");
    const second = await publish();
    const [delivery] = await claimed(live.id, "stream_a");
    await store.listen.report(live, second, delivery?.lease ?? "", () =>
      answered(500, { status: "failed", reason: "retries_exhausted" }),
    );
    const outcome = await store.log.retryDelivery(workspace, deliveryId(second, live.id));
    assert.equal(outcome?.kind, "queued");
    assert.equal(await store.queue.nextDueAt(), null);
    const [retried] = await claimed(live.id, "stream_a");
    assert.equal(retried?.eventId, second);
    assert.ok(event);
  });

  it("delivery ids name a session's deliveries both ways", () => {
    const id = deliveryId("evt_01a1fea3869b5b1f7c0d9e2a4b36", "lsn_5f0c2a9e81b34d7c6a1e0f93");
    assert.equal(id, "dlv_01a1fea3869b5b1f7c0d9e2a4b36_lsn5f0c2a9e81b34d7c6a1e0f93");
    assert.deepEqual(parseDeliveryId(id), {
      eventId: "evt_01a1fea3869b5b1f7c0d9e2a4b36",
      destinationId: "lsn_5f0c2a9e81b34d7c6a1e0f93",
    });
    assert.equal(
      parseDeliveryId("dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93")?.destinationId,
      "dst_5f0c2a9e81b34d7c6a1e0f93",
    );
  });
});
