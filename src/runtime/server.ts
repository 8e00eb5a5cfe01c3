import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApi } from "../api/app.ts";
import { listenSettingsOf } from "../api/listen/settings.ts";
import { portalSettingsOf } from "../api/portal/settings.ts";
import { buildProbeApi } from "../api/probes.ts";
import { checkLocalFiles, removeCreatedDataDir } from "../config/data-dir.ts";
import { databaseLocation, type ServerConfig } from "../config/server-config.ts";
import { SecretBox } from "../crypto/secret-box.ts";
import { NoWakeUps, type WakeUpSource } from "../delivery/wake-ups.ts";
import { AppError } from "../errors.ts";
import type { Clock, Resolver, Store } from "../interfaces.ts";
import { AddressPolicy } from "../net/address-policy.ts";
import { ServiceMetrics } from "../observability/metrics.ts";
import type { Tracing } from "../observability/tracing/tracing.ts";
import { PortSet } from "../net/port-set.ts";
import { isPostgresUrl } from "../store/database-url.ts";
import { openStore, redactDatabase } from "../store/open-store.ts";
import {
  apiKeysChannel,
  PostgresChannelListener,
  PostgresWakeUps,
} from "../store/postgres/channel-listener.ts";
import { serverResolver, startDelivery } from "./delivery.ts";
import { establishEncryptionKey } from "./encryption-key-check.ts";
import { startOperations } from "./operations.ts";

export interface RunningServer {
  /** The base URL the API listens on, e.g. http://127.0.0.1:8787. */
  readonly url: string;
  /** Stops taking requests, finishes those in flight, closes the database. */
  close(): Promise<void>;
}

/** The seams the server runs with; tests pass their own clock or resolver. */
export interface ServerSeams {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Default: the `resolve` table of the configuration, then the system resolver. */
  readonly resolver?: Resolver;
  /**
   * Spans of requests, publishes and attempts (decision 47), started by the caller from the
   * `OTEL_*` variables (`startTracing`); absent or null when tracing is off.
   */
  readonly tracing?: Tracing | null;
}

/** Something the server started and must stop, in the reverse order of starting. */
interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The composition root: config → store → delivery worker and API, as the role says: `all`
 * runs both, `api` the HTTP API alone, `worker` the worker and maintenance with a listener
 * that answers only the probes.
 */
export async function startServer(
  config: ServerConfig,
  seams: ServerSeams,
): Promise<RunningServer> {
  const createdDataDir = await checkLocalFiles(config, { encryptionKey: true });
  try {
    return await startOn(config, seams);
  } catch (error) {
    // A process that refuses to start leaves nothing new behind: the data directory it made
    // for nothing (a worker refused for its key), unless something in it is kept.
    if (createdDataDir !== null) await removeCreatedDataDir(config.dataDir, createdDataDir);
    throw error;
  }
}

/** The server on checked local files: what `startServer` starts, or refuses to start. */
async function startOn(config: ServerConfig, seams: ServerSeams): Promise<RunningServer> {
  const { logger, clock } = seams;
  const tracing = seams.tracing ?? null;
  const location = databaseLocation(config);
  const postgres = isPostgresUrl(location);
  const store: Store = await openStore(location, clock, {
    poolSize: config.databasePoolSize,
    batchLingerMs: config.batchLinger,
    onConnectionError: (error) => {
      logger.warn({ err: error }, "an idle database connection broke; the pool replaces it");
    },
    checkpoints: "background",
    onCheckpointError: (error) => {
      logger.warn({ err: error }, "a background WAL checkpoint failed; the next one tries again");
    },
    onNoticeError: (error) => {
      logger.warn({ err: error }, "could not announce queued deliveries; workers will poll");
    },
  });
  const resolver = serverResolver(config, seams.resolver);
  const addressPolicy = new AddressPolicy(config.allowPrivateNetworks);
  const destinationPorts = new PortSet(config.destinationPorts);
  // Every role serves them on its port: the API's and the worker's series, and the backlog.
  const metrics = new ServiceMetrics({
    backlog: () => store.queue.backlog(),
    clock,
    onBacklogError: (error) => {
      logger.warn({ err: error }, "the delivery backlog could not be read for the metrics");
    },
  });
  // Stopped last first: API (no new events), deliveries (attempts in flight finish), store.
  const started: Stoppable[] = [{ stop: () => store.close() }];
  const stopAll = async (): Promise<void> => {
    for (const part of [...started].reverse()) await part.stop();
  };
  let app: FastifyInstance;
  try {
    const key = await establishEncryptionKey(store.encryptionKeys, config);
    const secretBox = new SecretBox(key);
    const operations = await startOperations(config, {
      store,
      secretBox,
      clock,
      logger,
      resolver,
      addressPolicy,
      destinationPorts,
      database: postgres ? "postgres" : "sqlite",
    });
    if (operations !== null) started.push(operations);
    if (config.role !== "api") {
      const wakeUps: WakeUpSource = postgres
        ? new PostgresWakeUps(location, logger)
        : new NoWakeUps();
      started.push(wakeUps);
      started.push(
        startDelivery(config, {
          store,
          clock,
          logger,
          resolver,
          addressPolicy,
          destinationPorts,
          secretBox,
          wakeUps,
          metrics,
          tracing,
        }),
      );
    }
    if (postgres && config.role !== "worker") {
      // A request's key from memory while every change to api_keys is heard (decision 63).
      const keyChanges = new PostgresChannelListener(
        location,
        apiKeysChannel,
        "changes to API keys",
        logger,
      );
      started.push(keyChanges);
      store.credentials.cacheApiKeys(keyChanges);
    }
    app =
      config.role === "worker"
        ? buildProbeApi(store, metrics, logger, config)
        : buildApi(
            {
              store,
              secretBox,
              clock,
              sessionTtlMs: config.sessionTtl,
              behindTls: config.behindTls,
              limits: config,
              eventRetentionMs: config.eventRetention,
              resolver,
              addressPolicy,
              destinationPorts,
              metrics,
              listen: listenSettingsOf(
                config,
                postgres
                  ? new PostgresWakeUps(location, logger, "queued deliveries of svc listen streams")
                  : undefined,
              ),
              portal: portalSettingsOf(config),
              tracing,
            },
            logger,
          );
    const listening = app;
    started.push({ stop: () => listening.close() });
    await listen(app, config);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  logger.info({ url, role: config.role, database: redactDatabase(location) }, "svc server ready");
  return { url, close: stopAll };
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
