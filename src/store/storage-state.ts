import { AppError } from "../errors.ts";

/**
 * Whether the database's writes are failing for lack of space: set by a write that failed
 * with `storage_full`, cleared by the next write that succeeded. Each engine adapter keeps
 * one, beside the place where it maps its disk-full errors (decision 22), so that readiness
 * and the delivery worker can tell without trying a write of their own each time.
 */
export class StorageState {
  #fullSince: Date | null = null;

  /** Since when writes have been failing for lack of space; null while they succeed. */
  get fullSince(): Date | null {
    return this.#fullSince;
  }

  /** Notes a failure that is `storage_full`, and returns `error` for the caller to throw. */
  failed(error: unknown): unknown {
    if (error instanceof AppError && error.code === "storage_full") this.#fullSince ??= new Date();
    return error;
  }

  /** A write succeeded: there is space again. */
  wrote(): void {
    this.#fullSince = null;
  }
}
