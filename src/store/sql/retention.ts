import type { Database } from "../database.ts";
import { statsHourMs } from "./count-attempts.ts";

/**
 * Retention in bounded batches (decision 50): each statement below removes at most `limit`
 * rows, found by walking an index from its oldest end, and the caller runs each batch as its
 * own short transaction. A batch's cost is then the rows it removes (and the index pages it
 * walks to find them), never the rows that are kept: the walk stops at the cutoff. On
 * PostgreSQL the rows a batch picks are locked with SKIP LOCKED, so that the maintenance of
 * several worker processes at once takes disjoint batches instead of waiting on (or
 * deadlocking with) each other.
 */

/**
 * Up to `limit` attempt records that started before `before`, oldest first, through
 * `delivery_attempts_by_time` (started_at); returns how many went.
 */
export function deleteAttemptBatch(db: Database, before: number, limit: number): Promise<number> {
  return db.execute(
    `DELETE FROM delivery_attempts WHERE (delivery_seq, attempt) IN (
       SELECT delivery_seq, attempt FROM delivery_attempts WHERE started_at < $1
       ORDER BY started_at LIMIT $2 ${db.claimLockClause("delivery_attempts")})`,
    [before, limit],
  );
}

/**
 * Up to `limit` delivery-statistics counters of hours that ended by `before` (decision 36),
 * through `delivery_stats_hourly_by_hour`; returns how many went.
 */
export function deleteCountBatch(db: Database, before: number, limit: number): Promise<number> {
  return db.execute(
    `DELETE FROM delivery_stats_hourly WHERE (workspace_id, hour_start, destination_id) IN (
       SELECT workspace_id, hour_start, destination_id FROM delivery_stats_hourly
       WHERE hour_start <= $1
       ORDER BY hour_start LIMIT $2 ${db.claimLockClause("delivery_stats_hourly")})`,
    [before - statsHourMs, limit],
  );
}

/**
 * Up to `limit` idempotency keys that expired by `now`, through `idempotency_keys_by_expiry`;
 * returns how many went.
 */
export function deleteIdempotencyKeyBatch(
  db: Database,
  now: number,
  limit: number,
): Promise<number> {
  return db.execute(
    `DELETE FROM idempotency_keys WHERE (workspace_id, idempotency_key) IN (
       SELECT workspace_id, idempotency_key FROM idempotency_keys WHERE expires_at <= $1
       ORDER BY expires_at LIMIT $2 ${db.claimLockClause("idempotency_keys")})`,
    [now, limit],
  );
}

/** A window of events in publishing order, for `deleteEndedEvents`. */
export interface EventWindow {
  /** The ids of the window's events published before the cutoff, in `seq` order. */
  readonly expired: string[];
  /** Where the next window starts (the last `seq` read). */
  readonly after: number;
  /** Whether the walk is over: the window reached an event at or after the cutoff, or the end. */
  readonly done: boolean;
}

/**
 * The next `limit` events after `seq` `after`, by the primary key, and which of them were
 * published before `before`. Events are walked in `seq` (publishing) order rather than by
 * time, which needs no index of their own: a time index would cost every publish an index
 * entry for the sake of an hourly pass. The walk stops at the first event published at or after
 * the cutoff; `seq` follows `created_at` but for the milliseconds publishers' clocks may
 * disagree by, so an expired event that follows a newer one waits for the next pass.
 */
export async function selectEventWindow(
  db: Database,
  options: { after: number; before: number; limit: number },
): Promise<EventWindow> {
  const rows = await db.query<{ seq: number | string; id: string; created_at: number | string }>(
    "SELECT seq, id, created_at FROM events WHERE seq > $1 ORDER BY seq LIMIT $2",
    [options.after, options.limit],
  );
  const expired: string[] = [];
  for (const row of rows) {
    if (Number(row.created_at) >= options.before) {
      return { expired, after: Number(row.seq), done: true };
    }
    expired.push(row.id);
  }
  return {
    expired,
    after: rows.length === 0 ? options.after : Number(rows.at(-1)?.seq),
    done: rows.length < options.limit,
  };
}

/**
 * Deletes, in one transaction, the events of `ids` whose deliveries have all ended (delivered
 * or failed), with those deliveries and their attempts; returns how many events. A delivery
 * still pending (retried, held by a circuit, waiting for a listen session) keeps its event and
 * its body however old it is. On PostgreSQL the events are locked first, SKIP LOCKED, so that
 * two processes' passes over the same window do not wait on each other.
 */
export function deleteEndedEvents(db: Database, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return Promise.resolve(0);
  const list = db.textsOfJsonArray("$1");
  return db.transaction(async (tx) => {
    const ended = await tx.query<{ id: string }>(
      `SELECT e.id FROM events e WHERE e.id IN (${list})
         AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
       ${db.claimLockClause("e")}`,
      [JSON.stringify(ids)],
    );
    if (ended.length === 0) return 0;
    const endedIds = JSON.stringify(ended.map((row) => row.id));
    await tx.execute(
      `DELETE FROM delivery_attempts WHERE delivery_seq IN
         (SELECT seq FROM deliveries WHERE event_id IN (${list}))`,
      [endedIds],
    );
    await tx.execute(`DELETE FROM deliveries WHERE event_id IN (${list})`, [endedIds]);
    return tx.execute(`DELETE FROM events WHERE id IN (${list})`, [endedIds]);
  });
}
