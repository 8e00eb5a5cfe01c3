import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import { AppError } from "../errors.ts";
import type { AttemptReport, ClaimedDelivery, DeliveryTaker, HandOverRoom } from "../interfaces.ts";
import type { DeliveryQueue } from "../store/delivery-queue.ts";
import type { AttemptFinished, DeliveryEvents } from "../observability/delivery-events.ts";
import type { RecordedAttempt } from "../observability/tracing/tracing.ts";
import type { StorageHealth } from "../store/storage-health.ts";
import { attemptDelivery, type AttemptDependencies } from "./attempt.ts";
import { CircuitBreaker, type CircuitChange } from "./circuit-breaker.ts";
import { DestinationSlots, heldWhenFast } from "./destination-slots.ts";
import { WorkSignal } from "./work-signal.ts";

/** The slices of the store a worker uses: the queue, and whether writes fail for lack of space. */
export interface WorkerStore {
  readonly queue: DeliveryQueue;
  readonly health: StorageHealth;
}

/** How often the worker looks for destinations that stopped answering while others wait. */
const shedEveryMs = 250;

export interface WorkerOptions {
  /** Deliveries held at once (waiting, being sent, or being recorded), across all destinations. */
  readonly concurrency: number;
  /**
   * Attempts in flight at once to a destination not known to answer fast; one that answers
   * fast may have half of `concurrency` (`DestinationSlots`).
   */
  readonly destinationConcurrency: number;
  /** Deliveries of one workspace held at once, before others' are claimed first. */
  readonly workspaceConcurrency: number;
  /** Destination failures in a row that open its circuit. */
  readonly circuitThreshold: number;
  /** How long a claim holds before the delivery is due again for any worker. */
  readonly leaseMs: number;
  /**
   * The longest the worker sleeps when idle: how soon it notices work that no wake-up
   * announced. Asked before every sleep, since it depends on whether wake-ups arrive.
   */
  readonly idlePollMs: () => number;
}

/**
 * Claims due deliveries in batches (as many as there are free slots), attempts them
 * concurrently, and reports each result. It sleeps until the next delivery is due, or until
 * `wake()` says new work was published, or until `idlePollMs` has passed.
 *
 * As the store's `DeliveryTaker` it also takes the deliveries of this process's publishes,
 * claimed as they commit, but only while it is caught up (its last claim found fewer due
 * deliveries than it had room for, and no wake-up came since), so that a backlog is still
 * sent oldest due first (decision 19).
 *
 * No destination or workspace takes more than its share (decision 24): a claim asks for no more
 * of either than its room, a destination not known to answer fast has at most
 * `destinationConcurrency` attempts in flight (`DestinationSlots`), and a destination that keeps
 * failing has its circuit opened (`CircuitBreaker`).
 */
export class DeliveryWorker implements DeliveryTaker {
  readonly owner = `worker_${randomBytes(8).toString("hex")}`;
  readonly #queue: DeliveryQueue;
  readonly #health: StorageHealth;
  readonly #dependencies: AttemptDependencies;
  readonly #logger: FastifyBaseLogger;
  readonly #events: DeliveryEvents;
  readonly #options: WorkerOptions;
  readonly #signal = new WorkSignal();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #slots: DestinationSlots;
  readonly #breaker: CircuitBreaker;
  /** Slots set aside for publish batches being written, and for the loop's claim under way. */
  #reserved = 0;
  #claiming = 0;
  #caughtUp = false;
  /** Counts wake-ups, so that a claim racing one does not count as caught up. */
  #wakeUps = 0;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  #shedding: NodeJS.Timeout | undefined;
  /** The loop's wait while storage is full (`#waitForStorage`), doubling up to 5 s. */
  #storageWaitMs = 0;

  constructor(
    store: WorkerStore,
    dependencies: AttemptDependencies,
    logger: FastifyBaseLogger,
    options: WorkerOptions,
    events: DeliveryEvents,
  ) {
    this.#queue = store.queue;
    this.#health = store.health;
    this.#dependencies = dependencies;
    this.#logger = logger.child({ worker: this.owner });
    this.#events = events;
    this.#options = options;
    this.#slots = new DestinationSlots(
      {
        sending: options.destinationConcurrency,
        heldWhenFast: heldWhenFast(options.destinationConcurrency, options.concurrency),
        perWorkspace: options.workspaceConcurrency,
        fastExchangeMs: Math.min(1000, dependencies.timeoutMs / 4),
      },
      () => this.#now(),
    );
    this.#breaker = new CircuitBreaker(options.circuitThreshold, dependencies.schedule);
  }

  start(): void {
    this.#running = true;
    this.#loop = this.#run();
    // A destination that stops answering gives back what waits for its turns (decision 24).
    this.#shedding = setInterval(() => {
      const shed = this.#slots.shedSlow();
      if (shed.length > 0) this.#giveBack(shed, null);
    }, shedEveryMs);
    this.#shedding.unref();
  }

  get leaseMs(): number {
    return this.#options.leaseMs;
  }

  /** New work may be due now. */
  wake(): void {
    this.#caughtUp = false;
    this.#wakeUps += 1;
    this.#signal.notify();
  }

  reserve(): HandOverRoom {
    if (!this.#running || !this.#caughtUp) return { slots: 0, excludedDestinations: [] };
    const free = this.#free();
    this.#reserved += free;
    return this.#slots.handOver(free);
  }

  take(reserved: number, deliveries: readonly ClaimedDelivery[]): void {
    this.#reserved -= reserved;
    // Taken after stop(), they are left leased: due again, for any worker, when the lease ends.
    if (!this.#running) return;
    const over: ClaimedDelivery[] = [];
    for (const delivery of deliveries) {
      if (this.#slots.hasRoom(delivery)) this.#begin(delivery);
      else over.push(delivery);
    }
    if (over.length > 0) this.#giveBack(over, null);
    // Slots given back while deliveries wait for a claim: the loop may have left them alone.
    if (!this.#caughtUp && reserved > deliveries.length) this.#signal.notify();
  }

  /**
   * Deliveries the worker will not send after all (handed more than it has room for, or
   * waiting for a destination that stopped answering) go back to the queue, due at `dueAt`
   * (null: at once), to be claimed within the room. If this fails, their lease runs out.
   */
  #giveBack(deliveries: readonly ClaimedDelivery[], dueAt: Date | null): void {
    this.#caughtUp = false;
    const byLease = new Map<string, number[]>();
    for (const { lease, seq } of deliveries)
      byLease.set(lease, [...(byLease.get(lease) ?? []), seq]);
    for (const [lease, seqs] of byLease) {
      this.#queue.releaseDeliveries(lease, seqs, dueAt).then(
        () => {
          this.#signal.notify();
        },
        (error: unknown) => {
          this.#logger.error({ err: error }, "deliveries could not be given back to the queue");
        },
      );
    }
  }

  #free(): number {
    const held = this.#inFlight.size + this.#reserved + this.#claiming;
    return Math.max(0, this.#options.concurrency - held);
  }

  /** Stops claiming, and waits for the attempts in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.#running = false;
    clearInterval(this.#shedding);
    this.#signal.notify();
    await this.#loop;
    await Promise.all(this.#inFlight);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      try {
        if (this.#health.storageFullSince() !== null) {
          await this.#waitForStorage();
          continue;
        }
        const free = this.#free();
        const wakeUps = this.#wakeUps;
        let claimed: ClaimedDelivery[] = [];
        if (free > 0) {
          this.#claiming = free;
          try {
            claimed = await this.#queue.claimDueDeliveries(
              this.owner,
              this.#slots.room(free),
              this.#options.leaseMs,
            );
          } finally {
            this.#claiming = 0;
          }
          // Caught up with what it has room for: a destination or workspace that is full is
          // skipped, and wakes the loop when it has room again (see #attempt).
          this.#caughtUp = claimed.length < free && wakeUps === this.#wakeUps;
        }
        for (const delivery of claimed) this.#begin(delivery);
        // A full batch suggests more are due: claim again as soon as a slot frees.
        if (free > 0 && claimed.length === free) continue;
        await this.#signal.wait(await this.#idleDelay());
      } catch (error) {
        this.#logger.error({ err: error }, "delivery loop failed; trying again in 1s");
        await this.#signal.wait(1000);
      }
    }
  }

  async #idleDelay(): Promise<number> {
    const idlePollMs = this.#options.idlePollMs();
    // Every slot attempting: one that finishes wakes the loop if anything may be due (see
    // #begin); else the poll does.
    if (this.#inFlight.size >= this.#options.concurrency) return idlePollMs;
    const due = await this.#queue.nextDueAt(this.#slots.exclusions());
    if (due === null) return idlePollMs;
    const untilDue = due.getTime() - this.#now();
    if (untilDue > 0) return Math.min(untilDue, idlePollMs);
    // Something is due (a retry, an expired lease, another process's delivery): no fresh
    // deliveries are taken until it is claimed. Slots that publish batches hold come back
    // through take(), which then wakes the loop.
    this.#caughtUp = false;
    return this.#free() > 0 ? 0 : idlePollMs;
  }

  #begin(delivery: ClaimedDelivery): void {
    const task = this.#attempt(delivery)
      .then(undefined, () => true)
      .then((lookAgain) => {
        this.#inFlight.delete(task);
        // A freed slot needs a claim only if something may be due; a retry may be due sooner
        // than the loop's sleep.
        if (lookAgain || !this.#caughtUp) this.#signal.notify();
      });
    this.#inFlight.add(task);
  }

  /**
   * Waits for the destination's turn, attempts and reports; resolves whether the delivery is
   * still pending (never rejects). The turn is held for the exchange only, not the recording.
   * What came of it goes to the `DeliveryEvents` listeners (metrics, the operator log).
   */
  async #attempt(delivery: ClaimedDelivery): Promise<boolean> {
    const leaseEndsAt = this.#now() + this.#options.leaseMs;
    const turn = await this.#slots.acquire(delivery);
    // Given back while it waited for its turn (its destination stopped answering).
    if (turn === "given-up") return true;
    let turnHeld = true;
    /** Gives the destination's turn back, with how long its exchange took if it had one. */
    const endTurn = (exchangeMs: number | null = null): void => {
      if (!turnHeld) return;
      turnHeld = false;
      const hadNoRoom = this.#slots.release(delivery, exchangeMs);
      // Deliveries of a destination or workspace that had no room were passed over by the
      // claims: now one of them may be taken.
      if (hadNoRoom || !this.#caughtUp) this.#signal.notify();
    };
    try {
      // A delivery that waited for its turn too long to finish inside its lease is left
      // leased: it is due again, for any worker, when the lease ends.
      const lateTurn =
        turn === "after-wait" && this.#now() + this.#dependencies.timeoutMs > leaseEndsAt;
      if (!this.#running || lateTurn) return true;
      // Its destination's circuit opened while it waited: it waits for the circuit instead
      // (unless a user's repair let it through since: decision 40).
      const circuitEnds = this.#breaker.heldUntil(delivery, this.#now());
      if (circuitEnds > this.#now()) {
        endTurn();
        this.#giveBack([delivery], new Date(circuitEnds));
        return true;
      }
      // Traced, the attempt, its circuit's change and its record are one span, current for
      // their log lines (decision 47); untraced, they cost one test more.
      const { tracing, propagateTraceContext } = this.#dependencies;
      const { report, recorded } = tracing
        ? await tracing.traceAttempt(delivery, propagateTraceContext === true, (traceparent) =>
            this.#sendAndRecord(delivery, leaseEndsAt, traceparent, endTurn),
          )
        : await this.#sendAndRecord(delivery, leaseEndsAt, null, endTurn);
      return !recorded || report.result.status === "pending";
    } catch (error) {
      // Left claimed: the lease expires and the delivery is attempted again then.
      this.#logger.error(
        {
          event_id: delivery.eventId,
          destination_id: delivery.destination.id,
          attempt: delivery.attempts + 1,
          err: error,
        },
        "delivery attempt failed unexpectedly",
      );
      return true;
    } finally {
      endTurn();
    }
  }

  /**
   * The attempt (the turn given back as its exchange ends), the circuit's change it makes and
   * its report to the store; every attempt started is finished for the listeners, recorded
   * or not.
   */
  async #sendAndRecord(
    delivery: ClaimedDelivery,
    leaseEndsAt: number,
    traceparent: string | null,
    endTurn: (exchangeMs: number) => void,
  ): Promise<RecordedAttempt> {
    const startedAt = this.#now();
    this.#events.attemptStarted({
      destinationId: delivery.destination.id,
      eventId: delivery.eventId,
    });
    // attemptDelivery never rejects: its failures are results.
    const attempted = await attemptDelivery(delivery, this.#dependencies, traceparent);
    endTurn(this.#now() - startedAt);
    const change = this.#breaker.record(delivery, attempted, this.#now());
    if (change !== null) await this.#changeCircuit(delivery, change);
    const report = this.#heldByCircuit(delivery, attempted);
    let recorded = false;
    try {
      recorded = await this.#record(delivery, report, leaseEndsAt);
    } finally {
      this.#events.attemptFinished(attemptFinished(delivery, report, recorded));
    }
    return { report, recorded, circuitChange: change?.kind ?? null };
  }

  /** Opens or closes the destination's circuit; a failure to is logged, not thrown. */
  async #changeCircuit(delivery: ClaimedDelivery, change: CircuitChange): Promise<void> {
    const destinationId = delivery.destination.id;
    try {
      if (change.kind === "close") {
        await this.#queue.closeCircuit(destinationId);
        this.#logger.info({ destination_id: destinationId }, "destination's circuit closed");
        return;
      }
      const { opening } = change;
      await this.#queue.openCircuit(destinationId, opening);
      // What waits here for its turn waits for the circuit instead.
      const waiting = this.#slots.shedSlow(destinationId);
      if (waiting.length > 0) this.#giveBack(waiting, opening.until);
      this.#logger.warn(
        {
          destination_id: destinationId,
          opens: opening.opens,
          open_until: opening.until.toISOString(),
          reason: opening.error,
        },
        "destination's circuit opened: its deliveries wait until a probe gets through",
      );
    } catch (error) {
      this.#logger.error(
        { destination_id: destinationId, err: error },
        "the destination's circuit could not be changed",
      );
    }
  }

  /** A retry falls no earlier than the end of the circuit this worker opened for it. */
  #heldByCircuit(delivery: ClaimedDelivery, report: AttemptReport): AttemptReport {
    const until = this.#breaker.openUntil(delivery.destination.id);
    const { result } = report;
    if (result.status !== "pending" || result.nextAttemptAt.getTime() >= until) return report;
    return { ...report, result: { status: "pending", nextAttemptAt: new Date(until) } };
  }

  /**
   * Reports an attempt, trying again while the database is unreachable: the receiver may
   * have the notification already, and a report recorded before the lease ends spares it a
   * second copy. Once the lease has ended another worker may hold the delivery, so the
   * error is given up (the delivery is simply attempted again). A full disk is waited out
   * for as long as the worker runs, lease or not: no other worker can claim the delivery
   * meanwhile (a claim writes too), and a report under a lease that was taken over is
   * refused by its token anyway (decision 22).
   */
  async #record(
    delivery: ClaimedDelivery,
    report: AttemptReport,
    leaseEndsAt: number,
  ): Promise<boolean> {
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2000)) {
      try {
        return await this.#queue.finishAttempt(delivery.lease, delivery.seq, report);
      } catch (error) {
        const code = error instanceof AppError ? error.code : null;
        const retry =
          code === "storage_full"
            ? this.#running
            : code === "service_unavailable" && this.#now() + waitMs < leaseEndsAt;
        if (!retry) throw error;
        this.#logger.warn(
          { seq: delivery.seq, retry_in_ms: waitMs, code },
          code === "storage_full"
            ? "storage full; retrying report"
            : "database unreachable; retrying report",
        );
        await sleep(waitMs);
      }
    }
  }

  /**
   * While the store's writes fail for lack of space, claims would fail too (a claim writes):
   * claim nothing, and every few seconds ask the store whether a write succeeds again
   * (`StorageHealth.ping` tries one while it is failing).
   */
  async #waitForStorage(): Promise<void> {
    this.#storageWaitMs = Math.min(this.#storageWaitMs * 2 || 250, 5000);
    await this.#signal.wait(this.#storageWaitMs);
    try {
      await this.#health.ping();
    } catch (error) {
      if (!(error instanceof AppError && error.code === "storage_full")) throw error;
      this.#logger.warn({ retry_in_ms: this.#storageWaitMs }, "storage full; not claiming");
      return;
    }
    this.#storageWaitMs = 0;
  }

  #now(): number {
    const { clock } = this.#dependencies;
    return clock.nowMs === undefined ? clock.now().getTime() : clock.nowMs();
  }
}

/** What the listeners hear of an attempt reported to the store. */
function attemptFinished(
  delivery: ClaimedDelivery,
  { attempt, result, error }: AttemptReport,
  recorded: boolean,
): AttemptFinished {
  return {
    destinationId: delivery.destination.id,
    eventId: delivery.eventId,
    attempt: delivery.attempts + 1,
    outcome: result.status === "pending" ? "retry" : result.status,
    exchange:
      attempt === null
        ? null
        : {
            durationMs: attempt.durationMs,
            statusCode: attempt.statusCode,
            errorClass: attempt.errorClass,
          },
    error,
    nextAttemptAt: result.status === "pending" ? result.nextAttemptAt : null,
    recorded,
  };
}
