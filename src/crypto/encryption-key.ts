import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { AppError } from "../errors.ts";
import { ExclusiveFile } from "../lib/exclusive-file.ts";
import { accessProblem, ownerProblem } from "../lib/file-permissions.ts";

export const ENCRYPTION_KEY_FILE = "encryption.key";

function decodeKey(encoded: string, source: string): Buffer {
  const key = Buffer.from(encoded.trim(), "base64");
  if (key.length !== 32) {
    throw new AppError(
      "invalid_config",
      `${source} must hold 32 bytes, base64-encoded (for example from \`openssl rand -base64 32\`).`,
    );
  }
  return key;
}

/**
 * The key that encrypts signing secrets at rest, as configured: SVC_ENCRYPTION_KEY when given,
 * else `encryption.key` in the data directory (already checked by `openDataDir`); null when
 * neither is there. Several processes sharing one database must share the key: give it in
 * SVC_ENCRYPTION_KEY. The server generates one (`createEncryptionKeyFile`) only once it knows
 * the database has none, so that a process that refuses to start leaves no key behind.
 */
export async function existingEncryptionKey(
  configured: string | undefined,
  dataDir: string,
): Promise<Buffer | null> {
  if (configured !== undefined) return decodeKey(configured, "SVC_ENCRYPTION_KEY");
  return readKeyFile(join(dataDir, ENCRYPTION_KEY_FILE));
}

/** A key file given by path (a new key, for a rotation), under the rules of `encryption.key`. */
export async function readEncryptionKeyFile(path: string): Promise<Buffer | null> {
  return readKeyFile(path);
}

/**
 * A new key, written to `encryption.key` in the data directory (mode 0600, never over another):
 * the key of a first start. When another process created the file first, its key is returned.
 */
export async function createEncryptionKeyFile(dataDir: string): Promise<Buffer> {
  const path = join(dataDir, ENCRYPTION_KEY_FILE);
  const key = randomBytes(32);
  try {
    const file = await ExclusiveFile.create(path);
    await file.write(`${key.toString("base64")}\n`);
    return key;
  } catch (error) {
    // Another process created it first: use theirs, under the same rules.
    if (error instanceof AppError && error.code === "output_exists") {
      const theirs = await readKeyFile(path);
      if (theirs !== null) return theirs;
    }
    throw error;
  }
}

/**
 * The key in the file, or null when there is none. What is checked is what is read: the file
 * is opened without following a symlink, and its owner, type and mode are those of the open
 * handle (fstat), which is then read; renaming another file into place meanwhile changes nothing.
 */
async function readKeyFile(path: string): Promise<Buffer | null> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO put there would otherwise wait for a writer; fstat refuses it.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw insecureKeyFile(
      path,
      code === "ELOOP"
        ? "is a symlink, which svc does not follow: put the key file itself there (mode 0600), or set SVC_ENCRYPTION_KEY."
        : `cannot be opened (${code ?? String(error)}): it must be a file of this user's (mode 0600), or set SVC_ENCRYPTION_KEY.`,
      error,
    );
  }
  try {
    const problem = keyFileProblem(path, await handle.stat());
    if (problem !== null) throw insecureKeyFile(path, problem);
    return decodeKey(await handle.readFile("utf8"), path);
  } finally {
    await handle.close();
  }
}

/** A regular file of this user's that no one else may read or write (0600, or 0400). */
function keyFileProblem(path: string, stats: Stats): string | null {
  if (!stats.isFile()) {
    return "is not a regular file: put the key file there (mode 0600), or set SVC_ENCRYPTION_KEY.";
  }
  return ownerProblem(path, stats) ?? accessProblem(path, stats, 0o077, "600");
}

function insecureKeyFile(path: string, problem: string, cause?: unknown): AppError {
  return new AppError("insecure_key_file", `The encryption key file ${path} ${problem}`, { cause });
}
