import { performance } from "node:perf_hooks";
import type { StreamedNotification } from "../../contract/listen.ts";
import { errorCodes } from "../../lib/error-codes.ts";

/** The most of a local answer kept and reported: the first 2 KiB, as for a webhook. */
const answerBytes = 2048;

/** What the local receiver did with one notification. */
export interface LocalResult {
  readonly url: string;
  /** Null when no answer came. */
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** Why no answer came; null when one did. */
  readonly error: string | null;
  readonly responseBody: string | null;
}

/** The first `answerBytes` of an answer, as text; the rest is not read. */
async function answerStart(response: Response): Promise<string | null> {
  if (response.body === null) return null;
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    length += chunk.length;
    // Leaving the loop cancels the rest of the answer.
    if (length >= answerBytes) break;
  }
  const bytes = Buffer.concat(chunks).subarray(0, answerBytes);
  return bytes.length === 0 ? null : bytes.toString("utf8");
}

/** A failure to reach the local receiver, in words. */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === "TimeoutError") {
    return `timed out after ${timeoutMs / 1000} s`;
  }
  const code = errorCodes(error).at(-1);
  if (code === "ECONNREFUSED") return "connection refused: is the local server running?";
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  return code ?? (cause instanceof Error ? cause.message : String(cause));
}

/**
 * POSTs a streamed notification to the local receiver at `url`, with its bytes and headers
 * as the server signed them, as a webhook would arrive: a redirect is not followed, the whole
 * exchange has `timeoutMs`.
 */
export async function forward(
  notification: StreamedNotification,
  url: string,
  timeoutMs: number,
): Promise<LocalResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: notification.headers,
      body: notification.body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const responseBody = await answerStart(response);
    return { url, statusCode: response.status, durationMs: elapsed(), error: null, responseBody };
  } catch (error) {
    return {
      url,
      statusCode: null,
      durationMs: elapsed(),
      error: describeFailure(error, timeoutMs),
      responseBody: null,
    };
  }
}
