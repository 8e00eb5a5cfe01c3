import type {
  AttemptEntry,
  DeliveryDetail,
  DeliveryFilter,
  DeliveryRecord,
  DeliveryState,
  DeliveryStatus,
  EventDetail,
  EventFilter,
  EventSummary,
  EventType,
  FailureReason,
  Page,
  RetryOutcome,
} from "../../interfaces.ts";
import type { Database, SqlExecutor, SqlValue } from "../database.ts";
import { deliveryId, parseDeliveryId } from "../../crypto/tokens.ts";
import { letRepairThrough, releaseHeld } from "./circuits.ts";
import { decodeTimeCursor, encodeTimeCursor, type TimePosition } from "./cursor.ts";
import { toBoolean, toDate, toNullableDate } from "./rows.ts";
import { ATTEMPTS_PRUNED_BEFORE } from "./settings.ts";

/** Rows changed per transaction by a recovery, so that no one statement stalls others. */
const recoveryChunk = 2000;

interface EventRow extends Record<string, unknown> {
  seq: number | string;
  id: string;
  type: EventType;
  api_version: string;
  created_at: number | string;
  test_destination_id: string | null;
  body?: string;
}

interface DeliveryRow extends Record<string, unknown> {
  seq: number | string;
  event_id: string;
  destination_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number | string;
  created_at: number | string;
  last_attempt_at: number | string | null;
  next_attempt_at: number | string | null;
  last_status_code: number | string | null;
  last_error: string | null;
  lease_owner: string | null;
  failure_reason: FailureReason | null;
  test: number | boolean;
  circuit_open_until: number | string | null;
}

/** A delivery's columns, with its destination's circuit (a primary-key probe per row). */
const deliveryColumns = `dl.seq, dl.event_id, dl.destination_id, dl.event_type,
  dl.status, dl.attempts, dl.created_at, dl.last_attempt_at,
  COALESCE(dl.next_attempt_at, dl.listen_due_at) AS next_attempt_at,
  dl.last_status_code, dl.last_error, dl.lease_owner, dl.failure_reason, dl.test,
  (SELECT d.circuit_open_until FROM destinations d WHERE d.id = dl.destination_id)
    AS circuit_open_until`;

function toEventSummary(row: EventRow): EventSummary {
  return {
    id: row.id,
    type: row.type,
    apiVersion: row.api_version,
    createdAt: toDate(row.created_at),
    test: row.test_destination_id !== null,
  };
}

/**
 * Where a pending delivery stands at `now`, and when it goes (decision 40). One due before its
 * destination's open circuit ends is held until then: that is when it goes, whatever its own
 * time says. While claimed, `next_attempt_at` is the lease's end, not an attempt: none is shown.
 */
function standing(
  row: DeliveryRow,
  now: number,
): { state: DeliveryState; nextAttemptAt: Date | null } {
  switch (row.status) {
    case "delivered":
    case "failed":
      return { state: row.status, nextAttemptAt: null };
    case "pending":
      break;
  }
  if (row.lease_owner !== null) return { state: "in_flight", nextAttemptAt: null };
  const next = toNullableDate(row.next_attempt_at);
  const circuitEnds = row.circuit_open_until === null ? 0 : Number(row.circuit_open_until);
  if (circuitEnds > now && (next === null || next.getTime() <= circuitEnds)) {
    return { state: "circuit_open", nextAttemptAt: new Date(circuitEnds) };
  }
  return { state: Number(row.attempts) === 0 ? "waiting" : "retry_scheduled", nextAttemptAt: next };
}

function toDeliveryRecord(row: DeliveryRow, now: number): DeliveryRecord {
  const inFlight = row.status === "pending" && row.lease_owner !== null;
  const { state, nextAttemptAt } = standing(row, now);
  return {
    id: deliveryId(row.event_id, row.destination_id),
    eventId: row.event_id,
    destinationId: row.destination_id,
    eventType: row.event_type,
    status: row.status,
    attempts: Number(row.attempts),
    createdAt: toDate(row.created_at),
    lastAttemptAt: toNullableDate(row.last_attempt_at),
    nextAttemptAt,
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    lastError: row.last_error,
    inFlight,
    state,
    failureReason: row.status === "failed" ? (row.failure_reason ?? "retries_exhausted") : null,
    test: toBoolean(row.test),
  };
}

/**
 * The conditions of one page of a list newest first by (created_at, seq) within
 * [since, until), after `cursor`: parameters from `$first`. Redundant `created_at <= …` lets
 * the index's range end where the page starts. A bound not asked for is left out, not given
 * as 0 or the largest time: PostgreSQL's planner looks up the actual end of the index for a
 * constant past its statistics, and at the oldest end, where retention has just deleted, that
 * walked every dead entry at each page's plan (a destination's first page +31 to +50 % at
 * 10 million deliveries, `bench:volume`; decision 67).
 */
function timeRange(
  table: string,
  first: number,
  range: { since?: Date; until?: Date },
  cursor: string | null,
): { conditions: string[]; values: SqlValue[] } {
  const conditions: string[] = [];
  const values: SqlValue[] = [];
  const since = range.since?.getTime();
  if (since !== undefined) {
    values.push(since);
    conditions.push(`${table}.created_at >= $${first}`);
  }
  const after: TimePosition | null =
    cursor === null
      ? range.until === undefined
        ? null
        : { createdAt: range.until.getTime(), seq: 0 }
      : decodeTimeCursor(cursor);
  if (after !== null) {
    const [upper, seq] = [`$${first + values.length}`, `$${first + values.length + 1}`];
    values.push(after.createdAt, after.seq);
    conditions.push(`${table}.created_at <= ${upper}
      AND (${table}.created_at < ${upper} OR ${table}.seq < ${seq})`);
  }
  return { conditions, values };
}

/** One row more than `limit` was read: the page, and the cursor that continues after it. */
function pageOf<R extends { seq: number | string; created_at: number | string }, T>(
  rows: readonly R[],
  limit: number,
  convert: (row: R) => T,
): Page<T> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(convert),
    nextCursor:
      rows.length > limit && last !== undefined
        ? encodeTimeCursor({ createdAt: Number(last.created_at), seq: Number(last.seq) })
        : null,
  };
}

export async function selectEventPage(
  db: SqlExecutor,
  workspaceId: string,
  filter: EventFilter,
  page: { limit: number; cursor: string | null },
): Promise<Page<EventSummary>> {
  const range = timeRange("events", 2, filter, page.cursor);
  const values: SqlValue[] = [workspaceId, ...range.values];
  const conditions = ["workspace_id = $1", ...range.conditions];
  if (filter.type !== undefined) {
    values.push(filter.type);
    conditions.push(`events.type = $${values.length}`);
  }
  values.push(page.limit + 1);
  const rows = await db.query<EventRow>(
    `SELECT seq, id, type, api_version, created_at, test_destination_id FROM events
     WHERE ${conditions.join(" AND ")}
     ORDER BY created_at DESC, seq DESC LIMIT $${values.length}`,
    values,
  );
  return pageOf(rows, page.limit, toEventSummary);
}

export async function selectEvent(
  db: SqlExecutor,
  workspaceId: string,
  id: string,
  now: number,
): Promise<EventDetail | null> {
  const [row] = await db.query<EventRow>(
    `SELECT seq, id, type, api_version, created_at, test_destination_id, body FROM events
     WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id],
  );
  if (row === undefined) return null;
  const deliveries = await db.query<DeliveryRow>(
    `SELECT ${deliveryColumns} FROM deliveries dl WHERE dl.event_id = $1 ORDER BY dl.seq`,
    [id],
  );
  return {
    ...toEventSummary(row),
    body: row.body ?? "",
    deliveries: deliveries.map((delivery) => toDeliveryRecord(delivery, now)),
  };
}

/**
 * A page of the workspace's deliveries, newest first. The SQL names only the filters given,
 * and the status as a literal (one of three, already validated), so that each engine can
 * pick the index that fits: by destination, by workspace, or the partial index of the
 * failed ones, whose predicate (`failure_reason IS NOT NULL`) the failed filter names too (a
 * bound parameter would hide that the filter matches it).
 */
export async function selectDeliveryPage(
  db: SqlExecutor,
  workspaceId: string,
  filter: DeliveryFilter,
  page: { limit: number; cursor: string | null },
  now: number,
): Promise<Page<DeliveryRecord>> {
  const { sql, values } = deliveryPageQuery(workspaceId, filter, page);
  const rows = await db.query<DeliveryRow>(sql, values);
  return pageOf(rows, page.limit, (row) => toDeliveryRecord(row, now));
}

/** The statement of `selectDeliveryPage`, with its values; exported for the test of its plans. */
export function deliveryPageQuery(
  workspaceId: string,
  filter: DeliveryFilter,
  page: { limit: number; cursor: string | null },
): { sql: string; values: SqlValue[] } {
  const range = timeRange("dl", 2, filter, page.cursor);
  const values: SqlValue[] = [workspaceId, ...range.values];
  const conditions = [`dl.workspace_id = $1`, ...range.conditions];
  if (filter.destinationId !== undefined) {
    values.push(filter.destinationId);
    conditions.push(`dl.destination_id = $${values.length}`);
  }
  if (filter.eventId !== undefined) {
    values.push(filter.eventId);
    conditions.push(`dl.event_id = $${values.length}`);
  }
  if (filter.eventType !== undefined) {
    values.push(filter.eventType);
    conditions.push(`dl.event_type = $${values.length}`);
  }
  if (filter.status !== undefined) conditions.push(`dl.status = '${statusLiteral(filter.status)}'`);
  // The failed ones' indexes name their reason, which only a failed delivery has (decision 58).
  if (filter.status === "failed") conditions.push("dl.failure_reason IS NOT NULL");
  values.push(page.limit + 1);
  return {
    sql: `SELECT ${deliveryColumns} FROM deliveries dl WHERE ${conditions.join(" AND ")}
     ORDER BY dl.created_at DESC, dl.seq DESC LIMIT $${values.length}`,
    values,
  };
}

function statusLiteral(status: DeliveryStatus): DeliveryStatus {
  switch (status) {
    case "pending":
    case "delivered":
    case "failed":
      return status;
  }
}

interface AttemptRow extends Record<string, unknown> {
  attempt: number | string;
  started_at: number | string;
  duration_ms: number | string;
  status_code: number | string | null;
  error: string | null;
  error_class: string | null;
  response_body: string | null;
  webhook_signature: string | null;
}

export async function selectDelivery(
  db: SqlExecutor,
  workspaceId: string,
  id: string,
  now: number,
): Promise<DeliveryDetail | null> {
  const named = parseDeliveryId(id);
  if (named === null) return null;
  const [row] = await db.query<DeliveryRow>(
    `SELECT ${deliveryColumns} FROM deliveries dl
     WHERE dl.event_id = $1 AND dl.destination_id = $2 AND dl.workspace_id = $3`,
    [named.eventId, named.destinationId, workspaceId],
  );
  if (row === undefined) return null;
  // A first attempt that ended the delivery is kept in its row, the others (a first attempt
  // that led to a retry, any recorded before decision 53, and every later one) in
  // delivery_attempts; a first attempt in the row older than attempt retention's last cutoff
  // is left out, as its row would have been deleted.
  const attempts = await db.query<AttemptRow>(
    `SELECT 1 AS attempt, first_started_at AS started_at, first_duration_ms AS duration_ms,
            first_status_code AS status_code, first_error AS error,
            first_error_class AS error_class, first_response_body AS response_body,
            first_webhook_signature AS webhook_signature
     FROM deliveries WHERE seq = $1 AND first_started_at >= COALESCE(
       (SELECT CAST(value AS BIGINT) FROM settings WHERE name = $2), 0)
     UNION ALL
     SELECT attempt, started_at, duration_ms, status_code, error, error_class, response_body,
            webhook_signature
     FROM delivery_attempts WHERE delivery_seq = $1
     ORDER BY attempt`,
    [row.seq, ATTEMPTS_PRUNED_BEFORE],
  );
  return { ...toDeliveryRecord(row, now), attemptLog: attempts.map(toAttemptEntry) };
}

function toAttemptEntry(row: AttemptRow): AttemptEntry {
  return {
    attempt: Number(row.attempt),
    attemptedAt: toDate(row.started_at),
    durationMs: Number(row.duration_ms),
    statusCode: row.status_code === null ? null : Number(row.status_code),
    // Attempts recorded before errors were kept have their class alone.
    error: row.error ?? row.error_class,
    responseBody: row.response_body,
    webhookSignature: row.webhook_signature,
  };
}

/** Whether the delivery being updated is a listen session's (decision 34). */
const ofListenSession = `EXISTS (SELECT 1 FROM destinations s
  WHERE s.id = deliveries.destination_id AND s.kind = 'listen')`;

/**
 * What a retry or recovery sets: pending, due `$1`, the schedule started over from the
 * attempts made so far (decision 30), no lease, no reason to have failed.
 */
const requeue = `status = 'pending', lease_owner = NULL, failure_reason = NULL,
  next_attempt_at = CASE WHEN ${ofListenSession} THEN NULL ELSE CAST($1 AS BIGINT) END,
  listen_due_at = CASE WHEN ${ofListenSession} THEN CAST($1 AS BIGINT) END,
  retry_base = attempts, schedule_started_at = $1, updated_at = $1`;

interface RetryRow extends DeliveryRow {
  active: number | boolean;
  deleted_at: number | string | null;
}

/** A retry queued, and until when its destination's circuit held the others (null: not open). */
export type Requeued = RetryOutcome & { readonly heldUntil?: number | null };

/**
 * Call inside a transaction. Queues the delivery again, due now and through its destination's
 * circuit (`letRepairThrough`, decision 40), unless a worker holds it or its destination is
 * paused or deleted; null when the workspace has no such delivery.
 */
export async function requeueDelivery(
  db: Database,
  tx: SqlExecutor,
  workspaceId: string,
  id: string,
  now: number,
): Promise<Requeued | null> {
  const named = parseDeliveryId(id);
  if (named === null) return null;
  const [row] = await tx.query<RetryRow>(
    `SELECT ${deliveryColumns}, d.active, d.deleted_at
     FROM deliveries dl JOIN destinations d ON d.id = dl.destination_id
     WHERE dl.event_id = $1 AND dl.destination_id = $2 AND dl.workspace_id = $3
     ${db.rowLockClause}`,
    [named.eventId, named.destinationId, workspaceId],
  );
  if (row === undefined) return null;
  if (row.status === "pending" && row.lease_owner !== null) return { kind: "in_flight" };
  if (!toBoolean(row.active) || row.deleted_at !== null) return { kind: "destination_inactive" };
  await tx.execute(`UPDATE deliveries SET ${requeue} WHERE seq = $2`, [now, row.seq]);
  const heldUntil = await letRepairThrough(tx, row.destination_id, now);
  const delivery = toDeliveryRecord(
    {
      ...row,
      status: "pending",
      next_attempt_at: now,
      lease_owner: null,
      failure_reason: null,
      circuit_open_until: heldUntil === null ? row.circuit_open_until : now,
    },
    now,
  );
  return { kind: "queued", delivery, heldUntil };
}

/** After a repair's commit: what the circuit held goes after the probe (`releaseHeld`). */
export async function releaseHeldAfterRepair(
  db: Database,
  destinationId: string,
  heldUntil: number | null | undefined,
  now: number,
): Promise<void> {
  if (heldUntil === null || heldUntil === undefined) return;
  await releaseHeld(db, destinationId, heldUntil, now);
}

/**
 * Queues again the destination's `failed` deliveries created at or after `since`, a chunk per
 * transaction, due now and through its circuit (`letRepairThrough`, decision 40), and then
 * what the circuit held; returns how many were queued. Only failed ones: a pending one is
 * never doubled.
 */
export async function requeueFailedSince(
  db: Database,
  destinationId: string,
  since: number,
  now: number,
): Promise<number> {
  let queued = 0;
  let heldUntil: number | null = null;
  for (;;) {
    const changed = await db.transaction(async (tx) => {
      const count = await tx.execute(
        `UPDATE deliveries SET ${requeue}
         WHERE seq IN (SELECT seq FROM deliveries
                       WHERE destination_id = $2 AND status = 'failed'
                         AND failure_reason IS NOT NULL AND created_at >= $3
                       LIMIT ${recoveryChunk})
           AND status = 'failed'`,
        [now, destinationId, since],
      );
      if (count > 0) heldUntil ??= await letRepairThrough(tx, destinationId, now);
      return count;
    });
    queued += changed;
    if (changed < recoveryChunk) break;
  }
  await releaseHeldAfterRepair(db, destinationId, heldUntil, now);
  return queued;
}

/**
 * Gives deliveries queued by a process of an older release (which does not set their
 * workspace) the workspace of their event, so that the log's lists find them; returns how
 * many. `deliveries_by_workspace` indexes the NULLs, so this reads only those rows.
 */
export function adoptDeliveriesWithoutWorkspace(db: SqlExecutor): Promise<number> {
  return db.execute(
    `UPDATE deliveries
     SET workspace_id = (SELECT e.workspace_id FROM events e WHERE e.id = deliveries.event_id)
     WHERE workspace_id IS NULL`,
  );
}
