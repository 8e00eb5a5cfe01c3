import type { FastifyInstance } from "fastify";
import type { ServiceMetrics } from "../observability/metrics.ts";
import "./request-context.ts";

/**
 * `GET /metrics`, the Prometheus text exposition, without credentials (decision 31); and the
 * count of every answered request by its route's template, never its URL (which holds ids).
 * The hook runs for every answered request, refused ones included.
 */
export function registerMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    metrics.requestAnswered(
      request.method,
      request.routeOptions.url ?? "unmatched",
      reply.statusCode,
    );
    done();
  });
  app.get("/metrics", { config: { probe: true } }, async (_request, reply) => {
    const text = await metrics.exposition();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
