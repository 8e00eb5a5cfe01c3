import { AppError } from "../errors.ts";
import type { Clock, Store } from "../interfaces.ts";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { SqlStore } from "./sql-store.ts";
import { SqliteDatabase } from "./sqlite/sqlite-database.ts";

/** A `postgres://` (or `postgresql://`) URL selects PostgreSQL; anything else is a SQLite file path. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

function openDatabase(database: string): Database {
  if (isPostgresUrl(database)) {
    throw new AppError(
      "invalid_config",
      "PostgreSQL is not supported by this version yet; omit --database to use SQLite.",
    );
  }
  return new SqliteDatabase(database);
}

/** Opens the database, brings its schema up to date, and returns the store over it. */
export async function openStore(database: string, clock: Clock): Promise<Store> {
  let db: Database;
  try {
    db = openDatabase(database);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("database_error", `The database ${database} could not be opened.`, {
      cause: error,
    });
  }
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw new AppError("database_error", `The database ${database} could not be migrated.`, {
      cause: error,
    });
  }
  return new SqlStore(db, clock);
}
