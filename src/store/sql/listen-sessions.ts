import type { ClaimedDelivery, EventSubscription } from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";
import { newLease, selectClaimed } from "./deliveries.ts";
import { insertEvents, subscriptionsOf } from "./destinations.ts";
import { toDate, toNullableDate } from "./rows.ts";

/** A listen session as stored (decision 34); `expiresAt` is worked out by the slice. */
export interface ListenSessionRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string | null;
  readonly events: readonly EventSubscription[];
  /** Who opened it (`key:<id>` or `user:<id>`, decision 39); null if opened before that was kept. */
  readonly openedBy: string | null;
  readonly createdAt: Date;
  readonly lastSeenAt: Date | null;
  readonly connected: boolean;
  /** Deliveries waiting for it or in flight. */
  readonly pending: number;
}

export interface NewListenSession {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string | null;
  readonly events: readonly EventSubscription[];
  readonly secretCiphertext: string;
  /** Who opens it: `key:<id>` or `user:<id>` (decision 39). */
  readonly openedBy: string;
}

/**
 * What opening did: created or resumed the session (`created` says which); or nothing, because
 * the workspace has its limit of live sessions, or because the live session of that name was
 * opened by another credential that the caller may not act for (decision 39).
 */
export type OpenedListenSession =
  | { readonly kind: "opened"; readonly session: ListenSessionRecord; readonly created: boolean }
  | { readonly kind: "limit_reached" }
  | { readonly kind: "opened_by_another" };

interface SessionRow extends Record<string, unknown> {
  seq: number | string;
  id: string;
  workspace_id: string;
  name: string | null;
  opened_by: string | null;
  created_at: number | string;
  last_seen_at: number | string | null;
  listen_stream: string | null;
  pending: number | string;
}

/**
 * A stream records that it is connected every minute (`touchListenSession`): one not heard of
 * for this long is taken for gone (its process died without letting the session go).
 */
export const streamSilenceMs = 180_000;

/**
 * A live session of the workspace, by `where` (parameters: $1 the workspace, $2 the time
 * before which a stream is taken for gone, then the query's own).
 */
function sessionQuery(where: string, tail = ""): string {
  return `SELECT d.seq, d.id, d.workspace_id, d.name, d.opened_by, d.created_at, d.last_seen_at,
            CASE WHEN d.last_seen_at >= $2 THEN d.listen_stream END AS listen_stream,
            (SELECT COUNT(*) FROM deliveries dl
             WHERE dl.destination_id = d.id AND dl.status = 'pending'
               AND dl.listen_due_at IS NOT NULL) AS pending
     FROM destinations d
     WHERE d.workspace_id = $1 AND d.kind = 'listen' AND d.deleted_at IS NULL AND ${where}
     ${tail}`;
}

async function toSessions(
  db: SqlExecutor,
  rows: readonly SessionRow[],
): Promise<ListenSessionRecord[]> {
  const eventsOf = await subscriptionsOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    events: eventsOf(row.id),
    openedBy: row.opened_by,
    createdAt: toDate(row.created_at),
    lastSeenAt: toNullableDate(row.last_seen_at),
    connected: row.listen_stream !== null,
    pending: Number(row.pending),
  }));
}

export async function selectListenSession(
  db: SqlExecutor,
  workspaceId: string,
  id: string,
  now: number,
): Promise<ListenSessionRecord | null> {
  const rows = await db.query<SessionRow>(sessionQuery("d.id = $3"), [
    workspaceId,
    now - streamSilenceMs,
    id,
  ]);
  const [session] = await toSessions(db, rows);
  return session ?? null;
}

/** The workspace's live sessions, newest first, at most `limit`. */
export async function selectListenSessions(
  db: SqlExecutor,
  workspaceId: string,
  limit: number,
  now: number,
): Promise<ListenSessionRecord[]> {
  const rows = await db.query<SessionRow>(sessionQuery("1 = 1", "ORDER BY d.seq DESC LIMIT $3"), [
    workspaceId,
    now - streamSilenceMs,
    limit,
  ]);
  return toSessions(db, rows);
}

/**
 * Call inside a transaction. Resumes the workspace's live session named `session.name`, with
 * `session.events` from now on, if `mayResume` its opener; or creates `session`. Nothing when
 * it would be created but the workspace has `limit` live sessions already.
 */
export async function openListenSession(
  db: Database,
  tx: SqlExecutor,
  session: NewListenSession,
  options: { now: number; limit: number; mayResume: (openedBy: string | null) => boolean },
): Promise<OpenedListenSession> {
  const { now, limit } = options;
  if (session.name !== null) {
    // Two opens of one name at once: PostgreSQL's lock makes the second wait for the first;
    // SQLite's write transactions already run one at a time.
    const [existing] = await tx.query<{ id: string; opened_by: string | null }>(
      `SELECT id, opened_by FROM destinations
       WHERE workspace_id = $1 AND kind = 'listen' AND deleted_at IS NULL AND name = $2
       ${db.rowLockClause}`,
      [session.workspaceId, session.name],
    );
    if (existing !== undefined) {
      // Resuming changes its event types and leads to taking its stream over: only for the
      // credential that opened it, or one that may act for any (decision 39).
      if (!options.mayResume(existing.opened_by)) return { kind: "opened_by_another" };
      await tx.execute("DELETE FROM destination_events WHERE destination_id = $1", [existing.id]);
      await insertEvents(tx, existing.id, session.events);
      await tx.execute("UPDATE destinations SET updated_at = $2 WHERE id = $1", [existing.id, now]);
      const resumed = await selectListenSession(tx, session.workspaceId, existing.id, now);
      return { kind: "opened", session: resumed as ListenSessionRecord, created: false };
    }
  }
  // Each session receives every event it subscribes to: their number is bounded. Two opens at
  // once may both count below it on PostgreSQL; the bound is a guard, not an invariant.
  const [live] = await tx.query<{ live: number | string }>(
    `SELECT COUNT(*) AS live FROM destinations
     WHERE workspace_id = $1 AND kind = 'listen' AND deleted_at IS NULL`,
    [session.workspaceId],
  );
  if (Number(live?.live ?? 0) >= limit) return { kind: "limit_reached" };
  await tx.execute(
    `INSERT INTO destinations (id, workspace_id, url, active, secret_ciphertext, created_at,
                               updated_at, kind, name, last_seen_at, opened_by)
     VALUES ($1, $2, '', $3, $4, $5, $5, 'listen', $6, $5, $7)`,
    [
      session.id,
      session.workspaceId,
      true,
      session.secretCiphertext,
      now,
      session.name,
      session.openedBy,
    ],
  );
  await insertEvents(tx, session.id, session.events);
  const created = await selectListenSession(tx, session.workspaceId, session.id, now);
  return { kind: "opened", session: created as ListenSessionRecord, created: true };
}

/**
 * Call inside a transaction. Ends the session: it receives nothing more, forgets its secret,
 * and its pending deliveries end `failed` with `reason`; `onEnded` runs in the transaction
 * (the operator's notice, decision 48). False if it was not live.
 */
export async function endListenSession(
  tx: SqlExecutor,
  id: string,
  reason: string,
  now: number,
  onEnded?: (workspaceId: string) => Promise<void>,
): Promise<boolean> {
  const [ended] = await tx.query<{ workspace_id: string }>(
    `UPDATE destinations SET deleted_at = $2, updated_at = $2, active = $3,
       secret_ciphertext = NULL, listen_stream = NULL
     WHERE id = $1 AND kind = 'listen' AND deleted_at IS NULL
     RETURNING workspace_id`,
    [id, now, false],
  );
  if (ended === undefined) return false;
  await onEnded?.(ended.workspace_id);
  await tx.execute(
    `UPDATE deliveries SET status = 'failed', listen_due_at = NULL, lease_owner = NULL,
       last_error = $2, failure_reason = 'destination_deleted', updated_at = $3
     WHERE destination_id = $1 AND status = 'pending' AND listen_due_at IS NOT NULL`,
    [id, reason, now],
  );
  return true;
}

/**
 * Sessions last connected before `before` (`unnamedBefore` for an unnamed one, which no one
 * can resume once its command is gone), at most `limit`.
 */
export async function selectExpiredListenSessions(
  db: SqlExecutor,
  cutoffs: { before: number; unnamedBefore: number },
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    // A connected stream records itself every minute: a session not seen for longer has
    // none, whatever \`listen_stream\` says (a process that died could not clear it).
    `SELECT id FROM destinations
     WHERE kind = 'listen' AND deleted_at IS NULL
       AND (last_seen_at < $1 OR (name IS NULL AND last_seen_at < $2))
     ORDER BY last_seen_at LIMIT $3`,
    [cutoffs.before, cutoffs.unnamedBefore, limit],
  );
  return rows.map((row) => row.id);
}

/**
 * Call inside a transaction. The stream `token` holds the session from now on: every delivery
 * an earlier stream holds unreported is due again at once. False if the session is not live.
 */
export async function takeOverListenSession(
  tx: SqlExecutor,
  id: string,
  token: string,
  now: number,
): Promise<boolean> {
  const changed = await tx.execute(
    `UPDATE destinations SET listen_stream = $2, last_seen_at = $3
     WHERE id = $1 AND kind = 'listen' AND deleted_at IS NULL`,
    [id, token, now],
  );
  if (changed === 0) return false;
  await tx.execute(
    `UPDATE deliveries SET lease_owner = NULL, listen_due_at = $2
     WHERE destination_id = $1 AND status = 'pending' AND listen_due_at IS NOT NULL
       AND lease_owner IS NOT NULL`,
    [id, now],
  );
  return true;
}

/** The stream `token` lets its session go (its claims stand until reported or expired). */
export async function releaseListenSession(
  db: SqlExecutor,
  id: string,
  token: string,
  now: number,
): Promise<void> {
  await db.execute(
    `UPDATE destinations SET listen_stream = NULL, last_seen_at = $3
     WHERE id = $1 AND listen_stream = $2`,
    [id, token, now],
  );
}

/** Records that the stream `token` is still connected, for the session's expiry. */
export async function touchListenSession(
  db: SqlExecutor,
  id: string,
  token: string,
  now: number,
): Promise<void> {
  await db.execute(
    "UPDATE destinations SET last_seen_at = $3 WHERE id = $1 AND listen_stream = $2",
    [id, token, now],
  );
}

/** What a stream's claim found: deliveries to push, or that the stream no longer holds it. */
export type ListenClaim =
  | {
      readonly kind: "claimed";
      readonly deliveries: ClaimedDelivery[];
      /** No room: as many as it may hold are pushed and unreported. */
      readonly full: boolean;
    }
  | { readonly kind: "replaced" }
  | { readonly kind: "ended" };

/**
 * Claims the session's due deliveries for the stream `token`, oldest due first, so that at
 * most `inFlight` are claimed and unreported at once, until `leaseMs` from now: the outbox's
 * claim (decision 34), over the session's own index. A lease that ran out (its process died)
 * makes its delivery due again here.
 */
export async function claimForListenStream(
  db: Database,
  id: string,
  token: string,
  options: { now: number; leaseMs: number; inFlight: number },
): Promise<ListenClaim> {
  const { now, leaseMs, inFlight } = options;
  return db.transaction(
    async (tx) => {
      const [session] = await tx.query<{
        listen_stream: string | null;
        deleted_at: number | string | null;
      }>(`SELECT listen_stream, deleted_at FROM destinations WHERE id = $1 ${db.rowLockClause}`, [
        id,
      ]);
      if (session === undefined || session.deleted_at !== null) return { kind: "ended" };
      if (session.listen_stream !== token) return { kind: "replaced" };
      const [held] = await tx.query<{ held: number | string }>(
        `SELECT COUNT(*) AS held FROM deliveries
         WHERE destination_id = $1 AND status = 'pending' AND listen_due_at > $2
           AND lease_owner IS NOT NULL`,
        [id, now],
      );
      const room = inFlight - Number(held?.held ?? 0);
      if (room <= 0) return { kind: "claimed", deliveries: [], full: true };
      const due = await tx.query<{ seq: number | string }>(
        `SELECT seq FROM deliveries
         WHERE destination_id = $1 AND status = 'pending' AND listen_due_at <= $2
         ORDER BY listen_due_at, seq LIMIT $3`,
        [id, now, room],
      );
      if (due.length === 0) return { kind: "claimed", deliveries: [], full: false };
      const seqs = due.map((row) => Number(row.seq));
      const lease = newLease(token);
      await tx.execute(
        `UPDATE deliveries SET listen_due_at = $1, lease_owner = $2
         WHERE ${db.inJsonIntegers("seq", "$3")}`,
        [now + leaseMs, lease, JSON.stringify(seqs)],
      );
      return {
        kind: "claimed",
        deliveries: await selectClaimed(db, tx, seqs, lease),
        full: seqs.length === room,
      };
    },
    { durable: false, indexPlansOnly: true },
  );
}

/** When the session's earliest pending delivery not in flight is due; null if none. */
export async function selectListenNextDue(db: SqlExecutor, id: string): Promise<Date | null> {
  const [row] = await db.query<{ at: number | string }>(
    `SELECT listen_due_at AS at FROM deliveries
     WHERE destination_id = $1 AND status = 'pending' AND listen_due_at IS NOT NULL
     ORDER BY listen_due_at LIMIT 1`,
    [id],
  );
  return row === undefined ? null : new Date(Number(row.at));
}

/**
 * The delivery of `eventId` to a live session of the workspace, for a result: its seq, and
 * where its schedule stands; null if there is none.
 */
export async function selectListenDelivery(
  db: SqlExecutor,
  session: { workspaceId: string; id: string },
  eventId: string,
): Promise<{ seq: number; attempts: number; retryBase: number } | null> {
  const [row] = await db.query<{
    seq: number | string;
    attempts: number | string;
    retry_base: number | string;
  }>(
    `SELECT dl.seq, dl.attempts, dl.retry_base
     FROM deliveries dl JOIN destinations d ON d.id = dl.destination_id
     WHERE dl.event_id = $1 AND dl.destination_id = $2 AND d.workspace_id = $3
       AND d.kind = 'listen' AND d.deleted_at IS NULL`,
    [eventId, session.id, session.workspaceId],
  );
  return row === undefined
    ? null
    : { seq: Number(row.seq), attempts: Number(row.attempts), retryBase: Number(row.retry_base) };
}
