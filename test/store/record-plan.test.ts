import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import { recordSql } from "../../src/store/sql/deliveries.ts";
import { genericPlan, planDatabase, type PlanDatabase } from "../support/plan-database.ts";

/**
 * The statement that records a round of results must find its rows by the primary key,
 * whatever else is pending (decision 53). Its `status = 'pending'` test once matched the
 * predicate of `deliveries_due`, and the generic plan PostgreSQL makes at a connection's
 * sixth call, on a table never analysed, read that whole index and joined it by hash to the
 * round: its cost grew with the backlog. Here 6,000 deliveries are pending among 30,000, no
 * statistics are gathered, and PostgreSQL is made to use its generic plan.
 */
describe("the plan of the statement that records results", () => {
  let plans: PlanDatabase;
  let db: Database;
  const rows = 30_000;

  before(async () => {
    plans = await planDatabase(rows);
    db = plans.db;
    // One in five pending, leased to `l`; the rest delivered.
    await db.execute(
      `${plans.numbers} INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type,
         status, attempts, next_attempt_at, lease_owner, created_at, updated_at)
       SELECT 'evt_' || i, 'dst_p', 'ws_p', 'job.completed',
         CASE WHEN i % 5 = 0 THEN 'pending' ELSE 'delivered' END, 0,
         CASE WHEN i % 5 = 0 THEN i END, CASE WHEN i % 5 = 0 THEN 'l' END, i, i FROM n`,
      [rows],
    );
  });
  after(async () => {
    await plans.dispose();
  });

  /** A round of three reports on pending deliveries, each its first attempt made. */
  const round = (seqs: readonly number[]): string =>
    JSON.stringify(
      seqs.map((seq) => [seq, "l", "delivered", null, null, 1, 7, 200, 3, null, "ok", null, "v1"]),
    );

  it("reads the round's rows by the primary key, never the pending ones", async () => {
    const { results, update } = recordSql(db);
    const sql = `WITH ${results} ${update} RETURNING deliveries.seq`;
    // Not in a claim's transaction: planned as the worker runs it.
    const plan = await genericPlan(db, sql, "BIGINT, TEXT", [1, round([5, 10, 15])], {
      indexPlansOnly: false,
    });
    const { text } = plan;
    if (plan.engine === "sqlite") {
      // The round's rows read once, each delivery then found by its key.
      assert.match(text, /SCAN jsonb?_each[^]*SEARCH deliveries USING INTEGER PRIMARY KEY/, text);
      assert.doesNotMatch(text, /LIST SUBQUERY|SCAN deliveries/, text);
    } else {
      assert.match(text, /"Index Name":"deliveries_pkey"/, text);
      assert.doesNotMatch(text, /"Node Type":"Seq Scan"/, text);
    }
    assert.doesNotMatch(text, /deliveries_due/, text);
  });

  it("records exactly the reported rows, with the first attempt in the row", async () => {
    const { results, update } = recordSql(db);
    const recorded = await db.query<{ seq: number | string }>(
      `WITH ${results} ${update} RETURNING deliveries.seq`,
      [1, round([20, 25, 26])], // 26 is not pending: not recorded
    );
    assert.deepEqual(recorded.map((row) => Number(row.seq)).sort(), [20, 25]);
    const [row] = await db.query<Record<string, unknown>>(
      `SELECT status, attempts, first_started_at, first_status_code, first_response_body,
              first_webhook_signature
       FROM deliveries WHERE seq = 20`,
    );
    assert.deepEqual(
      Object.fromEntries(Object.entries(row ?? {}).map(([key, value]) => [key, String(value)])),
      {
        status: "delivered",
        attempts: "1",
        first_started_at: "7",
        first_status_code: "200",
        first_response_body: "ok",
        first_webhook_signature: "v1",
      },
    );
  });
});
