import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { AppError } from "../../errors.ts";
import { formatByteSize } from "../../lib/byte-size.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";
import type { RestoreCheckAnswer, RestoreCheckRequest, SealedWith } from "./restore-check.ts";

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

/** The bounds of a restore's check (decision 38); `svc admin restore` has flags for both. */
export interface RestoreLimits {
  /** The largest backup (with its WAL, if it has one) that is checked at all. */
  readonly maxBytes: number;
  /** How long the check and copy may take before they are stopped and the backup refused. */
  readonly timeoutMs: number;
}

export const defaultRestoreLimits: RestoreLimits = {
  maxBytes: 16 * 1024 * 1024 * 1024,
  timeoutMs: 10 * 60_000,
};

function refused(input: string, why: string): AppError {
  return new AppError("invalid_backup", `${input} ${why}; nothing was changed.`, {
    param: "input",
  });
}

/** A regular file, of at most `maxBytes` with its WAL: known before a byte of it is read. */
async function checkSize(input: string, limits: RestoreLimits): Promise<void> {
  const file = await stat(input);
  // A FIFO or a device would be read without end.
  if (!file.isFile()) throw refused(input, "is not a regular file");
  const wal = await stat(`${input}-wal`).catch(() => null);
  const bytes = file.size + (wal?.isFile() === true ? wal.size : 0);
  if (bytes > limits.maxBytes) {
    throw refused(
      input,
      `is ${bytes} bytes, more than the ${formatByteSize(limits.maxBytes)} a restore reads (--max-size): give a larger --max-size if it is a genuine backup`,
    );
  }
}

/**
 * Checks the backup and copies it into `copy` in a child process (`restore-check.ts`),
 * killed at the deadline: its schema must be exactly this build's migrations' (read before
 * its tables, so none of its views or triggers runs), then `VACUUM INTO` copies it and
 * `quick_check` reads the copy. SQLite cannot be interrupted from JavaScript, even in a
 * worker thread; a process can always be killed.
 */
async function checkAndCopy(
  input: string,
  copy: string,
  limits: RestoreLimits,
): Promise<SealedWith> {
  const child = fork(new URL("./restore-check.js", import.meta.url), [], {
    execArgv: [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json",
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  // A child that could not be started reports "error" and never "exit".
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      resolve();
    });
    child.once("error", () => {
      resolve();
    });
  });
  const answer = new Promise<RestoreCheckAnswer | null>((resolve) => {
    child.once("message", (message: RestoreCheckAnswer) => {
      resolve(message);
    });
    child.once("exit", () => {
      resolve(null);
    });
    child.once("error", () => {
      resolve(null);
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      resolve("timeout");
    }, limits.timeoutMs);
  });
  try {
    child.send({ input: resolve(input), copy } satisfies RestoreCheckRequest);
    const result = await Promise.race([answer, deadline]);
    if (result === "timeout") {
      throw refused(
        input,
        `was not checked within ${limits.timeoutMs < 1000 ? `${limits.timeoutMs} ms` : `${Math.round(limits.timeoutMs / 1000)} s`} (--timeout): give a longer --timeout if it is a genuine backup of a large database`,
      );
    }
    if (result === null) {
      const reason = stderr.trim().split("\n").at(-1) ?? "";
      throw refused(
        input,
        `could not be checked (the check stopped${reason === "" ? "" : `: ${reason}`})`,
      );
    }
    if (result.refused !== null) throw refused(input, result.refused);
    return result.sealedWith ?? { keyCheck: null, sample: null };
  } finally {
    clearTimeout(timer);
    // Killed whatever the outcome, and waited for: the copy is removed after, never while
    // the child may still write it.
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  }
}

/**
 * Replaces the database at `target` with the backup `input`, atomically: the backup is checked
 * and copied (`checkAndCopy`) into a new 0600 file beside the target, then renamed over it, so
 * the target is at every moment either the old database or the whole new one. The old
 * database's WAL and shared memory are removed before the rename: replayed onto the new file,
 * they would corrupt it. A refusal leaves nothing behind. `acceptKey` is shown what the
 * backup's secrets are sealed with, before anything is replaced: it throws to refuse the backup.
 */
export async function restoreSqlite(
  input: string,
  database: string,
  limits: RestoreLimits = defaultRestoreLimits,
  acceptKey: (sealedWith: SealedWith) => Promise<void> = () => Promise.resolve(),
): Promise<{ bytes: number }> {
  requireFile(input, "backup");
  await checkSize(input, limits);
  // The file itself: renamed over a symlink, the backup would replace the link, not the database.
  const target = existsSync(database) ? realpathSync(database) : database;
  const temporary = `${target}.restoring-${randomBytes(6).toString("hex")}`;
  const file = await ExclusiveFile.create(temporary);
  try {
    const sealedWith = await checkAndCopy(input, temporary, limits);
    await acceptKey(sealedWith);
    await file.keep();
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
