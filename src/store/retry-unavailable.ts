import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../errors.ts";

/** Waits before the second and third try: the pool replaces a broken connection meanwhile. */
const waitsMs = [50, 250];

/**
 * Runs an idempotent store operation again when the database was unreachable, up to twice.
 * For operations whose failure costs far more than a retry: a key left locked makes a
 * client that retries wait for the whole lock. Only for statements that may safely run twice.
 */
export async function retryWhileUnavailable<T>(operation: () => Promise<T>): Promise<T> {
  for (const waitMs of waitsMs) {
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof AppError && error.code === "service_unavailable")) throw error;
      await sleep(waitMs);
    }
  }
  return operation();
}
