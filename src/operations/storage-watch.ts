import type { Logger } from "pino";
import type { Clock } from "../interfaces.ts";
import type { Operations } from "../store/operations.ts";
import type { StorageHealth } from "../store/storage-health.ts";
import { storageNotice } from "./operational-events.ts";

/** How often the watch looks; reading the adapter's state costs no statement. */
const tickMs = 1000;

/**
 * Tells the operator when the database's writes fail for lack of space, and when there is room
 * again (decision 48). The state is the adapter's, in memory (decision 22): each process
 * tells of what it met. `storage.full` goes into the outbox as soon as a write fits (a small
 * one often does while large ones fail); if none does, it goes when space returns, just before
 * `storage.recovered`. Recovery is readiness's own test (`probeSpace`): on SQLite at least
 * 1 MiB free and a write, on PostgreSQL a write. At most one `storage.full` per `intervalMs`.
 */
export function watchStorage(
  dependencies: {
    readonly health: StorageHealth;
    readonly operations: Operations;
    readonly clock: Clock;
    readonly logger: Logger;
  },
  options: { readonly database: "sqlite" | "postgres"; readonly intervalMs: number },
): { stop(): Promise<void> } {
  const { health, operations, clock, logger } = dependencies;
  /**
   * The episode under way: since when, whether `storage.full` was written, and whether it is
   * kept quiet (one came less than `intervalMs` ago: then its recovery is not told either).
   */
  let episode: { since: Date; told: boolean; quiet: boolean } | null = null;
  let lastToldAt = Number.NEGATIVE_INFINITY;
  const tick = async (): Promise<void> => {
    const since = health.storageFullSince();
    if (episode === null) {
      if (since === null) return;
      const quiet = clock.now().getTime() - lastToldAt < options.intervalMs;
      episode = { since, told: quiet, quiet };
    }
    if (!episode.told) {
      await operations.publish([storageNotice("storage.full", episode.since, options.database)]);
      episode.told = true;
      lastToldAt = clock.now().getTime();
    }
    await health.probeSpace();
    if (!episode.quiet) {
      await operations.publish([storageNotice("storage.recovered", clock.now(), options.database)]);
    }
    episode = null;
  };
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(tick).catch((error: unknown) => {
      if (isStorageFull(error)) return;
      logger.warn({ err: error }, "could not publish a storage notice; trying again");
    });
  }, tickMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

function isStorageFull(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "storage_full";
}
