import type { FastifyInstance } from "fastify";
import "./request-context.ts";

/**
 * Fastify's own JSON parser, keeping the body as received on `request.rawBody`: an
 * idempotency fingerprint covers the exact bytes, so a whitespace change is a different
 * request.
 *
 * `__proto__` and `constructor` keys are taken as plain members ("ignore" is JSON.parse
 * itself), not refused as malformed JSON: an event's object is customer data and may hold any
 * key (decision 38). JSON.parse makes every key an own data property and never sets a
 * prototype; what could (an assignment `target[key] = value` while copying) never meets
 * them: every body goes through a contract schema, whose strict objects refuse an unknown
 * key, naming it, and whose event object is kept as parsed, without a copy; it is then
 * written by JSON.stringify, which writes own members.
 */
export function keepRawJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("ignore", "ignore");
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
