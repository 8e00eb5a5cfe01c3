import { pino, type DestinationStream, type Logger } from "pino";
import { BlockOutput } from "./block-output.ts";

const CENSORED = "[redacted]";

/**
 * Members whose values are credentials, wherever they appear in a logged object: a key,
 * a signing secret, a password, or a request's credential headers.
 */
const credentialKeys = new Set([
  "secret",
  "token",
  "apiKey",
  "password",
  "authorization",
  "cookie",
  "set-cookie",
  "idempotency-key",
]);

/** How deep `redactCredentials` looks: a logged object's members, theirs, and theirs. */
const maxDepth = 4;

function isWalkable(value: object): boolean {
  if (Array.isArray(value) || value instanceof Error) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * `value` with every credential member censored, in plain objects, arrays and errors down to
 * `maxDepth`; the same value when it holds none, so that a line without credentials (nearly
 * every line) costs a scan of its members and no copy. Other objects (a request, a URL) are
 * left to their serializers: Fastify's request serializer, for one, writes no headers.
 */
export function redactCredentials<T>(value: T, depth = maxDepth): T {
  if (depth === 0 || typeof value !== "object" || value === null || !isWalkable(value)) {
    return value;
  }
  const source = value as Record<string, unknown>;
  // An error's message and stack are its own members, but not enumerable.
  const keys = value instanceof Error ? Object.getOwnPropertyNames(value) : Object.keys(value);
  let copy: Record<string, unknown> | null = null;
  for (const key of keys) {
    const member = source[key];
    const redacted = credentialKeys.has(key) ? CENSORED : redactCredentials(member, depth - 1);
    if (redacted === member) continue;
    copy ??= copyOf(value);
    copy[key] = redacted;
  }
  return (copy ?? value) as T;
}

function copyOf(value: object): Record<string, unknown> {
  if (Array.isArray(value)) return [...(value as unknown[])] as unknown as Record<string, unknown>;
  const copy = Object.create(Object.getPrototypeOf(value) as object | null) as Record<
    string,
    unknown
  >;
  for (const key of Object.getOwnPropertyNames(value)) {
    copy[key] = (value as Record<string, unknown>)[key];
  }
  return copy;
}

/** Log lines go out in writes of at least this many bytes… */
const logBlockBytes = 4096;
/** …or this long after they were logged, whichever comes first. */
const logFlushMs = 100;

/**
 * Standard output, written asynchronously (a write is handed to the thread pool) and in
 * blocks: the lines of about twenty requests in one write, or what there is every
 * `logFlushMs`. A write per line, even handed to the thread pool, cost the server about 4 % of
 * its CPU per delivery, one access-log line per request (decision 59); `BlockOutput` gathers
 * them without measuring the held text again for each line (decision 61). An exit flushes the
 * last block, even on an uncaught error; what dies without an exit (kill -9, a second signal
 * during shutdown, V8 out of memory) loses it.
 */
function standardOutput(): DestinationStream {
  // One for the process, whatever the loggers: their lines share its blocks, in order.
  if (stdout === null) {
    const output = new BlockOutput(1, { blockBytes: logBlockBytes, flushMs: logFlushMs });
    process.once("exit", () => {
      output.flushSync();
    });
    stdout = output;
  }
  return stdout;
}

let stdout: BlockOutput | null = null;

export interface LoggerOptions {
  /**
   * The current span's `trace_id` and `span_id`, merged into each line (decision 47); left
   * out when tracing is off.
   */
  readonly traceFields?: () => Record<string, string>;
}

/**
 * Structured JSON logs. Credentials and secrets are censored wherever they might appear (the
 * code never logs request or response bodies in the first place): by `redactCredentials` in
 * every logged object, and by pino's own paths in a child logger's bindings and in the request
 * and response after their serializers. Pino's redaction is kept to fixed paths: a wildcard
 * path (`*.secret`) runs its redactor on every member of every line, which cost the server
 * more than the rest of its logging (decision 21).
 *
 * Standard output, unless told (`standardOutput`), whose last lines are written when the process
 * exits.
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  options: LoggerOptions = {},
): Logger {
  return pino(
    {
      level,
      // Only when tracing is on: pino calls a mixin for every line.
      ...(options.traceFields === undefined ? {} : { mixin: options.traceFields }),
      formatters: { log: (object) => redactCredentials(object) },
      redact: {
        paths: [
          // Top-level members: these paths apply to a child logger's bindings too.
          ...["secret", "token", "apiKey", "password"],
          "req.headers.authorization",
          "req.headers.cookie",
          "req.headers['idempotency-key']",
          "res.headers['set-cookie']",
        ],
        censor: CENSORED,
      },
    },
    destination ?? standardOutput(),
  );
}
