import type { Database, SqlExecutor } from "../database.ts";
import { notOperations } from "./workspaces.ts";

/**
 * Call inside a transaction, first: locks the workspace's row for its deletion (`FOR UPDATE`
 * on PostgreSQL; SQLite's write transactions run one at a time). A create that references the
 * workspace then waits, and fails on its foreign key once the workspace is gone, and a publish
 * waits on the row it holds (`FOR KEY SHARE`, decision 60) and writes nothing of it, instead
 * of leaving a row behind that the deletion did not see. False: no such workspace.
 */
export async function lockWorkspaceForDeletion(
  db: Database,
  tx: SqlExecutor,
  workspaceId: string,
): Promise<boolean> {
  const lock = db.dialect === "postgres" ? "FOR UPDATE" : "";
  const found = await tx.query(
    `SELECT id FROM workspaces WHERE id = $1 AND ${notOperations} ${lock}`,
    [workspaceId],
  );
  return found.length > 0;
}

/**
 * Call inside a transaction, after `lockWorkspaceForDeletion`. Deletes the workspace and
 * everything in it (decision 42), the rows that reference others first: attempts,
 * deliveries, the delivery statistics' counters (decision 36), subscriptions, destinations
 * (listen sessions are destinations too), events (on PostgreSQL before everything else:
 * decision 57), idempotency records, API keys, memberships; the users who were members of it
 * alone, with their sessions; then the workspace.
 */
export async function deleteWorkspaceAndContents(
  db: Database,
  tx: SqlExecutor,
  workspaceId: string,
): Promise<void> {
  // On PostgreSQL the workspace's events go first. A retention batch locks a window of events
  // and then their deliveries (decision 57); deleting the deliveries first and the events
  // last took the two in the other order, and the two could deadlock. In the same order, a
  // batch skips the events deleted here (SKIP LOCKED), or the deletion waits for the batch to
  // commit. Nothing refers to events there (migration 000017); SQLite's foreign keys want
  // them last, and its write transactions run one at a time.
  const deleteEvents = () =>
    tx.execute("DELETE FROM events WHERE workspace_id = $1", [workspaceId]);
  const eventsFirst = db.dialect === "postgres";
  if (eventsFirst) await deleteEvents();
  const destinations = "SELECT id FROM destinations WHERE workspace_id = $1";
  await tx.execute(
    `DELETE FROM delivery_attempts WHERE delivery_seq IN
       (SELECT seq FROM deliveries WHERE destination_id IN (${destinations}))`,
    [workspaceId],
  );
  await tx.execute(`DELETE FROM deliveries WHERE destination_id IN (${destinations})`, [
    workspaceId,
  ]);
  await tx.execute("DELETE FROM delivery_stats_hourly WHERE workspace_id = $1", [workspaceId]);
  await tx.execute(`DELETE FROM destination_events WHERE destination_id IN (${destinations})`, [
    workspaceId,
  ]);
  await tx.execute("DELETE FROM destinations WHERE workspace_id = $1", [workspaceId]);
  if (!eventsFirst) await deleteEvents();
  await tx.execute("DELETE FROM idempotency_keys WHERE workspace_id = $1", [workspaceId]);
  await tx.execute("DELETE FROM api_keys WHERE workspace_id = $1", [workspaceId]);
  await deleteMemberships(tx, workspaceId);
  // The mark of an initialised database names its first workspace; no reader needs the id.
  await tx.execute("UPDATE instance SET first_workspace_id = '' WHERE first_workspace_id = $1", [
    workspaceId,
  ]);
  await tx.execute("DELETE FROM workspaces WHERE id = $1", [workspaceId]);
}

/**
 * The workspace's memberships go; a user who was a member of no other workspace goes too,
 * with their sessions (an account with nothing to sign in to is the workspace's remains). A
 * user who is a member elsewhere keeps their account and their sessions.
 */
async function deleteMemberships(tx: SqlExecutor, workspaceId: string): Promise<void> {
  const members = await tx.query<{ user_id: string }>(
    "SELECT user_id FROM memberships WHERE workspace_id = $1",
    [workspaceId],
  );
  await tx.execute("DELETE FROM memberships WHERE workspace_id = $1", [workspaceId]);
  for (const { user_id: userId } of members) {
    const elsewhere = await tx.query("SELECT 1 FROM memberships WHERE user_id = $1", [userId]);
    if (elsewhere.length > 0) continue;
    await tx.execute("DELETE FROM sessions WHERE user_id = $1", [userId]);
    await tx.execute("DELETE FROM users WHERE id = $1", [userId]);
  }
}

/** Whether the workspace has webhook destinations (not deleted): what a plain delete refuses. */
export async function hasDestinations(db: SqlExecutor, workspaceId: string): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM destinations
     WHERE workspace_id = $1 AND deleted_at IS NULL AND kind = 'webhook' LIMIT 1`,
    [workspaceId],
  );
  return rows.length > 0;
}
