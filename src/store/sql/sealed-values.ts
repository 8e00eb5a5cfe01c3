import {
  destinationSecretContext,
  idempotencyResponseContext,
} from "../../crypto/sealing-contexts.ts";
import type { SqlExecutor } from "../database.ts";

/** A value sealed with the encryption key, where it is, and what it is bound to. */
export interface SealedValue {
  readonly table: "destinations" | "idempotency_keys";
  /** The row: the destination id, or the workspace id and the idempotency key. */
  readonly row: readonly string[];
  readonly sealed: string;
  readonly context: string;
}

/** One signing secret of a destination that has one: enough to tell whether a key opens them. */
export async function someSealedSecret(db: SqlExecutor): Promise<SealedValue | null> {
  const [row] = await db.query<{ id: string; secret_ciphertext: string }>(
    "SELECT id, secret_ciphertext FROM destinations WHERE secret_ciphertext IS NOT NULL ORDER BY seq LIMIT 1",
  );
  return row === undefined ? null : destinationSecret(row);
}

/**
 * Every sealed value: the destinations' signing secrets and the responses kept for replay
 * (a create's response carries the secret). `lock` is the database's row lock clause.
 */
export async function allSealedValues(db: SqlExecutor, lock: string): Promise<SealedValue[]> {
  const secrets = await db.query<{ id: string; secret_ciphertext: string }>(
    `SELECT id, secret_ciphertext FROM destinations WHERE secret_ciphertext IS NOT NULL ORDER BY seq ${lock}`,
  );
  const responses = await db.query<{
    workspace_id: string;
    idempotency_key: string;
    response_body: string;
  }>(
    `SELECT workspace_id, idempotency_key, response_body FROM idempotency_keys WHERE response_body IS NOT NULL ${lock}`,
  );
  return [
    ...secrets.map(destinationSecret),
    ...responses.map((row) => ({
      table: "idempotency_keys" as const,
      row: [row.workspace_id, row.idempotency_key],
      sealed: row.response_body,
      context: idempotencyResponseContext(row.workspace_id, row.idempotency_key),
    })),
  ];
}

export async function replaceSealedValue(
  db: SqlExecutor,
  value: SealedValue,
  sealed: string,
): Promise<void> {
  const [first = "", second = ""] = value.row;
  if (value.table === "destinations") {
    await db.execute("UPDATE destinations SET secret_ciphertext = $1 WHERE id = $2", [
      sealed,
      first,
    ]);
  } else {
    await db.execute(
      "UPDATE idempotency_keys SET response_body = $1 WHERE workspace_id = $2 AND idempotency_key = $3",
      [sealed, first, second],
    );
  }
}

function destinationSecret(row: { id: string; secret_ciphertext: string }): SealedValue {
  return {
    table: "destinations",
    row: [row.id],
    sealed: row.secret_ciphertext,
    context: destinationSecretContext(row.id),
  };
}
