import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from "fastify";
import { AppError, errorCatalog, type ErrorCode } from "../errors.ts";
import { formatByteSize } from "../lib/byte-size.ts";

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly param?: string };
}

export function errorBody(error: AppError): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.param === undefined ? {} : { param: error.param }),
    },
  };
}

/** Fastify's own failures (body parsing, limits) under our stable codes. */
function fromFastifyError(error: FastifyError, request: FastifyRequest): AppError | null {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("invalid_json", undefined, { cause: error });
    case "FST_ERR_CTP_BODY_TOO_LARGE": {
      const { bodyLimit, config } = request.routeOptions;
      const setting = config.bodyLimitSetting ?? "requestBodyLimit";
      return new AppError(
        "payload_too_large",
        `The request body is larger than ${formatByteSize(bodyLimit)}, the most this endpoint takes (${setting}).`,
        { cause: error },
      );
    }
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("unsupported_media_type", undefined, { cause: error });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new AppError("malformed_request", "The Content-Length does not match the body.", {
        cause: error,
      });
    case "FST_STATIC_FORBIDDEN_PATH":
      // @fastify/static refusing a path that leaves its folder: nothing there, as for any
      // other unknown path (not a failure of ours to log).
      return new AppError("route_not_found", undefined, { cause: error });
    default:
      // Fastify marks a malformed request body it could not parse with a 400 status.
      return error.statusCode === 400
        ? new AppError("invalid_json", undefined, { cause: error })
        : null;
  }
}

/**
 * Every error leaves the API as `{"error":{"code","message","param"?}}` with the status from
 * the catalog, a `Retry-After` header when the error says when to try again (every 503
 * does: see the catalog), and `WWW-Authenticate: Bearer` on every 401. Unexpected errors are logged whole and answered as `internal_error`, without
 * their detail. A path that exists with other methods is 405 with `Allow`; one that does not,
 * 404 `route_not_found`.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler<FastifyError>(async (error, request, reply) => {
    const known = error instanceof AppError ? error : fromFastifyError(error, request);
    if (known === null || known.status === null) {
      request.log.error({ err: error }, "request failed unexpectedly");
      return sendError(reply, new AppError("internal_error"));
    }
    return sendError(reply, known);
  });

  const routes = new RouteMethods();
  app.addHook("onRoute", (route) => {
    routes.add(route.url, route.method);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const allowed = routes.methodsOf(path);
    if (allowed.length > 0) {
      void reply.header("allow", allowed.join(", "));
      return sendError(
        reply,
        new AppError(
          "method_not_allowed",
          `${path} does not take ${request.method}; it takes ${allowed.join(", ")}.`,
        ),
      );
    }
    return sendError(
      reply,
      new AppError(
        "route_not_found",
        `No endpoint ${request.method} ${path}. ${errorCatalog.route_not_found.message}`,
      ),
    );
  });
}

function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) {
    void reply.header("retry-after", String(error.retryAfterSeconds));
  }
  // RFC 9110 §15.5.2: a 401 names the scheme to authenticate with. The dashboard's cookie
  // is a way to carry a session token, not a scheme of HTTP's.
  if (error.status === 401) void reply.header("www-authenticate", "Bearer");
  return reply.status(error.status ?? 500).send(errorBody(error));
}

/** The methods each route path takes, to tell a wrong method (405) from a wrong path (404). */
class RouteMethods {
  readonly #routes: { readonly pattern: RegExp; readonly methods: Set<string> }[] = [];

  add(url: string, method: string | readonly string[]): void {
    const source = `^${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z]+/g, "[^/]+")}$`;
    let route = this.#routes.find((known) => known.pattern.source === source);
    if (route === undefined) {
      route = { pattern: new RegExp(source), methods: new Set() };
      this.#routes.push(route);
    }
    for (const name of typeof method === "string" ? [method] : method) route.methods.add(name);
  }

  methodsOf(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.#routes) {
      if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

/**
 * Fastify's options that answer the refusals made before any route, by its router and by
 * Node's HTTP parser, in the envelope too (decision 28).
 */
export const frameworkRefusals = {
  frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
    const refusal =
      error.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? new AppError("uri_too_long", undefined, { cause: error })
        : new AppError("invalid_path", undefined, { cause: error });
    void sendError(reply, refusal);
  },
  clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const refusal = new AppError(
      error.code === "HPE_HEADER_OVERFLOW"
        ? "headers_too_large"
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? "request_timeout"
          : "malformed_request",
    );
    const status = refusal.status ?? 400;
    const body = JSON.stringify(errorBody(refusal));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  },
} satisfies Pick<FastifyServerOptions, "frameworkErrors" | "clientErrorHandler">;
