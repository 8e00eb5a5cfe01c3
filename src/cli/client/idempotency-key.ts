import { Option } from "commander";
import { usageError } from "../usage.ts";

/** The `--idempotency-key` option of every command that changes something. */
export function idempotencyKeyOption(): Option {
  return new Option(
    "--idempotency-key <key>",
    "sent as the Idempotency-Key header; reuse it only to retry this same request (default: a new key)",
  );
}

/**
 * The key a mutating request carries: the one given (SPEC section 8: 1 to 255 characters
 * after trimming; printable ASCII, since it travels as a header), or a new one. With a key,
 * `svc` can safely send the request again when its answer was lost.
 */
export function idempotencyKey(given: string | undefined, command: string): string {
  // Web Crypto's, not node:crypto's: importing node:crypto here would load it for every
  // command's --help, which declares this option (decision 51).
  if (given === undefined) return `svc-${crypto.randomUUID()}`;
  const key = given.trim();
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw usageError(
      command,
      "--idempotency-key must be 1 to 255 printable ASCII characters (spaces around it are dropped).",
    );
  }
  return key;
}
