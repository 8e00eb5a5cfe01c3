import { AppError } from "../../errors.ts";
import { errorCodes } from "../../lib/error-codes.ts";
import { withRetries } from "../../client/retry.ts";
import { ApiError } from "./api-error.ts";
import type { ApiResponse } from "./http.ts";

/** Tries in all, the first included. */
export const MAX_ATTEMPTS = 4;
/** Waits before the second, third and fourth try after a lost answer. */
const lostAnswerBackoffMs = [250, 1000, 2000];
/** The longest wait on `Retry-After` that svc accepts before trying again. */
const maxRetryAfterMs = 10_000;

/** Codes that mean the connection broke after the request may have been sent. */
const lostAnswerCodes = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/**
 * How long to wait before sending the same request again, or null to give up. Only two
 * failures are worth another try: the answer was lost after the connection was made (the
 * server may have done the work: the Idempotency-Key makes the retry replay it instead of
 * doing it twice), and `idempotency_in_progress` (the first try is still running). A refused
 * connection or a time-out is reported at once.
 */
function retryDelay(error: unknown, attempt: number): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  if (error instanceof ApiError && error.code === "idempotency_in_progress") {
    return Math.min((error.retryAfterSeconds ?? 2) * 1000, maxRetryAfterMs);
  }
  if (error instanceof AppError && error.code === "api_unreachable") {
    const lost = errorCodes(error).some((code) => lostAnswerCodes.has(code));
    return lost ? (lostAnswerBackoffMs[attempt - 1] ?? null) : null;
  }
  return null;
}

/**
 * Sends, and sends again while `retryDelay` says it is safe and useful: the client's retry
 * loop (src/client/retry.ts) with the CLI's policy.
 */
export function sendWithRetries(
  send: () => Promise<ApiResponse>,
  onRetry: (error: AppError, delayMs: number, nextAttempt: number) => void,
): Promise<ApiResponse> {
  return withRetries(
    send,
    (error, attempt) => (error instanceof AppError ? retryDelay(error, attempt) : null),
    (error, delayMs, nextAttempt) => {
      onRetry(error as AppError, delayMs, nextAttempt);
    },
  );
}
