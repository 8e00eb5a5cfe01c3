import type { Database } from "./database.ts";
import { probeWrite } from "./sql/storage-probe.ts";

/** Whether the database answers, and whether its writes fail for lack of space (decision 22). */
export interface StorageHealth {
  /**
   * Resolves when the database answers a trivial query (readiness). While writes are failing
   * for lack of space it also tries one cheap write, and rejects with `storage_full` until one
   * succeeds (decision 22).
   */
  ping(): Promise<void>;

  /** Since when writes have been failing for lack of space (`storage_full`); null while they succeed. */
  storageFullSince(): Date | null;

  /**
   * Rejects with `storage_full` unless there is room again: where the engine tells its free
   * space, at least 1 MiB, then one cheap write (what readiness asks while storage is full).
   */
  probeSpace(): Promise<void>;
}

/** The StorageHealth over any `Database`: the SQL is in `./sql/`. */
export class SqlStorageHealth implements StorageHealth {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async ping(): Promise<void> {
    await this.#db.query("SELECT 1");
    if (this.#db.storageFullSince() !== null) await probeWrite(this.#db);
  }

  storageFullSince(): Date | null {
    return this.#db.storageFullSince();
  }

  probeSpace(): Promise<void> {
    return probeWrite(this.#db);
  }
}
