import type { FastifyInstance } from "fastify";

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of every `/v1` operation, made from the
 * contract's schemas (decision 31) on the first request and kept; its generator is loaded
 * then too, so a server nobody asks never holds it. Public, as the API's shape is no secret:
 * clients and SDK generators read it before they have a key.
 */
export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: string | undefined;
  app.get("/openapi.json", async (_request, reply) => {
    if (document === undefined) {
      const { buildOpenApiDocument } = await import("../contract/openapi.ts");
      document = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
    }
    return reply.type("application/json; charset=utf-8").send(document);
  });
}
