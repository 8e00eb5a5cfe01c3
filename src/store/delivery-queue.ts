import type {
  AttemptReport,
  CircuitOpening,
  ClaimExclusions,
  ClaimRoom,
  ClaimedDelivery,
  Clock,
  DeliveryTaker,
  NewEvent,
} from "../interfaces.ts";
import type { Database } from "./database.ts";
import { AppError } from "../errors.ts";
import { Batcher } from "./batcher.ts";
import { closeCircuit, openCircuit } from "./sql/circuits.ts";
import {
  claimDueDeliveries,
  deleteLeases,
  finishAttempts,
  type FinishedAttempt,
  newLease,
  releaseDeliveries,
  selectBacklog,
  selectNextDueAt,
} from "./sql/deliveries.ts";
import { type PublishedBatch, publishEvents, publishTestEvent } from "./sql/events.ts";
import { SqlSlice } from "./sql-slice.ts";
import type { SqlOperations } from "./operations.ts";
import type { SqlExecutor } from "./database.ts";
import { deliveryId } from "../crypto/tokens.ts";
import {
  deliveryFailed,
  destinationFailing,
  destinationRecovered,
} from "../operations/operational-events.ts";
import {
  markFailingNotice,
  markRecoveredNotice,
  selectFailedDeliveries,
} from "./sql/operational-events.ts";

/** The most publishes, results or key lookups one batch carries. */
const maxBatch = 256;

/** How long a SQLite batch of publishes or results gathers the calls of the next turns (ms). */
const sqliteGatherMs = 1;

/** The queue's backlog, for the metrics (decision 31). */
export interface QueueBacklog {
  /** Deliveries not yet ended: waiting, claimed, or waiting for a retry. */
  readonly pending: number;
  /** When the oldest delivery that is due now (not claimed, not held) was due; null if none. */
  readonly oldestDueAt: Date | null;
}

/** The transactional outbox and its leased queue: what the delivery worker uses (decisions 10, 19, 24). */
export interface DeliveryQueue {
  /**
   * The transactional outbox: records the event and one pending delivery per matching
   * destination (active, not deleted, subscribed by name or `*`) in one transaction.
   * Returns how many deliveries were queued. With `fanOutLimit`, an event that would reach
   * more webhook destinations than that is refused, nothing of it written:
   * `event_fan_out_exceeded` (decision 39). `reach`: the most webhook destinations the
   * event's workspace may hold (its destination limit); a batch whose events may reach few
   * enough lets SQLite keep its undo copies in memory (decision 62).
   */
  publishEvent(
    event: NewEvent,
    options?: { fanOutLimit?: number; reach?: number },
  ): Promise<number>;

  /**
   * A test event (decision 40): the event and one pending delivery to `destinationId` alone,
   * whatever it subscribes to, in one transaction. False, and nothing written, when the
   * destination is not an active webhook destination of the event's workspace.
   */
  publishTestEvent(event: NewEvent, destinationId: string): Promise<boolean>;

  /**
   * From now on, the deliveries of this store's publishes go to `taker`, leased to it in the
   * publishing transaction, as many as it reserves; the rest stay due for a claim. Null stops.
   */
  handDeliveriesTo(taker: DeliveryTaker | null): void;

  /**
   * Deliveries were made due outside a publish (a retry, a recovery): workers in other
   * processes hear of it, as after a publish, and this process's taker wakes.
   */
  announceQueued(): void;

  /**
   * Calls `listener` whenever this process queues deliveries that no worker took at once (a
   * publish, a retry, a recovery): how listen streams (decision 34) hear of their own
   * process's publishes. Returns the function that stops it.
   */
  whenQueued(listener: () => void): () => void;

  /**
   * Claims due deliveries for `owner` until `leaseMs` from now, oldest due first within
   * `room`: they are due again by themselves if the owner never reports back. Deliveries of a
   * destination whose circuit is open are not claimed; of one half-open, one at most.
   */
  claimDueDeliveries(owner: string, room: ClaimRoom, leaseMs: number): Promise<ClaimedDelivery[]>;

  /**
   * Records the attempt, if one was made, and where the delivery now stands. Changes nothing,
   * returning false, if the claim `lease` no longer holds the delivery.
   */
  finishAttempt(lease: string, seq: number, report: AttemptReport): Promise<boolean>;

  /**
   * When the earliest pending delivery is due that a claim with these exclusions could take,
   * or null when there is none.
   */
  nextDueAt(exclusions?: ClaimExclusions): Promise<Date | null>;

  /**
   * Opens the destination's circuit until `until` (its `opens`-th opening in a row): its
   * pending deliveries that are not claimed wait until then, and those created before
   * `failCreatedBefore` end `failed` instead (their retries would be spent by then).
   */
  openCircuit(destinationId: string, opening: CircuitOpening): Promise<void>;

  /**
   * Gives deliveries claimed under `lease` back to the queue, due at `dueAt` (null: now), with
   * nothing attempted: a worker that will not send them after all.
   */
  releaseDeliveries(lease: string, seqs: readonly number[], dueAt: Date | null): Promise<void>;

  /** Closes the destination's circuit: a probe was delivered. */
  closeCircuit(destinationId: string): Promise<void>;

  /** The backlog, read from the index of pending deliveries alone (never the table). */
  backlog(): Promise<QueueBacklog>;
}

/** One publish waiting for its batch: the event and the most webhook destinations it may reach. */
interface Publish {
  readonly event: NewEvent;
  readonly fanOutLimit: number;
  /** The most destinations its workspace may hold (Infinity: not known). */
  readonly reach: number;
}

/**
 * A publish refused: how many destinations the event would have reached (undefined: the
 * batch neither wrote nor refused it, a defect), or `gone` when its workspace was deleted
 * while it was on its way.
 */
type PublishRefusal = { readonly fanOut: number | undefined } | { readonly gone: true };

/** The DeliveryQueue over any `Database`: the SQL is in `./sql/`. */
export class SqlDeliveryQueue extends SqlSlice implements DeliveryQueue {
  /** Publishes and delivery results, the hot paths, are written in batches (`Batcher`). */
  readonly #publishes: Batcher<Publish, number | PublishRefusal>;
  readonly #results: Batcher<FinishedAttempt, boolean>;
  /** The worker in this process that takes fresh deliveries, if any (decision 19). */
  #taker: DeliveryTaker | null = null;
  readonly #queuedListeners = new Set<() => void>();

  /** The operator's notices (decision 48), told of circuits and failed deliveries. */
  #operations: SqlOperations | null = null;

  /**
   * This process's leases (decision 58): the deliveries of each not yet reported or given
   * back, and when it ends. A lease with none left has its row deleted: by the statement that
   * records its last results, or after its last deliveries are given back. Only what was
   * written counts: a batch that fails changes nothing here, and its reports, tried again,
   * count then. A lease left with deliveries unreported (the worker stopped, or left them to
   * their lease) waits for its end, and a claim's sweep; it is forgotten here once it ends.
   */
  readonly #held = new Map<string, { readonly seqs: Set<number>; readonly endsAt: number }>();

  /**
   * `lingerMs`: how long a batch of publishes or results may wait for more (`Batcher`). On
   * SQLite a batch that does not linger gathers what the next turns bring (decision 68).
   */
  constructor(db: Database, clock: Clock, lingerMs = 0) {
    super(db, clock);
    const options = { maxBatch, lingerMs, gatherMs: db.dialect === "sqlite" ? sqliteGatherMs : 0 };
    this.#publishes = new Batcher((events) => this.#publishBatch(events), options);
    this.#results = new Batcher((reports) => this.#finishBatch(reports), options);
  }

  /** From now on, circuits and failed deliveries are told to the operator through `operations`. */
  tellOperations(operations: SqlOperations): void {
    this.#operations = operations;
  }

  /** The enabled operations outbox, or null: then not one statement more (decision 48). */
  #operationsOn(): SqlOperations | null {
    return this.#operations?.enabled === true ? this.#operations : null;
  }

  async #finishBatch(reports: readonly FinishedAttempt[]): Promise<boolean[]> {
    const operations = this.#operationsOn();
    const endedLeases = this.#endedBy(reports);
    const outcome = { told: false };
    const recorded = await finishAttempts(this.db, reports, this.now(), {
      endedLeases,
      onFailed:
        operations === null
          ? undefined
          : async (tx, seqs) => {
              outcome.told = await this.#tellFailedDeliveries(operations, tx, seqs);
            },
    });
    if (outcome.told) operations?.published();
    // Recorded, or refused because the lease no longer holds the delivery: not this lease's
    // any more either way.
    for (const { lease, seq } of reports) this.#settle(lease, [seq]);
    return recorded;
  }

  async #tellFailedDeliveries(
    operations: SqlOperations,
    tx: SqlExecutor,
    seqs: readonly number[],
  ): Promise<boolean> {
    const rows = await selectFailedDeliveries(tx, seqs);
    return operations.publishWithin(
      tx,
      rows.map((row) =>
        deliveryFailed({
          workspaceId: row.workspace_id,
          destinationId: row.destination_id,
          deliveryId: deliveryId(row.event_id, row.destination_id),
          eventId: row.event_id,
          eventType: row.event_type,
          attempts: Number(row.attempts),
          reason: row.failure_reason,
          lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
          lastError: row.last_error,
        }),
      ),
    );
  }

  async publishEvent(
    event: NewEvent,
    options: { fanOutLimit?: number; reach?: number } = {},
  ): Promise<number> {
    const fanOutLimit = options.fanOutLimit ?? Number.MAX_SAFE_INTEGER;
    const reach = options.reach ?? Number.POSITIVE_INFINITY;
    const published = await this.#publishes.add({ event, fanOutLimit, reach });
    if (typeof published === "number") return published;
    if ("gone" in published) {
      throw new AppError(
        "workspace_forbidden",
        `Workspace ${event.workspaceId} was deleted while this event was being published. Nothing was published.`,
      );
    }
    if (published.fanOut === undefined) {
      throw new Error(`The publish of event ${event.id} was neither written nor refused.`);
    }
    throw new AppError(
      "event_fan_out_exceeded",
      `This ${event.type} event would be sent to ${published.fanOut} destinations; one event may reach at most ${fanOutLimit} (eventFanOutLimit). Nothing was published. Delete or pause destinations subscribed to ${event.type}, or ask the operator to raise eventFanOutLimit (SVC_EVENT_FAN_OUT_LIMIT).`,
    );
  }

  async publishTestEvent(event: NewEvent, destinationId: string): Promise<boolean> {
    const queued = await publishTestEvent(this.db, event, destinationId);
    if (queued) this.announceQueued();
    return queued;
  }

  handDeliveriesTo(taker: DeliveryTaker | null): void {
    this.#taker = taker;
  }

  announceQueued(): void {
    this.db.announceDeliveriesQueued();
    this.#taker?.wake();
    for (const listener of this.#queuedListeners) listener();
  }

  whenQueued(listener: () => void): () => void {
    const own = (): void => {
      listener();
    };
    this.#queuedListeners.add(own);
    return () => this.#queuedListeners.delete(own);
  }

  /**
   * One publish batch: its deliveries go to the taker, as many as it reserves, claimed in the
   * same transaction; workers hear only of what is left for a claim, after the commit.
   */
  async #publishBatch(publishes: readonly Publish[]): Promise<(number | PublishRefusal)[]> {
    const events = publishes.map((publish) => publish.event);
    const taker = this.#taker;
    const room = taker?.reserve() ?? { slots: 0, excludedDestinations: [] };
    const reserved = room.slots;
    const lease =
      taker !== null && reserved > 0
        ? {
            token: newLease(taker.owner),
            until: this.now() + taker.leaseMs,
            limit: reserved,
            excludedDestinations: room.excludedDestinations,
          }
        : null;
    let published: PublishedBatch;
    try {
      published = await publishEvents(
        this.db,
        events,
        lease,
        publishes.map((publish) => publish.fanOutLimit),
        publishes.map((publish) => publish.reach),
      );
    } catch (error) {
      taker?.take(reserved, []);
      throw error;
    }
    if (lease !== null)
      this.#hold(
        lease.token,
        published.handed.map((delivery) => delivery.seq),
        lease.until,
      );
    taker?.take(reserved, published.handed);
    const total = published.queued.reduce<number>((sum, count) => sum + (count ?? 0), 0);
    if (total > published.handed.length) this.announceQueued();
    return published.queued.map((count, position): number | PublishRefusal => {
      if (count !== null) return count;
      if (published.gone.has(position)) return { gone: true };
      return { fanOut: published.refused.get(position) };
    });
  }

  async claimDueDeliveries(
    owner: string,
    room: ClaimRoom,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    const now = this.now();
    const claimed = await claimDueDeliveries(this.db, owner, room, now, leaseMs);
    const [first] = claimed;
    if (first !== undefined)
      this.#hold(
        first.lease,
        claimed.map((delivery) => delivery.seq),
        now + leaseMs,
      );
    return claimed;
  }

  finishAttempt(lease: string, seq: number, report: AttemptReport): Promise<boolean> {
    return this.#results.add({ lease, seq, report });
  }

  #hold(lease: string, seqs: readonly number[], endsAt: number): void {
    const now = this.now();
    for (const [held, { endsAt: ends }] of this.#held) if (ends <= now) this.#held.delete(held);
    if (seqs.length > 0) this.#held.set(lease, { seqs: new Set(seqs), endsAt });
  }

  /** `seqs` of `lease` were reported or given back; true when none of it is left. */
  #settle(lease: string, seqs: readonly number[]): boolean {
    const held = this.#held.get(lease);
    if (held === undefined) return false;
    for (const seq of seqs) held.seqs.delete(seq);
    if (held.seqs.size > 0) return false;
    this.#held.delete(lease);
    return true;
  }

  /** The leases whose every delivery still held a batch of results reports (changes nothing). */
  #endedBy(reports: readonly FinishedAttempt[]): string[] {
    const reported = new Map<string, Set<number>>();
    for (const { lease, seq } of reports)
      reported.set(lease, (reported.get(lease) ?? new Set()).add(seq));
    // Counted over the batch's seqs, not the lease's: a lease of 2,048 is reported in many batches.
    return [...reported].flatMap(([lease, seqs]) => {
      const held = this.#held.get(lease);
      if (held === undefined) return [];
      let reportedHeld = 0;
      for (const seq of seqs) if (held.seqs.has(seq)) reportedHeld += 1;
      return reportedHeld === held.seqs.size ? [lease] : [];
    });
  }

  nextDueAt(exclusions?: ClaimExclusions): Promise<Date | null> {
    return selectNextDueAt(this.db, this.now(), exclusions);
  }

  async openCircuit(destinationId: string, opening: CircuitOpening): Promise<void> {
    const operations = this.#operationsOn();
    const now = this.now();
    if (operations === null) return openCircuit(this.db, destinationId, opening, now);
    const outcome = { told: false };
    await openCircuit(this.db, destinationId, opening, now, async (tx) => {
      const interval = operations.failingIntervalMs;
      const workspaceId = await markFailingNotice(tx, destinationId, now, interval);
      if (workspaceId === null) return;
      const circuit = { reason: opening.error, openUntil: opening.until, opens: opening.opens };
      outcome.told = await operations.publishWithin(tx, [
        destinationFailing(workspaceId, destinationId, circuit),
      ]);
    });
    if (outcome.told) operations.published();
  }

  async releaseDeliveries(
    lease: string,
    seqs: readonly number[],
    dueAt: Date | null,
  ): Promise<void> {
    await releaseDeliveries(this.db, lease, seqs, dueAt?.getTime() ?? this.now());
    // Its last deliveries given back, its row goes (if this fails, it waits for its end).
    if (this.#settle(lease, seqs)) await deleteLeases(this.db, this.db, [lease]);
  }

  async closeCircuit(destinationId: string): Promise<void> {
    const operations = this.#operationsOn();
    if (operations === null) return closeCircuit(this.db, destinationId);
    const outcome = { told: false };
    await closeCircuit(this.db, destinationId, async (tx) => {
      const workspaceId = await markRecoveredNotice(tx, destinationId, this.now());
      if (workspaceId === null) return;
      outcome.told = await operations.publishWithin(tx, [
        destinationRecovered(workspaceId, destinationId),
      ]);
    });
    if (outcome.told) operations.published();
  }

  backlog(): Promise<QueueBacklog> {
    return selectBacklog(this.db, this.now());
  }

  /** Resolves once the batches under way are written. */
  async idle(): Promise<void> {
    await Promise.all([this.#publishes.idle(), this.#results.idle()]);
  }
}
