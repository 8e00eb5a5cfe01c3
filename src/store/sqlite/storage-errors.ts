import { AppError } from "../../errors.ts";

/** SQLite's primary result codes (the low byte of an extended code, as node:sqlite gives it). */
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;

/** An I/O error's text that says the device has no space left (the errno, where it shows). */
const noSpaceText = /ENOSPC|no space left/i;

/**
 * Whether `error` means the disk is full: SQLITE_FULL (SQLite's own verdict when a write
 * met ENOSPC), an SQLITE_IOERR variant whose text names ENOSPC, or ENOSPC from Node's file
 * system calls (our fsync of the WAL).
 */
export function isStorageFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, errcode, errstr } = error as {
    code?: unknown;
    errcode?: unknown;
    errstr?: unknown;
  };
  if (code === "ENOSPC") return true;
  if (typeof errcode !== "number") return false;
  const primary = errcode & 0xff;
  if (primary === SQLITE_FULL) return true;
  return primary === SQLITE_IOERR && noSpaceText.test(`${error.message} ${String(errstr)}`);
}

/** The one place where SQLite's disk-full errors become `storage_full` (HTTP 503). */
export function asStorageFull(error: unknown): unknown {
  if (error instanceof AppError || !isStorageFull(error)) return error;
  return new AppError("storage_full", undefined, { cause: error });
}
