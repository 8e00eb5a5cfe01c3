/**
 * Where a delivery worker learns that other processes queued deliveries, so that it claims
 * them at once instead of at its next poll. The composition root picks the source for the
 * database: none on SQLite, `LISTEN` on PostgreSQL (which hears every process's API). This
 * process's own publishes reach its worker through the store (`Store.handDeliveriesTo`).
 */
export interface WakeUpSource {
  /** Starts calling `wake` whenever deliveries may have been queued. */
  start(wake: () => void): void;
  /**
   * Whether wake-ups from other processes arrive right now. While they do, the worker's idle
   * poll is only a safety net and can be slow; while they do not, polling finds their work.
   */
  readonly hearsOtherProcesses: boolean;
  stop(): Promise<void>;
}

/**
 * SQLite has no channel between processes: a worker finds other processes' deliveries by
 * polling, and this process's through the store.
 */
export class NoWakeUps implements WakeUpSource {
  readonly hearsOtherProcesses = false;

  start(): void {
    // Nothing announces other processes' deliveries.
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}
