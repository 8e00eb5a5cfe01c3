import { isErrorCode, type ErrorCode } from "../errors.ts";

export type { ErrorCode };

/**
 * A failure of a call, as a value: the catalog's stable code (docs/errors.md), the HTTP status
 * (0 when no answer came) and the API's message. An answer with a code this version does not
 * know is `unknown_api_error`; one that is not the API's at all is `bad_response`; no answer
 * (refused, reset, timed out) is `api_unreachable`.
 */
export class SvcApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** The request member the error is about, when the API named one (for example `url`). */
  readonly param: string | undefined;
  /** The answer's `Retry-After`, in seconds, when it had one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    status: number,
    options: { param?: string; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "SvcApiError";
    this.code = code;
    this.status = status;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The API's error envelope `{"error":{"code","message","param"?}}`, or null if `body` is not one. */
export function errorEnvelope(
  body: unknown,
): { code: string; message: string; param?: string } | null {
  if (typeof body !== "object" || body === null || !("error" in body)) return null;
  const error = body.error;
  if (typeof error !== "object" || error === null) return null;
  const { code, message, param } = error as Record<string, unknown>;
  if (typeof code !== "string" || typeof message !== "string") return null;
  return typeof param === "string" ? { code, message, param } : { code, message };
}

/** The error for a non-2xx answer: its envelope's code when the catalog knows it. */
export function errorFromAnswer(
  status: number,
  body: unknown,
  text: string,
  origin: string,
  retryAfterSeconds: number | undefined,
): SvcApiError {
  const envelope = errorEnvelope(body);
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  if (envelope === null) {
    const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    return new SvcApiError(
      "bad_response",
      `The API at ${origin} answered HTTP ${status} without an error body${excerpt === "" ? "" : `: ${excerpt}`}.`,
      status,
      retry,
    );
  }
  const { code, message, param } = envelope;
  const options = { ...retry, ...(param === undefined ? {} : { param }) };
  return isErrorCode(code)
    ? new SvcApiError(code, message, status, options)
    : new SvcApiError(
        "unknown_api_error",
        `The API answered HTTP ${status} ${code}: ${message}`,
        status,
        options,
      );
}
