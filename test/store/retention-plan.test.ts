import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import {
  deleteAtAddressesSql,
  windowDeliveriesSql,
  windowSql,
} from "../../src/store/sql/retention.ts";
import { genericPlan, planDatabase, type PlanDatabase } from "../support/plan-database.ts";

/**
 * A retention batch finds each row once and deletes it at its address (decision 57): the
 * window of events by a range of their primary key, their deliveries by one lookup per event,
 * and the deletes with no index at all (PostgreSQL's TID scan, SQLite's rowid). PostgreSQL's
 * generic plan, made on a table of one page that was never analysed (as on a new deployment),
 * must keep to those paths as the tables grow; a scan of either table would read every row
 * kept, at every batch.
 */
describe("the plans of a retention batch's statements", () => {
  let plans: PlanDatabase;
  let db: Database;
  const rows = 40;

  before(async () => {
    plans = await planDatabase(rows, { deliveries: "delivered" });
    db = plans.db;
  });
  after(async () => {
    await plans.dispose();
  });

  /** Asserts that `plan` reads `table` by `index` (PostgreSQL) and never scans it whole. */
  function assertNoScanOf(
    plan: Awaited<ReturnType<typeof genericPlan>>,
    table: string,
    expected: {
      postgres: (node: { "Node Type": string; "Index Name"?: string }) => boolean;
      sqlite: RegExp;
    },
  ): void {
    if (plan.engine === "sqlite") {
      assert.match(plan.text, expected.sqlite, plan.text);
      assert.doesNotMatch(plan.text, new RegExp(`SCAN ${table}\\b`), plan.text);
      return;
    }
    assert.ok(plan.nodes.some(expected.postgres), `not the expected path in ${plan.text}`);
    assert.ok(
      !plan.nodes.some(
        (node) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === table,
      ),
      `a sequential scan of ${table} in ${plan.text}`,
    );
  }

  it("reads the window of events through their primary key", async () => {
    assertNoScanOf(await genericPlan(db, windowSql(db), "BIGINT, INTEGER", [3, 250]), "events", {
      postgres: (node) => node["Index Name"] === "events_pkey",
      sqlite: /SEARCH events USING INTEGER PRIMARY KEY \(rowid>\?\)/,
    });
  });

  it("finds the window's deliveries by event", async () => {
    const plan = await genericPlan(db, windowDeliveriesSql(db), "TEXT", [
      JSON.stringify(["evt_3", "evt_4"]),
    ]);
    assertNoScanOf(plan, "deliveries", {
      postgres: (node) => node["Index Name"] === "deliveries_event_id_destination_id_key",
      sqlite: /SEARCH deliveries USING INDEX sqlite_autoindex_deliveries_\d \(event_id=\?\)/,
    });
  });

  it("deletes deliveries and events at their address", async () => {
    for (const table of ["deliveries", "events"] as const) {
      const plan = await genericPlan(db, deleteAtAddressesSql(db, table), "TEXT", [
        JSON.stringify(db.dialect === "sqlite" ? [3, 4] : ["(0,3)", "(0,4)"]),
      ]);
      assertNoScanOf(plan, table, {
        postgres: (node) => node["Node Type"] === "Tid Scan",
        sqlite: new RegExp(`SEARCH ${table} USING INTEGER PRIMARY KEY \\(rowid=\\?\\)`),
      });
    }
  });

  it("reads and deletes exactly the rows named", async () => {
    const removed = await db.transaction(async (tx) => {
      const window = await tx.query<{ seq: number | string; address: string | number }>(
        windowSql(db),
        [3, 2],
      );
      assert.deepEqual(
        window.map((row) => Number(row.seq)),
        [4, 5],
      );
      const deliveries = await tx.query<{ event_id: string; address: string | number }>(
        windowDeliveriesSql(db),
        [JSON.stringify(["evt_4", "evt_5"])],
      );
      assert.deepEqual(deliveries.map((row) => row.event_id).sort(), ["evt_4", "evt_5"]);
      const gone = await tx.execute(deleteAtAddressesSql(db, "deliveries"), [
        JSON.stringify(deliveries.map((row) => row.address)),
      ]);
      const events = await tx.execute(deleteAtAddressesSql(db, "events"), [
        JSON.stringify(window.map((row) => row.address)),
      ]);
      return gone + events;
    });
    assert.equal(removed, 4);
    const left = await db.query<{ id: string }>(
      "SELECT id FROM events WHERE id IN ('evt_3', 'evt_4', 'evt_5', 'evt_6') ORDER BY id",
    );
    assert.deepEqual(
      left.map((row) => row.id),
      ["evt_3", "evt_6"],
    );
  });
});
