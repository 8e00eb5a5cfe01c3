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
 * `evt_1`…`evt_<events>` (created at 1…`events`), each with a delivery to `dst_p` of status
 * `deliveries` if given (pending ones due at the event's time), gathering no statistics:
 * PostgreSQL plans as it does before autovacuum's first ANALYZE.
 */
export async function planDatabase(
  events: number,
  options: { deliveries?: "pending" | "delivered" } = {},
): Promise<PlanDatabase> {
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
  if (options.deliveries !== undefined) {
    await db.execute(
      `${numbers} INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type,
         status, attempts, next_attempt_at, created_at, updated_at)
       SELECT 'evt_' || i, 'dst_p', 'ws_p', 'job.completed', $2, $3,
         CASE WHEN $2 = 'pending' THEN i END, i, i FROM n`,
      [events, options.deliveries, options.deliveries === "pending" ? 0 : 1],
    );
  }
  return {
    db,
    numbers,
    async dispose() {
      await db.close();
      await dir.cleanup();
    },
  };
}

/** A node of PostgreSQL's plan (`EXPLAIN (FORMAT JSON)`). */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** How an engine runs a statement: SQLite's query plan, or PostgreSQL's plan nodes. */
export type StatementPlan =
  | { readonly engine: "sqlite"; readonly text: string }
  | { readonly engine: "postgres"; readonly nodes: readonly PlanNode[]; readonly text: string };

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * How `sql`, run with `values`, would be run: on SQLite its `EXPLAIN QUERY PLAN`; on
 * PostgreSQL its generic plan (the one a connection keeps from a prepared statement's sixth
 * call on; `types` are its parameters' types), every node flattened in. It is made in a
 * transaction begun as the store's claims and retention batches begin
 * (`TransactionOptions.indexPlansOnly`), unless `indexPlansOnly` is false: a statement the store runs
 * outside such a transaction is planned as it is run.
 */
export async function genericPlan(
  db: Database,
  sql: string,
  types: string,
  values: readonly (string | number)[],
  options: { indexPlansOnly?: boolean } = {},
): Promise<StatementPlan> {
  if (db.dialect === "sqlite") {
    const steps = await db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, values);
    return { engine: "sqlite", text: steps.map((step) => step.detail).join("\n") };
  }
  const literals = values.map((value) =>
    typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`,
  );
  const [root] = await db.transaction(
    async (tx) => {
      await tx.execute("SET LOCAL plan_cache_mode = force_generic_plan");
      await tx.execute(`PREPARE planned_step (${types}) AS ${sql}`);
      const [row] = await tx.query<{ "QUERY PLAN": unknown }>(
        `EXPLAIN (FORMAT JSON) EXECUTE planned_step (${literals.join(", ")})`,
      );
      await tx.execute("DEALLOCATE planned_step");
      const plan = row?.["QUERY PLAN"];
      return (typeof plan === "string" ? JSON.parse(plan) : plan) as { Plan: PlanNode }[];
    },
    { indexPlansOnly: options.indexPlansOnly !== false },
  );
  if (root === undefined) throw new Error(`no plan for ${sql}`);
  return { engine: "postgres", nodes: nodesOf(root.Plan), text: JSON.stringify(root.Plan) };
}
