import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { AppError } from "../errors.ts";
import { AccessLog } from "./access-log.ts";
import { registerAuthRoutes } from "./auth/routes.ts";
import { registerAuthorisation } from "./authenticate.ts";
import { registerDashboard } from "./dashboard/routes.ts";
import type { ApiDependencies } from "./dependencies.ts";
import { registerDeliveryLogRoutes } from "./delivery-log/routes.ts";
import { registerDeliveryStatsRoute } from "./delivery-log/stats-route.ts";
import { frameworkRefusals, registerErrorHandling } from "./error-handler.ts";
import { registerEventRoutes } from "./events/routes.ts";
import { registerIdempotency } from "./idempotency.ts";
import { registerMetrics } from "./metrics.ts";
import { registerOpenApiRoute } from "./openapi-route.ts";
import { registerProbes } from "./probes.ts";
import { keepRawJsonBody } from "./raw-body.ts";
import { registerWebhookRoutes } from "./webhooks/routes.ts";

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
    ...frameworkRefusals,
  });
  // Cookies are parsed only where a credential is read (auth/cookie-session.ts), not by a hook.
  void app.register(fastifyCookie, { hook: false });
  registerMetrics(app, dependencies.metrics);
  refuseWhileClosing(app);
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
  registerDeliveryStatsRoute(app, dependencies);
  registerDashboard(app);
  return app;
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
