import { OPERATIONS_WORKSPACE_ID } from "../../operations/event-types.ts";
import { operationalEvent, type OperationalNotice } from "../../operations/operational-events.ts";
import type { SqlExecutor } from "../database.ts";

/** The operations workspace's id as a SQL literal (a constant of ours, never input). */
export const operationsWorkspaceLiteral = `'${OPERATIONS_WORKSPACE_ID}'`;

/**
 * Call inside the transaction of the change the notices tell of: the notices become events of
 * the operations workspace, each with one pending delivery per live operations endpoint (its
 * destinations), due at once or when that endpoint's circuit ends. Written with the change,
 * committed with it, retried on the schedule of any delivery: a crash loses neither or both.
 * Returns how many deliveries were queued.
 */
export async function insertOperationalEvents(
  tx: SqlExecutor,
  notices: readonly OperationalNotice[],
  now: number,
): Promise<number> {
  let queued = 0;
  for (const notice of notices) {
    const event = operationalEvent(notice, now);
    await tx.execute(
      `INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
       VALUES ($1, ${operationsWorkspaceLiteral}, $2, $3, $4, $5)`,
      [event.id, event.type, event.body, event.apiVersion, event.createdAt],
    );
    queued += await tx.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
                               attempts, next_attempt_at, created_at, updated_at)
       SELECT $1, d.id, d.workspace_id, $2, 'pending', 0,
              CASE WHEN d.circuit_open_until > $3 THEN d.circuit_open_until ELSE $3 END, $3, $3
       FROM destinations d
       WHERE d.workspace_id = ${operationsWorkspaceLiteral} AND d.active = $4
         AND d.deleted_at IS NULL AND d.kind = 'webhook'
       ORDER BY d.seq`,
      [event.id, event.type, event.createdAt, true],
    );
  }
  return queued;
}

/**
 * Call inside the transaction that opened the destination's circuit. Marks the destination
 * told of as failing now, unless it was told of within `intervalMs`: at most one
 * `destination.failing` per destination per interval, held in its row so that restarts and
 * other workers keep to it. Never for an operations endpoint itself (whose notices would tell
 * of themselves) or a listen session. Returns the destination's workspace when it is to be
 * told, else null.
 */
export async function markFailingNotice(
  tx: SqlExecutor,
  destinationId: string,
  now: number,
  intervalMs: number,
): Promise<string | null> {
  const [row] = await tx.query<{ workspace_id: string }>(
    `UPDATE destinations SET ops_failing_at = $2
     WHERE id = $1 AND kind = 'webhook' AND workspace_id <> ${operationsWorkspaceLiteral}
       AND (ops_failing_at IS NULL OR ops_failing_at <= $3)
     RETURNING workspace_id`,
    [destinationId, now, now - intervalMs],
  );
  return row?.workspace_id ?? null;
}

/**
 * Call inside the transaction that closed the destination's circuit. Marks the destination
 * told of as recovered if a `destination.failing` was told since its last recovery: one
 * recovery per failing told, so an operator who heard of neither hears of nothing. Returns
 * the destination's workspace when it is to be told, else null.
 */
export async function markRecoveredNotice(
  tx: SqlExecutor,
  destinationId: string,
  now: number,
): Promise<string | null> {
  const [row] = await tx.query<{ workspace_id: string }>(
    `UPDATE destinations SET ops_recovered_at = $2
     WHERE id = $1 AND ops_failing_at IS NOT NULL
       AND (ops_recovered_at IS NULL OR ops_recovered_at < ops_failing_at)
     RETURNING workspace_id`,
    [destinationId, now],
  );
  return row?.workspace_id ?? null;
}

/** A delivery that failed, as `delivery.failed` tells of it. */
interface FailedDeliveryRow extends Record<string, unknown> {
  event_id: string;
  destination_id: string;
  workspace_id: string;
  event_type: string;
  attempts: number | string;
  failure_reason: string | null;
  last_status_code: number | string | null;
  last_error: string | null;
}

/**
 * The deliveries among `seqs` that ended failed, of webhook destinations of workspaces other
 * than the operations one, as `delivery.failed` tells of them.
 */
export async function selectFailedDeliveries(
  tx: SqlExecutor,
  seqs: readonly number[],
): Promise<FailedDeliveryRow[]> {
  const placeholders = seqs.map((_, index) => `$${index + 1}`).join(", ");
  return tx.query<FailedDeliveryRow>(
    `SELECT dl.event_id, dl.destination_id, d.workspace_id, dl.event_type, dl.attempts,
            dl.failure_reason, dl.last_status_code, dl.last_error
     FROM deliveries dl
     JOIN destinations d ON d.id = dl.destination_id
     WHERE dl.seq IN (${placeholders}) AND dl.status = 'failed' AND d.kind = 'webhook'
       AND d.workspace_id <> ${operationsWorkspaceLiteral}
     ORDER BY dl.seq`,
    [...seqs],
  );
}
