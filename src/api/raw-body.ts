import type { FastifyInstance } from "fastify";
import "./request-context.ts";

/**
 * Fastify's own JSON parser (with its prototype-poisoning protection), keeping the body as
 * received on `request.rawBody`: an idempotency fingerprint covers the exact bytes, so a
 * whitespace change is a different request.
 */
export function keepRawJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  // JSON only: Fastify would take text/plain as a string too; anything else is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    request.rawBody = body as string;
    // Many clients send Content-Type: application/json on every request, DELETE included:
    // an empty body is no body, not malformed JSON.
    if (body === "") {
      done(null, undefined);
      return;
    }
    void parseJson(request, body as string, done);
  });
}
