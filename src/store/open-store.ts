import { AppError } from "../errors.ts";
import type { Clock, Store } from "../interfaces.ts";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { PostgresDatabase } from "./postgres/postgres-database.ts";
import { SqlStore } from "./sql-store.ts";
import { SqliteDatabase } from "./sqlite/sqlite-database.ts";
import { isPostgresUrl } from "./database-url.ts";

export interface OpenStoreOptions {
  /** PostgreSQL: connections in the pool. Default 10. */
  readonly poolSize?: number;
  /** How long a batch of publishes or results may wait for more (`Batcher`); default 0. */
  readonly batchLingerMs?: number;
  /** PostgreSQL: told when an idle connection broke (the pool has already replaced it). */
  readonly onConnectionError?: (error: Error) => void;
  /** PostgreSQL: told when the NOTIFY that wakes workers failed (they poll meanwhile). */
  readonly onNoticeError?: (error: Error) => void;
  /** SQLite: who checkpoints the WAL (see `SqliteOptions`); default `automatic`. */
  readonly checkpoints?: "automatic" | "background";
  /** SQLite: told when a background checkpoint failed (the next one tries again). */
  readonly onCheckpointError?: (error: Error) => void;
}

/** The engine behind `database`, not yet migrated. */
export function openDatabase(database: string, options: OpenStoreOptions = {}): Database {
  return isPostgresUrl(database)
    ? new PostgresDatabase(database, {
        poolSize: options.poolSize,
        onIdleError: options.onConnectionError,
        onNoticeError: options.onNoticeError,
      })
    : new SqliteDatabase(database, {
        checkpoints: options.checkpoints,
        onCheckpointError: options.onCheckpointError,
      });
}

/** Opens the database, brings its schema up to date, and returns the store over it. */
export async function openStore(
  database: string,
  clock: Clock,
  options: OpenStoreOptions = {},
): Promise<Store> {
  let db: Database;
  try {
    db = openDatabase(database, options);
  } catch (error) {
    throw new AppError(
      "database_error",
      `The database ${redactDatabase(database)} could not be opened: ${reason(error)}`,
      { cause: error },
    );
  }
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    const unreachable = error instanceof AppError && error.code === "service_unavailable";
    throw new AppError(
      "database_error",
      `The database ${redactDatabase(database)} could not be ${unreachable ? "reached" : "migrated"}: ${reason(error)}`,
      { cause: error },
    );
  }
  return new SqlStore(db, clock, { batchLingerMs: options.batchLingerMs });
}

/** A PostgreSQL URL may carry a password; messages and logs show it without. */
export function redactDatabase(location: string): string {
  return location.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:[redacted]@");
}

/** The first line of what went wrong, for a message that says more than "could not". */
function reason(error: unknown): string {
  const cause = error instanceof AppError && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? (cause.message.split("\n")[0] ?? "") : String(cause);
}
