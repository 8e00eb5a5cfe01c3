import type { AttemptReport, CircuitOpening, ClaimedDelivery } from "../interfaces.ts";
import type { RetrySchedule } from "./retry-schedule.ts";

/** The longest a circuit stays open before a probe. */
export const maxCooldownMs = 3_600_000;

/** What the store is to do with a destination's circuit after an attempt. */
export type CircuitChange =
  { readonly kind: "open"; readonly opening: CircuitOpening } | { readonly kind: "close" };

/** A destination's failures in a row, as this worker has seen them. */
interface FailureRun {
  count: number;
  lastError: string;
  /** While the circuit this worker opened is open, further failures change nothing. */
  openUntil: number;
  /** That opening's number in a row (its `circuit_opens`). */
  opens: number;
}

/**
 * Decides when a destination is slowed down as a unit (decision 24). An attempt that times out,
 * cannot connect, fails TLS or HTTP, or is answered 429 or 5xx is a failure of the destination
 * rather than of one notification (what the service itself refused, such as a name that does
 * not resolve, is neither); after `threshold` of them in a row the circuit opens for the
 * retry schedule's first step, and each further opening in a row (a probe that fails) for the
 * next step. Any other answer from the receiver, or a delivered probe, closes it.
 *
 * The runs are counted per worker, in memory; the circuit itself is in the database, so every
 * worker honours it.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #schedule: RetrySchedule;
  readonly #runs = new Map<string, FailureRun>();

  constructor(threshold: number, schedule: RetrySchedule) {
    this.#threshold = threshold;
    this.#schedule = schedule;
  }

  /** Counts the attempt's outcome; returns the change to make to the circuit, if any. */
  record(delivery: ClaimedDelivery, report: AttemptReport, now: number): CircuitChange | null {
    const { id, circuitOpens } = delivery.destination;
    if (report.attempt === null || isOurOwn(report)) return null;
    if (!isDestinationFailure(report)) {
      this.#runs.delete(id);
      return circuitOpens > 0 ? { kind: "close" } : null;
    }
    const run = this.#runs.get(id) ?? { count: 0, lastError: "", openUntil: 0, opens: 0 };
    this.#runs.set(id, run);
    run.lastError = report.error ?? "the attempt failed";
    if (run.openUntil > now) return null;
    run.count += 1;
    // A failed probe reopens at once; a closed circuit opens after `threshold` in a row.
    if (circuitOpens === 0 && run.count < this.#threshold) return null;
    const opens = circuitOpens + 1;
    const until = now + this.cooldown(opens);
    const why =
      circuitOpens > 0
        ? "the probe failed"
        : run.count === 1
          ? "an attempt failed"
          : `${run.count} attempts in a row failed`;
    run.count = 0;
    run.openUntil = until;
    run.opens = opens;
    return {
      kind: "open",
      opening: {
        until: new Date(until),
        opens,
        error: `${why} (last: ${run.lastError})`,
        failCreatedBefore: new Date(until - this.#totalSchedule()),
      },
    };
  }

  /** When a circuit this worker opened ends; 0 if none is open. */
  openUntil(destinationId: string): number {
    return this.#runs.get(destinationId)?.openUntil ?? 0;
  }

  /**
   * Until when `delivery`, which this worker holds, must wait for a circuit this worker
   * opened; 0 if it may go now. A claim made before the opening was recorded read the circuit
   * closed (fewer openings than this one): it waits. A claim that read this opening, or a later
   * one, was let through by the database: a user's retry or recovery made the circuit half-open
   * early (decision 40), and the delivery is its probe. This worker's note of the opening is
   * then forgotten, so that the probe is judged as any probe: delivered, the circuit closes;
   * failed, it opens again for the next step.
   */
  heldUntil(delivery: ClaimedDelivery, now: number): number {
    const run = this.#runs.get(delivery.destination.id);
    if (run === undefined || run.openUntil <= now) return 0;
    if (delivery.destination.circuitOpens < run.opens) return run.openUntil;
    run.openUntil = 0;
    run.count = 0;
    return 0;
  }

  /**
   * The n-th opening in a row waits the schedule's n-th step (its last one thereafter), but
   * never more than `maxCooldownMs`: a receiver that is back is found within the hour.
   */
  cooldown(opens: number): number {
    const { steps } = this.#schedule;
    return Math.min(steps[Math.min(opens, steps.length) - 1] ?? 0, maxCooldownMs);
  }

  #totalSchedule(): number {
    return this.#schedule.steps.reduce((sum, step) => sum + step, 0);
  }
}

/**
 * An outcome of our own making, not the receiver's: the name did not resolve, the address was
 * refused, a secret could not be opened, a bug. It says nothing of whether the destination
 * answers, so it neither counts toward a circuit nor closes one.
 */
function isOurOwn(report: AttemptReport): boolean {
  const { attempt } = report;
  if (attempt === null || attempt.statusCode !== null || report.result.status === "delivered") {
    return false;
  }
  return !["timeout", "connection", "tls", "protocol"].includes(attempt.errorClass ?? "");
}

/** A failure that says the destination, not the notification, is in trouble. */
function isDestinationFailure(report: AttemptReport): boolean {
  const { attempt } = report;
  if (attempt === null || report.result.status === "delivered") return false;
  if (attempt.statusCode !== null) return attempt.statusCode === 429 || attempt.statusCode >= 500;
  return ["timeout", "connection", "tls", "protocol"].includes(attempt.errorClass ?? "");
}
