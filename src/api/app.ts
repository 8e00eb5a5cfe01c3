import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { registerAuthorisation } from "./authenticate.ts";
import type { ApiDependencies } from "./dependencies.ts";
import { registerErrorHandling } from "./error-handler.ts";
import { registerEventRoutes } from "./events/routes.ts";
import { registerIdempotency } from "./idempotency.ts";
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
    return503OnClosing: true,
  });
  keepRawJsonBody(app);
  registerErrorHandling(app);
  registerAuthorisation(app, dependencies.store);
  registerIdempotency(app, dependencies);
  app.get("/healthz", () => ({ status: "ok" }));
  registerWebhookRoutes(app, dependencies);
  registerEventRoutes(app, dependencies);
  return app;
}
