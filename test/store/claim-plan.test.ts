import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import {
  claimedSql,
  leaseAndReadSql,
  leaseSql,
  reclaimAndCandidatesSql,
} from "../../src/store/sql/deliveries.ts";
import { genericPlan, planDatabase, type PlanDatabase } from "../support/plan-database.ts";

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

  it("on PostgreSQL, leases and reads in one statement through the primary key", async (t) => {
    if (db.dialect !== "postgres") {
      t.skip("SQLite runs the lease and the read as two statements (decision 66)");
      return;
    }
    await assertByPrimaryKey(leaseAndReadSql(db), "BIGINT, TEXT, TEXT", [1, "l", "[3,7,11]"]);
    const read = await db.query<{ seq: number | string; destination_id: string; body: string }>(
      leaseAndReadSql(db),
      [99, "lease_one", JSON.stringify([11, 3, 7])],
    );
    assert.deepEqual(
      read.map((row) => Number(row.seq)),
      [3, 7, 11],
    );
    assert.ok(read.every((row) => typeof row.body === "string" && row.destination_id !== ""));
    const leased = await db.query<{ seq: number | string }>(
      "SELECT seq FROM deliveries WHERE lease_owner = $1 AND next_attempt_at = $2 ORDER BY seq",
      ["lease_one", 99],
    );
    assert.deepEqual(
      leased.map((row) => Number(row.seq)),
      [3, 7, 11],
    );
    const [lease] = await db.query<{ expires_at: number | string; seqs: string }>(
      "SELECT expires_at, seqs FROM delivery_leases WHERE lease = $1",
      ["lease_one"],
    );
    assert.deepEqual(
      [Number(lease?.expires_at), JSON.parse(lease?.seqs ?? "null")],
      [99, [11, 3, 7]],
    );
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

  it("on PostgreSQL, finds the candidates and the leases that ran out by index", async (t) => {
    if (db.dialect !== "postgres") {
      t.skip("SQLite gives back and reads in statements of their own (decision 66)");
      return;
    }
    const sql = reclaimAndCandidatesSql(db);
    const plan = await genericPlan(db, sql, "BIGINT, TEXT, TEXT, BIGINT", [1000, "[]", "[]", 10]);
    assert.equal(plan.engine, "postgres");
    assert.ok(
      plan.nodes.some((node) => node["Index Name"] === "deliveries_due"),
      `no deliveries_due in ${plan.text}`,
    );
    assert.ok(
      !plan.nodes.some(
        (node) =>
          node["Node Type"] === "Seq Scan" &&
          ["deliveries", "delivery_leases"].includes(node["Relation Name"] ?? ""),
      ),
      `a sequential scan in ${plan.text}`,
    );
  });

  it("on PostgreSQL, reads and locks no candidate while a lease that ran out is given back", async (t) => {
    if (db.dialect !== "postgres") {
      t.skip("SQLite gives back and reads in statements of their own (decision 66)");
      return;
    }
    const sql = reclaimAndCandidatesSql(db);
    const values = [1000, "[]", "[]", 10];
    const waiting = `SELECT seq FROM deliveries WHERE lease_owner IS NULL AND next_attempt_at IS NOT NULL
       ORDER BY seq FOR UPDATE SKIP LOCKED`;
    const unleased = (await db.query<{ seq: number | string }>(waiting)).length;
    await db.execute(
      "INSERT INTO delivery_leases (lease, expires_at, seqs) VALUES ('lease_ran_out', 5, '[1]')",
    );
    await db.transaction(
      async (tx) => {
        const rows = await tx.query<{ seq: unknown; lease: string | null }>(sql, values);
        assert.ok(rows.length > 0 && rows.every((row) => row.seq === null), "no candidate");
        assert.ok(
          rows.some((row) => row.lease === "lease_ran_out"),
          "the leases that ran out",
        );
        // Another connection finds every waiting delivery unlocked.
        assert.equal((await db.query(waiting)).length, unleased);
      },
      { indexPlansOnly: true },
    );
    await db.transaction(
      async (tx) => {
        const rows = await tx.query<{ seq: number | string; lease: string | null }>(sql, values);
        assert.equal(rows.length, 10);
        assert.ok(rows.every((row) => row.lease === null));
        const seqs = rows.map((row) => Number(row.seq));
        assert.deepEqual(
          seqs,
          [...seqs].sort((a, b) => a - b),
          "oldest due first",
        );
        assert.equal((await db.query(waiting)).length, unleased - 10, "the candidates locked");
      },
      { indexPlansOnly: true },
    );
    assert.deepEqual(
      await db.query("SELECT lease FROM delivery_leases WHERE lease = 'lease_ran_out'"),
      [],
    );
  });
});
