import { join } from "node:path";
import type { ServerConfig } from "../config/server-config.ts";
import {
  createEncryptionKeyFile,
  ENCRYPTION_KEY_FILE,
  existingEncryptionKey,
} from "../crypto/encryption-key.ts";
import { encryptionKeyCheckValue } from "../crypto/key-check.ts";
import { SecretBox, SecretUnreadableError } from "../crypto/secret-box.ts";
import { AppError } from "../errors.ts";
import type { EncryptionKeyStore } from "../store/encryption-key-store.ts";
import type { SealedWith } from "../store/sqlite/restore-check.ts";

/**
 * The server's key: the configured one (SVC_ENCRYPTION_KEY, else `encryption.key` in the data
 * directory), checked against the database; or, when there is none, a new one, written to the
 * data directory only when the database has no key yet. A database whose secrets are sealed
 * with a key this process does not have refuses to start, and no key is generated for it: a
 * process that refuses to start leaves nothing new behind (a generated key there would be
 * useless, and would hide which key is missing).
 */
export async function establishEncryptionKey(
  keys: EncryptionKeyStore,
  config: Pick<ServerConfig, "encryptionKey" | "dataDir">,
): Promise<Buffer> {
  const configured = await existingEncryptionKey(config.encryptionKey, config.dataDir);
  if (configured !== null) {
    await checkEncryptionKey(keys, configured, config);
    return configured;
  }
  if ((await keys.recordedKeyCheck()) !== null || (await keys.someSealedSecret()) !== null) {
    // Another process may have just written the key of a first start, before recording it.
    const written = await existingEncryptionKey(undefined, config.dataDir);
    if (written === null) throw keyMissing(config);
    await checkEncryptionKey(keys, written, config);
    return written;
  }
  const key = await createEncryptionKeyFile(config.dataDir);
  await checkEncryptionKey(keys, key, config);
  return key;
}

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

function keyMissing(config: Pick<ServerConfig, "encryptionKey" | "dataDir">): AppError {
  return new AppError(
    "encryption_key_mismatch",
    `This database's signing secrets are sealed with an encryption key, and this process has none: SVC_ENCRYPTION_KEY is not set and ${encryptionKeySource(config)} does not exist. Nothing was started, and no key was generated. Put the database's key there (mode 0600), or set SVC_ENCRYPTION_KEY to it: after a restore, the key the backup was made with.`,
  );
}

function keyMismatch(config: Pick<ServerConfig, "encryptionKey" | "dataDir">): AppError {
  const here =
    config.encryptionKey === undefined
      ? `copy encryption.key (mode 0600) from the data directory of the first host over ${encryptionKeySource(config)}, or set SVC_ENCRYPTION_KEY to the other processes' key`
      : "set SVC_ENCRYPTION_KEY to the other processes' key, or to the contents of encryption.key in the data directory of the first host";
  return new AppError(
    "encryption_key_mismatch",
    `This process's encryption key (from ${encryptionKeySource(config)}) is not the one the database's signing secrets are sealed with; nothing was started. Give every process the same key: ${here}. After a restore, that is the key the backup was made with.`,
  );
}

/**
 * Why a backup must not replace the database where this key is in use: its secrets are sealed
 * with another key, or with one where there is none. Restored, it would only make the server
 * refuse to start (`encryption_key_mismatch`, with advice for another situation); refused
 * here, nothing changes, and the message says which key is needed. Null when the key opens
 * the backup's secrets, or when it has none.
 */
export function backupKeyProblem(
  sealedWith: SealedWith,
  key: Buffer | null,
  config: Pick<ServerConfig, "encryptionKey" | "dataDir">,
): AppError | null {
  const { keyCheck, sample } = sealedWith;
  if (keyCheck === null && sample === null) return null;
  const source = encryptionKeySource(config);
  const needed = keyCheck === null ? "" : ` (its key's check value begins ${brief(keyCheck)})`;
  if (key === null) {
    return new AppError(
      "backup_key_mismatch",
      `The backup's signing secrets are sealed with an encryption key${needed}, and there is none here: SVC_ENCRYPTION_KEY is not set and ${source} does not exist. Nothing was changed. Put the key the backup was made with there (mode 0600), then restore again.`,
    );
  }
  const check = encryptionKeyCheckValue(key);
  const matches =
    keyCheck === null
      ? sample !== null && opens(new SecretBox(key), sample.sealed, sample.context)
      : keyCheck === check;
  if (matches) return null;
  return new AppError(
    "backup_key_mismatch",
    `The backup's signing secrets are sealed with another encryption key${needed} than the one in ${source} (${brief(check)}): restored, the server would refuse to start. Nothing was changed. Put the key the backup was made with in ${source} first (for a backup taken before a key rotation, the key from before the rotation), then restore again.`,
  );
}

/** Enough of a check value to tell keys apart in a message: `v1:3f2a9c01d4e5b6a7…`. */
function brief(check: string): string {
  return `${check.slice(0, 19)}…`;
}
