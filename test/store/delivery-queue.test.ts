import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import type {
  AttemptReport,
  ClaimedDelivery,
  DeliveryTaker,
  EventType,
  NewEvent,
  Store,
} from "../../src/interfaces.ts";
import { deliveryId } from "../../src/crypto/tokens.ts";
import { AppError } from "../../src/errors.ts";
import { openDatabase, openStore } from "../../src/store/open-store.ts";
import { selectClaimed } from "../../src/store/sql/deliveries.ts";
import { queryTestDatabase, testDatabaseLocation } from "../support/database.ts";
import { manualClock } from "../support/clock.ts";
import { claimUpTo } from "../support/delivery.ts";
import { tempDir } from "../support/temp.ts";

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
    await store.destinations.createDestination({
      id,
      workspaceId: workspace,
      url: `https://hooks.test/${counter}`,
      events: events as never,
      secretCiphertext: "sealed",
    });
    if (!active) await store.destinations.updateDestination(workspace, id, { active: false });
    return id;
  };
  /** A new event of `type` (in the test's workspace unless told), not yet published. */
  const newEvent = (type: EventType, workspaceId = workspace): NewEvent => {
    counter += 1;
    return {
      id: `evt_${counter}`,
      workspaceId,
      type,
      apiVersion: "2026-11-01",
      body: `{"n":${counter}}`,
      createdAt: clock.now(),
    };
  };
  const publish = (type: EventType): Promise<number> => store.queue.publishEvent(newEvent(type));
  /** Ends every delivery left by earlier tests, including those still under a lease. */
  const drain = async (): Promise<void> => {
    clock.advance(86_400_000);
    for (const claimed of await claimUpTo(store, "drain", 1000, 1000)) {
      await store.queue.finishAttempt(claimed.lease, claimed.seq, {
        attempt: null,
        result: { status: "failed", reason: "retries_exhausted" },
        error: "drained",
      });
    }
  };

  /** The attempt rows of a delivery, straight from the database, in attempt order. */
  const attemptRows = async (
    seq: number,
  ): Promise<{ attempt: number; status_code: number | null; error_class: string | null }[]> => {
    const rows = await queryTestDatabase<{
      attempt: number | string;
      status_code: number | string | null;
      error_class: string | null;
    }>(
      join(dir.path, "queue"),
      // The first attempt is kept in the delivery's row, later ones as rows (decision 53).
      `SELECT 1 AS attempt, first_status_code AS status_code, first_error_class AS error_class
       FROM deliveries WHERE seq = $1 AND first_started_at IS NOT NULL
       UNION ALL
       SELECT attempt, status_code, error_class FROM delivery_attempts
       WHERE delivery_seq = $1 ORDER BY attempt`,
      [seq],
    );
    return rows.map((row) => ({
      attempt: Number(row.attempt),
      status_code: row.status_code === null ? null : Number(row.status_code),
      error_class: row.error_class,
    }));
  };
  /** A report of an attempt answered `statusCode` (null: no answer), made now. */
  const attempted = (
    statusCode: number | null,
    result: AttemptReport["result"],
    error: string | null = null,
  ): AttemptReport => ({
    attempt: {
      startedAt: clock.now(),
      durationMs: 4,
      statusCode,
      errorClass: statusCode === null ? "timeout" : statusCode < 300 ? null : "http_status",
    },
    result,
    error,
  });

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
    workspace = (await store.credentials.createWorkspace({ id: `ws_${counter}`, name: "q" })).id;
  });

  it("queues one delivery per active destination subscribed by name or *", async () => {
    const byName = await destination(["job.failed"]);
    const all = await destination(["*"]);
    await destination(["job.completed"]);
    await destination(["job.failed"], false);
    const deleted = await destination(["job.failed"]);
    await store.destinations.deleteDestination(workspace, deleted);

    assert.equal(await publish("job.failed"), 2);
    const claimed = await claimUpTo(store, "w1", 10, 1000);
    assert.deepEqual(claimed.map((item) => item.destination.id).sort(), [all, byName].sort());
    assert.ok(claimed.every((item) => item.eventType === "job.failed" && item.attempts === 0));
  });

  it("gives a claimed delivery to no one else until its lease expires, then to the next worker", async () => {
    await destination(["*"]);
    await publish("job.completed");
    const [first] = await claimUpTo(store, "w1", 10, 5000);
    assert.ok(first);
    assert.deepEqual(await claimUpTo(store, "w2", 10, 5000), []);
    clock.advance(5001);
    const [again] = await claimUpTo(store, "w2", 10, 5000);
    assert.equal(again?.seq, first.seq, "the abandoned claim is due again");
    const stale = await store.queue.finishAttempt(first.lease, first.seq, {
      attempt: null,
      result: { status: "delivered" },
      error: null,
    });
    assert.equal(stale, false, "the worker whose lease expired cannot report");
    const current = await store.queue.finishAttempt(again.lease, first.seq, {
      attempt: { startedAt: clock.now(), durationMs: 3, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    assert.equal(current, true);
  });

  it("lets only the latest claim report, even when the same worker claimed twice", async () => {
    await destination(["*"]);
    await publish("job.completed");
    const [first] = await claimUpTo(store, "w1", 10, 5000);
    assert.ok(first);
    clock.advance(5001);
    const [second] = await claimUpTo(store, "w1", 10, 5000);
    assert.equal(second?.seq, first.seq);
    assert.notEqual(second.lease, first.lease);
    const late = await store.queue.finishAttempt(first.lease, first.seq, {
      attempt: null,
      result: { status: "failed", reason: "retries_exhausted" },
      error: "the attempt that overran its lease",
    });
    assert.equal(late, false, "the overrun attempt cannot overwrite the current claim");
    assert.equal(
      await store.queue.finishAttempt(second.lease, second.seq, {
        attempt: null,
        result: { status: "delivered" },
        error: null,
      }),
      true,
    );
  });

  /** The lease rows (decision 58), by lease: their end and their deliveries' seqs. */
  const leaseRows = async (): Promise<Map<string, { expiresAt: number; seqs: number[] }>> => {
    const rows = await queryTestDatabase<{
      lease: string;
      expires_at: number | string;
      seqs: string;
    }>(join(dir.path, "queue"), "SELECT lease, expires_at, seqs FROM delivery_leases");
    return new Map(
      rows.map((row) => [
        row.lease,
        { expiresAt: Number(row.expires_at), seqs: JSON.parse(row.seqs) as number[] },
      ]),
    );
  };
  const statusOf = async (seq: number): Promise<string | undefined> => {
    const [row] = await queryTestDatabase<{ status: string }>(
      join(dir.path, "queue"),
      "SELECT status FROM deliveries WHERE seq = $1",
      [seq],
    );
    return row?.status;
  };

  /** Reports on `delivery` under its claim: delivered (a 200), or as `result` says after a 503. */
  const report = (
    delivery: ClaimedDelivery,
    result: AttemptReport["result"] = { status: "delivered" },
  ): Promise<boolean> =>
    store.queue.finishAttempt(
      delivery.lease,
      delivery.seq,
      attempted(result.status === "delivered" ? 200 : 503, result),
    );
  const retryIn = (ms: number): AttemptReport["result"] => ({
    status: "pending",
    nextAttemptAt: new Date(clock.now().getTime() + ms),
  });

  it("keeps a claim's lease as a row until every delivery of it is reported or given back", async () => {
    await destination(["*"]);
    for (let published = 0; published < 3; published += 1) await publish("job.completed");
    const claimed = await claimUpTo(store, "w1", 10, 5000);
    assert.equal(claimed.length, 3);
    const [first, second, third] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery];
    assert.deepEqual(
      await leaseRows(),
      new Map([
        [
          first.lease,
          {
            expiresAt: clock.now().getTime() + 5000,
            seqs: claimed.map((item) => item.seq),
          },
        ],
      ]),
    );
    await report(first);
    await report(second, retryIn(60_000));
    assert.equal((await leaseRows()).size, 1, "one delivery of it is still out");
    assert.equal(
      (await store.queue.nextDueAt())?.getTime(),
      clock.now().getTime() + 5000,
      "a sleeping worker wakes at the lease's end, when what is unreported is due again",
    );
    await store.queue.releaseDeliveries(third.lease, [third.seq], null);
    assert.deepEqual(await leaseRows(), new Map(), "the last one given back, its row goes");
    assert.equal(
      (await store.queue.nextDueAt())?.getTime(),
      clock.now().getTime(),
      "the one given back is due now",
    );
    assert.equal((await store.queue.backlog()).pending, 2, "the retry and the one given back");
  });

  it("gives back a lease that ran out and claims its delivery in due order with others due", async () => {
    await destination(["*"]);
    await publish("job.completed");
    const [lost] = await claimUpTo(store, "w1", 10, 5000);
    assert.ok(lost);
    clock.advance(1000);
    await publish("job.completed");
    await publish("job.completed");
    clock.advance(4000);
    // Due now: the two published a second in (since then), and the lost one (since its
    // lease's end, now). Room for two: the two older ones; the lost one is given back.
    const first = await claimUpTo(store, "w2", 2, 5000);
    assert.equal(first.length, 2);
    assert.ok(
      first.every((claimed) => claimed.seq > lost.seq),
      "the two due longest",
    );
    assert.deepEqual([...(await leaseRows()).keys()], [first[0]?.lease], "the lost lease is gone");
    const rest = await claimUpTo(store, "w3", 10, 5000);
    assert.deepEqual(
      rest.map((claimed) => claimed.seq),
      [lost.seq],
      "the given-back one, once",
    );
    assert.deepEqual(await claimUpTo(store, "w4", 10, 5000), []);
    for (const claimed of [...first, ...rest]) assert.equal(await report(claimed), true);
  });

  it("gives back at a lease's end only what is still pending under it, once", async () => {
    await destination(["*"]);
    for (let published = 0; published < 4; published += 1) await publish("job.completed");
    const claimed = await claimUpTo(store, "w1", 10, 5000);
    const [delivered, failed, retried, lost] = claimed as [
      ClaimedDelivery,
      ClaimedDelivery,
      ClaimedDelivery,
      ClaimedDelivery,
    ];
    await report(delivered);
    await report(failed, { status: "failed", reason: "destination_refused" });
    await report(retried, retryIn(60_000));
    assert.equal((await store.queue.backlog()).pending, 2, "the retry and the one still claimed");
    assert.deepEqual(await claimUpTo(store, "w2", 10, 5000), [], "before the lease's end: nothing");
    clock.advance(5000);
    const again = await claimUpTo(store, "w2", 10, 5000);
    assert.deepEqual(
      again.map((item) => item.seq),
      [lost.seq],
      "only the unreported one; the ended ones keep their ends, the retry its time",
    );
    assert.equal(await statusOf(delivered.seq), "delivered");
    assert.equal(await statusOf(failed.seq), "failed");
    assert.deepEqual(
      [...(await leaseRows()).keys()],
      [again[0]?.lease],
      "the old lease's row is gone",
    );
    assert.equal(await report(lost), false, "the lost lease's late report does not count");
    const [retaken] = again as [ClaimedDelivery];
    await report(retaken);
    assert.deepEqual(await leaseRows(), new Map(), "every lease reported: no row left");
    clock.advance(60_000);
    const retry = await claimUpTo(store, "w3", 10, 5000);
    assert.deepEqual(
      retry.map((item) => item.seq),
      [retried.seq],
    );
  });

  /** Makes the queue's next statement or transaction fail with `error`, once. */
  const failNextWrite = (error: Error): void => {
    const queue = store.queue as unknown as { db: object };
    const real = queue.db;
    queue.db = new Proxy(real, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== "function") return value;
        if (name !== "query" && name !== "transaction") {
          return (value as (...args: unknown[]) => unknown).bind(target);
        }
        return () => {
          queue.db = real;
          return Promise.reject(error);
        };
      },
    });
  };

  for (const [kind, error, retried] of [
    ["tried again", new AppError("service_unavailable", "the database is away"), true],
    ["given up", new Error("deadlock detected"), false],
  ] as const) {
    it(`keeps a lease's row while a report that failed to be written (${kind}) is outstanding`, async () => {
      await destination(["*"]);
      await publish("job.completed");
      await publish("job.completed");
      const [first, second] = (await claimUpTo(store, "w1", 10, 5000)) as [
        ClaimedDelivery,
        ClaimedDelivery,
      ];
      failNextWrite(error);
      await assert.rejects(
        store.queue.finishAttempt(first.lease, first.seq, attempted(200, { status: "delivered" })),
      );
      if (retried) {
        const again = await report(first);
        assert.equal(again, true);
      } else {
        await report(second);
      }
      assert.equal((await leaseRows()).size, 1, "one delivery of the claim is still out");
      clock.advance(5000);
      const back = await claimUpTo(store, "w2", 10, 5000);
      assert.deepEqual(
        back.map((item) => item.seq),
        [retried ? second.seq : first.seq],
        "the one never written is given back at the lease's end",
      );
    });
  }

  it("claims at most the limit, oldest due first, and nothing that is not yet due", async () => {
    await destination(["*"]);
    for (let index = 0; index < 3; index += 1) await publish("job.completed");
    const firstTwo = await claimUpTo(store, "w1", 2, 1000);
    assert.equal(firstTwo.length, 2);
    const [retry] = firstTwo;
    assert.ok(retry);
    await store.queue.finishAttempt(retry.lease, retry.seq, {
      attempt: {
        startedAt: clock.now(),
        durationMs: 5,
        statusCode: 500,
        errorClass: "http_status",
      },
      result: { status: "pending", nextAttemptAt: new Date(clock.now().getTime() + 60_000) },
      error: "the receiver answered 500",
    });
    const rest = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(rest.length, 1, "the retried one waits for its time");
    assert.equal((await store.queue.nextDueAt())?.getTime(), clock.now().getTime() + 1000);
  });

  it("shows the latest delivery's status, attempts and last error in last_delivery", async () => {
    const id = await destination(["job.completed"]);
    assert.equal(await store.destinations.getLastDelivery(workspace, id), null);
    await publish("job.completed");
    const [claimed] = await claimUpTo(store, "w1", 10, 1000);
    assert.ok(claimed);
    const startedAt = clock.now();
    await store.queue.finishAttempt(claimed.lease, claimed.seq, {
      attempt: { startedAt, durationMs: 12, statusCode: 503, errorClass: "http_status" },
      result: { status: "pending", nextAttemptAt: new Date(startedAt.getTime() + 5000) },
      error: "the receiver answered 503",
    });
    const last = await store.destinations.getLastDelivery(workspace, id);
    assert.deepEqual(last, {
      status: "pending",
      attempts: 1,
      lastAttemptAt: startedAt,
      event: "job.completed",
      notificationId: claimed.eventId,
      nextAttemptAt: new Date(startedAt.getTime() + 5000),
      lastStatusCode: 503,
      lastError: "the receiver answered 503",
      circuit: null,
    });
    assert.equal(
      await store.destinations.getLastDelivery("ws_other", id),
      null,
      "scoped to the workspace",
    );
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
          const batch = await claimUpTo(claimer, name, 7, 60_000);
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
    await store.housekeeping.pruneEvents(clock.now()); // those of earlier tests
    const id = await destination(["*"]);
    await publish("job.completed");
    await publish("job.failed");
    const claimed = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(claimed.length, 2);
    const [done, retrying] = claimed;
    assert.ok(done && retrying);
    await store.queue.finishAttempt(done.lease, done.seq, {
      attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    await store.queue.finishAttempt(retrying.lease, retrying.seq, {
      attempt: {
        startedAt: clock.now(),
        durationMs: 1,
        statusCode: 500,
        errorClass: "http_status",
      },
      result: { status: "pending", nextAttemptAt: new Date(clock.now().getTime() + 60_000) },
      error: "the receiver answered 500",
    });
    assert.equal(await store.housekeeping.pruneEvents(clock.now()), 0, "nothing is older than now");
    clock.advance(1000);
    assert.equal(
      await store.housekeeping.pruneEvents(clock.now()),
      1,
      "only the delivered event goes",
    );
    const last = await store.destinations.getLastDelivery(workspace, id);
    assert.equal(last?.notificationId, retrying.eventId, "the one being retried stays");
    clock.advance(60_000);
    const [again] = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(again?.eventId, retrying.eventId, "and is still attempted");
  });

  it("prunes attempt records older than the retention", async () => {
    await store.housekeeping.pruneAttempts(clock.now()); // those of earlier tests
    await destination(["*"]);
    await publish("job.completed");
    const [claimed] = await claimUpTo(store, "w1", 10, 1000);
    assert.ok(claimed);
    await store.queue.finishAttempt(claimed.lease, claimed.seq, {
      attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    const id = deliveryId(claimed.eventId, claimed.destination.id);
    const attemptLog = async (): Promise<number[]> =>
      ((await store.log.getDelivery(workspace, id))?.attemptLog ?? []).map(
        (entry) => entry.attempt,
      );
    await store.housekeeping.pruneAttempts(clock.now());
    assert.deepEqual(await attemptLog(), [1], "an attempt made at the cutoff is kept");
    // The first attempt is kept in the delivery's row (decision 53): no attempt row to
    // delete, but the log leaves it out once the cutoff has passed it.
    assert.equal(await store.housekeeping.pruneAttempts(new Date(clock.now().getTime() + 1)), 0);
    assert.deepEqual(await attemptLog(), []);
    // An earlier cutoff (another process's pass, a longer retention) does not bring it back.
    await store.housekeeping.pruneAttempts(new Date(clock.now().getTime() - 60_000));
    assert.deepEqual(await attemptLog(), []);
  });

  it("prunes the rows of attempts that led to a retry or followed one, older than the retention", async () => {
    await store.housekeeping.pruneAttempts(clock.now()); // those of earlier tests
    await destination(["*"]);
    await publish("job.completed");
    const [first] = await claimUpTo(store, "w1", 10, 1000);
    assert.ok(first);
    const retryAt = new Date(clock.now().getTime() + 1000);
    await store.queue.finishAttempt(first.lease, first.seq, {
      attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 500, errorClass: null },
      result: { status: "pending", nextAttemptAt: retryAt },
      error: "HTTP 500",
    });
    clock.advance(1000);
    const [second] = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(second?.seq, first.seq);
    await store.queue.finishAttempt(second.lease, second.seq, {
      attempt: { startedAt: clock.now(), durationMs: 1, statusCode: 200, errorClass: null },
      result: { status: "delivered" },
      error: null,
    });
    assert.deepEqual(
      (await attemptRows(first.seq)).map((row) => [row.attempt, row.status_code]),
      [
        [1, 500],
        [2, 200],
      ],
    );
    // The first attempt led to a retry: a row of its own, pruned as the later one is.
    assert.equal(await store.housekeeping.pruneAttempts(clock.now()), 1);
    assert.equal(await store.housekeeping.pruneAttempts(new Date(clock.now().getTime() + 1)), 1);
    const log = await store.log.getDelivery(
      workspace,
      deliveryId(first.eventId, first.destination.id),
    );
    assert.deepEqual(log?.attemptLog, []);
  });

  it("keeps a first attempt that leads to a retry as a row of its own, out of the row each retry rewrites", async () => {
    await destination(["*"]);
    await publish("job.completed");
    const [first] = await claimUpTo(store, "w1", 10, 1000);
    assert.ok(first);
    await store.queue.finishAttempt(first.lease, first.seq, {
      attempt: {
        startedAt: clock.now(),
        durationMs: 1,
        statusCode: 502,
        errorClass: "http_status",
        responseBody: "<html>bad gateway</html>",
      },
      result: { status: "pending", nextAttemptAt: new Date(clock.now().getTime() + 1000) },
      error: "HTTP 502",
    });
    // A waiting delivery's row is rewritten by its claims, its results and its circuit's
    // openings (decision 53): a response body kept in it would be written again each time.
    const [row] = await queryTestDatabase<{
      first_started_at: unknown;
      first_response_body: unknown;
    }>(
      join(dir.path, "queue"),
      "SELECT first_started_at, first_response_body FROM deliveries WHERE seq = $1",
      [first.seq],
    );
    assert.deepEqual({ ...row }, { first_started_at: null, first_response_body: null });
    clock.advance(1000);
    const [second] = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(second?.seq, first.seq);
    await store.queue.finishAttempt(
      second.lease,
      second.seq,
      attempted(200, { status: "delivered" }),
    );
    const log = await store.log.getDelivery(
      workspace,
      deliveryId(first.eventId, first.destination.id),
    );
    assert.deepEqual(
      log?.attemptLog.map((entry) => [entry.attempt, entry.statusCode, entry.responseBody]),
      [
        [1, 502, "<html>bad gateway</html>"],
        [2, 200, null],
      ],
    );
  });

  it("numbers a retry by hand on from the attempts made, attempt 1 in the row it ended", async () => {
    const destinationId = await destination(["*"]);
    await publish("job.completed");
    const [first] = await claimUpTo(store, "w1", 10, 1000);
    assert.ok(first);
    await store.queue.finishAttempt(
      first.lease,
      first.seq,
      attempted(200, { status: "delivered" }),
    );
    const id = deliveryId(first.eventId, destinationId);
    assert.equal((await store.log.retryDelivery(workspace, id))?.kind, "queued");
    const [again] = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(again?.seq, first.seq);
    await store.queue.finishAttempt(
      again.lease,
      again.seq,
      attempted(204, { status: "delivered" }),
    );
    const log = await store.log.getDelivery(workspace, id);
    assert.deepEqual(
      log?.attemptLog.map((entry) => [entry.attempt, entry.statusCode]),
      [
        [1, 200],
        [2, 204],
      ],
    );
  });

  it("keeps the latest cutoff of several processes' attempt retention, in whatever order they run", async () => {
    const other = await openStore(location, clock);
    try {
      const at = clock.now().getTime();
      await Promise.all([
        store.housekeeping.pruneAttempts(new Date(at - 3)),
        other.housekeeping.pruneAttempts(new Date(at - 1)),
        store.housekeeping.pruneAttempts(new Date(at - 2)),
      ]);
      await other.housekeeping.pruneAttempts(new Date(at - 60_000));
      const [row] = await queryTestDatabase<{ value: string }>(
        join(dir.path, "queue"),
        "SELECT value FROM settings WHERE name = 'attempts_pruned_before'",
      );
      assert.equal(Number(row?.value), at - 1);
    } finally {
      await other.close();
    }
  });

  it("answers publishes made at once each with its own count, and queues them in publish order", async () => {
    const everything = await destination(["*"]);
    const failedA = await destination(["job.failed"]);
    const failedB = await destination(["job.failed"]);
    const completed = await destination(["job.completed"]);
    counter += 1;
    const empty = (await store.credentials.createWorkspace({ id: `ws_${counter}`, name: "empty" }))
      .id;
    const events = [
      newEvent("job.failed"), // everything, failedA, failedB
      newEvent("collection.completed"), // everything
      newEvent("job.failed", empty), // no destination in that workspace
      newEvent("job.completed"), // everything, completed
    ];
    // All started in one turn: one batch.
    const counts = await Promise.all(events.map((event) => store.queue.publishEvent(event)));
    assert.deepEqual(counts, [3, 1, 0, 2]);

    const claimed = await claimUpTo(store, "w1", 100, 1000);
    const bySeq = [...claimed].sort((a, b) => a.seq - b.seq);
    const [first, second, , fourth] = events.map((event) => event.id);
    assert.deepEqual(
      bySeq.map((item) => [item.eventId, item.destination.id]),
      [
        [first, everything],
        [first, failedA],
        [first, failedB],
        [second, everything],
        [fourth, everything],
        [fourth, completed],
      ],
      "seqs run in publish order, then destination order",
    );
    for (const item of claimed) {
      const event = events.find((candidate) => candidate.id === item.eventId);
      assert.equal(item.eventType, event?.type);
      assert.equal(item.body, event?.body);
    }
  });

  it("refuses alone the event of a workspace that no longer exists, and publishes the rest of its batch", async () => {
    await destination(["*"]);
    const kept = [newEvent("job.completed"), newEvent("job.failed")];
    const orphan = newEvent("job.completed", "ws_deleted_meanwhile");
    // All started in one turn: one batch, the orphan between the two.
    const [first, refused, second] = await Promise.allSettled(
      [kept[0], orphan, kept[1]].map((event) => store.queue.publishEvent(event as NewEvent)),
    );
    assert.deepEqual(first, { status: "fulfilled", value: 1 });
    assert.deepEqual(second, { status: "fulfilled", value: 1 });
    assert.ok(refused?.status === "rejected", "refused");
    const error: unknown = refused.reason;
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, "workspace_forbidden");
    assert.match(error.message, /ws_deleted_meanwhile was deleted/);
    const rows = await queryTestDatabase<{ id: string }>(
      join(dir.path, "queue"),
      "SELECT id FROM events WHERE id IN ($1, $2, $3) ORDER BY seq",
      [kept[0]?.id ?? "", orphan.id, kept[1]?.id ?? ""],
    );
    assert.deepEqual(
      rows.map((row) => row.id),
      kept.map((event) => event.id),
    );
  });

  it("records results reported at once for different deliveries, each with its attempt", async () => {
    const ids = [
      await destination(["*"]),
      await destination(["*"]),
      await destination(["*"]),
      await destination(["*"]),
    ];
    await publish("job.completed");
    const claimed = await claimUpTo(store, "w1", 10, 1000);
    assert.equal(claimed.length, 4);
    const [retried, delivered, abandoned, timedOut] = ids.map((id) =>
      claimed.find((item) => item.destination.id === id),
    );
    assert.ok(retried && delivered && abandoned && timedOut);
    const firstAt = clock.now();
    const retryAt = new Date(firstAt.getTime() + 1000);
    /** What last_delivery shows of a destination, minus the fields fixed by the test. */
    const last = async (id: string) => {
      const found = await store.destinations.getLastDelivery(workspace, id);
      assert.ok(found);
      const { status, attempts, lastAttemptAt, lastStatusCode, lastError } = found;
      return { status, attempts, lastAttemptAt, lastStatusCode, lastError };
    };

    // Started in one turn: one batch, with and without attempts, of every outcome.
    const results = await Promise.all([
      store.queue.finishAttempt(
        retried.lease,
        retried.seq,
        attempted(503, { status: "pending", nextAttemptAt: retryAt }, "the receiver answered 503"),
      ),
      store.queue.finishAttempt(
        delivered.lease,
        delivered.seq,
        attempted(200, { status: "delivered" }),
      ),
      store.queue.finishAttempt(abandoned.lease, abandoned.seq, {
        attempt: null,
        result: { status: "failed", reason: "retries_exhausted" },
        error: "the destination was deleted before delivery",
      }),
      store.queue.finishAttempt(
        timedOut.lease,
        timedOut.seq,
        attempted(null, { status: "pending", nextAttemptAt: retryAt }, "timed out"),
      ),
    ]);
    assert.deepEqual(results, [true, true, true, true]);
    assert.deepEqual(await last(retried.destination.id), {
      status: "pending",
      attempts: 1,
      lastAttemptAt: firstAt,
      lastStatusCode: 503,
      lastError: "the receiver answered 503",
    });
    assert.deepEqual(await last(delivered.destination.id), {
      status: "delivered",
      attempts: 1,
      lastAttemptAt: firstAt,
      lastStatusCode: 200,
      lastError: null,
    });
    assert.deepEqual(await last(abandoned.destination.id), {
      status: "failed",
      attempts: 0,
      lastAttemptAt: null,
      lastStatusCode: null,
      lastError: "the destination was deleted before delivery",
    });
    assert.deepEqual(await last(timedOut.destination.id), {
      status: "pending",
      attempts: 1,
      lastAttemptAt: firstAt,
      lastStatusCode: null,
      lastError: "timed out",
    });

    // The two retried come due again and are reported in one batch: one ends without an
    // attempt (its last attempt's time and status stay), the other makes its second attempt.
    clock.advance(1000);
    const secondAt = clock.now();
    const again = await claimUpTo(store, "w2", 10, 1000);
    assert.deepEqual(
      again.map((item) => item.seq).sort((a, b) => a - b),
      [retried.seq, timedOut.seq].sort((a, b) => a - b),
    );
    assert.ok(again.every((item) => item.attempts === 1));
    const lease = (seq: number): string => again.find((item) => item.seq === seq)?.lease ?? "";
    assert.deepEqual(
      await Promise.all([
        store.queue.finishAttempt(
          lease(timedOut.seq),
          timedOut.seq,
          attempted(500, { status: "failed", reason: "retries_exhausted" }, "retries exhausted"),
        ),
        store.queue.finishAttempt(lease(retried.seq), retried.seq, {
          attempt: null,
          result: { status: "failed", reason: "retries_exhausted" },
          error: "the destination was deactivated before delivery",
        }),
      ]),
      [true, true],
    );
    assert.deepEqual(await last(retried.destination.id), {
      status: "failed",
      attempts: 1,
      lastAttemptAt: firstAt,
      lastStatusCode: 503,
      lastError: "the destination was deactivated before delivery",
    });
    assert.deepEqual(await last(timedOut.destination.id), {
      status: "failed",
      attempts: 2,
      lastAttemptAt: secondAt,
      lastStatusCode: 500,
      lastError: "retries exhausted",
    });

    assert.deepEqual(await attemptRows(retried.seq), [
      { attempt: 1, status_code: 503, error_class: "http_status" },
    ]);
    assert.deepEqual(await attemptRows(delivered.seq), [
      { attempt: 1, status_code: 200, error_class: null },
    ]);
    assert.deepEqual(await attemptRows(abandoned.seq), [], "no attempt was made");
    assert.deepEqual(await attemptRows(timedOut.seq), [
      { attempt: 1, status_code: null, error_class: "timeout" },
      { attempt: 2, status_code: 500, error_class: "http_status" },
    ]);
  });

  for (const staleFirst of [true, false]) {
    it(`records only the current claim's report when an expired claim reports in the same batch (${staleFirst ? "stale" : "current"} first)`, async () => {
      const id = await destination(["*"]);
      await publish("job.completed");
      const [expired] = await claimUpTo(store, "w1", 10, 5000);
      assert.ok(expired);
      clock.advance(5001);
      const [current] = await claimUpTo(store, "w2", 10, 5000);
      assert.equal(current?.seq, expired.seq);

      // Both started before either is awaited: one batch.
      const staleReport = () =>
        store.queue.finishAttempt(
          expired.lease,
          expired.seq,
          attempted(500, { status: "failed", reason: "retries_exhausted" }, "the overrun attempt"),
        );
      const currentReport = () =>
        store.queue.finishAttempt(
          current.lease,
          current.seq,
          attempted(200, { status: "delivered" }),
        );
      let stale: Promise<boolean>;
      let fresh: Promise<boolean>;
      if (staleFirst) {
        stale = staleReport();
        fresh = currentReport();
      } else {
        fresh = currentReport();
        stale = staleReport();
      }
      assert.deepEqual(await Promise.all([stale, fresh]), [false, true]);

      const last = await store.destinations.getLastDelivery(workspace, id);
      assert.equal(last?.status, "delivered");
      assert.equal(last.attempts, 1, "the stale attempt is not counted");
      assert.equal(last.lastStatusCode, 200);
      assert.equal(last.lastError, null);
      assert.deepEqual(await attemptRows(current.seq), [
        { attempt: 1, status_code: 200, error_class: null },
      ]);
    });
  }

  describe("handing a publish's deliveries to a worker in the same process", () => {
    /** A taker that reserves `slots` per batch and records what it is given and told. */
    const recordingTaker = (slots: number) => {
      const seen = {
        reservations: 0,
        taken: [] as { reserved: number; deliveries: readonly ClaimedDelivery[] }[],
        wakes: 0,
      };
      const taker: DeliveryTaker = {
        owner: "local",
        leaseMs: 5000,
        reserve: () => {
          seen.reservations += 1;
          return { slots, excludedDestinations: [] };
        },
        take: (reserved, deliveries) => {
          seen.taken.push({ reserved, deliveries });
        },
        wake: () => {
          seen.wakes += 1;
        },
      };
      return { taker, seen };
    };
    afterEach(() => {
      store.queue.handDeliveriesTo(null);
    });

    it("gives the taker up to its reservation, claimed, and leaves the rest due for others", async () => {
      const first = await destination(["*"]);
      const second = await destination(["*"]);
      const third = await destination(["job.completed"]);
      const { taker, seen } = recordingTaker(2);
      store.queue.handDeliveriesTo(taker);
      const event = newEvent("job.completed");
      assert.equal(await store.queue.publishEvent(event), 3, "the count is every delivery queued");

      assert.equal(seen.taken.length, 1);
      const [{ reserved, deliveries } = { reserved: 0, deliveries: [] }] = seen.taken;
      assert.equal(reserved, 2);
      assert.deepEqual(
        deliveries.map((delivery) => delivery.destination.id),
        [first, second],
        "the first destinations, in order",
      );
      for (const delivery of deliveries) {
        assert.equal(delivery.eventId, event.id);
        assert.equal(delivery.body, event.body);
        assert.equal(delivery.attempts, 0);
        assert.match(delivery.lease, /^local:[0-9a-f]{20}$/);
        assert.equal(delivery.destination.secretCiphertext, "sealed");
      }
      assert.equal(seen.wakes, 1, "the one left over is announced");

      const others = await claimUpTo(store, "elsewhere", 10, 5000);
      assert.deepEqual(
        others.map((delivery) => delivery.destination.id),
        [third],
        "a handed delivery is claimed: no one else gets it",
      );
      const handed = deliveries[0] as ClaimedDelivery;
      assert.equal(
        await store.queue.finishAttempt(
          handed.lease,
          handed.seq,
          attempted(200, { status: "delivered" }),
        ),
        true,
        "the taker reports under its lease as a claimer does",
      );
      assert.equal(
        (await store.destinations.getLastDelivery(workspace, first))?.status,
        "delivered",
      );
    });

    it("hands each delivery of a batch exactly as a claim's SELECT reads it", async () => {
      await drain();
      const destinations = [await destination(["*"]), await destination(["job.failed"])];
      await store.destinations.updateDestination(workspace, destinations[0] as string, {
        url: "https://hooks.test/renamed?x=1",
      });
      const { taker, seen } = recordingTaker(10);
      store.queue.handDeliveriesTo(taker);
      const events = [
        { ...newEvent("job.completed"), traceparent: `00-${"ab".repeat(16)}-${"cd".repeat(8)}-01` },
        newEvent("job.failed"),
        { ...newEvent("job.failed"), body: '{"text":"\\u00e9 \\"quoted\\""}' },
      ];
      // One batch: published in the same turn.
      await Promise.all(events.map((event) => store.queue.publishEvent(event)));
      const handed = seen.taken.flatMap((batch) => batch.deliveries);
      assert.equal(handed.length, 5, "every delivery of the batch is handed");

      const db = openDatabase(location);
      try {
        const [lease = ""] = [...new Set(handed.map((delivery) => delivery.lease))];
        const read = await selectClaimed(
          db,
          db,
          handed.map((delivery) => delivery.seq),
          lease,
        );
        assert.deepEqual(handed, read);
      } finally {
        await db.close();
      }
      await drain();
    });

    it("does not announce a batch it handed over whole, and hands nothing when the taker declines", async () => {
      await destination(["*"]);
      const eager = recordingTaker(10);
      store.queue.handDeliveriesTo(eager.taker);
      await Promise.all([publish("job.completed"), publish("job.failed")]);
      assert.equal(
        eager.seen.taken.reduce((sum, batch) => sum + batch.deliveries.length, 0),
        2,
      );
      assert.equal(eager.seen.wakes, 0, "nothing was left for a claim");
      assert.deepEqual(await claimUpTo(store, "elsewhere", 10, 5000), []);

      const declining = recordingTaker(0);
      store.queue.handDeliveriesTo(declining.taker);
      await publish("job.completed");
      assert.deepEqual(declining.seen.taken, [{ reserved: 0, deliveries: [] }]);
      assert.equal(declining.seen.wakes, 1);
      assert.equal((await claimUpTo(store, "elsewhere", 10, 5000)).length, 1);
    });

    it("gives a handed delivery to another worker once its lease ends without a report (a crash)", async () => {
      await destination(["*"]);
      const { taker, seen } = recordingTaker(1);
      store.queue.handDeliveriesTo(taker);
      await publish("job.completed");
      const handed = seen.taken[0]?.deliveries[0];
      assert.ok(handed);
      assert.deepEqual(await claimUpTo(store, "elsewhere", 10, 5000), []);
      assert.equal(
        (await store.destinations.getLastDelivery(workspace, handed.destination.id))?.nextAttemptAt,
        null,
        "while leased there is no scheduled attempt to show",
      );
      clock.advance(5001);
      const [again] = await claimUpTo(store, "elsewhere", 10, 5000);
      assert.equal(again?.seq, handed.seq);
      assert.equal(
        await store.queue.finishAttempt(
          handed.lease,
          handed.seq,
          attempted(200, { status: "delivered" }),
        ),
        false,
        "the lost taker's late report does not count",
      );
    });

    it("returns the reservation with nothing when the batch fails, and writes none of it", async () => {
      await destination(["*"]);
      const { taker, seen } = recordingTaker(3);
      store.queue.handDeliveriesTo(taker);
      // An event id published before: the events' unique key fails the whole batch.
      const first = newEvent("job.completed");
      store.queue.handDeliveriesTo(null);
      await store.queue.publishEvent(first);
      store.queue.handDeliveriesTo(taker);
      const again = { ...first, body: '{"again":true}' };
      await assert.rejects(store.queue.publishEvent(again));
      assert.deepEqual(seen.taken, [{ reserved: 3, deliveries: [] }]);
      assert.equal(seen.wakes, 0);
      const rows = await queryTestDatabase<{ body: string }>(
        join(dir.path, "queue"),
        "SELECT body FROM events WHERE id = $1",
        [first.id],
      );
      assert.deepEqual(
        rows.map((row) => row.body),
        [first.body],
      );
    });
  });
});
