import type { ApiKey, KeyScope, NewApiKey, Page } from "../../interfaces.ts";
import { perDatabase, type Database, type SqlExecutor } from "../database.ts";
import { decodeIdCursor, idPageOf } from "./cursor.ts";
import { toDate, toNullableDate } from "./rows.ts";

interface ApiKeyRow extends Record<string, unknown> {
  id: string;
  workspace_id: string | null;
  scopes: string;
  name: string | null;
  created_at: number | string;
  expires_at: number | string | null;
  revoked_at: number | string | null;
  last_used_at: number | string | null;
}

const columns = "id, workspace_id, scopes, name, created_at, expires_at, revoked_at, last_used_at";

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    scopes: JSON.parse(row.scopes) as KeyScope[],
    name: row.name,
    createdAt: toDate(row.created_at),
    expiresAt: toNullableDate(row.expires_at),
    revokedAt: toNullableDate(row.revoked_at),
    lastUsedAt: toNullableDate(row.last_used_at),
  };
}

export async function insertApiKey(db: SqlExecutor, key: NewApiKey, now: number): Promise<ApiKey> {
  const rows = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, workspace_id, token_hash, scopes, name, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${columns}`,
    [
      key.id,
      key.workspaceId,
      key.tokenHash,
      JSON.stringify(key.scopes),
      key.name ?? null,
      now,
      key.expiresAt?.getTime() ?? null,
    ],
  );
  return toApiKey(rows[0] as ApiKeyRow);
}

/**
 * The unrevoked keys with these token hashes, one answer per hash in order (null: none). One
 * statement, whatever the number of hashes (given as one JSON array), for the lookups of many
 * requests: `SqlStore` batches them.
 */
export async function selectActiveApiKeysByHash(
  db: Database,
  tokenHashes: readonly string[],
): Promise<(ApiKey | null)[]> {
  const rows = await db.query<ApiKeyRow & { token_hash: string }>(activeByHashSql(db), [
    JSON.stringify(tokenHashes),
  ]);
  const byHash = new Map(rows.map((row) => [row.token_hash, toApiKey(row)]));
  return tokenHashes.map((hash) => byHash.get(hash) ?? null);
}

const activeByHashSql = perDatabase(
  (db) => `SELECT token_hash, ${columns} FROM api_keys
     WHERE token_hash IN (${db.textsOfJsonArray("$1")}) AND revoked_at IS NULL`,
);

/** Keeps the time of the first revocation when revoked again. */
export async function revokeApiKey(db: SqlExecutor, id: string, now: number): Promise<boolean> {
  const changed = await db.execute(
    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
    [id, now],
  );
  return changed > 0;
}

/**
 * The unrevoked keys, of one workspace or of all (null), oldest first; expired keys too (they
 * are refused when presented, and listed so that they can be seen and revoked).
 */
export async function selectActiveApiKeys(
  db: SqlExecutor,
  workspaceId: string | null,
): Promise<ApiKey[]> {
  const rows = await db.query<ApiKeyRow>(
    `SELECT ${columns} FROM api_keys
     WHERE revoked_at IS NULL AND ($1 = '' OR workspace_id = $1)
     ORDER BY created_at, id`,
    [workspaceId ?? ""],
  );
  return rows.map(toApiKey);
}

/** Revokes the workspace's key `id`; false when it has no such key unrevoked. */
export async function revokeWorkspaceApiKey(
  db: SqlExecutor,
  workspaceId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const changed = await db.execute(
    "UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL",
    [id, workspaceId, now],
  );
  return changed > 0;
}

/**
 * Sets the last use of these keys (a JSON array of ids) to `now`, where it is not newer than
 * `staleBefore`: so that processes sharing the database write it at most once per interval
 * between them, and a statement that finds it fresh writes nothing.
 */
export async function markApiKeysUsed(
  db: Database,
  ids: readonly string[],
  now: number,
  staleBefore: number,
): Promise<void> {
  await db.execute(
    `UPDATE api_keys SET last_used_at = $2
     WHERE id IN (${db.textsOfJsonArray("$1")}) AND (last_used_at IS NULL OR last_used_at <= $3)`,
    [JSON.stringify(ids), now, staleBefore],
  );
}

/** The workspace's unrevoked keys, newest first, a page at a time (expired ones included). */
export async function selectWorkspaceApiKeyPage(
  db: SqlExecutor,
  workspaceId: string,
  options: { limit: number; cursor: string | null },
): Promise<Page<ApiKey>> {
  const before =
    options.cursor === null
      ? { createdAt: Number.MAX_SAFE_INTEGER, id: "" }
      : decodeIdCursor(options.cursor);
  const rows = await db.query<ApiKeyRow>(
    `SELECT ${columns} FROM api_keys
     WHERE workspace_id = $1 AND revoked_at IS NULL
       AND (created_at < $2 OR (created_at = $2 AND id < $3))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [workspaceId, before.createdAt, before.id, options.limit + 1],
  );
  return idPageOf(rows, options.limit, toApiKey);
}
