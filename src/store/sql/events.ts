import type { NewEvent } from "../../interfaces.ts";
import type { SqlExecutor } from "../database.ts";

/**
 * The transactional outbox. Call inside a transaction: the event and its deliveries are one
 * change. Each matching destination (active, not deleted, subscribed to the type or to `*`)
 * gets one pending delivery, due at once. Returns how many were queued.
 * Parameters in a SELECT list carry no type PostgreSQL could infer, so they are cast, in the
 * CAST syntax both engines share.
 */
export async function insertEventWithDeliveries(tx: SqlExecutor, event: NewEvent): Promise<number> {
  const createdAt = event.createdAt.getTime();
  await tx.execute(
    "INSERT INTO events (id, workspace_id, type, body, created_at) VALUES ($1, $2, $3, $4, $5)",
    [event.id, event.workspaceId, event.type, event.body, createdAt],
  );
  return tx.execute(
    `INSERT INTO deliveries
       (event_id, destination_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT CAST($1 AS TEXT), d.id, CAST($2 AS TEXT), 'pending', 0,
            CAST($3 AS BIGINT), CAST($3 AS BIGINT), CAST($3 AS BIGINT)
     FROM destinations d
     WHERE d.workspace_id = $4 AND d.active = $5 AND d.deleted_at IS NULL
       AND EXISTS (SELECT 1 FROM destination_events s
                   WHERE s.destination_id = d.id AND s.event IN ($2, '*'))
     ORDER BY d.seq`,
    [event.id, event.type, createdAt, event.workspaceId, true],
  );
}
