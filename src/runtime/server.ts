import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApi } from "../api/app.ts";
import { databaseLocation, resolveTable, type ServerConfig } from "../config/server-config.ts";
import { loadEncryptionKey } from "../crypto/encryption-key.ts";
import { SecretBox } from "../crypto/secret-box.ts";
import { AppError } from "../errors.ts";
import type { Clock, Store } from "../interfaces.ts";
import { AddressPolicy } from "../net/address-policy.ts";
import { systemResolver, tableResolver } from "../net/resolver.ts";
import { openStore } from "../store/open-store.ts";

export interface RunningServer {
  /** The base URL the API listens on, e.g. http://127.0.0.1:8787. */
  readonly url: string;
  /** Stops taking requests, finishes those in flight, closes the database. */
  close(): Promise<void>;
}

/** The composition root: config → store → API. */
export async function startServer(
  config: ServerConfig,
  logger: Logger,
  clock: Clock,
): Promise<RunningServer> {
  const store: Store = await openStore(databaseLocation(config), clock);
  let app: FastifyInstance | undefined;
  try {
    const secretBox = new SecretBox(await loadEncryptionKey(config.encryptionKey, config.dataDir));
    app = buildApi(
      {
        store,
        secretBox,
        clock,
        resolver: tableResolver(resolveTable(config), systemResolver),
        addressPolicy: new AddressPolicy(config.allowPrivateNetworks),
      },
      logger,
    );
    await listen(app, config);
  } catch (error) {
    await app?.close();
    await store.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  logger.info({ url, database: redactDatabase(databaseLocation(config)) }, "svc server ready");
  const api = app;
  return {
    url,
    async close() {
      await api.close();
      await store.close();
    },
  };
}

const listenFailures: Partial<Record<string, string>> = {
  EADDRINUSE: "the port is already in use by another process",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "no interface of this machine has that address",
};

async function listen(app: FastifyInstance, config: ServerConfig): Promise<void> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = listenFailures[code ?? ""] ?? code ?? String(error);
    throw new AppError(
      "listen_failed",
      `Cannot listen on ${config.host}:${config.port}: ${reason}. Choose another --host or --port.`,
      { cause: error },
    );
  }
}

/** A PostgreSQL URL may carry a password; logs show it without. */
function redactDatabase(location: string): string {
  return location.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:[redacted]@");
}
