import type { IdempotencyClaim, StoredResponse } from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";

interface KeyRow extends Record<string, unknown> {
  fingerprint: string;
  state: "in_progress" | "completed";
  locked_until: number | string | null;
  response_status: number | string | null;
  response_content_type: string | null;
  response_body: string | null;
  expires_at: number | string;
}

/**
 * One transaction: insert the key as in progress, or decide from the row that holds it.
 * The insert comes first so that two requests racing for a new key cannot both take it.
 */
export function acquireIdempotencyKey(
  db: Database,
  workspaceId: string,
  key: string,
  fingerprint: string,
  options: { now: number; lockMs: number; ttlMs: number },
): Promise<IdempotencyClaim> {
  const { now, lockMs, ttlMs } = options;
  return db.transaction(async (tx) => {
    const inserted = await tx.execute(
      `INSERT INTO idempotency_keys
         (workspace_id, idempotency_key, fingerprint, state, locked_until, created_at, expires_at)
       VALUES ($1, $2, $3, 'in_progress', $4, $5, $6)
       ON CONFLICT (workspace_id, idempotency_key) DO NOTHING`,
      [workspaceId, key, fingerprint, now + lockMs, now, now + ttlMs],
    );
    if (inserted === 1) return { kind: "acquired" };
    const [row] = await tx.query<KeyRow>(
      `SELECT fingerprint, state, locked_until, response_status, response_content_type,
              response_body, expires_at
       FROM idempotency_keys WHERE workspace_id = $1 AND idempotency_key = $2 ${db.rowLockClause}`,
      [workspaceId, key],
    );
    if (row === undefined) return { kind: "in_progress" }; // purged in between: rare, retryable
    if (Number(row.expires_at) <= now) {
      await restart(tx, workspaceId, key, fingerprint, now, lockMs, ttlMs);
      return { kind: "acquired" };
    }
    if (row.fingerprint !== fingerprint) return { kind: "mismatch" };
    if (row.state === "completed") return { kind: "replay", response: storedResponse(row) };
    if (Number(row.locked_until) > now) return { kind: "in_progress" };
    // The request that held the key died; the same request may now run again.
    await restart(tx, workspaceId, key, fingerprint, now, lockMs, ttlMs);
    return { kind: "acquired" };
  });
}

async function restart(
  tx: SqlExecutor,
  workspaceId: string,
  key: string,
  fingerprint: string,
  now: number,
  lockMs: number,
  ttlMs: number,
): Promise<void> {
  await tx.execute(
    `UPDATE idempotency_keys SET fingerprint = $3, state = 'in_progress', locked_until = $4,
       response_status = NULL, response_content_type = NULL, response_body = NULL,
       created_at = $5, expires_at = $6
     WHERE workspace_id = $1 AND idempotency_key = $2`,
    [workspaceId, key, fingerprint, now + lockMs, now, now + ttlMs],
  );
}

function storedResponse(row: KeyRow): StoredResponse {
  return {
    status: Number(row.response_status),
    contentType: row.response_content_type ?? "application/json; charset=utf-8",
    sealedBody: row.response_body ?? "",
  };
}

export async function completeIdempotencyKey(
  db: SqlExecutor,
  workspaceId: string,
  key: string,
  response: StoredResponse,
): Promise<void> {
  await db.execute(
    `UPDATE idempotency_keys SET state = 'completed', locked_until = NULL,
       response_status = $3, response_content_type = $4, response_body = $5
     WHERE workspace_id = $1 AND idempotency_key = $2 AND state = 'in_progress'`,
    [workspaceId, key, response.status, response.contentType, response.sealedBody],
  );
}

export async function releaseIdempotencyKey(
  db: SqlExecutor,
  workspaceId: string,
  key: string,
): Promise<void> {
  await db.execute(
    `DELETE FROM idempotency_keys
     WHERE workspace_id = $1 AND idempotency_key = $2 AND state = 'in_progress'`,
    [workspaceId, key],
  );
}
