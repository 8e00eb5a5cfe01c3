import { join } from "node:path";
import type { ServerConfig } from "../config/server-config.ts";
import { ENCRYPTION_KEY_FILE } from "../crypto/encryption-key.ts";
import { encryptionKeyCheckValue } from "../crypto/key-check.ts";
import { SecretBox, SecretUnreadableError } from "../crypto/secret-box.ts";
import { AppError } from "../errors.ts";
import type { EncryptionKeyStore } from "../store/encryption-key-store.ts";

/**
 * Refuses a key that is not the database's (`encryption_key_mismatch`), before the process
 * does anything with it: a worker with another key would otherwise report ready and fail
 * every delivery with `secret_unreadable`, and an API would seal secrets no one else opens.
 * The first process records the key's check value. A database that has sealed secrets but
 * no check value yet (made before check values) has its key tried on one of them first, so
 * that the first process after the upgrade cannot record a wrong key.
 */
export async function checkEncryptionKey(
  keys: EncryptionKeyStore,
  key: Buffer,
  config: Pick<ServerConfig, "encryptionKey" | "dataDir">,
): Promise<void> {
  const check = encryptionKeyCheckValue(key);
  let recorded = await keys.recordedKeyCheck();
  if (recorded === null) {
    const sample = await keys.someSealedSecret();
    if (sample !== null && !opens(new SecretBox(key), sample.sealed, sample.context)) {
      throw keyMismatch(config);
    }
    recorded = await keys.recordKeyCheck(check);
  }
  if (recorded !== check) throw keyMismatch(config);
}

function opens(box: SecretBox, sealed: string, context: string): boolean {
  try {
    box.decrypt(sealed, context);
    return true;
  } catch (error) {
    if (error instanceof SecretUnreadableError) return false;
    throw error;
  }
}

/** Where this process's key came from, to name in the refusal. */
export function encryptionKeySource(
  config: Pick<ServerConfig, "encryptionKey" | "dataDir">,
): string {
  return config.encryptionKey === undefined
    ? join(config.dataDir, ENCRYPTION_KEY_FILE)
    : "SVC_ENCRYPTION_KEY";
}

function keyMismatch(config: Pick<ServerConfig, "encryptionKey" | "dataDir">): AppError {
  const here =
    config.encryptionKey === undefined
      ? `copy encryption.key (mode 0600) from the data directory of the first host over ${encryptionKeySource(config)}, or set SVC_ENCRYPTION_KEY to the other processes' key`
      : "set SVC_ENCRYPTION_KEY to the other processes' key, or to the contents of encryption.key in the data directory of the first host";
  return new AppError(
    "encryption_key_mismatch",
    `This process's encryption key (from ${encryptionKeySource(config)}) is not the one the database's signing secrets are sealed with; nothing was started. Give every process the same key: ${here}.`,
  );
}
