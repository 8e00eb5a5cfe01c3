import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { queryTestDatabase, testBackend, testDatabaseLocation } from "../support/database.ts";
import { claimUpTo } from "../support/delivery.ts";
import { tempDir } from "../support/temp.ts";

/**
 * A delivery's result rewrites its row on its own page on PostgreSQL (decision 58): no index of
 * `deliveries` names a column that a result ending the delivery changes, so that the UPDATE is
 * HOT (no new index entries, no second page). The claim's update, which takes the row out of
 * the due index, cannot be. Read from PostgreSQL's own counters, which a backend reports within
 * a second or so of going idle.
 */
describe(
  "the result of a delivery, on PostgreSQL",
  { skip: testBackend === "postgres" ? false : "PostgreSQL's HOT updates: the PostgreSQL pass" },
  () => {
    const clock = manualClock(Date.UTC(2026, 10, 26, 12));
    let dir: { path: string; cleanup: () => Promise<void> };
    let store: Store;

    before(async () => {
      dir = await tempDir();
      store = await openStore(await testDatabaseLocation(join(dir.path, "data")), clock);
      await store.credentials.createWorkspace({ id: "ws_hot", name: "hot" });
      await store.destinations.createDestination({
        id: "dst_hot",
        workspaceId: "ws_hot",
        url: "https://hooks.test/hot",
        events: ["*"],
        secretCiphertext: "sealed",
      });
    });
    after(async () => {
      await store.close();
      await dir.cleanup();
    });

    const updates = async (): Promise<{ updated: number; hot: number }> => {
      const [row] = await queryTestDatabase<{ updated: string; hot: string }>(
        join(dir.path, "data"),
        `SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_user_tables
         WHERE relname = 'deliveries'`,
      );
      return { updated: Number(row?.updated ?? 0), hot: Number(row?.hot ?? 0) };
    };

    it("is a HOT update when it ends the delivery; the claim's is not", async () => {
      const deliveries = 10;
      for (let n = 0; n < deliveries; n += 1) {
        await store.queue.publishEvent({
          id: `evt_hot_${n}`,
          workspaceId: "ws_hot",
          type: "job.completed",
          apiVersion: "2026-11-01",
          body: `{"n":${n}}`,
          createdAt: clock.now(),
        });
      }
      const claimed = await claimUpTo(store, "w", deliveries, 5000);
      assert.equal(claimed.length, deliveries);
      for (const delivery of claimed) {
        const recorded = await store.queue.finishAttempt(delivery.lease, delivery.seq, {
          attempt: { startedAt: clock.now(), durationMs: 3, statusCode: 200, errorClass: null },
          result: { status: "delivered" },
          error: null,
        });
        assert.equal(recorded, true);
      }
      // The backends report their counters when idle, within about a second.
      const deadline = Date.now() + 15_000;
      let seen = await updates();
      while (seen.updated < 2 * deliveries && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        seen = await updates();
      }
      assert.deepEqual(seen, { updated: 2 * deliveries, hot: deliveries });
    });

    it("gives back at its lease's end what a process of the older release claimed and left", async () => {
      // The older release claimed by setting the lease alone, with a token of 16 hex digits,
      // and wrote no lease row (migration 000019's trigger writes one for it).
      await store.queue.publishEvent({
        id: "evt_older",
        workspaceId: "ws_hot",
        type: "job.failed",
        apiVersion: "2026-11-01",
        body: "{}",
        createdAt: clock.now(),
      });
      const leaseEnd = clock.now().getTime() + 60_000;
      const data = join(dir.path, "data");
      await queryTestDatabase(
        data,
        `UPDATE deliveries SET next_attempt_at = $1, lease_owner = 'older:0123456789abcdef'
         WHERE event_id = 'evt_older' RETURNING seq`,
        [leaseEnd],
      );
      const leases = await queryTestDatabase<{ expires_at: string; seqs: string }>(
        data,
        "SELECT expires_at, seqs FROM delivery_leases WHERE lease = 'older:0123456789abcdef'",
      );
      assert.equal(leases.length, 1);
      assert.equal(Number(leases[0]?.expires_at), leaseEnd);
      assert.deepEqual(await claimUpTo(store, "w", 10, 5000), [], "held until its lease ends");
      clock.advance(60_000);
      const [again] = await claimUpTo(store, "w", 10, 5000);
      assert.equal(again?.eventId, "evt_older");
      assert.deepEqual(JSON.parse(leases[0]?.seqs ?? "[]"), [again.seq]);
    });
  },
);
