import type { NewEvent } from "../../interfaces.ts";
import type { SqlExecutor, SqlValue } from "../database.ts";
import { valuesRows } from "./rows.ts";

/**
 * The transactional outbox, for a batch of events. Call inside a transaction: the events and
 * their deliveries are one change. Each matching destination (active, not deleted, subscribed
 * to the type or to `*`) gets one pending delivery of each event, due at once. Two statements
 * whatever the batch's size. Returns how many deliveries each event queued, in order.
 */
export async function insertEventsWithDeliveries(
  tx: SqlExecutor,
  events: readonly NewEvent[],
): Promise<number[]> {
  if (events.length === 0) return [];
  const eventValues: SqlValue[] = events.flatMap((event) => [
    event.id,
    event.workspaceId,
    event.type,
    event.body,
    event.createdAt.getTime(),
  ]);
  await tx.execute(
    `INSERT INTO events (id, workspace_id, type, body, created_at) VALUES ${valuesRows(events.length, 5)}`,
    eventValues,
  );
  // The batch's order, so that deliveries are queued (and their `seq`s run) in publish order.
  const order = events.flatMap((event, index): SqlValue[] => [event.id, index]);
  const queued = await tx.query<{ event_id: string }>(
    `WITH batch (id, position) AS (VALUES ${valuesRows(events.length, 2, 2, ["TEXT", "INTEGER"])})
     INSERT INTO deliveries
       (event_id, destination_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT e.id, d.id, e.type, 'pending', 0, e.created_at, e.created_at, e.created_at
     FROM batch
     JOIN events e ON e.id = batch.id
     JOIN destinations d ON d.workspace_id = e.workspace_id
     WHERE d.active = $1 AND d.deleted_at IS NULL
       AND EXISTS (SELECT 1 FROM destination_events s
                   WHERE s.destination_id = d.id AND s.event IN (e.type, '*'))
     ORDER BY batch.position, d.seq
     RETURNING event_id`,
    [true, ...order],
  );
  const counts = new Map<string, number>();
  for (const { event_id } of queued) counts.set(event_id, (counts.get(event_id) ?? 0) + 1);
  return events.map((event) => counts.get(event.id) ?? 0);
}
