import { setImmediate as nextTurn } from "node:timers/promises";
import { adoptDeliveriesWithoutWorkspace } from "./sql/delivery-log.ts";
import { endListenSession, selectExpiredListenSessions } from "./sql/listen-sessions.ts";
import { deleteEndedPortalSessions } from "./sql/portal-sessions.ts";
import { deleteEndedSessions } from "./sql/sessions.ts";
import {
  deleteAttemptBatch,
  deleteCountBatch,
  deleteEndedEvents,
  deleteIdempotencyKeyBatch,
} from "./sql/retention.ts";
import { ATTEMPTS_PRUNED_BEFORE, raiseSetting } from "./sql/settings.ts";
import { deleteEndedSignInWindows } from "./sql/sign-in-attempts.ts";
import type { Clock } from "../interfaces.ts";
import type { Database } from "./database.ts";
import type { SqlOperations } from "./operations.ts";
import { SqlSlice } from "./sql-slice.ts";

/** What the maintenance loop deletes when its time is up. */
export interface Housekeeping {
  /**
   * Deletes attempt records that started before `before`, and the delivery statistics'
   * counters of the hours that ended by then; returns how many attempt rows. A first attempt
   * kept in its delivery's row (one that ended it: decision 53) is from then on left out of
   * the log, and goes with the delivery.
   */
  pruneAttempts(before: Date): Promise<number>;

  /**
   * Deletes events published before `before` whose deliveries have all ended (delivered or
   * failed), with those deliveries and their attempts; returns how many events.
   */
  pruneEvents(before: Date): Promise<number>;

  /** Deletes expired keys; returns how many. */
  purgeIdempotencyKeys(): Promise<number>;

  /**
   * Deletes sessions (of users and of the customer portal, with portal links that expired
   * unopened) that have expired or were revoked, and sign-in counts whose window of
   * `windowMs` has ended; returns how many rows went.
   */
  purgeAuthRecords(options: { signInWindowMs: number }): Promise<number>;

  /**
   * Gives the deliveries an older release's process queued (during a rolling upgrade) their
   * workspace, so that the delivery log shows them; returns how many.
   */
  adoptOlderDeliveries(): Promise<number>;

  /**
   * Ends the listen sessions whose stream was last connected before `before`, or before
   * `unnamedBefore` for an unnamed one (decision 34): their waiting deliveries end `failed`;
   * returns how many sessions.
   */
  expireListenSessions(before: Date, unnamedBefore?: Date): Promise<number>;
}

/** Listen sessions ended per transaction. */
const expiryChunk = 100;

/**
 * Rows one retention batch removes, each batch its own transaction (decision 50): small
 * enough that a batch holds SQLite's main thread for a few milliseconds (the budget of
 * decision 36 is 50 ms), large enough that a pass of millions is not mostly round trips.
 * Events go with their deliveries and attempts: a window takes at most `events` events, and
 * as many as make about `eventRows` rows (events and deliveries read) at the fan-out it last
 * met (`nextEventWindow`).
 */
export const retentionBatch = {
  attempts: 1_000,
  counters: 1_000,
  idempotencyKeys: 1_000,
  events: 250,
  eventRows: 1_000,
};

/**
 * How many events the next window of a pass takes, after one of `events` events read
 * `rowsRead` rows: as many as make about `retentionBatch.eventRows` rows at that fan-out, at
 * least one, at most four times as many as before (a fan-out that grows again is met by a
 * window a few times the aim, not by a hundred times), and never more than
 * `retentionBatch.events`. An event's deliveries are as many as its workspace's destinations
 * (up to `eventFanOutLimit`, a thousand by default), which the tenant decides: a fixed window
 * of 250 events could read and delete 250,000 rows in one transaction, on SQLite's main thread.
 */
export function nextEventWindow(events: number, rowsRead: number): number {
  const fitting = Math.floor((events * retentionBatch.eventRows) / Math.max(rowsRead, 1));
  return Math.max(1, Math.min(fitting, events * 4, retentionBatch.events));
}

/**
 * Runs `batch` until one removes less than `size` rows; returns how many it removed in all.
 * Between batches it lets the event loop run (I/O, timers, the sender thread's results), so
 * that deliveries and requests interleave with a pass of any length.
 */
async function inBatches(size: number, batch: () => Promise<number>): Promise<number> {
  let removed = 0;
  for (;;) {
    const count = await batch();
    removed += count;
    if (count < size) return removed;
    await nextTurn();
  }
}

/** The Housekeeping over any `Database`: the SQL is in `./sql/`. */
export class SqlHousekeeping extends SqlSlice implements Housekeeping {
  readonly #operations: SqlOperations;

  constructor(db: Database, clock: Clock, operations: SqlOperations) {
    super(db, clock);
    this.#operations = operations;
  }

  async pruneAttempts(before: Date): Promise<number> {
    const { attempts, counters } = retentionBatch;
    await inBatches(counters, () => deleteCountBatch(this.db, before.getTime(), counters));
    const removed = await inBatches(attempts, () =>
      deleteAttemptBatch(this.db, before.getTime(), attempts),
    );
    // A first attempt kept in its delivery's row (decision 53) cannot be reached by the
    // batched delete without an index of its own; the log leaves out one older than this
    // cutoff, as it no longer finds a pruned row.
    await raiseSetting(
      this.db,
      ATTEMPTS_PRUNED_BEFORE,
      before.getTime(),
      this.clock.now().getTime(),
    );
    return removed;
  }

  /**
   * Walks the events in publishing order from the oldest, a window at a time
   * (`nextEventWindow`), up to the first one published at or after `before`; each window's ended
   * events go in a transaction of their own. Events kept because a delivery is still pending
   * are walked past, not revisited within the pass.
   */
  async pruneEvents(before: Date): Promise<number> {
    let removed = 0;
    let after = 0;
    // The fan-out is not known until a window is read: the first takes one event.
    let limit = 1;
    for (;;) {
      const window = await deleteEndedEvents(this.db, { after, before: before.getTime(), limit });
      removed += window.removed;
      if (window.done) return removed;
      after = window.next;
      limit = nextEventWindow(limit, window.rowsRead);
      await nextTurn();
    }
  }

  purgeIdempotencyKeys(): Promise<number> {
    const size = retentionBatch.idempotencyKeys;
    return inBatches(size, () => deleteIdempotencyKeyBatch(this.db, this.now(), size));
  }

  adoptOlderDeliveries(): Promise<number> {
    return adoptDeliveriesWithoutWorkspace(this.db);
  }

  purgeAuthRecords(options: { signInWindowMs: number }): Promise<number> {
    const now = this.now();
    return this.db.transaction(
      async (tx) =>
        (await deleteEndedSessions(tx, now)) +
        (await deleteEndedPortalSessions(tx, now)) +
        (await deleteEndedSignInWindows(tx, { now, windowMs: options.signInWindowMs })),
    );
  }

  async expireListenSessions(before: Date, unnamedBefore: Date = before): Promise<number> {
    const cutoffs = {
      before: before.getTime(),
      unnamedBefore: Math.max(before.getTime(), unnamedBefore.getTime()),
    };
    let ended = 0;
    for (;;) {
      const ids = await selectExpiredListenSessions(this.db, cutoffs, expiryChunk);
      await this.db.transaction(async (tx) => {
        for (const id of ids) {
          const tell = this.#operations.listenSessionEnded(tx, id, "expired");
          if (await endListenSession(tx, id, "listen session expired", this.now(), tell)) {
            ended += 1;
          }
        }
      });
      if (ids.length > 0 && this.#operations.enabled) this.#operations.published();
      if (ids.length < expiryChunk) return ended;
    }
  }
}
