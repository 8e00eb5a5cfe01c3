import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { NewEvent } from "../../src/interfaces.ts";
import type { Database, SqlExecutor, TransactionOptions } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { publishEvents } from "../../src/store/sql/events.ts";
import { SqlStore } from "../../src/store/sql-store.ts";
import { testBackend } from "../support/backend.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * SQLite counts an event's fan-out from the deliveries it wrote, and takes the batch back to a
 * savepoint when one is over its limit; a workspace refused once has its later batches counted
 * before they are written, so that it does not pay a write undone on every publish (decision
 * 59). Told apart by the statements the publish runs.
 */
describe(
  "SQLite's fan-out count",
  { skip: testBackend !== "sqlite" && "SQLite's publish only: PostgreSQL counts in its statement" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let db: Database;
    let store: SqlStore;
    const statements: string[] = [];
    /** Whether each transaction was run as bounded (its undo copies in memory: decision 62). */
    const bounded: boolean[] = [];
    /** The database, with every statement its transactions run written down. */
    let recording: Database;
    let counter = 0;

    before(async () => {
      dir = await tempDir();
      db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
      await migrate(db);
      store = new SqlStore(db, manualClock(Date.UTC(2026, 10, 26)));
      for (const workspace of ["ws_wide", "ws_narrow"]) {
        await store.credentials.createWorkspace({ id: workspace, name: workspace });
      }
      for (const [id, workspace] of [
        ["dst_wide1", "ws_wide"],
        ["dst_wide2", "ws_wide"],
        ["dst_wide3", "ws_wide"],
        ["dst_narrow", "ws_narrow"],
      ] as const) {
        await store.destinations.createDestination({
          id,
          workspaceId: workspace,
          url: `https://hooks.test/${id}`,
          events: ["*"],
          secretCiphertext: "sealed",
        });
      }
      const recorded = (tx: SqlExecutor): SqlExecutor => ({
        query: (sql, params) => {
          statements.push(sql);
          return tx.query(sql, params);
        },
        execute: (sql, params) => {
          statements.push(sql);
          return tx.execute(sql, params);
        },
      });
      recording = new Proxy(db, {
        get(target, name) {
          if (name === "transaction") {
            return (work: (tx: SqlExecutor) => Promise<unknown>, options?: TransactionOptions) => {
              bounded.push(options?.bounded ?? false);
              return target.transaction((tx) => work(recorded(tx)), options);
            };
          }
          const value = Reflect.get(target, name) as unknown;
          return typeof value === "function"
            ? (value as (...args: unknown[]) => unknown).bind(target)
            : value;
        },
      });
    });
    after(async () => {
      await store.close();
      await dir.cleanup();
    });

    const event = (workspaceId: string): NewEvent => {
      counter += 1;
      return {
        id: `evt_${counter.toString(16).padStart(28, "0")}`,
        workspaceId,
        type: "job.completed",
        apiVersion: "2026-11-01",
        body: "{}",
        createdAt: new Date(Date.UTC(2026, 10, 26)),
      };
    };
    /** Publishes a batch with a fan-out limit of 2; what it answered and the statements it ran. */
    const publish = async (...workspaces: string[]) => {
      statements.length = 0;
      const batch = await publishEvents(
        recording,
        workspaces.map(event),
        null,
        workspaces.map(() => 2),
      );
      const ran = (pattern: RegExp) => statements.some((sql) => pattern.test(sql));
      return {
        queued: batch.queued,
        wroteThenUndid: ran(/ROLLBACK TO fan_out/),
        countedFirst: ran(/AS fan_out\b/),
      };
    };

    it("writes a batch within its limits once, and counts nothing before", async () => {
      assert.deepEqual(await publish("ws_narrow"), {
        queued: [1],
        wroteThenUndid: false,
        countedFirst: false,
      });
    });

    it("refuses an event over its limit by undoing the batch's write, and writes the others again", async () => {
      assert.deepEqual(await publish("ws_wide", "ws_narrow"), {
        queued: [null, 1],
        wroteThenUndid: true,
        countedFirst: false,
      });
    });

    it("counts a refused workspace's later batches before writing them, with the same answers", async () => {
      assert.deepEqual(await publish("ws_narrow", "ws_wide"), {
        queued: [1, null],
        wroteThenUndid: false,
        countedFirst: true,
      });
      assert.deepEqual(await publish("ws_narrow"), {
        queued: [1],
        wroteThenUndid: false,
        countedFirst: false,
      });
      const written = await db.query<{ workspace_id: string }>(
        "SELECT workspace_id FROM events ORDER BY seq",
      );
      assert.deepEqual(
        written.map((row) => row.workspace_id),
        ["ws_narrow", "ws_narrow", "ws_narrow", "ws_narrow"],
        "no event of the workspace over its limit was written",
      );
    });

    it("keeps a batch's undo copies in memory only while its workspaces may hold 16,384 destinations in all", async () => {
      const boundedWith = async (workspaces: string[], reach?: number) => {
        bounded.length = 0;
        await publishEvents(
          recording,
          workspaces.map(event),
          null,
          workspaces.map(() => 2),
          reach === undefined ? undefined : workspaces.map(() => reach),
        );
        return bounded;
      };
      const narrow = Array.from({ length: 40 }, () => "ws_narrow");
      assert.deepEqual(await boundedWith(narrow, 16_384), [true], "one workspace counts once");
      assert.deepEqual(
        await boundedWith(["ws_narrow", "ws_wide"], 8_192),
        [true],
        "two workspaces of 8,192 destinations",
      );
      assert.deepEqual(
        await boundedWith(["ws_narrow", "ws_wide"], 8_193),
        [false],
        "two workspaces of 8,193",
      );
      assert.deepEqual(await boundedWith(["ws_narrow"]), [false], "a reach not known");
    });
  },
);
