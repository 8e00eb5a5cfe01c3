import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Database, TableColumn } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import {
  addHourlyCountsSql,
  countAttemptsSql,
  hourlyCountColumns,
  hourlyCounts,
  type CountedAttempt,
} from "../../src/store/sql/count-attempts.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { seededRandom } from "../support/random.ts";
import { tempDir } from "../support/temp.ts";

const hour = 3_600_000;

const attemptColumns: readonly TableColumn[] = [
  ["workspace_id", "TEXT"],
  ["destination_id", "TEXT"],
  ["started_at", "BIGINT"],
  ["status_code", "INTEGER"],
];

/**
 * SQLite counts a batch's attempts in the process and adds the hours (decision 59);
 * PostgreSQL counts them in its record statement. Both must leave the same counters, batch
 * after batch: held here to each other over random batches that cross hours, mix answers,
 * repeat times and leave a delivery's workspace unknown (an older release's).
 */
describe("hourly counts made in the process", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: Database;

  before(async () => {
    dir = await tempDir();
    db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
    await migrate(db);
    await db.execute(
      "INSERT INTO workspaces (id, name, created_at) VALUES ('ws_a', 'a', 0), ('ws_b', 'b', 0)",
    );
    for (const [id, workspace] of [
      ["dst_1", "ws_a"],
      ["dst_2", "ws_a"],
      ["dst_3", "ws_b"],
    ] as const) {
      await db.execute(
        `INSERT INTO destinations (id, workspace_id, url, secret_ciphertext, active, created_at,
                                   updated_at)
         VALUES ($1, $2, 'https://hooks.test/', 'sealed', $3, 0, 0)`,
        [id, workspace, true],
      );
    }
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  const counters = () =>
    db.query(
      `SELECT workspace_id, destination_id, hour_start, succeeded, failed, last_attempt_at,
              last_status_code, last_success_at, last_failure_at, failing_since
       FROM delivery_stats_hourly ORDER BY workspace_id, destination_id, hour_start`,
    );

  it("leave the counters the statement's own count leaves, batch after batch", async () => {
    const draw = seededRandom(59);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(draw() * values.length)] as T;
    const batches: CountedAttempt[][] = [];
    let at = Date.UTC(2026, 10, 26, 9, 50);
    for (let batch = 0; batch < 60; batch += 1) {
      const size = 1 + Math.floor(draw() * 12);
      batches.push(
        Array.from({ length: size }, () => {
          // Times move on, sometimes repeat, sometimes come back a little (out of order).
          at += pick([0, 1, 1_000, 60_000, 7 * 60_000, -500]);
          const destinationId = pick(["dst_1", "dst_2", "dst_3"]);
          return {
            workspaceId: draw() < 0.1 ? null : destinationId === "dst_3" ? "ws_b" : "ws_a",
            destinationId,
            startedAt: at,
            statusCode: pick([200, 204, 299, 300, 429, 500, 503, null]),
          };
        }),
      );
    }
    assert.ok(
      new Set(batches.flat().map(({ startedAt }) => startedAt - (startedAt % hour))).size > 3,
      "the batches cross hours",
    );

    for (const batch of batches) {
      await db.execute(countAttemptsSql(db.tableOfRows("$1", attemptColumns)), [
        JSON.stringify(
          batch.map(({ workspaceId, destinationId, startedAt, statusCode }) => [
            workspaceId,
            destinationId,
            startedAt,
            statusCode,
          ]),
        ),
      ]);
    }
    const bySql = await counters();
    await db.execute("DELETE FROM delivery_stats_hourly");
    for (const batch of batches) {
      await db.execute(addHourlyCountsSql(db.tableOfRows("$1", hourlyCountColumns)), [
        JSON.stringify(hourlyCounts(batch)),
      ]);
    }
    assert.ok(bySql.length > 6);
    assert.deepEqual(await counters(), bySql);
  });
});
