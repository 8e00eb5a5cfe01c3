import assert from "node:assert/strict";
import pg from "pg";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { after, before, beforeEach, describe, it } from "node:test";
import type { Store } from "../../src/interfaces.ts";
import type { Database } from "../../src/store/database.ts";
import { connectionConfig } from "../../src/store/postgres/connection-config.ts";
import { nextEventWindow, retentionBatch } from "../../src/store/housekeeping.ts";
import { openDatabase, openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Retention in bounded batches (decision 50): every pass removes what is past its cutoff
 * however many batches that takes, keeps what is not, lets the event loop run between
 * batches, and two processes' passes at once take disjoint batches.
 */
describe("retention in bounded batches", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  let db: Database;
  let location: string;
  const clock = manualClock(Date.UTC(2026, 10, 25, 12));
  const now = clock.now().getTime();
  const dayMs = 86_400_000;
  const old = now - 40 * dayMs;
  let workspace: string;
  let destination: string;
  let run = 0;

  const numbers = (count: number): string =>
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`;
  const count = async (sql: string): Promise<number> =>
    Number((await db.query<{ c: number | string }>(`SELECT COUNT(*) AS c FROM ${sql}`))[0]?.c);

  /**
   * `events` events of the run, published at `createdAt` + i ms, each with one delivery of
   * `status` and (unless pending) one attempt made when it was published.
   */
  const seedEvents = async (
    prefix: string,
    events: number,
    createdAt: number,
    status: "delivered" | "pending",
  ): Promise<void> => {
    await db.execute(
      `${numbers(events)} INSERT INTO events (id, workspace_id, type, body, created_at)
       SELECT '${prefix}_' || i, $1, 'job.completed', '{}', CAST($2 AS BIGINT) + i FROM n`,
      [workspace, createdAt],
    );
    await db.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
         attempts, next_attempt_at, created_at, updated_at)
       SELECT id, $1, workspace_id, type, $2, 1, $3, created_at, created_at
       FROM events WHERE id LIKE '${prefix}\\_%' ESCAPE '\\'`,
      [destination, status, status === "pending" ? now : null],
    );
    if (status === "pending") return;
    await db.execute(
      `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code)
       SELECT seq, 1, created_at, 5, 200 FROM deliveries WHERE event_id LIKE '${prefix}\\_%' ESCAPE '\\'`,
    );
  };

  /** PostgreSQL's sessions of this database waiting on a lock of one of the `kinds`. */
  const lockWaits = (kinds: string): string =>
    `pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
       AND wait_event IN (${kinds})`;

  /**
   * Whether `pass` comes to wait on a row (a transaction's lock on it) before it settles:
   * true as soon as a session of this database does, false once `pass` has settled.
   */
  const waitsOnRow = async (pass: Promise<unknown>): Promise<boolean> => {
    const progress = { settled: false };
    void pass.finally(() => (progress.settled = true));
    while (!progress.settled) {
      if ((await count(lockWaits("'transactionid', 'tuple'"))) > 0) return true;
    }
    return false;
  };

  before(async () => {
    dir = await tempDir();
    location = await testDatabaseLocation(join(dir.path, "retention"));
    store = await openStore(location, clock);
    db = openDatabase(location);
  });
  after(async () => {
    await db.close();
    await store.close();
    await dir.cleanup();
  });
  // Each test starts from empty tables of its own workspace.
  beforeEach(async () => {
    run += 1;
    await db.execute("DELETE FROM delivery_attempts");
    await db.execute("DELETE FROM deliveries");
    await db.execute("DELETE FROM events");
    await db.execute("DELETE FROM delivery_stats_hourly");
    await db.execute("DELETE FROM idempotency_keys");
    workspace = (await store.credentials.createWorkspace({ id: `ws_${run}`, name: "r" })).id;
    destination = `dst_${run}`;
    await store.destinations.createDestination({
      id: destination,
      workspaceId: workspace,
      url: "https://hooks.test/r",
      events: ["*"],
      secretCiphertext: "sealed",
    });
  });

  it("removes expired ended events over many windows, with their deliveries and attempts, and keeps pending and newer ones", async () => {
    const expired = retentionBatch.events * 2 + 37;
    await seedEvents("evt_old", expired, old, "delivered");
    await seedEvents("evt_retrying", 3, old + expired, "pending");
    await seedEvents("evt_more_old", retentionBatch.events, old + expired + 10, "delivered");
    await seedEvents("evt_new", 20, now - dayMs, "delivered");

    const removed = await store.housekeeping.pruneEvents(new Date(now - 30 * dayMs));

    assert.equal(removed, expired + retentionBatch.events, "every expired ended event went");
    assert.equal(await count("events WHERE id LIKE 'evt_retrying%'"), 3, "pending ones stay");
    assert.equal(await count("deliveries WHERE status = 'pending'"), 3);
    assert.equal(await count("events WHERE id LIKE 'evt_new%'"), 20, "newer ones stay");
    assert.equal(await count("deliveries"), 23, "their deliveries went with them");
    assert.equal(await count("delivery_attempts"), 20, "and their attempts");
  });

  it("removes a delivery's attempts wherever they are kept: retried ones, an ending first attempt in the row, older rows", async () => {
    await seedEvents("evt_row", 5, old, "delivered");
    await db.execute("DELETE FROM delivery_attempts");
    // Since decision 53 a first attempt that ended its delivery is kept in the row alone.
    await db.execute(
      "UPDATE deliveries SET first_started_at = created_at, first_duration_ms = 5, first_status_code = 200",
    );
    await seedEvents("evt_retried", 4, old + 10, "delivered");
    await db.execute(
      `UPDATE deliveries SET status = 'failed', attempts = 3 WHERE event_id LIKE 'evt\\_retried%' ESCAPE '\\'`,
    );
    await db.execute(
      `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code)
       SELECT seq, k.k, created_at + k.k, 5, 503 FROM deliveries
       JOIN (SELECT 2 AS k UNION ALL SELECT 3) k ON 1 = 1
       WHERE event_id LIKE 'evt\\_retried%' ESCAPE '\\'`,
    );
    await seedEvents("evt_older_rows", 3, old + 20, "delivered");
    await seedEvents("evt_new", 2, now - dayMs, "delivered");
    assert.equal(await count("delivery_attempts"), 4 * 3 + 3 + 2);

    assert.equal(await store.housekeeping.pruneEvents(new Date(now - 30 * dayMs)), 5 + 4 + 3);
    assert.equal(await count("deliveries"), 2);
    assert.equal(await count("delivery_attempts"), 2, "only the newer events' attempts are left");
  });

  it("keeps every delivery of an event one of whose deliveries is pending, and removes an event that had none", async () => {
    await seedEvents("evt_mixed", 1, old, "pending");
    await store.destinations.createDestination({
      id: `${destination}_b`,
      workspaceId: workspace,
      url: "https://hooks.test/b",
      events: ["*"],
      secretCiphertext: "sealed",
    });
    // The event's second delivery ended at once, retried twice: attempt rows 2 and 3.
    await db.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
         attempts, created_at, updated_at, first_started_at)
       VALUES ('evt_mixed_0', $1, $2, 'job.completed', 'delivered', 3, $3, $3, $3)`,
      [`${destination}_b`, workspace, old],
    );
    await db.execute(
      `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code)
       SELECT seq, k.k, created_at + k.k, 5, 200 FROM deliveries
       JOIN (SELECT 2 AS k UNION ALL SELECT 3) k ON 1 = 1 WHERE destination_id = $1`,
      [`${destination}_b`],
    );
    // An event no destination wanted: no delivery at all.
    await db.execute(
      `INSERT INTO events (id, workspace_id, type, body, created_at)
       VALUES ('evt_unmatched', $1, 'job.completed', '{}', $2)`,
      [workspace, old + 1],
    );

    assert.equal(await store.housekeeping.pruneEvents(new Date(now - 30 * dayMs)), 1);
    assert.equal(await count("events WHERE id = 'evt_unmatched'"), 0, "the event with none went");
    assert.equal(await count("deliveries WHERE event_id = 'evt_mixed_0'"), 2, "both stay");
    assert.equal(await count("delivery_attempts"), 2, "with the ended one's attempts");
  });

  it("removes the attempts of a delivery retried after its first attempt ended it", async () => {
    await seedEvents("evt_again", 2, old, "delivered");
    await db.execute("DELETE FROM delivery_attempts");
    // The first attempt ended it and is in its row; a retry from the log made attempt 2.
    await db.execute(
      `UPDATE deliveries SET attempts = 2, first_started_at = created_at, first_status_code = 500,
         status = 'failed'`,
    );
    await db.execute(
      `INSERT INTO delivery_attempts (delivery_seq, attempt, started_at, duration_ms, status_code)
       SELECT seq, 2, created_at + 60000, 5, 500 FROM deliveries`,
    );

    assert.equal(await store.housekeeping.pruneEvents(new Date(now - 30 * dayMs)), 2);
    assert.equal(await count("deliveries"), 0);
    assert.equal(await count("delivery_attempts"), 0, "no attempt is left behind");
  });

  it(
    "skips the events of a workspace being deleted instead of waiting on its deliveries",
    {
      skip: testBackend !== "postgres" && "PostgreSQL run only: SQLite's writes are one at a time",
    },
    async () => {
      await seedEvents("evt_doomed", 3, old, "delivered");
      // The deletion is held right after it has deleted the workspace's deliveries, before
      // its events: a trigger on its next statement waits for an advisory lock held here.
      await db.execute(
        `CREATE FUNCTION hold_deletion() RETURNS trigger LANGUAGE plpgsql AS
         'BEGIN PERFORM pg_advisory_xact_lock(57); RETURN NULL; END'`,
      );
      await db.execute(
        `CREATE TRIGGER hold_deletion BEFORE DELETE ON delivery_stats_hourly
         FOR EACH STATEMENT EXECUTE FUNCTION hold_deletion()`,
      );
      const holder = new pg.Client(connectionConfig(location));
      await holder.connect();
      try {
        await holder.query("SELECT pg_advisory_lock(57)");
        const deletion = store.workspaces.deleteWorkspace(workspace, { cascade: true });
        while ((await count(lockWaits("'advisory'"))) === 0) await nextTurn();
        const pass = store.housekeeping.pruneEvents(new Date(now - 30 * dayMs));
        const waited = await waitsOnRow(pass);
        await holder.query("SELECT pg_advisory_unlock(57)");
        assert.equal(waited, false, "the pass waited on the deletion's rows");
        assert.equal(await pass, 0, "the deletion's events are its own");
        assert.equal(await deletion, "deleted");
      } finally {
        await holder.end();
        await db.execute("DROP TRIGGER hold_deletion ON delivery_stats_hourly");
        await db.execute("DROP FUNCTION hold_deletion()");
      }
      assert.equal(await count("events"), 0, "the deletion removed them");
    },
  );

  it(
    "keeps an event whose delivery a retry makes pending while the pass waits for it",
    {
      skip: testBackend !== "postgres" && "PostgreSQL run only: SQLite's writes are one at a time",
    },
    async () => {
      await seedEvents("evt_failed", 1, old, "delivered");
      await db.execute("UPDATE deliveries SET status = 'failed'");
      const retry = new pg.Client(connectionConfig(location));
      await retry.connect();
      try {
        // What a retry from the delivery log does (requeueDelivery): the row locked, then pending.
        await retry.query("BEGIN");
        await retry.query("SELECT seq FROM deliveries FOR UPDATE");
        await retry.query("UPDATE deliveries SET status = 'pending', next_attempt_at = $1", [now]);
        const pass = store.housekeeping.pruneEvents(new Date(now - 30 * dayMs));
        assert.ok(await waitsOnRow(pass), "the pass waits for the retry");
        await retry.query("COMMIT");
        assert.equal(await pass, 0, "the event stays while its delivery is pending");
      } finally {
        await retry.end();
      }
      assert.equal(await count("events"), 1);
      assert.equal(await count("deliveries WHERE status = 'pending'"), 1);
    },
  );

  it("prunes attempts, hourly counters and idempotency keys past a whole batch, keeping newer ones", async () => {
    const attempts = retentionBatch.attempts * 2 + 5;
    await seedEvents("evt_kept", 1, now, "delivered");
    await db.execute(
      `${numbers(attempts)} INSERT INTO delivery_attempts (delivery_seq, attempt, started_at,
         duration_ms, status_code)
       SELECT (SELECT seq FROM deliveries), 2 + i, CAST($1 AS BIGINT) + i, 5, 200 FROM n`,
      [old],
    );
    const counters = retentionBatch.counters + 3;
    await db.execute(
      `${numbers(counters)} INSERT INTO delivery_stats_hourly (workspace_id, destination_id,
         hour_start, succeeded, failed, last_attempt_at)
       SELECT $1, 'dst_' || i, $2, 1, 0, $2 FROM n`,
      [workspace, old - (old % 3_600_000)],
    );
    await db.execute(
      `INSERT INTO delivery_stats_hourly (workspace_id, destination_id, hour_start, succeeded,
         failed, last_attempt_at) VALUES ($1, $2, $3, 1, 0, $3)`,
      [workspace, destination, now - (now % 3_600_000)],
    );
    const keys = retentionBatch.idempotencyKeys + 11;
    await db.execute(
      `${numbers(keys + 1)} INSERT INTO idempotency_keys (workspace_id, idempotency_key,
         fingerprint, state, created_at, expires_at)
       SELECT $1, 'key_' || i, 'f', 'completed', $2,
         CASE WHEN i = 0 THEN $3 ELSE CAST($2 AS BIGINT) + i END FROM n`,
      [workspace, old, now + dayMs],
    );

    assert.equal(await store.housekeeping.pruneAttempts(new Date(now - 30 * dayMs)), attempts);
    assert.equal(await count("delivery_attempts"), 1, "the recent attempt stays");
    assert.equal(await count("delivery_stats_hourly"), 1, "the current hour's counter stays");
    assert.equal(await store.housekeeping.purgeIdempotencyKeys(), keys);
    assert.equal(await count("idempotency_keys"), 1, "the unexpired key stays");
  });

  it("sizes each window of events by the fan-out it last met", () => {
    const { events, eventRows } = retentionBatch;
    // One event and its delivery: room for many more, four times as many at most.
    assert.equal(nextEventWindow(1, 2), 4);
    assert.equal(nextEventWindow(64, 128), events, "never more than the most a window takes");
    // A thousand deliveries an event: one event a window.
    assert.equal(nextEventWindow(events, events * 1001), 1);
    assert.equal(nextEventWindow(1, 1001), 1);
    // Forty an event: about `eventRows` rows.
    assert.equal(nextEventWindow(100, 100 * 41), Math.floor(eventRows / 41));
    assert.equal(nextEventWindow(1, 0), 4, "a window that read nothing still grows");
  });

  it("removes the events of a workspace with many destinations, a few at a time", async () => {
    const fanOut = 40;
    await db.execute(
      `${numbers(fanOut)} INSERT INTO destinations (id, workspace_id, url, active,
         secret_ciphertext, created_at, updated_at)
       SELECT $1 || '_' || i, $2, 'https://hooks.test/f', $3, 'sealed', $4, $4 FROM n`,
      [destination, workspace, db.dialect === "sqlite" ? 1 : true, now],
    );
    await seedEvents("evt_wide", 60, old, "delivered");
    await db.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
         attempts, created_at, updated_at, first_started_at)
       SELECT e.id, d.id, e.workspace_id, e.type, 'delivered', 1, e.created_at, e.created_at,
         e.created_at
       FROM events e JOIN destinations d ON d.id LIKE $1 || '\\_%' ESCAPE '\\'`,
      [destination],
    );
    assert.equal(await count("deliveries"), 60 * (fanOut + 1));

    assert.equal(await store.housekeeping.pruneEvents(new Date(now - 30 * dayMs)), 60);
    assert.equal(await count("events"), 0);
    assert.equal(await count("deliveries"), 0);
    assert.equal(await count("delivery_attempts"), 0);
  });

  it("lets the event loop run between batches", async () => {
    await seedEvents("evt_old", retentionBatch.events * 4, old, "delivered");
    let turns = 0;
    const pass = { running: true };
    const ticker = (async () => {
      while (pass.running) {
        turns += 1;
        await nextTurn();
      }
    })();
    await store.housekeeping.pruneEvents(new Date(now - 30 * dayMs));
    pass.running = false;
    await ticker;
    assert.ok(turns >= 4, `the loop turned ${turns} times during a pass of 4 windows`);
  });

  it("takes disjoint batches when two processes prune at once, and together remove everything", async () => {
    await seedEvents("evt_old", retentionBatch.events * 3, old, "delivered");
    await db.execute(
      `${numbers(retentionBatch.attempts * 3)} INSERT INTO delivery_attempts (delivery_seq,
         attempt, started_at, duration_ms, status_code)
       SELECT (SELECT MIN(seq) FROM deliveries), 2 + i, CAST($1 AS BIGINT) + i, 5, 200 FROM n`,
      [old],
    );
    const other = await openStore(location, clock);
    try {
      const cutoff = new Date(now - 30 * dayMs);
      const passes = await Promise.all(
        [store, other].map(async (each) => ({
          attempts: await each.housekeeping.pruneAttempts(cutoff),
          events: await each.housekeeping.pruneEvents(cutoff),
        })),
      );
      assert.equal(
        passes.reduce((sum, pass) => sum + pass.events, 0),
        retentionBatch.events * 3,
        "each event removed by one of them",
      );
      assert.equal(await count("events"), 0);
      assert.equal(await count("delivery_attempts"), 0);
    } finally {
      await other.close();
    }
  });
});
