import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { AttemptReport, ClaimedDelivery } from "../../src/interfaces.ts";
import type { Database } from "../../src/store/database.ts";
import type { AttemptBucket, DestinationHealth } from "../../src/store/delivery-log.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { SqlStore } from "../../src/store/sql-store.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { claimUpTo } from "../support/delivery.ts";
import { seededRandom } from "../support/random.ts";
import { tempDir } from "../support/temp.ts";

const hour = 3_600_000;
const window = { bucketMs: hour, buckets: 24 } as const;

interface AttemptRow extends Record<string, unknown> {
  workspace_id: string;
  destination_id: string;
  started_at: number | string;
  status_code: number | string | null;
}

/**
 * What the attempts themselves say, as decision 35 defines it, computed here from every
 * attempt row: the oracle the counters are held to.
 */
function fromAttempts(
  rows: readonly AttemptRow[],
  destinationId: string | null,
  since: number,
): { buckets: AttemptBucket[]; health: DestinationHealth[] } {
  const attempts = rows
    .filter((row) => destinationId === null || row.destination_id === destinationId)
    .map((row) => ({
      destination: row.destination_id,
      at: Number(row.started_at),
      status: row.status_code === null ? null : Number(row.status_code),
    }))
    .filter((attempt) => attempt.at >= since)
    .map((attempt) => ({
      ...attempt,
      ok: attempt.status !== null && attempt.status >= 200 && attempt.status <= 299,
    }));
  const buckets = Array.from({ length: window.buckets }, (_, index) => {
    const start = since + index * hour;
    const inside = attempts.filter((attempt) => attempt.at >= start && attempt.at < start + hour);
    const succeeded = inside.filter((attempt) => attempt.ok).length;
    return { start: new Date(start), succeeded, failed: inside.length - succeeded };
  });
  const health = [...new Set(attempts.map((attempt) => attempt.destination))].sort().map((id) => {
    const own = attempts.filter((attempt) => attempt.destination === id);
    const last = own.reduce((latest, attempt) =>
      attempt.at > latest.at ||
      (attempt.at === latest.at && (attempt.status ?? 0) > (latest.status ?? 0))
        ? attempt
        : latest,
    );
    const lastSuccess = Math.max(...own.filter((a) => a.ok).map((a) => a.at), -Infinity);
    const failuresAfter = own.filter((a) => !a.ok && a.at > lastSuccess).map((a) => a.at);
    return {
      destinationId: id,
      attempts: own.length,
      succeeded: own.filter((attempt) => attempt.ok).length,
      lastAttemptAt: new Date(last.at),
      lastStatusCode: last.status,
      failingSince: failuresAfter.length === 0 ? null : new Date(Math.min(...failuresAfter)),
    };
  });
  return { buckets, health };
}

/** Every attempt: first attempts are kept in their delivery's row (decision 53), later ones as rows. */
const attemptsSql = `SELECT * FROM (
    SELECT d.workspace_id, d.destination_id, a.started_at, a.status_code
    FROM delivery_attempts a JOIN deliveries d ON d.seq = a.delivery_seq
    UNION ALL
    SELECT workspace_id, destination_id, first_started_at, first_status_code
    FROM deliveries WHERE first_started_at IS NOT NULL) attempts`;

/**
 * The delivery statistics' hourly counters (decision 36), on the run's engine: kept in the
 * transaction that records the attempts, they must say exactly what the attempts say.
 */
describe("the delivery statistics' counters", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: Database;
  let store: SqlStore;
  // Ten past the hour, so that attempts fall on both sides of hour boundaries.
  const clock = manualClock(Date.UTC(2026, 10, 20, 0, 10));
  const workspace = "ws_counted";
  const destinations = ["dst_steady", "dst_flaky", "dst_down", "dst_recovering"] as const;
  const session = "lsn_counted000000000000000000";
  let counter = 0;

  /** The answer each destination gives in round `round` of `rounds`. */
  const answerOf = (destination: string, round: number, rounds: number, draw: number) => {
    switch (destination) {
      case "dst_steady":
        return 200;
      case "dst_down":
        return round < 2 ? 204 : draw < 0.5 ? 503 : null;
      case "dst_recovering":
        return round < rounds - 3 ? 500 : 200;
      default:
        return draw < 0.4 ? 200 : draw < 0.7 ? 500 : draw < 0.85 ? null : 429;
    }
  };
  const report = (at: Date, statusCode: number | null, retry: boolean): AttemptReport => {
    const ok = statusCode !== null && statusCode < 300;
    return {
      attempt: {
        startedAt: at,
        durationMs: 7,
        statusCode,
        errorClass: ok ? null : statusCode === null ? "timeout" : "http_status",
      },
      result: ok
        ? { status: "delivered" }
        : retry
          ? { status: "pending", nextAttemptAt: clock.now() }
          : { status: "failed", reason: "retries_exhausted" },
      error: ok ? null : "the receiver did not take it",
    };
  };

  /**
   * One round: two events published; every delivery due (fresh ones and retries) answered,
   * the worker's reports at once so that they are recorded as one batch; the listen
   * session's through its stream's result path. Attempts begin a millisecond apart.
   */
  const round = async (index: number, rounds: number, draw: () => number) => {
    for (let event = 0; event < 2; event += 1) {
      counter += 1;
      await store.queue.publishEvent({
        id: `evt_${counter.toString(16).padStart(28, "0")}`,
        workspaceId: workspace,
        type: "job.completed",
        apiVersion: "2026-11-01",
        body: "{}",
        createdAt: clock.now(),
      });
    }
    const startedAt = (offset: number) => new Date(clock.now().getTime() + offset);
    const claimed: ClaimedDelivery[] = await claimUpTo(store, "worker", 1000, 60_000);
    await Promise.all(
      claimed.map((delivery, offset) =>
        store.queue.finishAttempt(
          delivery.lease,
          delivery.seq,
          report(
            startedAt(offset),
            answerOf(delivery.destination.id, index, rounds, draw()),
            draw() < 0.5,
          ),
        ),
      ),
    );
    const listened = await store.listen.claim(session, "stream", { leaseMs: 60_000, inFlight: 50 });
    assert.equal(listened.kind, "claimed");
    // One at a time, as they began: results that come back out of order are exact only to
    // within the hour (decision 36), and the attempts' answers are drawn in a fixed order.
    for (const [offset, delivery] of listened.deliveries.entries()) {
      const answer = report(
        startedAt(claimed.length + offset),
        draw() < 0.6 ? 200 : 502,
        draw() < 0.5,
      );
      await store.listen.report(
        { workspaceId: workspace, id: session },
        delivery.eventId,
        delivery.lease,
        () => answer,
      );
    }
  };

  /** The counters' answer against the attempts', for the workspace and each destination. */
  const assertCountersAgree = async () => {
    const now = clock.now().getTime();
    const since = now - (now % hour) - 23 * hour;
    const rows = await db.query<AttemptRow>(`${attemptsSql} WHERE workspace_id = $1`, [workspace]);
    assert.ok(rows.length > 0);
    for (const destination of [null, ...destinations, session]) {
      const expected = fromAttempts(rows, destination, since);
      const buckets = await store.log.attemptBuckets(workspace, destination, {
        since: new Date(since),
        ...window,
      });
      assert.deepEqual(buckets, expected.buckets, `buckets of ${destination ?? "the workspace"}`);
      const health = await store.log.destinationHealth(workspace, destination, new Date(since));
      assert.deepEqual(
        [...health].sort((a, b) => a.destinationId.localeCompare(b.destinationId)),
        expected.health,
        `health of ${destination ?? "the workspace"} at ${new Date(now).toISOString()}`,
      );
    }
  };

  before(async () => {
    dir = await tempDir();
    db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
    await migrate(db);
    store = new SqlStore(db, clock);
    await store.credentials.createWorkspace({ id: workspace, name: "counted" });
    for (const id of destinations) {
      await store.destinations.createDestination({
        id,
        workspaceId: workspace,
        url: `https://hooks.test/${id}`,
        events: ["*"],
        secretCiphertext: "sealed",
      });
    }
    const opened = await store.listen.open(
      {
        id: session,
        workspaceId: workspace,
        name: null,
        events: ["*"],
        secretCiphertext: "sealed",
        openedBy: "key:test",
      },
      { limit: 20, mayResume: () => false },
    );
    assert.equal(opened.kind, "opened");
    assert.equal(await store.listen.takeOver(session, "stream"), true);
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  it("say what the attempts say: buckets, success rates, last attempt and status, failing_since, over 30 hours of successes, failures, retries and listen results", async () => {
    const rounds = 72;
    const draw = seededRandom(27);
    for (let index = 0; index < rounds; index += 1) {
      await round(index, rounds, draw);
      await assertCountersAgree();
      // 25 minutes between rounds: two or three batches of each destination in an hour, and
      // 30 hours in all, so that the window cuts through them.
      clock.advance(25 * 60_000);
    }
    const down = (await store.log.destinationHealth(workspace, "dst_down", new Date(0)))[0];
    assert.ok(down?.failingSince, "a destination failing since before the window is seen failing");
  });

  it("keep history across an upgrade: the migration counts the last 24 hours of attempts", async () => {
    // The database as it was before migration 18: every attempt a row of delivery_attempts.
    await db.execute(
      `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code)
       SELECT seq, 1, first_started_at, first_duration_ms, first_status_code
       FROM deliveries WHERE first_started_at IS NOT NULL`,
    );
    await db.execute("UPDATE deliveries SET first_started_at = NULL");
    // The migration reads the real time; move the attempts so that they end now.
    const rows = await db.query<{ last: number | string }>(
      "SELECT MAX(started_at) AS last FROM delivery_attempts",
    );
    const shift = Date.now() - Number(rows[0]?.last ?? 0);
    await db.execute("UPDATE delivery_attempts SET started_at = started_at + $1", [shift]);
    clock.advance(shift);
    await db.execute("DROP TABLE delivery_stats_hourly");
    await db.execute("DELETE FROM schema_migrations WHERE version = 10");
    assert.deepEqual(await migrate(db), [10]);
    await assertCountersAgree();
  });

  it("go with the attempts' retention: the hours that ended before it are deleted", async () => {
    const now = clock.now().getTime();
    const cutoff = now - (now % hour) - 2 * hour;
    await store.housekeeping.pruneAttempts(new Date(cutoff + 60_000));
    const left = await db.query<{ first: number | string }>(
      "SELECT MIN(hour_start) AS first FROM delivery_stats_hourly",
    );
    assert.equal(Number(left[0]?.first), cutoff, "the hour the cut-off falls in stays");
    const buckets = await store.log.attemptBuckets(workspace, null, {
      since: new Date(cutoff - 5 * hour),
      ...window,
    });
    assert.deepEqual(
      buckets.slice(0, 5).map((bucket) => bucket.succeeded + bucket.failed),
      [0, 0, 0, 0, 0],
    );
  });
});
