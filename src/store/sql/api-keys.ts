import type { ApiKey, NewApiKey, Scope } from "../../interfaces.ts";
import type { SqlExecutor } from "../database.ts";
import { toDate, toNullableDate } from "./rows.ts";

interface ApiKeyRow extends Record<string, unknown> {
  id: string;
  workspace_id: string;
  scopes: string;
  created_at: number | string;
  revoked_at: number | string | null;
}

const columns = "id, workspace_id, scopes, created_at, revoked_at";

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    scopes: JSON.parse(row.scopes) as Scope[],
    createdAt: toDate(row.created_at),
    revokedAt: toNullableDate(row.revoked_at),
  };
}

export async function insertApiKey(db: SqlExecutor, key: NewApiKey, now: number): Promise<ApiKey> {
  const rows = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, workspace_id, token_hash, scopes, created_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
    [key.id, key.workspaceId, key.tokenHash, JSON.stringify(key.scopes), now],
  );
  return toApiKey(rows[0] as ApiKeyRow);
}

export async function selectActiveApiKeyByHash(
  db: SqlExecutor,
  tokenHash: string,
): Promise<ApiKey | null> {
  const rows = await db.query<ApiKeyRow>(
    `SELECT ${columns} FROM api_keys WHERE token_hash = $1 AND revoked_at IS NULL`,
    [tokenHash],
  );
  return rows[0] === undefined ? null : toApiKey(rows[0]);
}

/** Keeps the time of the first revocation when revoked again. */
export async function revokeApiKey(db: SqlExecutor, id: string, now: number): Promise<boolean> {
  const changed = await db.execute(
    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
    [id, now],
  );
  return changed > 0;
}
