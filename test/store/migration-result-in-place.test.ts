import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Migration 000019 (decision 58) over rows of the schema before it, one in each state a
 * delivery can be in: nothing a claim held is stranded out of the due index without a lease
 * row, the waiting stay waiting, and the ended and the failed stay out of it.
 */
describe("migration 000019 over deliveries in every state", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: Database;
  const now = 1_800_000_000_000;

  before(async () => {
    dir = await tempDir();
    db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
    await migrate(db, { upTo: 18 });
    const active = db.dialect === "sqlite" ? 1 : true;
    await db.execute("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_m', 'm', $1)", [
      now,
    ]);
    for (const [id, kind] of [
      ["dst_m", "webhook"],
      ["lst_m", "listen"],
    ] as const) {
      await db.execute(
        `INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext, created_at,
                                   updated_at, kind)
         VALUES ($1, 'ws_m', 'https://hooks.test/', $2, 'sealed', $3, $3, $4)`,
        [id, active, now, kind],
      );
    }
    // As the older release left them: (event, destination, status, next_attempt_at,
    // lease_owner, listen_due_at, failure_reason).
    const rows: [
      string,
      string,
      string,
      number | null,
      string | null,
      number | null,
      string | null,
    ][] = [
      ["evt_waiting", "dst_m", "pending", now, null, null, null],
      ["evt_claimed_1", "dst_m", "pending", now + 60_000, "old:0123456789abcdef", null, null],
      ["evt_claimed_2", "dst_m", "pending", now + 60_000, "old:0123456789abcdef", null, null],
      ["evt_listen", "lst_m", "pending", null, "str:fedcba9876543210", now + 30_000, null],
      ["evt_delivered", "dst_m", "delivered", null, null, null, null],
      ["evt_failed", "dst_m", "failed", null, null, null, "destination_refused"],
      ["evt_failed_old", "dst_m", "failed", null, null, null, null],
    ];
    for (const [event, destination, status, next, lease, listenDue, reason] of rows) {
      await db.execute(
        `INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
         VALUES ($1, 'ws_m', 'job.completed', '{}', '2026-11-01', $2)`,
        [event, now],
      );
      await db.execute(
        `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
           attempts, next_attempt_at, lease_owner, listen_due_at, failure_reason, created_at,
           updated_at)
         VALUES ($1, $2, 'ws_m', 'job.completed', $3, 0, $4, $5, $6, $7, $8, $8)`,
        [event, destination, status, next, lease, listenDue, reason, now],
      );
    }
    await migrate(db);
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  const seqOf = async (event: string): Promise<number> => {
    const [row] = await db.query<{ seq: number | string }>(
      "SELECT seq FROM deliveries WHERE event_id = $1",
      [event],
    );
    return Number(row?.seq);
  };

  it("gives the claims in flight the row of their lease, which their worker can still report under", async () => {
    const leases = await db.query<{ lease: string; expires_at: number | string; seqs: string }>(
      "SELECT lease, expires_at, seqs FROM delivery_leases",
    );
    assert.deepEqual(
      leases.map((row) => ({
        lease: row.lease,
        expiresAt: Number(row.expires_at),
        seqs: (JSON.parse(row.seqs) as number[]).sort((a, b) => a - b),
      })),
      [
        {
          lease: "old:0123456789abcdef",
          expiresAt: now + 60_000,
          seqs: [await seqOf("evt_claimed_1"), await seqOf("evt_claimed_2")],
        },
      ],
      "one row for the webhook claim; a listen stream's lease is its index's, as before",
    );
    const [claimed] = await db.query<{ lease_owner: string | null }>(
      "SELECT lease_owner FROM deliveries WHERE event_id = 'evt_claimed_1'",
    );
    assert.equal(claimed?.lease_owner, "old:0123456789abcdef", "the lease stands");
  });

  it("keeps only the waiting in the due index, and every failed one in the failed lists", async () => {
    const waiting = await db.query<{ event_id: string }>(
      `SELECT event_id FROM deliveries
       WHERE lease_owner IS NULL AND next_attempt_at IS NOT NULL ORDER BY event_id`,
    );
    assert.deepEqual(
      waiting.map((row) => row.event_id),
      ["evt_waiting"],
    );
    const failed = await db.query<{ event_id: string; failure_reason: string }>(
      `SELECT event_id, failure_reason FROM deliveries
       WHERE failure_reason IS NOT NULL ORDER BY event_id`,
    );
    assert.deepEqual(
      failed.map((row) => [row.event_id, row.failure_reason]),
      [
        ["evt_failed", "destination_refused"],
        ["evt_failed_old", "retries_exhausted"],
      ],
    );
    const listen = await db.query<{ event_id: string }>(
      "SELECT event_id FROM deliveries WHERE listen_due_at IS NOT NULL",
    );
    assert.deepEqual(
      listen.map((row) => row.event_id),
      ["evt_listen"],
    );
  });
});
