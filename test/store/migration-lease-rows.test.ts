import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Migration 000021 (decision 62): SQLite's lease rows move to a table of one B-tree, keyed by
 * the lease, and every row the release before it wrote is there after it, unchanged.
 */
describe("migration 000021 over the lease rows of claims in flight", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: Database;
  const leases = [
    { lease: "older:0123456789abcdef", expires_at: 1_800_000_060_000, seqs: "[1,2,3]" },
    { lease: "older:fedcba9876543210", expires_at: 1_800_000_030_000, seqs: "[7]" },
  ];

  before(async () => {
    dir = await tempDir();
    db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
    await migrate(db, { upTo: 20 });
    for (const { lease, expires_at, seqs } of leases) {
      await db.execute(
        "INSERT INTO delivery_leases (lease, expires_at, seqs) VALUES ($1, $2, $3)",
        [lease, expires_at, seqs],
      );
    }
    await migrate(db);
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  it("keeps every lease row", async () => {
    const rows = await db.query<{ lease: string; expires_at: number | string; seqs: string }>(
      "SELECT lease, expires_at, seqs FROM delivery_leases ORDER BY lease",
    );
    assert.deepEqual(
      rows.map((row) => ({ ...row, expires_at: Number(row.expires_at) })),
      leases,
    );
  });

  it("keeps one lease a row: a second row of the same lease is refused", async () => {
    await assert.rejects(
      db.execute("INSERT INTO delivery_leases (lease, expires_at, seqs) VALUES ($1, $2, $3)", [
        leases[0]?.lease ?? "",
        1,
        "[9]",
      ]),
      /unique|duplicate/i,
    );
  });

  it("on SQLite, holds the rows in one B-tree: no rowid table, no index beside the key", async (t) => {
    if (db.dialect !== "sqlite") {
      t.skip("SQLite's layout only: PostgreSQL's 000021 changes nothing");
      return;
    }
    const pages = await db.query<{ rootpage: number }>(
      "SELECT DISTINCT rootpage FROM sqlite_schema WHERE tbl_name = 'delivery_leases'",
    );
    assert.equal(pages.length, 1, "the table and its key are one tree");
    const [table] = await db.query<{ sql: string }>(
      "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'delivery_leases'",
    );
    assert.match(table?.sql ?? "", /WITHOUT ROWID/);
  });
});
