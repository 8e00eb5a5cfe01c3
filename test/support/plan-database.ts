import { join } from "node:path";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { testDatabaseLocation } from "./database.ts";
import { tempDir } from "./temp.ts";

/** A migrated database of the test backend, for the tests that EXPLAIN the store's statements. */
export interface PlanDatabase {
  readonly db: Database;
  /**
   * A CTE `n(i)` of the integers 1 to `$1`, to begin an INSERT … SELECT with
   * (`${numbers} INSERT INTO … SELECT … FROM n`).
   */
  readonly numbers: string;
  dispose(): Promise<void>;
}

/**
 * A new database with workspace `ws_p`, its destination `dst_p` and `events` events
 * `evt_1`…`evt_<events>` (created at 1…`events`), gathering no statistics: PostgreSQL plans
 * as it does before autovacuum's first ANALYZE.
 */
export async function planDatabase(events: number): Promise<PlanDatabase> {
  const dir = await tempDir();
  const db = openDatabase(await testDatabaseLocation(join(dir.path, "data")));
  await migrate(db);
  const numbers =
    db.dialect === "sqlite"
      ? "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)"
      : "WITH n(i) AS (SELECT generate_series(1, CAST($1 AS INTEGER)))";
  const now = Date.now();
  await db.execute("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_p', 'p', $1)", [now]);
  await db.execute(
    `INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext, created_at, updated_at)
     VALUES ('dst_p', 'ws_p', 'https://hooks.test/', $1, 'sealed', $2, $2)`,
    [db.dialect === "sqlite" ? 1 : true, now],
  );
  await db.execute(
    `${numbers} INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
     SELECT 'evt_' || i, 'ws_p', 'job.completed', '{}', '2026-11-01', i FROM n`,
    [events],
  );
  return {
    db,
    numbers,
    async dispose() {
      await db.close();
      await dir.cleanup();
    },
  };
}
