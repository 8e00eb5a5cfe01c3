import { loadServerConfig, type ServerConfig } from "../config/server-config.ts";
import type { DatabaseFlags } from "./database-options.ts";

/**
 * The server's configuration from a command's database flags and the environment. Apart from
 * database-options.ts, which only declares the flags, so that declaring them loads no config
 * schema (decision 51).
 */
export function configFrom(
  flags: DatabaseFlags & Partial<Record<keyof ServerConfig, unknown>>,
  env: NodeJS.ProcessEnv,
): ServerConfig {
  return loadServerConfig({
    env,
    flags: {
      config: flags.config,
      database: flags.database,
      dataDir: flags.dataDir,
      host: flags.host,
      port: flags.port,
      logLevel: flags.logLevel,
      role: flags.role,
    },
  });
}
