import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApi } from "../api/app.ts";
import { databaseLocation, resolveTable, type ServerConfig } from "../config/server-config.ts";
import { loadEncryptionKey } from "../crypto/encryption-key.ts";
import { SecretBox } from "../crypto/secret-box.ts";
import { HttpSender } from "../delivery/http-sender.ts";
import { RetrySchedule } from "../delivery/retry-schedule.ts";
import { DeliveryWorker } from "../delivery/worker.ts";
import { AppError } from "../errors.ts";
import type { Clock, Resolver, Store } from "../interfaces.ts";
import { AddressPolicy } from "../net/address-policy.ts";
import { systemResolver, tableResolver } from "../net/resolver.ts";
import { openStore } from "../store/open-store.ts";
import { startMaintenance } from "./maintenance.ts";

export interface RunningServer {
  /** The base URL the API listens on, e.g. http://127.0.0.1:8787. */
  readonly url: string;
  /** Stops taking requests, finishes those in flight, closes the database. */
  close(): Promise<void>;
}

/** How soon an idle worker looks for work that another process queued. */
const idlePollMs = 1000;

/** The seams the server runs with; tests pass their own clock or resolver. */
export interface ServerSeams {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Default: the `resolve` table of the configuration, then the system resolver. */
  readonly resolver?: Resolver;
}

/** The composition root: config → store → delivery worker and API. */
export async function startServer(
  config: ServerConfig,
  seams: ServerSeams,
): Promise<RunningServer> {
  const { logger, clock } = seams;
  const store: Store = await openStore(databaseLocation(config), clock);
  const resolver = seams.resolver ?? tableResolver(resolveTable(config), systemResolver);
  const addressPolicy = new AddressPolicy(config.allowPrivateNetworks);
  const sender = new HttpSender({ connectionsPerOrigin: 16, timeoutMs: config.deliveryTimeout });
  let worker: DeliveryWorker | undefined;
  let maintenance: { stop(): Promise<void> } | undefined;
  let app: FastifyInstance | undefined;
  try {
    const secretBox = new SecretBox(await loadEncryptionKey(config.encryptionKey, config.dataDir));
    const deliveryWorker = new DeliveryWorker(
      store,
      {
        secretBox,
        resolver,
        addressPolicy,
        sender,
        clock,
        schedule: new RetrySchedule(config.retrySchedule),
        timeoutMs: config.deliveryTimeout,
      },
      logger,
      {
        concurrency: config.deliveryConcurrency,
        leaseMs: config.deliveryLease,
        idlePollMs,
      },
    );
    worker = deliveryWorker;
    deliveryWorker.start();
    maintenance = startMaintenance(store, clock, logger, {
      attemptRetentionMs: config.attemptRetention,
    });
    app = buildApi(
      {
        store,
        secretBox,
        clock,
        resolver,
        addressPolicy,
        onEventPublished: () => {
          deliveryWorker.wake();
        },
      },
      logger,
    );
    await listen(app, config);
  } catch (error) {
    await app?.close();
    await worker?.stop();
    await maintenance?.stop();
    await sender.close();
    await store.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  logger.info({ url, database: redactDatabase(databaseLocation(config)) }, "svc server ready");
  const api = app;
  const runningWorker = worker;
  const runningMaintenance = maintenance;
  return {
    url,
    // API first (no new events), then the worker (attempts in flight finish), then the rest.
    async close() {
      await api.close();
      await runningWorker.stop();
      await runningMaintenance.stop();
      await sender.close();
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
