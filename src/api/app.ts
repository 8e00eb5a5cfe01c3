import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { SigningKeys } from "../delivery/signing-keys.ts";
import { AppError } from "../errors.ts";
import { AccessLog } from "./access-log.ts";
import { limitConnections, serverTimeouts } from "./connection-limits.ts";
import { registerAuthRoutes } from "./auth/routes.ts";
import { registerAuthorisation } from "./authenticate.ts";
import { registerDashboard } from "./dashboard/routes.ts";
import type { ApiDependencies } from "./dependencies.ts";
import { registerDeliveryLogRoutes } from "./delivery-log/routes.ts";
import { registerDeliveryStatsRoute } from "./delivery-log/stats-route.ts";
import { frameworkRefusals, registerErrorHandling } from "./error-handler.ts";
import { registerEventRoutes } from "./events/routes.ts";
import { registerIdempotency } from "./idempotency.ts";
import { registerListenRoutes } from "./listen/routes.ts";
import { ListenStreams } from "./listen/streams.ts";
import { registerMetrics } from "./metrics.ts";
import { registerOpenApiRoute } from "./openapi-route.ts";
import { registerPortalLinkRoutes, registerPortalSessionRoute } from "./portal/routes.ts";
import { registerProbes } from "./probes.ts";
import { registerRequestBudget } from "./request-budget.ts";
import { keepRawJsonBody } from "./raw-body.ts";
import { registerWebhookRoutes } from "./webhooks/routes.ts";
import { registerApiKeyRoutes } from "./workspaces/api-key-routes.ts";
import { registerWorkspaceRoutes } from "./workspaces/routes.ts";

/** Builds the HTTP API; listening is left to the caller (tests can `inject()` instead). */
export function buildApi(
  dependencies: ApiDependencies,
  logger: FastifyBaseLogger,
): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    // Keep-alive connections must not hold a graceful shutdown open.
    forceCloseConnections: "idle",
    // Answered below instead, in the error shape of the contract.
    return503OnClosing: false,
    logController: new AccessLog(),
    bodyLimit: dependencies.limits.requestBodyLimit,
    ...serverTimeouts(dependencies.limits),
    ...frameworkRefusals,
  });
  limitConnections(app.server, dependencies.limits);
  // First, so that a request's span covers every hook after it (decision 47).
  dependencies.tracing?.instrumentApi(app);
  // Cookies are parsed only where a credential is read (auth/cookie-session.ts), not by a hook.
  void app.register(fastifyCookie, { hook: false });
  registerMetrics(app, dependencies.metrics);
  refuseWhileClosing(app);
  // Before authorisation: a request over its client's budget costs no lookup (decision 45).
  registerRequestBudget(app, dependencies.limits, dependencies.clock);
  keepRawJsonBody(app);
  registerErrorHandling(app);
  registerAuthorisation(app, dependencies.store);
  registerIdempotency(app, dependencies);
  registerProbes(app, dependencies.store);
  registerOpenApiRoute(app);
  registerAuthRoutes(app, dependencies);
  registerWebhookRoutes(app, dependencies);
  registerEventRoutes(app, dependencies);
  registerDeliveryLogRoutes(app, dependencies);
  registerListenRoutes(app, dependencies, startListenStreams(app, dependencies));
  registerDeliveryStatsRoute(app, dependencies);
  registerWorkspaceRoutes(app, dependencies);
  registerApiKeyRoutes(app, dependencies);
  registerPortalLinkRoutes(app, dependencies);
  registerPortalSessionRoute(app, dependencies);
  registerDashboard(app, dependencies.portal.frameAncestors);
  return app;
}

/** How long a stream waits, at most, before it looks for due deliveries by itself. */
const listenPollMs = 1000;
/** Deliveries a stream holds pushed and unreported, at most. */
const listenInFlight = 16;

/**
 * The listen streams of this process (decision 34): woken by this process's publishes and by
 * the wake-ups of others', ended before the server closes (an open stream would hold it).
 */
function startListenStreams(app: FastifyInstance, dependencies: ApiDependencies) {
  const { listen } = dependencies;
  const streams = new ListenStreams();
  const settings = {
    store: dependencies.store.listen,
    signingKeys: new SigningKeys(dependencies.secretBox),
    clock: dependencies.clock,
    logger: app.log,
    heartbeatMs: listen.heartbeatMs,
    leaseMs: listen.leaseMs,
    inFlight: listenInFlight,
    pollMs: listenPollMs,
    tracing: dependencies.tracing ?? null,
  };
  const stopHearing = dependencies.store.queue.whenQueued(() => {
    streams.wakeAll();
  });
  listen.wakeUps?.start(() => {
    streams.wakeAll();
  });
  app.addHook("preClose", (done) => {
    stopHearing();
    streams.closeAll();
    done();
  });
  app.addHook("onClose", async () => {
    await listen.wakeUps?.stop();
  });
  return { streams, settings };
}

/**
 * While the server shuts down, a request that still arrives on an open connection is
 * answered 503 `service_unavailable`, so that clients retry it elsewhere or later.
 */
function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  app.addHook("onRequest", (_request, _reply, done) => {
    done(
      closing
        ? new AppError("service_unavailable", "The server is shutting down. Try again shortly.")
        : undefined,
    );
  });
}
