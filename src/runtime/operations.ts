import type { Logger } from "pino";
import { operationsEndpointsOf, type ServerConfig } from "../config/server-config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { destinationSecretContext } from "../crypto/sealing-contexts.ts";
import { AppError } from "../errors.ts";
import type { Clock, Store } from "../interfaces.ts";
import { checkDestinationUrl, type UrlCheckDependencies } from "../net/destination-url.ts";
import { watchStorage } from "../operations/storage-watch.ts";

/**
 * Makes the operations endpoints of the settings the operations workspace's destinations
 * (decision 48) and, when there are any, starts telling the operator of storage. Each endpoint
 * meets the destinations' network policy now, as a destination at its creation: one refused
 * (`url_not_public`, `url_port_not_allowed`) stops the start with the reason; a name that does
 * not resolve now is only a warning (every attempt checks again, as for any destination).
 * Returns what to stop, or null.
 */
export async function startOperations(
  config: ServerConfig,
  dependencies: UrlCheckDependencies & {
    readonly store: Store;
    readonly secretBox: SecretBox;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly database: "sqlite" | "postgres";
  },
): Promise<{ stop(): Promise<void> } | null> {
  const { store, secretBox, logger } = dependencies;
  const endpoints = operationsEndpointsOf(config);
  for (const [index, endpoint] of endpoints.entries()) {
    try {
      await checkDestinationUrl(endpoint.url, dependencies);
    } catch (error) {
      if (error instanceof AppError && error.code === "url_unresolvable") {
        logger.warn({ endpoint: index + 1 }, `operations endpoint: ${error.message}`);
        continue;
      }
      throw new AppError(
        "invalid_config",
        `Operations endpoint ${index + 1} is refused by the network policy: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  const sync = await store.operations.configure(endpoints, {
    failingIntervalMs: config.failingNoticeInterval,
    secrets: {
      seal: (secret, id) => secretBox.encrypt(secret, destinationSecretContext(id)),
      open: (sealed, id) => secretBox.decrypt(sealed, destinationSecretContext(id)),
    },
  });
  if (sync.added + sync.removed > 0 || endpoints.length > 0) {
    logger.info({ ...sync, endpoints: endpoints.length }, "operations endpoints in place");
  }
  if (endpoints.length === 0) return null;
  return watchStorage(
    { health: store.health, operations: store.operations, clock: dependencies.clock, logger },
    { database: dependencies.database, intervalMs: config.failingNoticeInterval },
  );
}
