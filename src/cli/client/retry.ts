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
 * How long to wait before sending the same request again, or null to give up. Only three
 * failures are worth another try: the answer was lost after the connection was made (the
 * server may have done the work: the Idempotency-Key makes the retry replay it instead of
 * doing it twice), `idempotency_in_progress` (the first try is still running), and
 * `too_many_requests` (nothing was done, so that one is retried even for a request that is
 * not `repeatable`: a change without an Idempotency-Key, a sign-in). A refused
 * connection or a time-out is reported at once.
 */
function retryDelay(error: unknown, attempt: number, repeatable: boolean): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  // Over the request budget (decision 45): refused before anything was done, so any request
  // may be sent again, once Retry-After has passed; a longer wait is reported, not slept.
  if (error instanceof ApiError && error.code === "too_many_requests") {
    const waitMs = (error.retryAfterSeconds ?? 1) * 1000;
    return waitMs <= maxRetryAfterMs ? waitMs : null;
  }
  if (!repeatable) return null;
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
 * loop (src/client/retry.ts) with the CLI's policy. `repeatable`: a read, or a change with an
 * Idempotency-Key.
 */
export function sendWithRetries(
  send: () => Promise<ApiResponse>,
  onRetry: (error: AppError, delayMs: number, nextAttempt: number) => void,
  repeatable = true,
): Promise<ApiResponse> {
  return withRetries(
    send,
    (error, attempt) => (error instanceof AppError ? retryDelay(error, attempt, repeatable) : null),
    (error, delayMs, nextAttempt) => {
      onRetry(error as AppError, delayMs, nextAttempt);
    },
  );
}
