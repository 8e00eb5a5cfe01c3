/**
 * Where a delivery worker learns that deliveries were queued, so that it claims them at once
 * instead of at its next poll. The composition root picks the source for the database:
 * in-process only on SQLite, `LISTEN` on PostgreSQL (which hears every process's API).
 */
export interface WakeUpSource {
  /** Starts calling `wake` whenever deliveries may have been queued. */
  start(wake: () => void): void;
  /** This process's API committed an event: wakes the worker here without a round trip. */
  eventPublished(): void;
  /**
   * Whether wake-ups from other processes arrive right now. While they do, the worker's idle
   * poll is only a safety net and can be slow; while they do not, polling finds their work.
   */
  readonly hearsOtherProcesses: boolean;
  stop(): Promise<void>;
}

/** Wake-ups from this process's own API only: SQLite has no channel between processes. */
export class InProcessWakeUps implements WakeUpSource {
  readonly hearsOtherProcesses = false;
  #wake: () => void = () => undefined;

  start(wake: () => void): void {
    this.#wake = wake;
  }

  eventPublished(): void {
    this.#wake();
  }

  stop(): Promise<void> {
    this.#wake = () => undefined;
    return Promise.resolve();
  }
}
