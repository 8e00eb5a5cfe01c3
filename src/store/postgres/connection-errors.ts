import { AppError } from "../../errors.ts";

/** Socket errors that mean the server could not be reached or the connection broke. */
const socketErrorCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a server that is going away or cannot take us: class 08 (connection
 * exception), 57P01-57P03 (admin_shutdown, crash_shutdown, cannot_connect_now, as during
 * a restart) and 53300 (too_many_connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || /^57P0[1-3]$/.test(code) || code === "53300";
}

/**
 * The driver's own errors for a connection that ended or never came (they carry no code):
 * "Connection terminated unexpectedly", "Connection terminated due to connection timeout",
 * "timeout exceeded when trying to connect", "Client has encountered a connection error
 * and is not queryable".
 */
const driverMessages =
  /connection terminated|timeout exceeded when trying to connect|not queryable/i;

/** Whether `error` means that PostgreSQL is unreachable, rather than that a statement failed. */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return socketErrorCodes.has(code) || isUnavailableSqlState(code);
  return driverMessages.test(error.message);
}

/** The text PostgreSQL gives ENOSPC (`could not extend file …: No space left on device`). */
const noSpaceText = /no space left on device/i;

/**
 * Whether `error` means the server's disk is full: SQLSTATE 53100 (disk_full), or 53000
 * (insufficient_resources) when its message names ENOSPC.
 */
export function isDiskFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "53100" || (code === "53000" && noSpaceText.test(error.message));
}

/**
 * The one place where PostgreSQL's errors that mean "not now" become catalog errors (HTTP
 * 503): a lost or refused connection `service_unavailable`, a full disk `storage_full`.
 * Every other error passes through unchanged.
 */
export function asUnavailable(error: unknown): unknown {
  if (error instanceof AppError) return error;
  if (isDiskFull(error)) return new AppError("storage_full", undefined, { cause: error });
  if (!isConnectionError(error)) return error;
  return new AppError("service_unavailable", "The database is unreachable. Try again shortly.", {
    cause: error,
  });
}

/**
 * What is worth knowing of an idle connection's error, its message and code, as an error of
 * its own: the pool's error carries the whole client (`error.client`), ~8 KB in a log line.
 */
export function idleConnectionError(error: Error): Error {
  const code = (error as { code?: unknown }).code;
  const summary = new Error(error.message);
  summary.name = error.name;
  // Where the pool noticed it, not where it happened: nothing a reader could use.
  summary.stack = `${error.name}: ${error.message}`;
  return typeof code === "string" ? Object.assign(summary, { code }) : summary;
}
