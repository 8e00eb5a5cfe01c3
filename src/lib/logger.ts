import { pino, type DestinationStream, type Logger } from "pino";

/**
 * Structured JSON logs. Credentials and secrets are redacted wherever they might appear; the
 * code never logs request or response bodies in the first place.
 */
export const redactedPaths = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['idempotency-key']",
  "res.headers['set-cookie']",
  "secret",
  "*.secret",
  "token",
  "*.token",
  "apiKey",
  "*.apiKey",
  "password",
  "*.password",
];

/**
 * Standard output, unless told. Written asynchronously: a line is handed to the thread pool
 * and lines logged meanwhile go out together in one write, instead of a blocking write per
 * line on the event loop (one per request). Pino flushes what is left when the process exits.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: redactedPaths, censor: "[redacted]" } };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
