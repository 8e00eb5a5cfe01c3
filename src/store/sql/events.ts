import type { NewEvent } from "../../interfaces.ts";
import type { SqlExecutor, SqlValue } from "../database.ts";
import { valuesRows } from "./rows.ts";

/** Deliveries to write already claimed: the first `limit` of the batch, in publish order. */
export interface PublishLease {
  readonly token: string;
  readonly until: number;
  readonly limit: number;
}

export interface PublishedBatch {
  /** How many deliveries each event queued, in the events' order. */
  readonly queued: number[];
  /** The `seq`s written under the lease, in publish order. */
  readonly leased: number[];
}

/**
 * The transactional outbox, for a batch of events. Call inside a transaction: the events and
 * their deliveries are one change. Each matching destination (active, not deleted, subscribed
 * to the type or to `*`) gets one pending delivery of each event, due at once, or, for the
 * first `lease.limit` of them, claimed under `lease` as `claimDueDeliveries` would claim them.
 * Two statements whatever the batch's size.
 */
export async function insertEventsWithDeliveries(
  tx: SqlExecutor,
  events: readonly NewEvent[],
  lease: PublishLease | null = null,
): Promise<PublishedBatch> {
  if (events.length === 0) return { queued: [], leased: [] };
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
  const queued = await tx.query<{
    seq: number | string;
    event_id: string;
    leased: number | string;
  }>(
    `WITH batch (id, position) AS (VALUES ${valuesRows(events.length, 2, 5, ["TEXT", "INTEGER"])}),
     matched AS (
       SELECT e.id AS event_id, d.id AS destination_id, e.type, e.created_at,
              ROW_NUMBER() OVER (ORDER BY batch.position, d.seq) AS n
       FROM batch
       JOIN events e ON e.id = batch.id
       JOIN destinations d ON d.workspace_id = e.workspace_id
       WHERE d.active = $1 AND d.deleted_at IS NULL
         AND EXISTS (SELECT 1 FROM destination_events s
                     WHERE s.destination_id = d.id AND s.event IN (e.type, '*')))
     INSERT INTO deliveries (event_id, destination_id, event_type, status, attempts,
                             next_attempt_at, lease_owner, created_at, updated_at)
     SELECT event_id, destination_id, type, 'pending', 0,
            CASE WHEN n <= $2 THEN CAST($3 AS BIGINT) ELSE created_at END,
            CASE WHEN n <= $2 THEN CAST($4 AS TEXT) END,
            created_at, created_at
     FROM matched
     ORDER BY n
     RETURNING seq, event_id, CASE WHEN lease_owner IS NULL THEN 0 ELSE 1 END AS leased`,
    [true, lease?.limit ?? 0, lease?.until ?? 0, lease?.token ?? null, ...order],
  );
  const counts = new Map<string, number>();
  for (const { event_id } of queued) counts.set(event_id, (counts.get(event_id) ?? 0) + 1);
  const leased = queued
    .filter((row) => Number(row.leased) === 1)
    .map((row) => Number(row.seq))
    .sort((a, b) => a - b);
  return { queued: events.map((event) => counts.get(event.id) ?? 0), leased };
}
