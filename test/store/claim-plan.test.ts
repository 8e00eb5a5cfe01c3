import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import { claimedSql, claimFunctionSql, leaseSql } from "../../src/store/sql/deliveries.ts";
import { genericPlan, planDatabase, type PlanDatabase } from "../support/plan-database.ts";

/**
 * A claim leases the rows it picked and reads them back by `seq` (decision 56). PostgreSQL
 * makes a connection's generic plan at its sixth call, which on a new deployment comes while
 * `deliveries` holds a few rows and has never been analysed; the plan is then kept as the
 * table grows. That plan was a sequential scan (a hash join over one, for the read), and
 * every claim read the whole table until an ANALYZE replaced it (45–60 blocks per delivery in
 * `bench:cluster`). Here the table holds 40 rows (one page), no statistics, PostgreSQL is made
 * to use its generic plan, and the statements run as a claim runs them: both must take
 * `deliveries_pkey`. SQLite's claim runs them; PostgreSQL's is one call of a function (decision
 * 66), whose statements must scan no table either (the listen session's claim still reads its
 * rows back with `claimedSql` there).
 */
describe("the plans of a claim's statements", () => {
  let plans: PlanDatabase;
  let db: Database;
  const rows = 40;

  before(async () => {
    plans = await planDatabase(rows, { deliveries: "pending" });
    db = plans.db;
  });
  after(async () => {
    await plans.dispose();
  });

  /**
   * Asserts that `sql`, run with `values`, finds `deliveries` by its primary key and never
   * scans it: SQLite's query plan, PostgreSQL's generic plan (`types` its parameters' types).
   */
  async function assertByPrimaryKey(
    sql: string,
    types: string,
    values: readonly (string | number)[],
  ): Promise<void> {
    const plan = await genericPlan(db, sql, types, values);
    if (plan.engine === "sqlite") {
      assert.match(plan.text, /SEARCH (deliveries|dl) USING INTEGER PRIMARY KEY/, plan.text);
      assert.doesNotMatch(plan.text, /SCAN (deliveries|dl)\b/, plan.text);
      return;
    }
    assert.ok(
      plan.nodes.some((node) => node["Index Name"] === "deliveries_pkey"),
      `no deliveries_pkey in ${plan.text}`,
    );
    assert.ok(
      !plan.nodes.some(
        (node) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === "deliveries",
      ),
      `a sequential scan of deliveries in ${plan.text}`,
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

  it("on PostgreSQL, claims in one call whose plans keep off sequential scans", async (t) => {
    if (db.dialect !== "postgres") {
      t.skip("SQLite claims in statements of its own (decision 66)");
      return;
    }
    const [setting] = await db.query<{ config: string[] | null }>(
      "SELECT proconfig AS config FROM pg_proc WHERE proname = 'svc_claim_deliveries'",
    );
    assert.deepEqual(setting?.config, ["enable_seqscan=off"]);
    // Its generic plans, made on these small tables never analysed, scan none of them. (The
    // view's counts include the connection's earlier transactions not yet reported: the
    // difference is the calls'.)
    const scansOfCalls = await db.transaction(async (tx) => {
      const scans = async (): Promise<Map<string, number>> => {
        const rows = await tx.query<{ relname: string; seq_scan: string }>(
          `SELECT relname, seq_scan FROM pg_stat_xact_user_tables
           WHERE relname IN ('deliveries', 'delivery_leases', 'destinations', 'events')`,
        );
        return new Map(rows.map((row) => [row.relname, Number(row.seq_scan)]));
      };
      await tx.execute("SET LOCAL plan_cache_mode = force_generic_plan");
      const before = await scans();
      for (let call = 0; call < 3; call += 1) {
        await tx.query(claimFunctionSql, [
          ...[1000, 9000, `lease_plan_${call}`, "[]", "[]", 40, 1, 1, "{}", 1, "{}"],
        ]);
      }
      const after = await scans();
      return [...after].map(([table, count]) => [table, count - (before.get(table) ?? 0)]);
    });
    assert.deepEqual(scansOfCalls.sort(), [
      ["deliveries", 0],
      ["delivery_leases", 0],
      ["destinations", 0],
      ["events", 0],
    ]);
    await db.execute(
      "UPDATE deliveries SET lease_owner = NULL, next_attempt_at = seq WHERE lease_owner LIKE 'lease_plan_%'",
    );
    await db.execute("DELETE FROM delivery_leases WHERE lease LIKE 'lease_plan_%'");
    await db.execute(
      "INSERT INTO delivery_leases (lease, expires_at, seqs) VALUES ('lease_ran_out', 0, '[3]')",
    );
    // Its delivery, due again at the lease's end: the oldest due.
    await db.execute(
      "UPDATE deliveries SET lease_owner = 'lease_ran_out', next_attempt_at = 0 WHERE seq = 3",
    );
    // A room of 4, at most 2 of a workspace: the workspace's room decides.
    const claimed = await db.query<{ seq: number | string; body: string; url: string }>(
      claimFunctionSql,
      [1000, 9000, "lease_new", "[]", "[]", 40, 4, 4, "{}", 2, "{}"],
    );
    assert.deepEqual(
      claimed.map((row) => Number(row.seq)),
      [1, 3],
      "the given-back one (due at 0) and the oldest other (due at 1), by seq",
    );
    assert.ok(claimed.every((row) => row.body === "{}" && row.url === "https://hooks.test/"));
    const leases = await db.query<{ lease: string; expires_at: string; seqs: string }>(
      "SELECT lease, expires_at, seqs FROM delivery_leases ORDER BY lease",
    );
    assert.deepEqual(
      leases.map((row) => [row.lease, Number(row.expires_at), JSON.parse(row.seqs) as unknown]),
      [["lease_new", 9000, [3, 1]]],
      "the ran-out lease gone; the new one with its deliveries in the order picked",
    );
    const none = await db.query(claimFunctionSql, [
      1000,
      9000,
      "lease_none",
      "[]",
      "[]",
      40,
      4,
      4,
      "{}",
      0,
      "{}",
    ]);
    assert.deepEqual(none, [], "no room: nothing, and no lease row");
    assert.equal(
      (await db.query("SELECT 1 FROM delivery_leases WHERE lease = 'lease_none'")).length,
      0,
    );
  });
});
