import type { Database, SqlExecutor } from "../database.ts";
import { statsHourMs } from "./count-attempts.ts";

/**
 * Retention in bounded batches (decision 50): each statement below removes at most `limit`
 * rows, found by walking an index from its oldest end, and the caller runs each batch as its
 * own short transaction. A batch's cost is then the rows it removes (and the index pages it
 * walks to find them), never the rows that are kept: the walk stops at the cutoff. On
 * PostgreSQL the rows a batch picks are locked with SKIP LOCKED, so that the maintenance of
 * several worker processes at once takes disjoint batches instead of waiting on (or
 * deadlocking with) each other.
 *
 * A row found is deleted at its address (`Database.inRowAddresses`: PostgreSQL's ctid,
 * SQLite's rowid), not looked up again by its key (decision 57): each lookup by key descends
 * a B-tree, one level deeper for every hundredfold of rows kept, and a batch made about ten
 * of them per event.
 */

/**
 * Up to `limit` attempt records that started before `before`, oldest first, through
 * `delivery_attempts_by_time` (started_at); returns how many went.
 */
export function deleteAttemptBatch(db: Database, before: number, limit: number): Promise<number> {
  return db.execute(
    `DELETE FROM delivery_attempts WHERE ${db.inRowAddresses(
      `SELECT ${db.rowAddress} FROM delivery_attempts WHERE started_at < $1
       ORDER BY started_at LIMIT $2 ${db.claimLockClause("delivery_attempts")}`,
    )}`,
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
    `DELETE FROM idempotency_keys WHERE ${db.inRowAddresses(
      `SELECT ${db.rowAddress} FROM idempotency_keys WHERE expires_at <= $1
       ORDER BY expires_at LIMIT $2 ${db.claimLockClause("idempotency_keys")}`,
    )}`,
    [now, limit],
  );
}

/** What `deleteEndedEvents` did with a window of events, and where the walk goes on. */
export interface EventWindow {
  /** How many events it deleted. */
  readonly removed: number;
  /** How many rows it read: the window's events and the deliveries of those it took. */
  readonly rowsRead: number;
  /** Where the next window starts (the last `seq` taken). */
  readonly next: number;
  /** Whether the walk is over: the window reached an event at or after the cutoff, or the end. */
  readonly done: boolean;
}

/**
 * A delivery of a window's events, as `deleteEndedEvents` reads it: whether it is pending,
 * and whether it may have rows in delivery_attempts. One that was never attempted has none,
 * nor has one whose single attempt ended it: that attempt is kept in the delivery's own row
 * (decision 53), and most deliveries are such. Their attempts are not looked for.
 */
const windowDeliveryColumns = `seq, event_id,
  CASE WHEN status = 'pending' THEN 1 ELSE 0 END AS pending,
  CASE WHEN attempts = 0 OR (attempts = 1 AND first_started_at IS NOT NULL) THEN 0 ELSE 1 END
    AS attempt_rows`;

type WindowDelivery = {
  readonly seq: number | string;
  readonly event_id: string;
  readonly pending: number;
  readonly attempt_rows: number;
  readonly address: string | number;
};

/**
 * Deletes, in one transaction, the window of the next `limit` events after `seq` `after`
 * that were published before `before`, up to the first that was not, and whose deliveries
 * have all ended (delivered or failed), with those deliveries and their attempts. A delivery
 * still pending (retried, held by a circuit, waiting for a listen session) keeps its event
 * and its body however old it is.
 *
 * Events are walked in `seq` (publishing) order rather than by time, which needs no index of
 * their own: a time index would cost every publish an index entry for the sake of an hourly
 * pass. The walk stops at the first event published at or after the cutoff; `seq` follows
 * `created_at` but for the milliseconds publishers' clocks may disagree by, so an expired
 * event that follows a newer one waits for the next pass.
 *
 * The window is a range of the events' primary key and their deliveries are found by one
 * lookup per event; everything found is then deleted at its address, and attempts are looked
 * for only where a delivery may have them (decision 57). On PostgreSQL the window's events
 * are locked as they are read, SKIP LOCKED, so that two processes' passes take disjoint
 * windows instead of waiting on each other, and their deliveries are locked as they are read,
 * so that one a retry makes pending again meanwhile is seen pending (and its event kept), not
 * deleted.
 */
export function deleteEndedEvents(
  db: Database,
  options: { after: number; before: number; limit: number },
): Promise<EventWindow> {
  // As a claim's (decision 56): a generic plan made while the tables were small keeps to
  // their indexes as they grow.
  return db.transaction(
    async (tx) => {
      const rows = await tx.query<{
        seq: number | string;
        id: string;
        created_at: number | string;
        address: string | number;
      }>(windowSql(db), [options.after, options.limit]);
      const cut = rows.findIndex((row) => Number(row.created_at) >= options.before);
      const events = cut === -1 ? rows : rows.slice(0, cut);
      const next = Number(events.at(-1)?.seq ?? options.after);
      const done = cut !== -1 || rows.length < options.limit;
      const ended = await deleteEnded(db, tx, events);
      return { removed: ended.removed, rowsRead: rows.length + ended.deliveries, next, done };
    },
    { indexPlansOnly: true },
  );
}

/**
 * Of `events` (expired, and on PostgreSQL locked), deletes those whose deliveries have all
 * ended, with those deliveries and their attempts; returns how many events it removed and
 * how many deliveries it read.
 */
async function deleteEnded(
  db: Database,
  tx: SqlExecutor,
  events: readonly { id: string; address: string | number }[],
): Promise<{ removed: number; deliveries: number }> {
  if (events.length === 0) return { removed: 0, deliveries: 0 };
  const deliveries = await tx.query<WindowDelivery>(windowDeliveriesSql(db), [
    JSON.stringify(events.map((event) => event.id)),
  ]);
  const kept = new Set<string>();
  for (const delivery of deliveries) {
    if (delivery.pending === 1) kept.add(delivery.event_id);
  }
  const ended = kept.size === 0 ? events : events.filter((event) => !kept.has(event.id));
  if (ended.length === 0) return { removed: 0, deliveries: deliveries.length };
  const gone: (string | number)[] = [];
  const withAttempts: number[] = [];
  for (const delivery of deliveries) {
    if (kept.has(delivery.event_id)) continue;
    gone.push(delivery.address);
    if (delivery.attempt_rows === 1) withAttempts.push(Number(delivery.seq));
  }
  if (withAttempts.length > 0) {
    await tx.execute(
      `DELETE FROM delivery_attempts WHERE ${db.inJsonIntegers("delivery_seq", "$1")}`,
      [JSON.stringify(withAttempts)],
    );
  }
  if (gone.length > 0) {
    await tx.execute(deleteAtAddressesSql(db, "deliveries"), [JSON.stringify(gone)]);
  }
  const removed = await tx.execute(deleteAtAddressesSql(db, "events"), [
    JSON.stringify(ended.map((event) => event.address)),
  ]);
  return { removed, deliveries: deliveries.length };
}

/**
 * The window: the next `$2` events after `seq` `$1`, with their addresses, locked SKIP LOCKED
 * on PostgreSQL. Exported for the plan test.
 */
export function windowSql(db: Database): string {
  return `SELECT seq, id, created_at, ${db.rowAddress} AS address FROM events
     WHERE seq > $1 ORDER BY seq LIMIT $2 ${db.claimLockClause("events")}`;
}

/**
 * The deliveries of the events whose ids are the JSON array `$1`, with their addresses,
 * locked on PostgreSQL. Exported for the plan test.
 */
export function windowDeliveriesSql(db: Database): string {
  return `SELECT ${windowDeliveryColumns}, ${db.rowAddress} AS address
     FROM deliveries WHERE ${db.inJsonTexts("event_id", "$1")} ${db.rowLockClause}`;
}

/** Deletes the rows of `table` at the addresses of the JSON array `$1`. Exported for the plan test. */
export function deleteAtAddressesSql(db: Database, table: "events" | "deliveries"): string {
  return `DELETE FROM ${table} WHERE ${db.inRowAddresses(db.textsOfJsonArray("$1"))}`;
}
