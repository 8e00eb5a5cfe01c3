import { newId } from "../../crypto/tokens.ts";
import { OPERATIONS_WORKSPACE_ID } from "../../operations/event-types.ts";
import type { Database, SqlExecutor } from "../database.ts";
import type { EndpointsSync, OperationsEndpoint } from "../operations.ts";
import { deleteDestination, insertDestination } from "./destinations.ts";
import { lockWorkspace } from "./workspaces.ts";

/** Seals an endpoint's secret for its destination, and opens it again (`SecretBox`). */
export interface EndpointSecrets {
  seal(secret: string, destinationId: string): string;
  /** Throws when the sealed value cannot be opened (another key): the endpoint is made anew. */
  open(sealed: string, destinationId: string): string;
}

/**
 * Call inside a transaction. Makes the operations workspace's live destinations exactly
 * `endpoints`: one kept per endpoint whose URL and secret match, the others deleted (their
 * pending notices then fail, as any deleted destination's), the missing ones made,
 * subscribed to every notice (`*`). The workspace is made with the first endpoint and kept
 * afterwards (its events are the notices' log). The workspace's row is locked first, so that
 * processes starting together sync one at a time (SQLite's writes are one at a time anyway).
 */
export async function syncOperationsEndpoints(
  db: Database,
  tx: SqlExecutor,
  endpoints: readonly OperationsEndpoint[],
  secrets: EndpointSecrets,
  now: number,
): Promise<EndpointsSync> {
  if (endpoints.length > 0) {
    await tx.execute(
      `INSERT INTO workspaces (id, name, external_id, metadata, created_at, updated_at)
       VALUES ($1, 'operations', NULL, '{}', $2, $2) ON CONFLICT (id) DO NOTHING`,
      [OPERATIONS_WORKSPACE_ID, now],
    );
  }
  await lockWorkspace(db, tx, OPERATIONS_WORKSPACE_ID);
  const rows = await tx.query<{ id: string; url: string; secret_ciphertext: string | null }>(
    `SELECT id, url, secret_ciphertext FROM destinations
     WHERE workspace_id = $1 AND deleted_at IS NULL AND kind = 'webhook' ORDER BY seq`,
    [OPERATIONS_WORKSPACE_ID],
  );
  const wanted = new Map(endpoints.map((endpoint) => [endpointKey(endpoint), endpoint]));
  let removed = 0;
  for (const row of rows) {
    const key = endpointKey({ url: row.url, secret: openOrNull(secrets, row) });
    if (wanted.delete(key)) continue;
    await deleteDestination(tx, OPERATIONS_WORKSPACE_ID, row.id, now);
    removed += 1;
  }
  for (const endpoint of wanted.values()) {
    const id = newId("dst");
    await insertDestination(
      tx,
      {
        id,
        workspaceId: OPERATIONS_WORKSPACE_ID,
        url: endpoint.url,
        events: ["*"],
        secretCiphertext: secrets.seal(endpoint.secret, id),
      },
      now,
    );
  }
  return { kept: rows.length - removed, added: wanted.size, removed };
}

function endpointKey(endpoint: { url: string; secret: string | null }): string {
  return JSON.stringify([endpoint.url, endpoint.secret]);
}

function openOrNull(
  secrets: EndpointSecrets,
  row: { id: string; secret_ciphertext: string | null },
): string | null {
  if (row.secret_ciphertext === null) return null;
  try {
    return secrets.open(row.secret_ciphertext, row.id);
  } catch {
    return null;
  }
}
