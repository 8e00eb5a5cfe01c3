import type { AppError } from "../errors.ts";
import { ExclusiveFile } from "../lib/exclusive-file.ts";
import { errorCodes } from "../lib/error-codes.ts";

/**
 * Runs `operation` for a new file at `path` (see ExclusiveFile): the file is created first,
 * so a bad path fails before anything happens; it then receives `content(result)`, or is
 * removed if the operation failed. A failure to write comes after the operation happened, so
 * `unsaved` turns it into an error that says what did happen.
 */
export async function intoNewFile<T>(
  path: string,
  operation: () => Promise<T>,
  content: (result: T) => string,
  unsaved: (result: T, cause: unknown) => AppError,
): Promise<T> {
  const file = await ExclusiveFile.create(path);
  let result: T;
  try {
    result = await operation();
  } catch (error) {
    await discardQuietly(file);
    throw error;
  }
  try {
    await file.write(content(result));
  } catch (error) {
    // What was written may be partial: no file is better than a wrong one.
    await discardQuietly(file);
    throw unsaved(result, error);
  }
  return result;
}

/**
 * The error being reported is the one that matters; if the empty file cannot be removed as
 * well, it is harmless (mode 0600, no content) and the user sees the path in that error.
 */
async function discardQuietly(file: ExclusiveFile): Promise<void> {
  try {
    await file.discard();
  } catch {
    // Deliberately ignored: see above.
  }
}

/** The errno code of a failed file operation, for messages. */
export function errorCode(error: unknown): string {
  return errorCodes(error)[0] ?? String(error);
}
