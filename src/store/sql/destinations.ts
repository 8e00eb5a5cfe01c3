import type {
  Destination,
  DestinationChanges,
  EventSubscription,
  NewDestination,
  Page,
} from "../../interfaces.ts";
import type { Database, SqlExecutor, SqlValue } from "../database.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { toBoolean, toDate } from "./rows.ts";
import { lockWorkspace } from "./workspaces.ts";

interface DestinationRow extends Record<string, unknown> {
  seq: number | string;
  id: string;
  workspace_id: string;
  url: string;
  active: number | boolean;
  created_at: number | string;
  updated_at: number | string;
}

interface EventRow extends Record<string, unknown> {
  destination_id: string;
  event: EventSubscription;
}

const columns = "seq, id, workspace_id, url, active, created_at, updated_at";

/**
 * The subscriptions of destinations (webhooks and listen sessions alike), in their order;
 * read in one query for a page of rows.
 */
export async function subscriptionsOf(
  db: SqlExecutor,
  ids: readonly string[],
): Promise<(id: string) => EventSubscription[]> {
  if (ids.length === 0) return () => [];
  const placeholders = ids.map((_, index) => `$${index + 1}`).join(", ");
  const eventRows = await db.query<EventRow>(
    `SELECT destination_id, event FROM destination_events
     WHERE destination_id IN (${placeholders}) ORDER BY destination_id, position`,
    [...ids],
  );
  const eventsById = Map.groupBy(eventRows, (row) => row.destination_id);
  return (id) => (eventsById.get(id) ?? []).map((eventRow) => eventRow.event);
}

async function withEvents(
  db: SqlExecutor,
  rows: readonly DestinationRow[],
): Promise<Destination[]> {
  const eventsOf = await subscriptionsOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    workspaceId: row.workspace_id,
    url: row.url,
    events: eventsOf(row.id),
    active: toBoolean(row.active),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }));
}

export async function insertEvents(
  db: SqlExecutor,
  destinationId: string,
  events: readonly EventSubscription[],
): Promise<void> {
  for (const [position, event] of events.entries()) {
    await db.execute(
      "INSERT INTO destination_events (destination_id, event, position) VALUES ($1, $2, $3)",
      [destinationId, event, position],
    );
  }
}

/** Call inside a transaction: the destination and its subscriptions are one change. */
export async function insertDestination(
  tx: SqlExecutor,
  destination: NewDestination,
  now: number,
): Promise<Destination> {
  const rows = await tx.query<DestinationRow>(
    `INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING ${columns}`,
    [
      destination.id,
      destination.workspaceId,
      destination.url,
      true,
      destination.secretCiphertext,
      now,
    ],
  );
  await insertEvents(tx, destination.id, destination.events);
  const [created] = await withEvents(tx, rows);
  return created as Destination;
}

/**
 * Call inside a transaction. Inserts the destination if its workspace has fewer than `limit`
 * webhook destinations (listen sessions have a bound of their own), the count and the insert
 * under the workspace's lock; null if it has `limit` already.
 */
export async function insertDestinationWithin(
  db: Database,
  tx: SqlExecutor,
  destination: NewDestination,
  options: { now: number; limit: number },
): Promise<Destination | null> {
  await lockWorkspace(db, tx, destination.workspaceId);
  const [counted] = await tx.query<{ live: number | string }>(
    `SELECT COUNT(*) AS live FROM destinations
     WHERE workspace_id = $1 AND deleted_at IS NULL AND kind = 'webhook'`,
    [destination.workspaceId],
  );
  if (Number(counted?.live ?? 0) >= options.limit) return null;
  return insertDestination(tx, destination, options.now);
}

export async function selectDestination(
  db: SqlExecutor,
  workspaceId: string,
  id: string,
): Promise<Destination | null> {
  const rows = await db.query<DestinationRow>(
    `SELECT ${columns} FROM destinations
     WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL AND kind = 'webhook'`,
    [workspaceId, id],
  );
  const [destination] = await withEvents(db, rows);
  return destination ?? null;
}

/** Newest first, by `seq`; the cursor is the `seq` of the previous page's last item. */
export async function selectDestinationPage(
  db: SqlExecutor,
  workspaceId: string,
  options: { limit: number; cursor: string | null },
): Promise<Page<Destination>> {
  const before = options.cursor === null ? Number.MAX_SAFE_INTEGER : decodeCursor(options.cursor);
  // One row more than asked tells whether another page follows.
  const rows = await db.query<DestinationRow>(
    `SELECT ${columns} FROM destinations
     WHERE workspace_id = $1 AND deleted_at IS NULL AND kind = 'webhook' AND seq < $2
     ORDER BY seq DESC LIMIT $3`,
    [workspaceId, before, options.limit + 1],
  );
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    items: await withEvents(db, page),
    nextCursor: rows.length > options.limit && last ? encodeCursor(Number(last.seq)) : null,
  };
}

/** Call inside a transaction. Changes only the members present in `changes`. */
export async function updateDestination(
  tx: SqlExecutor,
  workspaceId: string,
  id: string,
  changes: DestinationChanges,
  now: number,
): Promise<Destination | null> {
  const assignments = ["updated_at = $3"];
  const values: SqlValue[] = [workspaceId, id, now];
  if (changes.url !== undefined) {
    values.push(changes.url);
    assignments.push(`url = $${values.length}`);
  }
  if (changes.active !== undefined) {
    values.push(changes.active);
    assignments.push(`active = $${values.length}`);
  }
  // A new address, or a destination turned on again, is not judged by the old one's failures:
  // its circuit closes (decision 24). What the circuit had held waits out its time.
  if (changes.url !== undefined || changes.active === true) {
    assignments.push("circuit_open_until = NULL, circuit_opens = 0, circuit_error = NULL");
  }
  const rows = await tx.query<DestinationRow>(
    `UPDATE destinations SET ${assignments.join(", ")}
     WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL AND kind = 'webhook'
     RETURNING ${columns}`,
    values,
  );
  if (rows.length === 0) return null;
  if (changes.events !== undefined) {
    await tx.execute("DELETE FROM destination_events WHERE destination_id = $1", [id]);
    await insertEvents(tx, id, changes.events);
  }
  const [updated] = await withEvents(tx, rows);
  return updated ?? null;
}

/** Marks the destination deleted and forgets its signing secret. */
export async function deleteDestination(
  db: SqlExecutor,
  workspaceId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const changed = await db.execute(
    `UPDATE destinations SET deleted_at = $3, updated_at = $3, active = $4, secret_ciphertext = NULL
     WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL AND kind = 'webhook'`,
    [workspaceId, id, now, false],
  );
  return changed > 0;
}
