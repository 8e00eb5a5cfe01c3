import type { Command } from "commander";

/** The flags of every command that opens the database: the server and the operator commands. */
export interface DatabaseFlags {
  readonly database?: string;
  readonly dataDir?: string;
  readonly config?: string;
}

export function addDatabaseOptions(command: Command): Command {
  return command
    .option("--database <url>", "SQLite file path or postgres:// URL (env SVC_DATABASE_URL)")
    .option("--data-dir <dir>", "data directory for the SQLite file and key (env SVC_DATA_DIR)")
    .option("--config <file>", "JSON configuration file (env SVC_CONFIG)");
}
