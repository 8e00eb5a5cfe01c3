import type { FastifyError, FastifyInstance } from "fastify";
import { AppError, errorCatalog, type ErrorCode } from "../errors.ts";

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
function fromFastifyError(error: FastifyError): AppError | null {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("invalid_json", undefined, { cause: error });
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("payload_too_large", undefined, { cause: error });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("unsupported_media_type", undefined, { cause: error });
    default:
      // Fastify marks a malformed request body it could not parse with a 400 status.
      return error.statusCode === 400
        ? new AppError("invalid_json", undefined, { cause: error })
        : null;
  }
}

/**
 * Every error leaves the API as `{"error":{"code","message","param"?}}` with the status from
 * the catalog, and a `Retry-After` header when the error says when to try again (every 503
 * does: see the catalog). Unexpected errors are logged whole and answered as `internal_error`, without
 * their detail.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler<FastifyError>(async (error, request, reply) => {
    const known = error instanceof AppError ? error : fromFastifyError(error);
    if (known === null || known.status === null) {
      request.log.error({ err: error }, "request failed unexpectedly");
      const internal = new AppError("internal_error");
      return reply.status(500).send(errorBody(internal));
    }
    if (known.retryAfterSeconds !== undefined) {
      void reply.header("retry-after", String(known.retryAfterSeconds));
    }
    return reply.status(known.status).send(errorBody(known));
  });

  app.setNotFoundHandler(async (request, reply) => {
    const error = new AppError(
      "route_not_found",
      `No endpoint ${request.method} ${request.url.split("?")[0] ?? ""}. ${errorCatalog.route_not_found.message}`,
    );
    return reply.status(404).send(errorBody(error));
  });
}
