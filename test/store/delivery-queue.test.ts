import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import type { Clock, Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/** A clock the test moves by hand. */
function manualClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => new Date(now),
    advance: (ms) => {
      now += ms;
    },
  };
}

describe("the delivery queue in the store", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  /** The database's location, for a second store on it (another worker process). */
  let location: string;
  const clock = manualClock(Date.UTC(2026, 10, 21, 12));
  let workspace: string;
  let counter = 0;

  const destination = async (events: string[], active = true): Promise<string> => {
    counter += 1;
    const id = `dst_${counter}`;
    await store.createDestination({
      id,
      workspaceId: workspace,
      url: `https://hooks.test/${counter}`,
      events: events as never,
      secretCiphertext: "sealed",
    });
    if (!active) await store.updateDestination(workspace, id, { active: false });
    return id;
  };
  const publish = (
    type: "job.completed" | "job.failed" | "collection.completed",
  ): Promise<number> => {
    counter += 1;
    return store.publishEvent({
      id: `evt_${counter}`,
      workspaceId: workspace,
      type,
      body: `{"n":${counter}}`,
      createdAt: clock.now(),
    });
  };
  /** Ends every delivery left by earlier tests, including those still under a lease. */
  const drain = async (): Promise<void> => {
    clock.advance(86_400_000);
    for (const claimed of await store.claimDueDeliveries("drain", 1000, 1000)) {
      await store.finishAttempt(claimed.lease, claimed.seq, {
        attempt: null,
        result: { status: "failed" },
        error: "drained",
      });
    }
  };

  before(async () => {
    dir = await tempDir();
    location = await testDatabaseLocation(join(dir.path, "queue"));
    store = await openStore(location, clock);
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });
  // Each test starts with a workspace of its own and nothing due.
  beforeEach(async () => {
    await drain();
    counter += 1;
    workspace = (await store.createWorkspace({ id: `ws_${counter}`, name: "q" })).id;
  });

  it("queues one delivery per active destination subscribed by name or *", async () => {
    const byName = await destination(["job.failed"]);
    const all = await destination(["*"]);
    await destination(["job.completed"]);
    await destination(["job.failed"], false);
    const deleted = await destination(["job.failed"]);
    await store.deleteDestination(workspace, deleted);

    assert.equal(await publish("job.failed"), 2);
    const claimed = await store.claimDueDeliveries("w1", 10, 1000);
    assert.deepEqual(claimed.map((item) => item.destination.id).sort(), [all, byName].sort());
    assert.ok(claimed.every((item) => item.eventType === "job.failed" && item.attempts === 0));
  });

  it("gives a claimed delivery to no one else until its lease expires, then to the next worker", async () => {
    await destination(["*"]);
    await publish("job.completed");
    const [first] = await store.claimDueDeliveries("w1", 10, 5000);
    assert.ok(first);
    assert.deepEqual(await store.claimDueDeliveries("w2", 10, 5000), []);
    clock.advance(5001);
    const [again] = await store.claimDueDeliveries("w2", 10, 5000);
    assert.equal(again?.seq, first.seq, "the abandoned claim is due again");
    const stale = await store.finishAttempt(first.lease, first.seq, {
      attempt: null,
      result: { status: "delivered" },
      error: null,
    });
    assert.equal(stale, false, "the worker whose lease expired cannot report");
    const current = await store.finishAttempt(again.lease, first.seq, {
      attempt: { startedAt: clock.now(), durationMs: 3, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    assert.equal(current, true);
  });

  it("lets only the latest claim report, even when the same worker claimed twice", async () => {
    await destination(["*"]);
    await publish("job.completed");
    const [first] = await store.claimDueDeliveries("w1", 10, 5000);
    assert.ok(first);
    clock.advance(5001);
    const [second] = await store.claimDueDeliveries("w1", 10, 5000);
    assert.equal(second?.seq, first.seq);
    assert.notEqual(second.lease, first.lease);
    const late = await store.finishAttempt(first.lease, first.seq, {
      attempt: null,
      result: { status: "failed" },
      error: "the attempt that overran its lease",
    });
    assert.equal(late, false, "the overrun attempt cannot overwrite the current claim");
    assert.equal(
      await store.finishAttempt(second.lease, second.seq, {
        attempt: null,
        result: { status: "delivered" },
        error: null,
      }),
      true,
    );
  });

  it("claims at most the limit, oldest due first, and nothing that is not yet due", async () => {
    await destination(["*"]);
    for (let index = 0; index < 3; index += 1) await publish("job.completed");
    const firstTwo = await store.claimDueDeliveries("w1", 2, 1000);
    assert.equal(firstTwo.length, 2);
    const [retry] = firstTwo;
    assert.ok(retry);
    await store.finishAttempt(retry.lease, retry.seq, {
      attempt: {
        startedAt: clock.now(),
        durationMs: 5,
        statusCode: 500,
        errorClass: "http_status",
      },
      result: { status: "pending", nextAttemptAt: new Date(clock.now().getTime() + 60_000) },
      error: "the receiver answered 500",
    });
    const rest = await store.claimDueDeliveries("w1", 10, 1000);
    assert.equal(rest.length, 1, "the retried one waits for its time");
    assert.equal((await store.nextDueAt())?.getTime(), clock.now().getTime() + 1000);
  });

  it("shows the latest delivery's status, attempts and last error in last_delivery", async () => {
    const id = await destination(["job.completed"]);
    assert.equal(await store.getLastDelivery(workspace, id), null);
    await publish("job.completed");
    const [claimed] = await store.claimDueDeliveries("w1", 10, 1000);
    assert.ok(claimed);
    const startedAt = clock.now();
    await store.finishAttempt(claimed.lease, claimed.seq, {
      attempt: { startedAt, durationMs: 12, statusCode: 503, errorClass: "http_status" },
      result: { status: "pending", nextAttemptAt: new Date(startedAt.getTime() + 5000) },
      error: "the receiver answered 503",
    });
    const last = await store.getLastDelivery(workspace, id);
    assert.deepEqual(last, {
      status: "pending",
      attempts: 1,
      lastAttemptAt: startedAt,
      event: "job.completed",
      notificationId: claimed.eventId,
      nextAttemptAt: new Date(startedAt.getTime() + 5000),
      lastStatusCode: 503,
      lastError: "the receiver answered 503",
    });
    assert.equal(await store.getLastDelivery("ws_other", id), null, "scoped to the workspace");
  });

  it("never gives one delivery to two concurrent claimers, and misses none", async () => {
    await destination(["*"]);
    const total = 120;
    for (let index = 0; index < total; index += 1) await publish("job.completed");
    const other = await openStore(location, clock);
    try {
      // Two workers (two stores, two connections) claim small batches at once until dry.
      const claimUntilDry = async (claimer: Store, name: string): Promise<number[]> => {
        const seqs: number[] = [];
        for (;;) {
          const batch = await claimer.claimDueDeliveries(name, 7, 60_000);
          if (batch.length === 0) return seqs;
          seqs.push(...batch.map((item) => item.seq));
        }
      };
      const [mine, theirs] = await Promise.all([
        claimUntilDry(store, "w1"),
        claimUntilDry(other, "w2"),
      ]);
      const all = [...mine, ...theirs];
      assert.equal(new Set(all).size, all.length, "no delivery claimed twice");
      assert.equal(all.length, total, "every delivery claimed");
    } finally {
      await other.close();
    }
  });

  it("prunes old events whose deliveries have ended, and keeps those still being retried", async () => {
    await store.pruneEvents(clock.now()); // those of earlier tests
    const id = await destination(["*"]);
    await publish("job.completed");
    await publish("job.failed");
    const claimed = await store.claimDueDeliveries("w1", 10, 1000);
    assert.equal(claimed.length, 2);
    const [done, retrying] = claimed;
    assert.ok(done && retrying);
    await store.finishAttempt(done.lease, done.seq, {
      attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    await store.finishAttempt(retrying.lease, retrying.seq, {
      attempt: {
        startedAt: clock.now(),
        durationMs: 1,
        statusCode: 500,
        errorClass: "http_status",
      },
      result: { status: "pending", nextAttemptAt: new Date(clock.now().getTime() + 60_000) },
      error: "the receiver answered 500",
    });
    assert.equal(await store.pruneEvents(clock.now()), 0, "nothing is older than now");
    clock.advance(1000);
    assert.equal(await store.pruneEvents(clock.now()), 1, "only the delivered event goes");
    const last = await store.getLastDelivery(workspace, id);
    assert.equal(last?.notificationId, retrying.eventId, "the one being retried stays");
    clock.advance(60_000);
    const [again] = await store.claimDueDeliveries("w1", 10, 1000);
    assert.equal(again?.eventId, retrying.eventId, "and is still attempted");
  });

  it("prunes attempt records older than the retention", async () => {
    await store.pruneAttempts(clock.now()); // those of earlier tests
    await destination(["*"]);
    await publish("job.completed");
    const [claimed] = await store.claimDueDeliveries("w1", 10, 1000);
    assert.ok(claimed);
    await store.finishAttempt(claimed.lease, claimed.seq, {
      attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    assert.equal(await store.pruneAttempts(clock.now()), 0);
    assert.equal(await store.pruneAttempts(new Date(clock.now().getTime() + 1)), 1);
  });
});
