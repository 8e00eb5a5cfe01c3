import { createHmac, type KeyObject } from "node:crypto";

/**
 * The `v1` signature scheme, shared by the delivery engine (which signs) and receivers (which
 * verify): lowercase hex of HMAC-SHA256 over `<timestamp>.<body>`, keyed with the UTF-8 bytes
 * of the whole secret string. The `whsec_` prefix is part of the key: it is neither stripped nor
 * base64-decoded, so the secret file's contents are the key exactly.
 */

/** Why `secret` cannot key a signature, or `null` if it can. Never quotes the secret. */
export function signingSecretProblem(secret: unknown): string | null {
  if (typeof secret !== "string") return `it is ${describeValue(secret)}, not a string`;
  if (secret === "") return "it is empty";
  // Secrets are base64url and never contain whitespace: a trailing newline is a reading mistake,
  // and silently trimming it would make a different key on the sender's side.
  if (secret.trim() !== secret) return "it has whitespace around it (a trailing newline?)";
  return null;
}

/** Whether `body` is raw bytes or text, as opposed to a body a framework has already parsed. */
export function isRawBody(body: unknown): body is string | Uint8Array {
  return typeof body === "string" || body instanceof Uint8Array;
}

/** A short description of a value's kind for error messages, e.g. "an object", "undefined". */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  if (value instanceof ArrayBuffer) return "an ArrayBuffer";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * The `v1` signature of a notification: lowercase hex of HMAC-SHA256 over `<timestamp>.<body>`.
 * A string body is taken as UTF-8. Throws TypeError or RangeError on arguments that could not
 * come from a correct caller (an unusable secret, a timestamp that is not whole Unix seconds).
 */
export function computeSignature(
  secret: string,
  timestamp: number,
  body: string | Uint8Array,
): string {
  const secretProblem = signingSecretProblem(secret);
  if (secretProblem !== null)
    throw new TypeError(`The signing secret is unusable: ${secretProblem}.`);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError("The timestamp must be a non-negative whole number of Unix seconds.");
  }
  if (!isRawBody(body)) {
    throw new TypeError(`The body must be a string or bytes, not ${describeValue(body)}.`);
  }
  return hmacHex(Buffer.from(secret, "utf8"), timestamp, body);
}

/** The scheme itself, for checked arguments: HMAC-SHA256 over `<timestamp>.<body>`, hex. */
function hmacHex(key: Buffer | KeyObject, timestamp: number, body: string | Uint8Array): string {
  const hmac = createHmac("sha256", key).update(`${timestamp}.`, "utf8");
  return (typeof body === "string" ? hmac.update(body, "utf8") : hmac.update(body)).digest("hex");
}

/** `t=<timestamp>,v1=<signature>`. */
function header(timestamp: number, signature: string): string {
  return `t=${timestamp},v1=${signature}`;
}

/** The `Webhook-Signature` header value for a notification: `t=<timestamp>,v1=<signature>`. */
export function signatureHeader(
  secret: string,
  timestamp: number,
  body: string | Uint8Array,
): string {
  return header(timestamp, computeSignature(secret, timestamp, body));
}

/**
 * The `Webhook-Signature` header, keyed with a signing secret already made into a key (the
 * delivery engine keeps one per destination; see `SigningKeys`). Same scheme as above.
 */
export function signatureHeaderWithKey(key: KeyObject, timestamp: number, body: string): string {
  return header(timestamp, hmacHex(key, timestamp, body));
}
