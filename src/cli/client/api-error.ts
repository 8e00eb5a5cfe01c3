import { errorEnvelope } from "../../client/errors.ts";
import { AppError, isErrorCode, type ErrorCode } from "../../errors.ts";

/**
 * An error the API answered with. Its code is the API's own; its status is the HTTP status
 * the API answered with, which the JSON envelope reports.
 */
export class ApiError extends AppError {
  readonly httpStatus: number;
  /** The answer's own `Retry-After` in seconds, when it had one (not the catalog's default). */
  override retryAfterSeconds: number | undefined = undefined;

  constructor(code: ErrorCode, message: string, httpStatus: number, param?: string) {
    super(code, message, param === undefined ? undefined : { param });
    this.name = "ApiError";
    this.httpStatus = httpStatus;
  }

  override get status(): number {
    return this.httpStatus;
  }
}

/**
 * The error for a non-2xx answer. A code the catalog knows keeps the API's code and message;
 * an unknown code becomes `unknown_api_error`, quoting both; a body that is not an error
 * body at all (another web server at SERVICE_API_URL?) becomes `bad_response`.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  text: string,
  url: string,
): AppError {
  // The client's reading of the envelope: one for both.
  const envelope = errorEnvelope(body);
  if (envelope !== null) {
    const { code, message, param } = envelope;
    return isErrorCode(code)
      ? new ApiError(code, message, status, param)
      : new ApiError(
          "unknown_api_error",
          `The API answered HTTP ${status} ${code}: ${message}`,
          status,
        );
  }
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new ApiError(
    "bad_response",
    `The API at ${url} answered HTTP ${status} without an error body${excerpt === "" ? "" : `: ${excerpt}`}. Is SERVICE_API_URL the svc API?`,
    status,
  );
}
