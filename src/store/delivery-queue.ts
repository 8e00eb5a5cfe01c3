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
import { Batcher } from "./batcher.ts";
import { closeCircuit, openCircuit } from "./sql/circuits.ts";
import {
  claimDueDeliveries,
  finishAttempts,
  type FinishedAttempt,
  newLease,
  releaseDeliveries,
  selectBacklog,
  selectNextDueAt,
} from "./sql/deliveries.ts";
import { type PublishedBatch, publishEvents, publishTestEvent } from "./sql/events.ts";
import { SqlSlice } from "./sql-slice.ts";

/** The most publishes, results or key lookups one batch carries. */
const maxBatch = 256;

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
   * Returns how many deliveries were queued.
   */
  publishEvent(event: NewEvent): Promise<number>;

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

/** The DeliveryQueue over any `Database`: the SQL is in `./sql/`. */
export class SqlDeliveryQueue extends SqlSlice implements DeliveryQueue {
  /** Publishes and delivery results, the hot paths, are written in batches (`Batcher`). */
  readonly #publishes: Batcher<NewEvent, number>;
  readonly #results: Batcher<FinishedAttempt, boolean>;
  /** The worker in this process that takes fresh deliveries, if any (decision 19). */
  #taker: DeliveryTaker | null = null;
  readonly #queuedListeners = new Set<() => void>();

  constructor(db: Database, clock: Clock) {
    super(db, clock);
    this.#publishes = new Batcher((events) => this.#publishBatch(events), { maxBatch });
    this.#results = new Batcher((reports) => finishAttempts(this.db, reports, this.now()), {
      maxBatch,
    });
  }

  publishEvent(event: NewEvent): Promise<number> {
    return this.#publishes.add(event);
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
  async #publishBatch(events: readonly NewEvent[]): Promise<number[]> {
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
      published = await publishEvents(this.db, events, lease);
    } catch (error) {
      taker?.take(reserved, []);
      throw error;
    }
    taker?.take(reserved, published.handed);
    const total = published.queued.reduce((sum, count) => sum + count, 0);
    if (total > published.handed.length) this.announceQueued();
    return published.queued;
  }

  claimDueDeliveries(owner: string, room: ClaimRoom, leaseMs: number): Promise<ClaimedDelivery[]> {
    return claimDueDeliveries(this.db, owner, room, this.now(), leaseMs);
  }

  finishAttempt(lease: string, seq: number, report: AttemptReport): Promise<boolean> {
    return this.#results.add({ lease, seq, report });
  }

  nextDueAt(exclusions?: ClaimExclusions): Promise<Date | null> {
    return selectNextDueAt(this.db, this.now(), exclusions);
  }

  openCircuit(destinationId: string, opening: CircuitOpening): Promise<void> {
    return openCircuit(this.db, destinationId, opening, this.now());
  }

  releaseDeliveries(lease: string, seqs: readonly number[], dueAt: Date | null): Promise<void> {
    return releaseDeliveries(this.db, lease, seqs, dueAt?.getTime() ?? this.now());
  }

  closeCircuit(destinationId: string): Promise<void> {
    return closeCircuit(this.db, destinationId);
  }

  backlog(): Promise<QueueBacklog> {
    return selectBacklog(this.db, this.now());
  }

  /** Resolves once the batches under way are written. */
  async idle(): Promise<void> {
    await Promise.all([this.#publishes.idle(), this.#results.idle()]);
  }
}
