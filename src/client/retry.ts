import { setTimeout as sleep } from "node:timers/promises";

/**
 * The retry loop the client and the CLI share: each says when a failure is worth another try
 * (its policy), this sends again after the wait, a bounded number of times.
 */

/**
 * `Retry-After` in milliseconds: delta-seconds or an HTTP date (RFC 9110 section 10.2.3);
 * null when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * Runs `send`, and runs it again while `delayFor(error, attempt)` gives a wait (null: give up
 * and throw). `attempt` counts from 1; `onRetry` hears of each wait before it starts.
 */
export async function withRetries<T>(
  send: (attempt: number) => Promise<T>,
  delayFor: (error: unknown, attempt: number) => number | null,
  onRetry?: (error: unknown, delayMs: number, nextAttempt: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await send(attempt);
    } catch (error) {
      const delay = delayFor(error, attempt);
      if (delay === null) throw error;
      onRetry?.(error, delay, attempt + 1);
      await sleep(delay, undefined, signal === undefined ? {} : { signal });
    }
  }
}
