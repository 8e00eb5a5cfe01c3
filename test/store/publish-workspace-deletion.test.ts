import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import type { NewEvent } from "../../src/interfaces.ts";
import { AppError } from "../../src/errors.ts";
import type { Database, SqlExecutor } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import {
  deleteWorkspaceAndContents,
  lockWorkspaceForDeletion,
} from "../../src/store/sql/workspace-deletion.ts";
import { SqlStore } from "../../src/store/sql-store.ts";
import { testBackend } from "../support/backend.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";
import { workspaceWithDestination } from "../support/delivery.ts";

/**
 * PostgreSQL's publish holds each workspace of its batch (`FOR KEY SHARE`) instead of checking
 * a foreign key per event (decision 60). A workspace's deletion in flight makes the publish
 * wait; once it commits, the deleted workspace's event is refused alone, the rest of the batch
 * is written, and nothing of the deleted workspace is left behind. SQLite's write transactions
 * run one at a time (and node:sqlite waits for a lock synchronously), so the interleaving
 * exists on PostgreSQL alone; its batch without the deleted workspace is in
 * delivery-queue.test.ts.
 */
describe(
  "a publish and a workspace's deletion at once",
  { skip: testBackend !== "postgres" && "PostgreSQL's concurrent transactions only" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let db: Database;
    let other: Database;
    let store: SqlStore;
    const clock = manualClock(Date.UTC(2026, 10, 26));

    const event = (id: string, workspaceId: string): NewEvent => ({
      id,
      workspaceId,
      type: "job.completed",
      apiVersion: "2026-11-01",
      body: `{"id":"${id}"}`,
      createdAt: clock.now(),
    });

    before(async () => {
      dir = await tempDir();
      const location = await testDatabaseLocation(join(dir.path, "data"));
      db = openDatabase(location);
      await migrate(db);
      other = openDatabase(location);
      store = new SqlStore(db, clock);
      for (const name of ["doomed", "kept"]) await workspaceWithDestination(store, name);
    });

    after(async () => {
      await store.close();
      await other.close();
      await dir.cleanup();
    });

    /**
     * A transaction on `other` held open until `release()`, after `work` has run in it; then
     * committed, or rolled back (`ended` rejects) with `rollBack`.
     */
    const heldOpen = async (
      work: (tx: SqlExecutor) => Promise<unknown>,
      rollBack = false,
    ): Promise<{ release: () => void; ended: Promise<void> }> => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let worked!: () => void;
      const done = new Promise<void>((resolve) => {
        worked = resolve;
      });
      const ended = other.transaction(async (tx) => {
        await work(tx);
        worked();
        await released;
        if (rollBack) throw new Error("rolled back");
      });
      held.push({ release, ended });
      await Promise.race([done, ended]);
      return { release, ended };
    };
    /** The transactions `heldOpen` holds: a test that fails lets them end (`afterEach`). */
    const held: { release: () => void; ended: Promise<void> }[] = [];
    afterEach(async () => {
      for (const transaction of held.splice(0)) {
        transaction.release();
        await transaction.ended.catch(() => undefined);
      }
    });

    /**
     * Waits until a backend of the database, running a statement whose text is `like`, waits
     * for a lock that another holds.
     */
    const waitUntilBlocked = async (what: string, like = "%"): Promise<void> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const blocked = await other.query(
          `SELECT 1 FROM pg_stat_activity
           WHERE datname = current_database() AND query LIKE $1
             AND cardinality(pg_blocking_pids(pid)) > 0`,
          [like],
        );
        if (blocked.length > 0) return;
        assert.ok(Date.now() < deadline, `${what} did not wait`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };

    const deleteIn = async (tx: SqlExecutor, database: Database, id: string): Promise<void> => {
      assert.equal(await lockWorkspaceForDeletion(database, tx, id), true);
      await deleteWorkspaceAndContents(database, tx, id);
    };

    /** What is left of a workspace: its events, deliveries and row. */
    const leftOf = (workspace: string): Promise<unknown[]> =>
      db.query(
        `SELECT 'event' AS what, id FROM events WHERE workspace_id = $1
         UNION ALL SELECT 'delivery', event_id FROM deliveries WHERE workspace_id = $1
         UNION ALL SELECT 'workspace', id FROM workspaces WHERE id = $1
         ORDER BY what, id`,
        [workspace],
      );

    it("waits for the deletion, refuses its workspace's event alone and leaves nothing of it", async () => {
      const deletion = await heldOpen((tx) => deleteIn(tx, other, "ws_doomed"));
      // One batch: both started in one turn.
      const publishes = Promise.allSettled([
        store.queue.publishEvent(event("evt_doomed", "ws_doomed")),
        store.queue.publishEvent(event("evt_kept", "ws_kept")),
      ]);
      await waitUntilBlocked("the publish");
      deletion.release();
      await deletion.ended;

      const [doomed, kept] = await publishes;
      assert.deepEqual(kept, { status: "fulfilled", value: 1 });
      assert.ok(doomed.status === "rejected", "refused");
      const error: unknown = doomed.reason;
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.code, "workspace_forbidden");
      assert.deepEqual(await leftOf("ws_doomed"), []);
      assert.deepEqual(await leftOf("ws_kept"), [
        { what: "delivery", id: "evt_kept" },
        { what: "event", id: "evt_kept" },
        { what: "workspace", id: "ws_kept" },
      ]);
    });

    it("makes a deletion wait for a publish of its workspace in flight, which it then deletes", async () => {
      await workspaceWithDestination(store, "late");
      // Another transaction's uncommitted event of the same id stops the publish at its
      // events' INSERT, after its statement has taken the workspace's row; rolled back later.
      const stopper = await heldOpen(
        (tx) =>
          tx.execute(
            `INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
             VALUES ('evt_late', 'ws_kept', 'job.completed', '{}', '2026-11-01', 0)`,
          ),
        true,
      );
      const publish = store.queue.publishEvent(event("evt_late", "ws_late"));
      await waitUntilBlocked("the publish");
      const deleter = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
      const deletion = deleter.transaction((tx) => deleteIn(tx, deleter, "ws_late"));
      try {
        // The deletion waits for the publish, which holds the workspace's row.
        await waitUntilBlocked("the deletion", "%FOR UPDATE%");
      } finally {
        // The stopper's event is rolled back: the publish writes its own and commits, then
        // the deletion deletes it with its workspace.
        stopper.release();
        await assert.rejects(stopper.ended);
        await deletion.finally(() => deleter.close());
      }
      assert.equal(await publish, 1);
      assert.deepEqual(await leftOf("ws_late"), []);
    });

    it("makes a test event wait for the deletion of its workspace, and write nothing", async () => {
      await workspaceWithDestination(store, "tested");
      const deletion = await heldOpen((tx) => deleteIn(tx, other, "ws_tested"));
      const tested = store.queue.publishTestEvent(event("evt_tested", "ws_tested"), "dst_tested");
      await waitUntilBlocked("the test event");
      deletion.release();
      await deletion.ended;
      assert.equal(await tested, false);
      assert.deepEqual(await leftOf("ws_tested"), []);
    });
  },
);
