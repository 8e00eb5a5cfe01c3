import type { FastifyBaseLogger } from "fastify";
import { resolveTable, type ServerConfig } from "../config/server-config.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { RetrySchedule } from "../delivery/retry-schedule.ts";
import { SigningKeys } from "../delivery/signing-keys.ts";
import { ThreadedSender } from "../delivery/threaded-sender.ts";
import type { WakeUpSource } from "../delivery/wake-ups.ts";
import { DeliveryWorker } from "../delivery/worker.ts";
import type { Clock, Resolver, Store } from "../interfaces.ts";
import type { AddressPolicy } from "../net/address-policy.ts";
import { AttemptLog } from "../observability/attempt-log.ts";
import { DeliveryEvents } from "../observability/delivery-events.ts";
import type { ServiceMetrics } from "../observability/metrics.ts";
import type { Tracing } from "../observability/tracing/tracing.ts";
import type { PortSet } from "../net/port-set.ts";
import { systemResolver, tableResolver, withTimeout } from "../net/resolver.ts";
import { startMaintenance } from "./maintenance.ts";
import { releaseMemory } from "./release-memory.ts";

/** How soon an idle worker looks for work that another process queued, when nothing says so. */
const idlePollMs = 1000;
/** While PostgreSQL's LISTEN announces new work, polling is only a safety net. */
const listeningIdlePollMs = 5000;

/**
 * The longest a host name may take to resolve, at registration or before an attempt; well
 * inside the idempotency lock (60 s) and the default lease (60 s).
 */
const resolveTimeoutMs = 5000;

/** The configuration's `resolve` table, then the system resolver (or `override`), bounded. */
export function serverResolver(config: ServerConfig, override?: Resolver): Resolver {
  return withTimeout(
    override ?? tableResolver(resolveTable(config), systemResolver),
    resolveTimeoutMs,
  );
}

export interface DeliveryParts {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** Already bounded by the resolve timeout. */
  readonly resolver: Resolver;
  /** Built once by the composition root, and the API's too: one policy for both. */
  readonly addressPolicy: AddressPolicy;
  readonly destinationPorts: PortSet;
  readonly secretBox: SecretBox;
  /** Started here, with the worker's wake-up; stopped by the caller. */
  readonly wakeUps: WakeUpSource;
  /** Told of every attempt, through the worker's `DeliveryEvents`. */
  readonly metrics: ServiceMetrics;
  /** Null when tracing is off. */
  readonly tracing: Tracing | null;
}

/**
 * The delivery side of a server (`--role all` or `worker`): the worker, its HTTP sender and
 * the hourly maintenance, on the store given. `stop` lets the attempts in flight finish.
 */
export function startDelivery(
  config: ServerConfig,
  parts: DeliveryParts,
): { stop(): Promise<void> } {
  const { store, clock, logger, wakeUps } = parts;
  const sender = new ThreadedSender(
    { timeoutMs: config.deliveryTimeout },
    {
      onThreadStopped: (error) => {
        logger.error(
          { err: error },
          "the delivery sender thread stopped; its attempts will be retried, and the next one starts a new thread",
        );
      },
      // Idle for the sender's keep-alive: what the last burst grew goes back to the system.
      onThreadRetired: releaseMemory,
    },
  );
  // The worker reports its attempts here; the metrics and the operator log listen.
  const events = new DeliveryEvents();
  const worker = new DeliveryWorker(
    store,
    {
      signingKeys: new SigningKeys(parts.secretBox),
      resolver: parts.resolver,
      addressPolicy: parts.addressPolicy,
      destinationPorts: parts.destinationPorts,
      sender,
      clock,
      schedule: new RetrySchedule(config.retrySchedule),
      timeoutMs: config.deliveryTimeout,
      tracing: parts.tracing,
      propagateTraceContext: config.propagateTraceContext,
    },
    logger,
    {
      concurrency: config.deliveryConcurrency,
      destinationConcurrency: config.destinationConcurrency,
      workspaceConcurrency: config.workspaceConcurrency,
      circuitThreshold: config.circuitThreshold,
      leaseMs: config.deliveryLease,
      idlePollMs: () => (wakeUps.hearsOtherProcesses ? listeningIdlePollMs : idlePollMs),
    },
    events,
  );
  events.subscribe(parts.metrics);
  events.subscribe(new AttemptLog(logger.child({ worker: worker.owner }), clock));
  wakeUps.start(() => {
    worker.wake();
  });
  worker.start();
  // The deliveries of this process's publishes (role `all`) go straight to its worker.
  store.queue.handDeliveriesTo(worker);
  const maintenance = startMaintenance(store, clock, logger, {
    attemptRetentionMs: config.attemptRetention,
    eventRetentionMs: config.eventRetention,
    listenSessionTtlMs: config.listenSessionTtl,
  });
  return {
    async stop() {
      store.queue.handDeliveriesTo(null);
      await maintenance.stop();
      await worker.stop();
      await sender.close();
    },
  };
}
