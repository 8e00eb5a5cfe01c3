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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: redactedPaths, censor: "[redacted]" } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
