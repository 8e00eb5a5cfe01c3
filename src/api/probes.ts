import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { AppError } from "../errors.ts";
import type { Store } from "../interfaces.ts";
import type { ServiceMetrics } from "../observability/metrics.ts";
import { AccessLog } from "./access-log.ts";
import { limitConnections, serverTimeouts, type ConnectionLimits } from "./connection-limits.ts";
import { frameworkRefusals, registerErrorHandling } from "./error-handler.ts";
import { registerMetrics } from "./metrics.ts";

/** A database that takes longer than this to answer `SELECT 1` is as good as unreachable. */
const readinessTimeoutMs = 1000;

/**
 * `/healthz`: the process is alive (it never looks at the database, so an orchestrator does
 * not restart a healthy process during a database outage). `/readyz`: the process can serve,
 * that is its database answers; 503 `service_unavailable` otherwise, and 503 `storage_full`
 * while its writes fail for lack of space (until one succeeds: see `Store.ping`).
 */
export function registerProbes(app: FastifyInstance, store: Pick<Store, "health">): void {
  const probe = { config: { probe: true } };
  app.get("/healthz", probe, () => ({ status: "ok" }));
  app.get("/readyz", probe, async () => {
    await databaseAnswers(store);
    return { status: "ready" };
  });
}

async function databaseAnswers(store: Pick<Store, "health">): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`no answer within ${readinessTimeoutMs} ms`));
    }, readinessTimeoutMs);
  });
  try {
    await Promise.race([store.health.ping(), timeout]);
  } catch (error) {
    if (error instanceof AppError && error.code === "storage_full") throw error;
    throw new AppError("service_unavailable", undefined, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** What a `--role worker` process listens with: the probes and the metrics, nothing else. */
export function buildProbeApi(
  store: Pick<Store, "health">,
  metrics: ServiceMetrics,
  logger: FastifyBaseLogger,
  limits: ConnectionLimits,
): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    forceCloseConnections: "idle",
    logController: new AccessLog(),
    ...serverTimeouts(limits),
    ...frameworkRefusals,
  });
  limitConnections(app.server, limits);
  registerMetrics(app, metrics);
  registerErrorHandling(app);
  registerProbes(app, store);
  return app;
}
