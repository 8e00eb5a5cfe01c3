import { randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { AppError } from "../errors.ts";
import { ExclusiveFile } from "../lib/exclusive-file.ts";

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
 * The key that encrypts signing secrets at rest: from the configuration when given, otherwise
 * from `encryption.key` in the data directory, generated there (mode 0600) on first start.
 * Several processes sharing one database must share the key: give it in SVC_ENCRYPTION_KEY.
 */
export async function loadEncryptionKey(
  configured: string | undefined,
  dataDir: string,
): Promise<Buffer> {
  if (configured !== undefined) return decodeKey(configured, "SVC_ENCRYPTION_KEY");
  const path = join(dataDir, ENCRYPTION_KEY_FILE);
  try {
    return decodeKey(await readFile(path, "utf8"), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  try {
    const file = await ExclusiveFile.create(path);
    await file.write(`${key.toString("base64")}\n`);
    return key;
  } catch (error) {
    // Another process created it first: use theirs.
    if (error instanceof AppError && error.code === "output_exists") {
      return decodeKey(await readFile(path, "utf8"), path);
    }
    throw error;
  }
}
