import { deleteCountsBefore } from "./sql/count-attempts.ts";
import { deleteAttemptsBefore, deleteEndedEventsBefore } from "./sql/deliveries.ts";
import { adoptDeliveriesWithoutWorkspace } from "./sql/delivery-log.ts";
import { deleteExpiredIdempotencyKeys } from "./sql/idempotency.ts";
import { endListenSession, selectExpiredListenSessions } from "./sql/listen-sessions.ts";
import { deleteEndedPortalSessions } from "./sql/portal-sessions.ts";
import { deleteEndedSessions } from "./sql/sessions.ts";
import { deleteEndedSignInWindows } from "./sql/sign-in-attempts.ts";
import type { Clock } from "../interfaces.ts";
import type { Database } from "./database.ts";
import type { SqlOperations } from "./operations.ts";
import { SqlSlice } from "./sql-slice.ts";

/** What the maintenance loop deletes when its time is up. */
export interface Housekeeping {
  /**
   * Deletes attempt records that started before `before`, and the delivery statistics'
   * counters of the hours that ended by then; returns how many attempts.
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

/** The Housekeeping over any `Database`: the SQL is in `./sql/`. */
export class SqlHousekeeping extends SqlSlice implements Housekeeping {
  readonly #operations: SqlOperations;

  constructor(db: Database, clock: Clock, operations: SqlOperations) {
    super(db, clock);
    this.#operations = operations;
  }

  async pruneAttempts(before: Date): Promise<number> {
    await deleteCountsBefore(this.db, before.getTime());
    return deleteAttemptsBefore(this.db, before.getTime());
  }

  pruneEvents(before: Date): Promise<number> {
    return this.db.transaction((tx) => deleteEndedEventsBefore(tx, before.getTime()));
  }

  purgeIdempotencyKeys(): Promise<number> {
    return deleteExpiredIdempotencyKeys(this.db, this.now());
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
