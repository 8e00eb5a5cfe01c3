import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import { AppError } from "../errors.ts";
import type {
  AttemptReport,
  ClaimedDelivery,
  DeliveryTaker,
  HandOverRoom,
  Store,
} from "../interfaces.ts";
import { attemptDelivery, type AttemptDependencies } from "./attempt.ts";
import { CircuitBreaker, type CircuitChange } from "./circuit-breaker.ts";
import { DestinationSlots } from "./destination-slots.ts";
import { WorkSignal } from "./work-signal.ts";

export interface WorkerOptions {
  /** Deliveries held at once (waiting, being sent, or being recorded), across all destinations. */
  readonly concurrency: number;
  /** Attempts of one destination in flight at once. */
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
 * No destination or workspace takes more than its share (decision 22): a claim asks for no more
 * of either than its room, at most `destinationConcurrency` attempts of one destination are in
 * flight, and a destination that keeps failing has its circuit opened (`CircuitBreaker`).
 */
export class DeliveryWorker implements DeliveryTaker {
  readonly owner = `worker_${randomBytes(8).toString("hex")}`;
  readonly #store: Store;
  readonly #dependencies: AttemptDependencies;
  readonly #logger: FastifyBaseLogger;
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

  constructor(
    store: Store,
    dependencies: AttemptDependencies,
    logger: FastifyBaseLogger,
    options: WorkerOptions,
  ) {
    this.#store = store;
    this.#dependencies = dependencies;
    this.#logger = logger.child({ worker: this.owner });
    this.#options = options;
    this.#slots = new DestinationSlots({
      perDestination: options.destinationConcurrency,
      perWorkspace: options.workspaceConcurrency,
    });
    this.#breaker = new CircuitBreaker(options.circuitThreshold, dependencies.schedule);
  }

  start(): void {
    this.#running = true;
    this.#loop = this.#run();
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
    if (this.#running) for (const delivery of deliveries) this.#begin(delivery);
    // Slots given back while deliveries wait for a claim: the loop may have left them alone.
    if (!this.#caughtUp && reserved > deliveries.length) this.#signal.notify();
  }

  #free(): number {
    const held = this.#inFlight.size + this.#reserved + this.#claiming;
    return Math.max(0, this.#options.concurrency - held);
  }

  /** Stops claiming, and waits for the attempts in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.#running = false;
    this.#signal.notify();
    await this.#loop;
    await Promise.all(this.#inFlight);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      try {
        const free = this.#free();
        const wakeUps = this.#wakeUps;
        let claimed: ClaimedDelivery[] = [];
        if (free > 0) {
          this.#claiming = free;
          let more: boolean;
          try {
            ({ claimed, more } = await this.#store.claimDueDeliveries(
              this.owner,
              this.#slots.room(free),
              this.#options.leaseMs,
            ));
          } finally {
            this.#claiming = 0;
          }
          // Deliveries left for lack of a destination's room are a backlog too.
          this.#caughtUp = !more && claimed.length < free && wakeUps === this.#wakeUps;
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
    const due = await this.#store.nextDueAt(this.#slots.exclusions());
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
   */
  async #attempt(delivery: ClaimedDelivery): Promise<boolean> {
    const context = {
      event_id: delivery.eventId,
      destination_id: delivery.destination.id,
      attempt: delivery.attempts + 1,
    };
    const leaseEndsAt = this.#now() + this.#options.leaseMs;
    await this.#slots.acquire(delivery);
    let turnHeld = true;
    const endTurn = (): void => {
      if (!turnHeld) return;
      turnHeld = false;
      this.#slots.release(delivery);
      if (!this.#caughtUp) this.#signal.notify();
    };
    try {
      // A delivery that waited for its turn too long to finish inside its lease is left
      // leased: it is due again, for any worker, when the lease ends.
      if (!this.#running || this.#now() + this.#dependencies.timeoutMs * 1.5 > leaseEndsAt) {
        return true;
      }
      const attempted = await attemptDelivery(delivery, this.#dependencies);
      endTurn();
      const change = this.#breaker.record(delivery, attempted, this.#now());
      if (change !== null) await this.#changeCircuit(delivery, change);
      const report = this.#heldByCircuit(delivery, attempted);
      const recorded = await this.#record(delivery, report, leaseEndsAt);
      const details = {
        ...context,
        status: report.result.status,
        status_code: report.attempt?.statusCode ?? null,
        error_class: report.attempt?.errorClass ?? null,
        duration_ms: report.attempt?.durationMs ?? null,
      };
      if (!recorded) {
        this.#logger.warn(details, "delivery lease expired before the result was recorded");
      } else if (report.result.status === "failed") {
        this.#logger.warn({ ...details, reason: report.error }, "delivery failed");
      } else {
        this.#logger.debug(details, "delivery attempted");
      }
      return !recorded || report.result.status === "pending";
    } catch (error) {
      // Left claimed: the lease expires and the delivery is attempted again then.
      this.#logger.error({ ...context, err: error }, "delivery attempt failed unexpectedly");
      return true;
    } finally {
      endTurn();
    }
  }

  /** Opens or closes the destination's circuit; a failure to is logged, not thrown. */
  async #changeCircuit(delivery: ClaimedDelivery, change: CircuitChange): Promise<void> {
    const destinationId = delivery.destination.id;
    try {
      if (change.kind === "close") {
        await this.#store.closeCircuit(destinationId);
        this.#logger.info({ destination_id: destinationId }, "destination's circuit closed");
        return;
      }
      const { opening } = change;
      await this.#store.openCircuit(destinationId, opening);
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
   * error is given up (the delivery is simply attempted again).
   */
  async #record(
    delivery: ClaimedDelivery,
    report: AttemptReport,
    leaseEndsAt: number,
  ): Promise<boolean> {
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2000)) {
      try {
        return await this.#store.finishAttempt(delivery.lease, delivery.seq, report);
      } catch (error) {
        const unavailable = error instanceof AppError && error.code === "service_unavailable";
        if (!unavailable || this.#now() + waitMs >= leaseEndsAt) throw error;
        this.#logger.warn(
          { seq: delivery.seq, retry_in_ms: waitMs },
          "database unreachable; retrying report",
        );
        await sleep(waitMs);
      }
    }
  }

  #now(): number {
    return this.#dependencies.clock.now().getTime();
  }
}
