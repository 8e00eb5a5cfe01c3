import type { Command } from "commander";
import type { ServerConfig } from "../../config/server-config.ts";
import { existingEncryptionKey, readEncryptionKeyFile } from "../../crypto/encryption-key.ts";
import { encryptionKeyCheckValue } from "../../crypto/key-check.ts";
import { SecretBox, SecretUnreadableError } from "../../crypto/secret-box.ts";
import { AppError } from "../../errors.ts";
import type { Store } from "../../interfaces.ts";
import { checkEncryptionKey, encryptionKeySource } from "../../runtime/encryption-key-check.ts";
import type { SealedValue } from "../../store/encryption-key-store.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import { withOperatorStore } from "./operator-store.ts";

const COMMAND = "admin encryption-key rotate";

interface RotateOptions extends GlobalOptions, DatabaseFlags {
  readonly newKeyFile: string;
}

/**
 * `svc admin encryption-key rotate`: under its own group rather than `admin keys`, which
 * manages API keys, a different thing that users hold; this key never leaves the servers.
 */
export function registerEncryptionKeyCommands(admin: Command, io: CliIo): void {
  const group = admin
    .command("encryption-key")
    .description("the key that seals signing secrets at rest (SVC_ENCRYPTION_KEY, encryption.key)");
  addDatabaseOptions(
    group
      .command("rotate")
      .description(
        "re-seal every signing secret under a new key, in one transaction; then restart every process with that key",
      )
      .requiredOption(
        "--new-key-file <file>",
        "the new key: 32 bytes, base64 (`openssl rand -base64 32`), in a file of yours with mode 0600",
      ),
  ).action(
    action<RotateOptions>(io, { accepts: [] }, (options) =>
      withOperatorStore(
        options,
        io.env,
        (store, config) => rotateEncryptionKey(store, config, options.newKeyFile),
        { encryptionKey: true },
      ),
    ),
  );
}

async function rotateEncryptionKey(
  store: Store,
  config: ServerConfig,
  newKeyFile: string,
): Promise<CommandResult> {
  const source = encryptionKeySource(config);
  const currentKey = await existingEncryptionKey(config.encryptionKey, config.dataDir);
  if (currentKey === null) {
    throw new AppError(
      "invalid_config",
      `There is no current encryption key at ${source}: run this where the servers' key is, with SVC_ENCRYPTION_KEY set as theirs, or --data-dir the directory of their encryption.key.`,
    );
  }
  const newKey = await readEncryptionKeyFile(newKeyFile);
  if (newKey === null) throw usageError(COMMAND, `--new-key-file: ${newKeyFile} does not exist.`);
  if (newKey.equals(currentKey)) {
    throw usageError(COMMAND, `--new-key-file: ${newKeyFile} holds the current key already.`);
  }
  await checkEncryptionKey(store.encryptionKeys, currentKey, config);
  const current = new SecretBox(currentKey);
  const next = new SecretBox(newKey);
  const counts = await store.encryptionKeys.resealAll(
    encryptionKeyCheckValue(currentKey),
    encryptionKeyCheckValue(newKey),
    (value) => next.encrypt(opened(current, value), value.context),
  );
  return {
    data: {
      destinations: counts.destinations,
      idempotency_responses: counts.responses,
      new_key_file: newKeyFile,
    },
    human: `re-sealed: ${counts.destinations} signing secrets, ${counts.responses} kept responses`,
    notes: [
      `Every sealed value is now sealed with the key in ${newKeyFile}. Restart every svc process with it now: set SVC_ENCRYPTION_KEY to its contents, or put it in place of encryption.key (mode 0600) in each data directory. Until then, processes on the old key fail deliveries (secret_unreadable), and they refuse to start again (encryption_key_mismatch).`,
    ],
  };
}

function opened(box: SecretBox, value: SealedValue): string {
  try {
    return box.decrypt(value.sealed, value.context);
  } catch (error) {
    if (!(error instanceof SecretUnreadableError)) throw error;
    const row =
      value.table === "destinations" ? `destination ${value.row[0] ?? ""}` : "a kept response";
    throw new AppError(
      "encryption_key_mismatch",
      `The secret of ${row} is not sealed with the current key, so it cannot be re-sealed; nothing was changed.`,
      { cause: error },
    );
  }
}
