import { LogController, type FastifyReply, type FastifyRequest } from "fastify";
import "./request-context.ts";

/**
 * An access log: one line per request, with its outcome and duration, instead of Fastify's
 * two (one as it arrives, one as it is answered). Fastify's other lines (errors of streams,
 * serializers, unknown routes) stay as they are. Probes (routes marked `probe`) are logged at
 * `debug`: an orchestrator asks every few seconds, and operators read `info` (decision 31); so
 * are a client's refusals by the request budget after its first in a second (decision 45).
 * Every listener of every role logs through it, in the same one-line JSON.
 *
 * A request whose answer never finished (its client went away, or its connection was cut by
 * a deadline: decision 37) gets its line, `aborted: true`, when its connection closes:
 * Fastify itself logs only answers that finished or failed.
 */
export class AccessLog extends LogController {
  /** The requests whose line is written, so that a closing connection does not write another. */
  readonly #logged = new WeakSet<FastifyRequest>();

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    // Read now: once the connection is gone, its address may be too.
    const address = request.ip;
    reply.raw.once("close", () => {
      if (reply.raw.writableFinished || this.#logged.has(request)) return;
      this.#write(request, "request aborted", {
        ...this.#line(request, reply, address),
        // A status only if the answer had begun (a stream's 200); else none was sent.
        status_code: reply.raw.headersSent ? reply.statusCode : null,
        aborted: true,
      });
    });
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = this.#line(request, reply, request.ip);
    if (error !== null && error !== undefined) {
      this.#logged.add(request);
      request.log.error({ ...line, err: error }, "request errored");
    } else {
      this.#write(request, "request completed", line);
    }
  }

  #line(request: FastifyRequest, reply: FastifyReply, address: string) {
    return {
      method: request.method,
      url: request.url,
      status_code: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      remote_address: address,
    };
  }

  #write(request: FastifyRequest, message: string, line: object): void {
    this.#logged.add(request);
    if (request.routeOptions.config.probe === true || request.quietLog === true) {
      request.log.debug(line, message);
    } else {
      request.log.info(line, message);
    }
  }
}
