import type { CircuitOpening, CircuitState, DestinationCircuit } from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";
import { toDate } from "./rows.ts";

/** Rows changed per transaction when a circuit opens, so that no one statement stalls others. */
const chunkSize = 2000;

/**
 * The destination's pending deliveries that no claim holds, due before `$2`, a chunk at a
 * time: what an opening circuit ends or makes wait.
 */
const waitingChunk = `SELECT seq FROM deliveries
  WHERE destination_id = $1 AND status = 'pending' AND lease_owner IS NULL
    AND next_attempt_at < $2`;

/**
 * Opens a destination's circuit (decision 24): from this commit no claim takes its deliveries
 * until `until`. Then its waiting deliveries that were attempted and created before
 * `failCreatedBefore` end `failed` (their retries would be spent by the time the circuit lets
 * them go; one never attempted waits for its first; after a retry, both count from the retry:
 * decision 30), and the others
 * are made due at `until`, so that their `next_attempt_at` says when they go and no claim
 * reads past them in the due index meanwhile. Each chunk is a transaction of its own: a
 * delivery not moved yet is merely excluded by the circuit until it is. The outer conditions
 * are checked again on the row as it is when locked (PostgreSQL), so a delivery that a claim
 * took meanwhile keeps its lease.
 */
export async function openCircuit(
  db: Database,
  destinationId: string,
  opening: CircuitOpening,
  now: number,
  onOpened?: (tx: SqlExecutor) => Promise<void>,
): Promise<void> {
  const until = opening.until.getTime();
  // Only ever extended: another worker's later opening (a failed probe) is not cut short by
  // a report on an attempt made before it.
  const open = (executor: SqlExecutor): Promise<number> =>
    executor.execute(
      `UPDATE destinations SET circuit_open_until = $2, circuit_opens = $3, circuit_error = $4
       WHERE id = $1 AND (circuit_open_until IS NULL OR circuit_open_until < $2)`,
      [destinationId, until, opening.opens, opening.error],
    );
  const changed = await withinChange(db, open, onOpened);
  if (changed === 0) return;
  const failed = `${opening.error}; its retries ran out while the destination's circuit was open`;
  await inChunks(db, (tx) =>
    tx.execute(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, last_error = $3,
              failure_reason = 'circuit_open', updated_at = $4
       WHERE seq IN (${waitingChunk} AND attempts > retry_base
                     AND COALESCE(schedule_started_at, created_at) < $5 LIMIT ${chunkSize})
         AND status = 'pending' AND lease_owner IS NULL`,
      [destinationId, until, failed, now, opening.failCreatedBefore.getTime()],
    ),
  );
  await inChunks(db, (tx) =>
    tx.execute(
      `UPDATE deliveries SET next_attempt_at = $2, updated_at = $3
       WHERE seq IN (${waitingChunk} LIMIT ${chunkSize})
         AND status = 'pending' AND lease_owner IS NULL`,
      [destinationId, until, now],
    ),
  );
}

async function inChunks(db: Database, chunk: (tx: SqlExecutor) => Promise<number>): Promise<void> {
  while ((await db.transaction(chunk)) >= chunkSize) {
    // Until a chunk comes back short.
  }
}

/**
 * A user's repair (a retry or a recovery: decision 40) goes out now, through the circuit: an
 * open circuit becomes half-open at `now`, keeping its count of openings, so that the next
 * claim takes one delivery of the destination as its probe: delivered, it closes the circuit;
 * failed, it opens it again for the next step. Call in the repair's transaction, after the
 * repaired deliveries were made due at `now`. Returns when the circuit was to hold its
 * deliveries until (null if it was not open): `releaseHeld` makes them due after the probe.
 *
 * Every worker sees the change: claims read the circuit from the database, and a worker that
 * opened it forgets its own note of the opening when a claim shows it was let through
 * (`CircuitBreaker.heldUntil`).
 */
export async function letRepairThrough(
  tx: SqlExecutor,
  destinationId: string,
  now: number,
): Promise<number | null> {
  const [row] = await tx.query<{ circuit_open_until: number | string }>(
    `SELECT circuit_open_until FROM destinations
     WHERE id = $1 AND circuit_opens > 0 AND circuit_open_until > $2`,
    [destinationId, now],
  );
  if (row === undefined) return null;
  await tx.execute("UPDATE destinations SET circuit_open_until = $2 WHERE id = $1", [
    destinationId,
    now,
  ]);
  return Number(row.circuit_open_until);
}

/**
 * Makes the destination's deliveries that its circuit held until `heldUntil` due just after
 * `now` (a millisecond after the repaired ones, so that a repaired one is the probe), a chunk
 * per transaction. The half-open circuit lets them through one at a time until a probe is
 * delivered; a failed probe holds them again (`openCircuit`).
 */
export async function releaseHeld(
  db: Database,
  destinationId: string,
  heldUntil: number,
  now: number,
): Promise<void> {
  await inChunks(db, (tx) =>
    tx.execute(
      `UPDATE deliveries SET next_attempt_at = $3, updated_at = $2
       WHERE seq IN (SELECT seq FROM deliveries
                     WHERE destination_id = $1 AND status = 'pending' AND lease_owner IS NULL
                       AND next_attempt_at > $3 AND next_attempt_at <= $4
                     LIMIT ${chunkSize})
         AND status = 'pending' AND lease_owner IS NULL`,
      [destinationId, now, now + 1, heldUntil],
    ),
  );
}

/**
 * Closes a destination's circuit: its deliveries are claimed as any others again. With
 * `onClosed`, the closing and what it runs are one transaction (decision 48).
 */
export async function closeCircuit(
  db: Database,
  destinationId: string,
  onClosed?: (tx: SqlExecutor) => Promise<void>,
): Promise<void> {
  await withinChange(
    db,
    (executor) =>
      executor.execute(
        `UPDATE destinations SET circuit_open_until = NULL, circuit_opens = 0, circuit_error = NULL
         WHERE id = $1 AND circuit_opens > 0`,
        [destinationId],
      ),
    onClosed,
  );
}

/**
 * Runs `change` alone, or, with `after`, in a transaction with `after` when it changed a row:
 * what the change causes (an operational notice, decision 48) commits with it or not at all.
 */
async function withinChange(
  db: Database,
  change: (executor: SqlExecutor) => Promise<number>,
  after: ((tx: SqlExecutor) => Promise<void>) | undefined,
): Promise<number> {
  if (after === undefined) return change(db);
  return db.transaction(async (tx) => {
    const changed = await change(tx);
    if (changed > 0) await after(tx);
    return changed;
  });
}

/** A destination's circuit as its page shows it (decision 40); null: no such destination. */
export async function selectDestinationCircuit(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string,
  now: number,
): Promise<DestinationCircuit | null> {
  const [row] = await db.query<CircuitRow>(
    `SELECT circuit_open_until, circuit_opens, circuit_error FROM destinations
     WHERE id = $1 AND workspace_id = $2`,
    [destinationId, workspaceId],
  );
  if (row === undefined) return null;
  const circuit = toCircuitState(row, now);
  if (circuit === null) return { state: "closed", openUntil: null, opens: 0, reason: null };
  return {
    state: circuit.state,
    openUntil: circuit.openUntil,
    opens: circuit.opens,
    reason: circuit.error,
  };
}

interface CircuitRow extends Record<string, unknown> {
  circuit_open_until: number | string | null;
  circuit_opens: number | string;
  circuit_error: string | null;
}

/** The circuit as `last_delivery` shows it; null while closed. */
export function toCircuitState(row: CircuitRow, now: number): CircuitState | null {
  if (row.circuit_open_until === null || Number(row.circuit_opens) === 0) return null;
  const openUntil = toDate(row.circuit_open_until);
  return {
    state: openUntil.getTime() > now ? "open" : "half_open",
    openUntil,
    opens: Number(row.circuit_opens),
    error: row.circuit_error,
  };
}
