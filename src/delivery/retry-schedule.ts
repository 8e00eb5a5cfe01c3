/**
 * When to try again after a failed attempt. `steps[n]` is the wait after the (n+1)-th failed
 * attempt; when the steps are spent the delivery has failed. Each wait is jittered by ±20% so
 * that a receiver that was down is not hit by every retry at the same instant.
 */
export class RetrySchedule {
  readonly steps: readonly number[];
  readonly #random: () => number;

  constructor(steps: readonly number[], random: () => number = Math.random) {
    this.steps = steps;
    this.#random = random;
  }

  /**
   * The wait before the next attempt after `attemptsMade` attempts, or null when there is none.
   * A receiver's `Retry-After` is honoured up to the following step: it can stretch a wait but
   * never shorten it below the schedule, nor stretch it past the next step.
   */
  delayAfter(attemptsMade: number, retryAfterMs: number | null): number | null {
    const step = this.steps[attemptsMade - 1];
    if (step === undefined) return null;
    const jittered = Math.round(step * (0.8 + 0.4 * this.#random()));
    if (retryAfterMs === null) return jittered;
    const ceiling = this.steps[attemptsMade] ?? step;
    return Math.max(jittered, Math.min(retryAfterMs, ceiling));
  }
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`; null if absent or invalid. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (value === undefined || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}
