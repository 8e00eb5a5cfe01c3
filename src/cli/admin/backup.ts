import type { Command } from "commander";
import { AppError } from "../../errors.ts";
import { isPostgresUrl } from "../../store/database-url.ts";
import { redactDatabase } from "../../store/open-store.ts";
import { formatByteSize, parseByteSize } from "../../lib/byte-size.ts";
import { parseDuration } from "../../lib/duration.ts";
import {
  backUpSqlite,
  defaultRestoreLimits,
  restoreSqlite,
  type RestoreLimits,
} from "../../store/sqlite/backup.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { confirm, isInteractive } from "../prompt.ts";
import { requireOption, usageError } from "../usage.ts";
import { operatorDatabase } from "./operator-store.ts";
import { existingEncryptionKey } from "../../crypto/encryption-key.ts";
import { backupKeyProblem } from "../../runtime/encryption-key-check.ts";
import { configFrom } from "../database-config.ts";

interface RestoreOptions extends GlobalOptions, DatabaseFlags {
  readonly input: string;
  readonly maxSize?: string;
  readonly timeout?: string;
}

/** The bounds of the backup's check, from --max-size and --timeout. */
function restoreLimits(options: RestoreOptions): RestoreLimits {
  const maxBytes = options.maxSize === undefined ? null : parseByteSize(options.maxSize);
  if (maxBytes === 0 || (options.maxSize !== undefined && maxBytes === null)) {
    throw usageError(
      "admin restore",
      `--max-size takes a size such as 16GiB or 512MiB (not ${options.maxSize}).`,
    );
  }
  const timeoutMs = options.timeout === undefined ? null : parseDuration(options.timeout);
  if (timeoutMs === 0 || (options.timeout !== undefined && timeoutMs === null)) {
    throw usageError(
      "admin restore",
      `--timeout takes a duration such as 10m or 30s (not ${options.timeout}).`,
    );
  }
  return {
    maxBytes: maxBytes ?? defaultRestoreLimits.maxBytes,
    timeoutMs: timeoutMs ?? defaultRestoreLimits.timeoutMs,
  };
}

/** The SQLite file an operator command copies; PostgreSQL has tools of its own for that. */
async function sqliteDatabase(options: DatabaseFlags, env: NodeJS.ProcessEnv): Promise<string> {
  const location = await operatorDatabase(options, env);
  if (isPostgresUrl(location)) {
    throw new AppError(
      "sqlite_only",
      `${redactDatabase(location)} is a PostgreSQL database: back it up with pg_dump and restore it with pg_restore (docs/operations.md, "Backups"), and keep the encryption key with it.`,
    );
  }
  return location;
}

export function registerBackupCommands(admin: Command, io: CliIo): void {
  addDatabaseOptions(
    admin
      .command("backup")
      .description("copy the SQLite database, while the server runs, into a new file (--output)")
      .usage("--output <file> [options]")
      .addHelpText(
        "after",
        `
The copy is one consistent snapshot (SQLite's VACUUM INTO, in one read transaction), taken
beside a running server without stopping its writes. --output must not exist; the file is
created with mode 0600. The encryption key (encryption.key in the data directory, or
SVC_ENCRYPTION_KEY) is not in the backup: keep it too, or the destinations' signing
secrets cannot be read. For PostgreSQL, use pg_dump.

Examples:
  $ svc admin backup --output /var/backups/svc-$(date +%F).db
  $ svc admin backup --data-dir /srv/svc --output svc.db.bak --json`,
      ),
  ).action(
    action<GlobalOptions & DatabaseFlags>(
      io,
      { accepts: [], output: "secret" },
      async (options) => {
        const output = requireOption(
          options.output,
          "admin backup",
          "--output <file> is required: the new file the backup is written to (mode 0600).",
        );
        const database = await sqliteDatabase(options, io.env);
        const { bytes } = await backUpSqlite(database, output);
        return {
          data: { database, file: output, bytes },
          human: output,
          notes: [
            `Backed up ${database} to ${output} (${bytes} bytes). Keep the encryption key too.`,
          ],
        };
      },
    ),
  );

  addDatabaseOptions(
    admin
      .command("restore")
      .description(
        "replace the SQLite database with a backup (stop the server first; asks first on a terminal, --yes skips the question)",
      )
      .usage("--input <file> [options]")
      .requiredOption("--input <file>", "a file made by `svc admin backup`")
      .option(
        "--max-size <size>",
        `refuse a backup larger than this (default ${formatByteSize(defaultRestoreLimits.maxBytes)})`,
      )
      .option(
        "--timeout <duration>",
        `refuse a backup not checked and copied within this (default ${defaultRestoreLimits.timeoutMs / 60_000}m)`,
      ),
  )
    .addHelpText(
      "after",
      `
Stop the server first: restore refuses while another process has the database open. The
backup must come from this version of svc and hold exactly what its migrations make: the
same tables, columns and indexes, and no trigger, view or table of anyone else's (checked
before any of it is read, so none of it runs). It is checked and copied beside the
database in a process of its own, stopped after --timeout, then renamed over the database,
so the database is at every moment either the old one or the whole backup; the file keeps
mode 0600. A refused backup leaves nothing behind. The encryption key the backup was made
with must be in place first (encryption.key in the data directory, or SVC_ENCRYPTION_KEY):
a backup whose signing secrets that key cannot open is refused (backup_key_mismatch), as a
backup taken before a key rotation is until the key from before the rotation is put back.

Examples:
  $ svc admin restore --input /var/backups/svc-2026-11-25.db
  $ svc admin restore --data-dir /srv/svc --input svc.db.bak --yes --json`,
    )
    .action(
      action<RestoreOptions>(io, { accepts: ["yes"] }, async (options) => {
        const limits = restoreLimits(options);
        const confirmed = options.yes === true;
        if (!confirmed && !isInteractive(io)) {
          throw new AppError(
            "confirmation_required",
            "Not restoring: there is no terminal to confirm on. Pass --yes to replace the database.",
          );
        }
        const database = await sqliteDatabase(options, io.env);
        const question = `Replace the database ${database} with ${options.input}? What it holds now is lost.`;
        if (!confirmed && !(await confirm(io, question))) {
          throw new AppError("cancelled", `Cancelled: ${database} was not changed.`);
        }
        const config = configFrom(options, io.env);
        const key = await existingEncryptionKey(config.encryptionKey, config.dataDir);
        const { bytes } = await restoreSqlite(options.input, database, limits, (sealedWith) => {
          const problem = backupKeyProblem(sealedWith, key, config);
          return problem === null ? Promise.resolve() : Promise.reject(problem);
        });
        return {
          data: { database, input: options.input, bytes },
          human: database,
          notes: [`Restored ${database} from ${options.input} (${bytes} bytes).`],
        };
      }),
    );
}
