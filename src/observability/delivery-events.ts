/**
 * What the delivery worker reports of its attempts, to whoever listens (decision 31): the
 * metrics and the operator log subscribe here, so that nothing in the worker calls a metric
 * or decides what an operator sees.
 */

/** How an attempt ended: sent and accepted, failed with a retry scheduled, or failed for good. */
export type AttemptOutcome = "delivered" | "retry" | "failed";

export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ["delivered", "retry", "failed"];

/** An attempt is about to be made. */
export interface AttemptStarted {
  readonly destinationId: string;
  readonly eventId: string;
}

/** An attempt's result, as the worker reported it to the store. */
export interface AttemptFinished {
  readonly destinationId: string;
  readonly eventId: string;
  /** The delivery's attempt number, from 1. */
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /**
   * The exchange, or null when no request was sent (the destination was deleted or
   * deactivated before its turn, which ends the delivery `failed`).
   */
  readonly exchange: {
    readonly durationMs: number;
    readonly statusCode: number | null;
    readonly errorClass: string | null;
  } | null;
  /** Why it did not succeed, for people; null when delivered. */
  readonly error: string | null;
  /** When the retry is due; null unless the outcome is `retry`. */
  readonly nextAttemptAt: Date | null;
  /**
   * Whether the store took the result: false when the claim's lease ran out first, and the
   * delivery is due again for any worker.
   */
  readonly recorded: boolean;
}

/** Either method may be left out. Listeners are called synchronously and must not throw. */
export interface DeliveryListener {
  attemptStarted?(started: AttemptStarted): void;
  attemptFinished?(finished: AttemptFinished): void;
}

/** The seam: the worker calls `attemptStarted` and `attemptFinished`, listeners subscribe. */
export class DeliveryEvents {
  #started: ((started: AttemptStarted) => void)[] = [];
  #finished: ((finished: AttemptFinished) => void)[] = [];

  subscribe(listener: DeliveryListener): void {
    if (listener.attemptStarted) this.#started.push(listener.attemptStarted.bind(listener));
    if (listener.attemptFinished) this.#finished.push(listener.attemptFinished.bind(listener));
  }

  attemptStarted(started: AttemptStarted): void {
    for (const listener of this.#started) listener(started);
  }

  attemptFinished(finished: AttemptFinished): void {
    for (const listener of this.#finished) listener(finished);
  }
}
