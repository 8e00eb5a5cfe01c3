import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { backlogCountSql, heldCountSql, lastDeliverySql } from "../../src/store/sql/deliveries.ts";
import { deliveryPageQuery } from "../../src/store/sql/delivery-log.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Reads that run on every request must follow an index in their own order, not sort what
 * they find: each is EXPLAINed on a destination with 5,000 deliveries (statistics gathered),
 * and its plan must have no sort. (The latest delivery of `GET …/webhooks/{id}` once sorted
 * every delivery of the destination: at 500 requests/s its p99 reached 43 s.)
 */
describe("query plans of the reads made on every request", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: Database;
  const rows = 5_000;

  before(async () => {
    dir = await tempDir();
    db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
    await migrate(db);
    const now = Date.now();
    await db.transaction(async (tx) => {
      await tx.execute("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_p', 'p', $1)", [
        now,
      ]);
      for (const id of ["dst_p", "dst_q"]) {
        await tx.execute(
          `INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext, created_at, updated_at)
           VALUES ($1, 'ws_p', 'https://hooks.test/', $2, 'sealed', $3, $3)`,
          [id, db.dialect === "sqlite" ? 1 : true, now],
        );
      }
      const numbers =
        db.dialect === "sqlite"
          ? "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)"
          : "WITH n(i) AS (SELECT generate_series(1, CAST($1 AS INTEGER)))";
      await tx.execute(
        `${numbers} INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
         SELECT 'evt_' || i, 'ws_p', 'job.completed', '{}', '2026-11-01', CAST($2 AS BIGINT) + i FROM n`,
        [rows, now],
      );
      await tx.execute(
        `${numbers} INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type,
           status, attempts, created_at, updated_at)
         SELECT 'evt_' || i, CASE WHEN i % 10 = 0 THEN 'dst_q' ELSE 'dst_p' END, 'ws_p',
           'job.completed', 'delivered', 1, CAST($2 AS BIGINT) + i, CAST($2 AS BIGINT) + i FROM n`,
        [rows, now],
      );
    });
    await db.execute("ANALYZE");
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  const createdAtOf = async (seq: number): Promise<number | string> => {
    const [row] = await db.query<{ created_at: number | string }>(
      "SELECT created_at FROM deliveries WHERE seq = $1",
      [seq],
    );
    return row?.created_at ?? assert.fail(`no delivery ${seq}`);
  };

  /** The plan's text: SQLite's EXPLAIN QUERY PLAN details, or PostgreSQL's plan as JSON. */
  const plan = async (sql: string, values: readonly (string | number)[]): Promise<string> => {
    if (db.dialect === "sqlite") {
      const steps = await db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, [...values]);
      return steps.map((step) => step.detail).join("\n");
    }
    const [row] = await db.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, [
      ...values,
    ]);
    return JSON.stringify(row?.["QUERY PLAN"]);
  };

  it("the latest delivery of a destination (GET …/webhooks/{id}): an index, no sort", async () => {
    const text = await plan(lastDeliverySql, ["dst_q", "ws_p"]);
    assert.match(text, /deliveries_by_destination/, text);
    assert.doesNotMatch(text, /TEMP B-TREE|"Node Type":"Sort"/, text);
    const rowsOf = await db.query(lastDeliverySql, ["dst_q", "ws_p"]);
    assert.equal(rowsOf.length, 1);
  });

  it("the failed deliveries' lists (the log's failed filter): a partial index of the failed", async () => {
    // Either of the two: each holds the failed ones alone, whatever else the table holds.
    for (const filter of [
      { status: "failed" },
      { status: "failed", destinationId: "dst_q" },
    ] as const) {
      const query = deliveryPageQuery("ws_p", filter, { limit: 50, cursor: null });
      const text = await plan(query.sql, query.values as (string | number)[]);
      assert.match(text, /deliveries_failed_by_(workspace|destination)/, text);
    }
  });

  it("a page names only the time bounds asked for, and keeps its order with them", async () => {
    const first = deliveryPageQuery("ws_p", { destinationId: "dst_q" }, { limit: 3, cursor: null });
    assert.doesNotMatch(first.sql, /created_at (<|>)=/, first.sql);
    const newest = await db.query<{ seq: number | string }>(first.sql, [...first.values]);
    assert.deepEqual(
      newest.map((row) => Number(row.seq)),
      [5_000, 4_990, 4_980, 4_970],
    );
    const since = new Date(Number(await createdAtOf(4_975)));
    const until = new Date(Number(await createdAtOf(4_995)));
    const bounded = deliveryPageQuery(
      "ws_p",
      { destinationId: "dst_q", since, until },
      { limit: 3, cursor: null },
    );
    const inRange = await db.query<{ seq: number | string }>(bounded.sql, [...bounded.values]);
    assert.deepEqual(
      inRange.map((row) => Number(row.seq)),
      [4_990, 4_980],
    );
  });

  it("the backlog's count (at each scrape): the indexes of the waiting and of listen sessions alone", async () => {
    const text = await plan(backlogCountSql(), []);
    if (db.dialect === "sqlite") {
      // A covering index: the count reads no row of the table (decision 58).
      assert.match(text, /(SCAN|SEARCH) deliveries USING COVERING INDEX deliveries_due\b/, text);
      assert.match(text, /SCAN deliveries USING COVERING INDEX deliveries_listen_due/, text);
    } else {
      assert.match(text, /"Index Name":"deliveries_due"/, text);
      assert.match(text, /"Index Name":"deliveries_listen_due"/, text);
    }
    // The claims' share: each lease's deliveries by the primary key.
    const held = await plan(heldCountSql(db), [
      JSON.stringify([
        [3, "l"],
        [7, "l"],
      ]),
    ]);
    assert.match(
      held,
      db.dialect === "sqlite"
        ? /SEARCH dl USING INTEGER PRIMARY KEY/
        : /"Index Name":"deliveries_pkey"/,
      held,
    );
  });

  it("a first page's plan reads no more after the oldest rows were deleted (PostgreSQL's planner)", async (t) => {
    if (db.dialect !== "postgres") {
      t.skip("PostgreSQL's planner alone looks up an index's actual ends");
      return;
    }
    // Retention deletes from the oldest end; until a vacuum, those index entries are dead. A
    // page that named `created_at >= 0` made the planner walk them all at each plan. (This
    // test deletes rows of the file's fixture: it stays the last.)
    const planBuffers = async (): Promise<number> => {
      const query = deliveryPageQuery(
        "ws_p",
        { destinationId: "dst_q" },
        { limit: 100, cursor: null },
      );
      const [row] = await db.query<{ "QUERY PLAN": [{ Planning: Record<string, number> }] }>(
        `EXPLAIN (BUFFERS, SUMMARY, FORMAT JSON) ${query.sql}`,
        [...query.values],
      );
      const planning = row?.["QUERY PLAN"][0].Planning ?? {};
      return (planning["Shared Hit Blocks"] ?? 0) + (planning["Shared Read Blocks"] ?? 0);
    };
    await planBuffers(); // the catalogs' caches, once
    const before = await planBuffers();
    assert.ok(before > 0, "the plan gives its buffers");
    await db.execute("DELETE FROM deliveries WHERE seq <= 4000");
    const after = await planBuffers();
    assert.ok(after <= before + 5, `planning read ${before} blocks, then ${after}`);
  });
});
