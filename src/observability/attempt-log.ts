import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../interfaces.ts";
import type { AttemptFinished, DeliveryListener } from "./delivery-events.ts";

/** At most one failure line per destination in this time (decision 31). */
export const failureLineIntervalMs = 60_000;

/**
 * What operators read of delivery attempts (decision 31): a failed attempt is a `warn` line
 * with the destination, the status or error class and the next attempt, at most one per
 * destination per `failureLineIntervalMs`, so that a receiver that is down does not flood the
 * log; the next line says how many were held back. Every attempt is also a `debug` line, never
 * held back, for whoever follows a delivery closely.
 */
export class AttemptLog implements DeliveryListener {
  readonly #logger: FastifyBaseLogger;
  readonly #failures: LinesPerKey;

  constructor(logger: FastifyBaseLogger, clock: Clock) {
    this.#logger = logger;
    this.#failures = new LinesPerKey(failureLineIntervalMs, () => clock.now().getTime());
  }

  attemptFinished(finished: AttemptFinished): void {
    if (!finished.recorded) {
      this.#logger.warn(details(finished), "delivery lease expired before the result was recorded");
      return;
    }
    this.#logger.debug(details(finished), "delivery attempted");
    if (finished.outcome !== "delivered") this.#failed(finished);
  }

  #failed(finished: AttemptFinished): void {
    const admitted = this.#failures.admit(finished.destinationId);
    for (const [destinationId, heldBack] of admitted.expired) {
      this.#logger.warn(
        { destination_id: destinationId, held_back: heldBack },
        "delivery failures held back, and none since",
      );
    }
    if (admitted.heldBack === null) return;
    this.#logger.warn(
      {
        destination_id: finished.destinationId,
        event_id: finished.eventId,
        attempt: finished.attempt,
        status_code: finished.exchange?.statusCode ?? null,
        error_class: finished.exchange?.errorClass ?? null,
        reason: finished.error,
        next_attempt_at: finished.nextAttemptAt?.toISOString() ?? null,
        held_back: admitted.heldBack,
      },
      finished.outcome === "retry" ? "delivery attempt failed; retrying" : "delivery failed",
    );
  }
}

function details(finished: AttemptFinished): Record<string, unknown> {
  return {
    event_id: finished.eventId,
    destination_id: finished.destinationId,
    attempt: finished.attempt,
    status: finished.outcome === "retry" ? "pending" : finished.outcome,
    status_code: finished.exchange?.statusCode ?? null,
    error_class: finished.exchange?.errorClass ?? null,
    duration_ms: finished.exchange?.durationMs ?? null,
  };
}

/**
 * One line per key per interval. A key's window opens with the line it lets through; lines in
 * the window are counted, and the count goes with the key's next line. Windows that ended are
 * forgotten once per interval; one that held lines back is returned then (`expired`), so that
 * its count is reported even if no later line comes.
 */
class LinesPerKey {
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { endsAt: number; heldBack: number }>();
  #sweptAt: number;

  constructor(intervalMs: number, now: () => number) {
    this.#intervalMs = intervalMs;
    this.#now = now;
    this.#sweptAt = now();
  }

  /** `heldBack`: null to hold this line back, else how many were held back before it. */
  admit(key: string): { heldBack: number | null; expired: [string, number][] } {
    const now = this.#now();
    const expired = this.#sweep(now, key);
    const window = this.#windows.get(key);
    if (window !== undefined && now < window.endsAt) {
      window.heldBack += 1;
      return { heldBack: null, expired };
    }
    this.#windows.set(key, { endsAt: now + this.#intervalMs, heldBack: 0 });
    return { heldBack: window?.heldBack ?? 0, expired };
  }

  /** Forgets the windows that ended, but `keep`'s; returns those that held lines back. */
  #sweep(now: number, keep: string): [string, number][] {
    if (now - this.#sweptAt < this.#intervalMs) return [];
    this.#sweptAt = now;
    const expired: [string, number][] = [];
    for (const [key, window] of this.#windows) {
      if (key === keep || now < window.endsAt) continue;
      this.#windows.delete(key);
      if (window.heldBack > 0) expired.push([key, window.heldBack]);
    }
    return expired;
  }
}
