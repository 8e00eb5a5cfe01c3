import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { NewEvent } from "../../src/interfaces.ts";
import { AppError } from "../../src/errors.ts";
import type { Database } from "../../src/store/database.ts";
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
      for (const workspace of ["ws_doomed", "ws_kept"]) {
        await store.credentials.createWorkspace({ id: workspace, name: workspace });
        await store.destinations.createDestination({
          id: `dst_${workspace}`,
          workspaceId: workspace,
          url: `https://hooks.test/${workspace}`,
          events: ["*"],
          secretCiphertext: "sealed",
        });
      }
    });

    after(async () => {
      await store.close();
      await other.close();
      await dir.cleanup();
    });

    it("waits for the deletion, refuses its workspace's event alone and leaves nothing of it", async () => {
      let deleted!: () => void;
      const deletionHolds = new Promise<void>((resolve) => {
        deleted = resolve;
      });
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => {
        commit = resolve;
      });
      const deletion = other.transaction(async (tx) => {
        assert.equal(await lockWorkspaceForDeletion(other, tx, "ws_doomed"), true);
        await deleteWorkspaceAndContents(other, tx, "ws_doomed");
        deleted();
        await committing;
      });
      await deletionHolds;

      // One batch: both started in one turn.
      const publishes = Promise.allSettled([
        store.queue.publishEvent(event("evt_doomed", "ws_doomed")),
        store.queue.publishEvent(event("evt_kept", "ws_kept")),
      ]);
      // The publish waits on the deleted workspace's row, which the deletion holds.
      for (let waited = 0; ; waited += 1) {
        const waiting = await other.query(
          `SELECT 1 FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'
             AND query LIKE '%FOR KEY SHARE%'`,
        );
        if (waiting.length > 0) break;
        assert.ok(waited < 500, "the publish did not wait for the deletion");
        await new Promise((resolve) => setImmediate(resolve));
      }
      commit();
      await deletion;

      const [doomed, kept] = await publishes;
      assert.deepEqual(kept, { status: "fulfilled", value: 1 });
      assert.ok(doomed.status === "rejected", "refused");
      const error: unknown = doomed.reason;
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.code, "unauthenticated");

      const left = await db.query<{ what: string; id: string }>(
        `SELECT 'event' AS what, id FROM events
         UNION ALL SELECT 'delivery', event_id FROM deliveries
         UNION ALL SELECT 'workspace', id FROM workspaces WHERE id LIKE 'ws_%'
         ORDER BY what, id`,
      );
      assert.deepEqual(left, [
        { what: "delivery", id: "evt_kept" },
        { what: "event", id: "evt_kept" },
        { what: "workspace", id: "ws_kept" },
      ]);
    });

    it("holds a deletion that comes while a publish of its workspace is written, which then deletes what it wrote", async () => {
      await store.credentials.createWorkspace({ id: "ws_late", name: "ws_late" });
      await store.destinations.createDestination({
        id: "dst_ws_late",
        workspaceId: "ws_late",
        url: "https://hooks.test/ws_late",
        events: ["*"],
        secretCiphertext: "sealed",
      });
      // The publish's statement holds the workspace until its commit; a transaction that
      // holds it the same way stands in for a publish caught between its lock and its commit.
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => {
        commit = resolve;
      });
      let holding!: () => void;
      const holds = new Promise<void>((resolve) => {
        holding = resolve;
      });
      const publish = other.transaction(async (tx) => {
        await tx.query("SELECT id FROM workspaces WHERE id = $1 FOR KEY SHARE", ["ws_late"]);
        await tx.execute(
          `INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
           VALUES ('evt_late', 'ws_late', 'job.completed', '{}', '2026-11-01', 0)`,
        );
        holding();
        await committing;
      });
      await holds;
      const deletion = db.transaction(async (tx) => {
        await lockWorkspaceForDeletion(db, tx, "ws_late");
        await deleteWorkspaceAndContents(db, tx, "ws_late");
      });
      for (let waited = 0; ; waited += 1) {
        const waiting = await other.query(
          `SELECT 1 FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'
             AND query LIKE '%FOR UPDATE%'`,
        );
        if (waiting.length > 0) break;
        assert.ok(waited < 500, "the deletion did not wait for the publish");
        await new Promise((resolve) => setImmediate(resolve));
      }
      commit();
      await publish;
      await deletion;
      const left = await db.query(
        "SELECT id FROM events WHERE workspace_id = 'ws_late' UNION ALL SELECT id FROM workspaces WHERE id = 'ws_late'",
      );
      assert.deepEqual(left, []);
    });
  },
);
