import { AppError, type ErrorCode } from "../../errors.ts";

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
