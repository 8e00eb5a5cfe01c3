import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { claimedSql, leaseSql } from "../../src/store/sql/deliveries.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * A claim leases the rows it picked and reads them back by `seq` (decision 56). PostgreSQL
 * makes a connection's generic plan at its sixth call, which on a new deployment comes while
 * `deliveries` holds a few rows and has never been analysed; the plan is then kept as the
 * table grows. That plan was a sequential scan (a hash join over one, for the read), and
 * every claim read the whole table until an ANALYZE replaced it (45–60 blocks per delivery in
 * `bench:cluster`). Here the table holds 40 rows (one page), no statistics, PostgreSQL is made
 * to use its generic plan, and the statements run as a claim runs them: both must take
 * `deliveries_pkey`.
 */
describe("the plans of a claim's statements", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: Database;
  const rows = 40;

  before(async () => {
    dir = await tempDir();
    db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
    await migrate(db);
    const numbers =
      db.dialect === "sqlite"
        ? "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)"
        : "WITH n(i) AS (SELECT generate_series(1, CAST($1 AS INTEGER)))";
    const now = Date.now();
    await db.execute("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_c', 'c', $1)", [
      now,
    ]);
    await db.execute(
      `INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext, created_at, updated_at)
       VALUES ('dst_c', 'ws_c', 'https://hooks.test/', $1, 'sealed', $2, $2)`,
      [db.dialect === "sqlite" ? 1 : true, now],
    );
    await db.execute(
      `${numbers} INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
       SELECT 'evt_' || i, 'ws_c', 'job.completed', '{}', '2026-11-01', i FROM n`,
      [rows],
    );
    await db.execute(
      `${numbers} INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type,
         status, attempts, next_attempt_at, created_at, updated_at)
       SELECT 'evt_' || i, 'dst_c', 'ws_c', 'job.completed', 'pending', 0, i, i, i FROM n`,
      [rows],
    );
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  /** PostgreSQL's plan nodes, each with its children flattened in. */
  interface PlanNode {
    "Node Type": string;
    "Relation Name"?: string;
    "Index Name"?: string;
    Plans?: PlanNode[];
  }
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

  /**
   * Asserts that `sql`, run with `values`, finds `deliveries` by its primary key and never
   * scans it: SQLite's query plan, PostgreSQL's generic plan (`types` its parameters' types).
   */
  async function assertByPrimaryKey(
    sql: string,
    types: string,
    values: readonly (string | number)[],
  ): Promise<void> {
    if (db.dialect === "sqlite") {
      const steps = await db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, values);
      const plan = steps.map((step) => step.detail).join("\n");
      assert.match(plan, /SEARCH (deliveries|dl) USING INTEGER PRIMARY KEY/, plan);
      assert.doesNotMatch(plan, /SCAN (deliveries|dl)\b/, plan);
      return;
    }
    const literals = values.map((value) =>
      typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`,
    );
    const [root] = await db.transaction(async (tx) => {
      await tx.execute("SET LOCAL plan_cache_mode = force_generic_plan");
      // As a claim's transaction starts (src/store/sql/deliveries.ts).
      if (db.indexPlansOnly !== null) await tx.execute(db.indexPlansOnly);
      await tx.execute(`PREPARE claim_step (${types}) AS ${sql}`);
      const [row] = await tx.query<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON) EXECUTE claim_step (${literals.join(", ")})`,
      );
      await tx.execute("DEALLOCATE claim_step");
      const plan = row?.["QUERY PLAN"];
      return (typeof plan === "string" ? JSON.parse(plan) : plan) as { Plan: PlanNode }[];
    });
    assert.ok(root !== undefined);
    const nodes = nodesOf(root.Plan);
    const shown = JSON.stringify(root.Plan);
    assert.ok(
      nodes.some((node) => node["Index Name"] === "deliveries_pkey"),
      `no deliveries_pkey in ${shown}`,
    );
    assert.ok(
      !nodes.some(
        (node) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === "deliveries",
      ),
      `a sequential scan of deliveries in ${shown}`,
    );
  }

  it("leases the picked rows through the primary key", async () => {
    await assertByPrimaryKey(leaseSql(db), "BIGINT, TEXT, TEXT", [1, "lease", "[3,7,11]"]);
  });

  it("reads the claimed rows back through the primary key", async () => {
    await assertByPrimaryKey(claimedSql(db), "TEXT", ["[3,7,11]"]);
  });

  it("leases and reads exactly the rows named, an empty list none", async () => {
    const leased = await db.execute(leaseSql(db), [99, "lease_x", JSON.stringify([3, 7, 11])]);
    assert.equal(leased, 3);
    const read = await db.query<{ seq: number | string }>(claimedSql(db), [
      JSON.stringify([11, 3, 7]),
    ]);
    assert.deepEqual(
      read.map((row) => Number(row.seq)),
      [3, 7, 11],
    );
    assert.equal(await db.execute(leaseSql(db), [99, "lease_y", "[]"]), 0);
    assert.deepEqual(await db.query(claimedSql(db), ["[]"]), []);
  });
});
