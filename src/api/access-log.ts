import { LogController, type FastifyReply, type FastifyRequest } from "fastify";
import "./request-context.ts";

/**
 * An access log: one line per answered request, with its outcome and duration, instead of
 * Fastify's two (one as it arrives, one as it is answered). Fastify's other lines (errors of
 * streams, serializers, unknown routes) stay as they are. Probes (routes marked `probe`) are
 * logged at `debug`: an orchestrator asks every few seconds, and operators read `info`
 * (decision 31). Every listener of every role logs through it, in the same one-line JSON.
 */
export class AccessLog extends LogController {
  override incomingRequest(): void {
    // Logged once, when answered.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      url: request.url,
      status_code: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      remote_address: request.ip,
    };
    if (error !== null && error !== undefined) {
      request.log.error({ ...line, err: error }, "request errored");
    } else if (request.routeOptions.config.probe === true) {
      request.log.debug(line, "request completed");
    } else {
      request.log.info(line, "request completed");
    }
  }
}
