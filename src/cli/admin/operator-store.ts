import { checkLocalFiles } from "../../config/data-dir.ts";
import { databaseLocation, type ServerConfig } from "../../config/server-config.ts";
import { systemClock, type Store } from "../../interfaces.ts";
import { openStore } from "../../store/open-store.ts";
import { configFrom } from "../database-config.ts";
import type { DatabaseFlags } from "../database-options.ts";

/**
 * Operator commands act on the database directly: the operator owns it, so no API key is
 * needed. Most never read the encryption key, so on PostgreSQL they leave the data directory
 * alone; those that do (`needs.encryptionKey`, the key rotation) check it as the server does.
 * The store is closed when `work` ends, whatever happens.
 */
export async function withOperatorStore<T>(
  flags: DatabaseFlags,
  env: NodeJS.ProcessEnv,
  work: (store: Store, config: ServerConfig) => Promise<T>,
  needs: { readonly encryptionKey: boolean } = { encryptionKey: false },
): Promise<T> {
  const config = configFrom(flags, env);
  await checkLocalFiles(config, needs);
  const store = await openStore(databaseLocation(config), systemClock);
  try {
    return await work(store, config);
  } finally {
    await store.close();
  }
}

/** The database an operator command acts on (a file path or a URL), its local files checked. */
export async function operatorDatabase(
  flags: DatabaseFlags,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const config = configFrom(flags, env);
  await checkLocalFiles(config, { encryptionKey: false });
  return databaseLocation(config);
}
