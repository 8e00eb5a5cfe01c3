import type { ApiKey, Scope } from "../interfaces.ts";

// What hooks attach to a request, and what a route declares: Fastify's typed extension points.
declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a route needs; routes without one are public (health). */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** The JSON body exactly as received, for idempotency fingerprints. */
    rawBody?: string;
    /** The authenticated key, on routes with a scope. */
    apiKey?: ApiKey;
    /** The idempotency key this request holds, while it runs. */
    idempotency?: { readonly workspaceId: string; readonly key: string };
  }
}
