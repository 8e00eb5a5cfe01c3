import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import { AppError } from "../errors.ts";
import type { AttemptReport, ClaimedDelivery, DeliveryTaker, Store } from "../interfaces.ts";
import { attemptDelivery, type AttemptDependencies } from "./attempt.ts";
import { WorkSignal } from "./work-signal.ts";

export interface WorkerOptions {
  /** Attempts in flight at once, across all destinations. */
  readonly concurrency: number;
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
 */
export class DeliveryWorker implements DeliveryTaker {
  readonly owner = `worker_${randomBytes(8).toString("hex")}`;
  readonly #store: Store;
  readonly #dependencies: AttemptDependencies;
  readonly #logger: FastifyBaseLogger;
  readonly #options: WorkerOptions;
  readonly #signal = new WorkSignal();
  readonly #inFlight = new Set<Promise<void>>();
  /** Slots set aside for publish batches being written, and for the loop's claim under way. */
  #reserved = 0;
  #claiming = 0;
  #caughtUp = false;
  /** Counts wake-ups, so that a claim racing one does not count as caught up. */
  #wakeUps = 0;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  /** The loop's wait while storage is full (`#waitForStorage`), doubling up to 5 s. */
  #storageWaitMs = 0;

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

  reserve(): number {
    if (!this.#running || !this.#caughtUp) return 0;
    const free = this.#free();
    this.#reserved += free;
    return free;
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
        if (this.#store.storageFullSince() !== null) {
          await this.#waitForStorage();
          continue;
        }
        const free = this.#free();
        const wakeUps = this.#wakeUps;
        let claimed: ClaimedDelivery[] = [];
        if (free > 0) {
          this.#claiming = free;
          try {
            claimed = await this.#store.claimDueDeliveries(this.owner, free, this.#options.leaseMs);
          } finally {
            this.#claiming = 0;
          }
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
    const due = await this.#store.nextDueAt();
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

  /** Attempts and reports; resolves whether the delivery is still pending (never rejects). */
  async #attempt(delivery: ClaimedDelivery): Promise<boolean> {
    const context = {
      event_id: delivery.eventId,
      destination_id: delivery.destination.id,
      attempt: delivery.attempts + 1,
    };
    const leaseEndsAt = this.#now() + this.#options.leaseMs;
    try {
      const report = await attemptDelivery(delivery, this.#dependencies);
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
    }
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
        return await this.#store.finishAttempt(delivery.lease, delivery.seq, report);
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
   * (`Store.ping` tries one while it is failing).
   */
  async #waitForStorage(): Promise<void> {
    this.#storageWaitMs = Math.min(this.#storageWaitMs * 2 || 250, 5000);
    await this.#signal.wait(this.#storageWaitMs);
    try {
      await this.#store.ping();
    } catch (error) {
      if (!(error instanceof AppError && error.code === "storage_full")) throw error;
      this.#logger.warn({ retry_in_ms: this.#storageWaitMs }, "storage full; not claiming");
      return;
    }
    this.#storageWaitMs = 0;
  }

  #now(): number {
    return this.#dependencies.clock.now().getTime();
  }
}
