import type { Clock } from "../interfaces.ts";
import type { Database } from "./database.ts";

/**
 * What every slice of the store over SQL starts from: the database its SQL runs on, and the
 * clock its times come from (decision 30).
 */
export abstract class SqlSlice {
  protected readonly db: Database;
  protected readonly clock: Clock;

  constructor(db: Database, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Now, in milliseconds: the store keeps times as integers. */
  protected now(): number {
    return this.clock.now().getTime();
  }
}
