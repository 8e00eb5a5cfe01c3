import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { AppError } from "../../errors.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";
import { knownMigrationVersions } from "../migrate.ts";

/**
 * Online backups of a SQLite database by `VACUUM INTO` (not node:sqlite's `backup()`): it
 * reads the whole database in one read transaction, so the copy is one consistent snapshot
 * taken beside a server that keeps writing (WAL: the writer is not held up), where the backup
 * API starts its page-by-page copy over whenever another connection writes between steps and
 * may never finish under steady writes. It writes into an existing empty file, so the file
 * can be made first, exclusively and 0600 (`ExclusiveFile`), and it comes out compact, as one
 * file without a WAL.
 */
function vacuumInto(source: string, target: string): void {
  const db = new DatabaseSync(source);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.prepare("VACUUM INTO ?").run(target);
  } finally {
    db.close();
  }
}

function requireFile(path: string, what: string): void {
  if (!existsSync(path)) throw new AppError("database_error", `There is no ${what} at ${path}.`);
}

/** Copies the database at `source` into `output`, a new file (0600, never overwritten). */
export async function backUpSqlite(source: string, output: string): Promise<{ bytes: number }> {
  requireFile(source, "SQLite database");
  const file = await ExclusiveFile.create(output);
  try {
    vacuumInto(source, output);
    await file.keep();
  } catch (error) {
    await file.discard();
    throw new AppError(
      "backup_not_saved",
      `The backup could not be written to ${output}: ${messageOf(error)}. No file was left behind.`,
      { param: "output", cause: error },
    );
  }
  return { bytes: (await stat(output)).size };
}

/**
 * Refuses when any other connection has the database open: a connection in exclusive locking
 * mode cannot begin an exclusive transaction then (WAL keeps a lock for every open
 * connection), and waits for nothing. Closing it, the last connection, checkpoints the WAL.
 */
function refuseWhileInUse(path: string): void {
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("SELECT count(*) FROM sqlite_schema");
    db.exec("COMMIT");
  } catch (error) {
    throw new AppError(
      "database_in_use",
      `The database ${path} is open in another process, such as a running server. Stop it, then run the command again.`,
      { cause: error },
    );
  } finally {
    db.close();
  }
}

/** The backup's migrations must be this build's: a restored database is used as it is. */
async function checkBackup(path: string, input: string): Promise<void> {
  const db = new DatabaseSync(path, { readOnly: true });
  let versions: number[];
  try {
    const check = db.prepare("PRAGMA quick_check").get() as { quick_check: string };
    if (check.quick_check !== "ok") throw new Error(`it is damaged (${check.quick_check})`);
    versions = (
      db.prepare("SELECT version FROM schema_migrations ORDER BY version").all() as {
        version: number;
      }[]
    ).map((row) => row.version);
  } catch (error) {
    throw new AppError(
      "invalid_backup",
      `${input} is not a backup of a svc database (${messageOf(error)}); nothing was changed.`,
      { param: "input", cause: error },
    );
  } finally {
    db.close();
  }
  const known = await knownMigrationVersions("sqlite");
  if (versions.join(",") !== known.join(",")) {
    throw new AppError(
      "invalid_backup",
      `${input} has migrations ${versions.join(", ") || "none"}; this version of svc has ${known.join(", ")}. Restore it with the version of svc that made it; nothing was changed.`,
      { param: "input" },
    );
  }
}

/**
 * Replaces the database at `target` with the backup `input`, atomically: the backup is copied
 * (and checked) into a new 0600 file beside the target, then renamed over it, so the target
 * is at every moment either the old database or the whole new one. The old database's WAL
 * and shared memory are removed before the rename: replayed onto the new file, they would
 * corrupt it.
 */
export async function restoreSqlite(input: string, database: string): Promise<{ bytes: number }> {
  requireFile(input, "backup");
  // The file itself: renamed over a symlink, the backup would replace the link, not the database.
  const target = existsSync(database) ? realpathSync(database) : database;
  const temporary = `${target}.restoring-${randomBytes(6).toString("hex")}`;
  const file = await ExclusiveFile.create(temporary);
  try {
    try {
      vacuumInto(input, temporary);
    } catch (error) {
      throw new AppError(
        "invalid_backup",
        `${input} is not a SQLite database (${messageOf(error)}); nothing was changed.`,
        { param: "input", cause: error },
      );
    }
    await file.keep();
    await checkBackup(temporary, input);
    if (existsSync(target)) refuseWhileInUse(target);
    await rm(`${target}-wal`, { force: true });
    await rm(`${target}-shm`, { force: true });
    await rename(temporary, target);
  } catch (error) {
    // The error says what went wrong; a copy that cannot be removed is only a stray file.
    await file.discard().catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(target));
  return { bytes: (await stat(target)).size };
}

/** Makes a rename in `directory` durable. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
