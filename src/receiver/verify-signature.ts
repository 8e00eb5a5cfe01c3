import { timingSafeEqual } from "node:crypto";
import { computeSignature, describeValue, isRawBody, signingSecretProblem } from "./signature.ts";
import {
  RawBodyRequiredError,
  SignatureHeaderMalformedError,
  SignatureHeaderMissingError,
  SignatureMismatchError,
  SignatureTimestampOutOfToleranceError,
  SigningSecretInvalidError,
} from "./verification-errors.ts";

/** How far, in seconds, a notification's timestamp may be from the receiver's clock by default. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

export interface VerifySignatureOptions {
  /**
   * How far the header's timestamp may be from `now`, in seconds, in the past or in the future;
   * the bound itself is accepted. Default: 300. Must be a positive number: 0, negative numbers
   * and NaN throw a RangeError, because 0 would refuse almost every genuine notification (and
   * means "no check" in some other libraries). `Infinity` accepts any timestamp: only for
   * re-checking stored notifications, never for live requests, where the window is what stops
   * a captured request from being replayed.
   */
  readonly toleranceSeconds?: number;
  /** The receiver's current time. Default: `new Date()`. Tests pass a fixed one. */
  readonly now?: Date;
}

export interface VerifiedSignature {
  /** The header's timestamp, in Unix seconds: when this delivery attempt was signed. */
  readonly timestamp: number;
}

/**
 * Checks a notification's `Webhook-Signature` header against its raw body; returns when one of
 * its `v1=` signatures matches and its timestamp is within the tolerance, throws otherwise.
 *
 * @param secret the whole signing secret, `whsec_…`, exactly as saved in the secret file.
 * @param header the `Webhook-Signature` header's value, `t=<timestamp>,v1=<signature>[,v1=…]`.
 *   Several `v1=` entries (during secret rotation) pass if any one matches; entries of other
 *   schemes (`v0=`, …) are ignored, so a header with no `v1=` entry is malformed.
 * @param rawBody the request body exactly as received: never JSON parsed and re-serialised.
 * @throws {WebhookVerificationError} whose `code` says why: `signature_header_missing`,
 *   `signature_header_malformed`, `signature_mismatch`, `signature_timestamp_out_of_tolerance`
 *   (checked after the signature, so it means an authentic but stale or early request),
 *   `raw_body_required` (a parsed body was passed) or `signing_secret_invalid`.
 * @throws {RangeError} if `options` are invalid (see {@link VerifySignatureOptions}).
 *
 * @example
 * verifySignature(secret, req.headers["webhook-signature"], rawBody);
 */
export function verifySignature(
  secret: string,
  header: string | null | undefined,
  rawBody: string | Buffer | Uint8Array,
  options?: VerifySignatureOptions,
): VerifiedSignature {
  const toleranceSeconds = validTolerance(options?.toleranceSeconds);
  const now = validNow(options?.now);
  const secretProblem = signingSecretProblem(secret);
  if (secretProblem !== null) throw new SigningSecretInvalidError(secretProblem);
  // Plain-JavaScript callers can pass `req.body` after a JSON parser: refuse it by name instead
  // of failing later as a confusing mismatch.
  if (!isRawBody(rawBody)) throw new RawBodyRequiredError(describeValue(rawBody));

  const { timestamp, signatures } = parseSignatureHeader(header);
  const expected = Buffer.from(computeSignature(secret, timestamp, rawBody), "utf8");
  if (!signatures.some((signature) => equalInConstantTime(signature, expected))) {
    throw new SignatureMismatchError();
  }
  // Whole seconds on both sides, as the sender truncates: a request signed at …0.9 s and checked
  // at …300.5 s is 300 s old, not 300.5.
  const ageSeconds = Math.floor(now.getTime() / 1000) - timestamp;
  if (Math.abs(ageSeconds) > toleranceSeconds) {
    throw new SignatureTimestampOutOfToleranceError(timestamp, ageSeconds, toleranceSeconds);
  }
  return { timestamp };
}

interface ParsedSignatureHeader {
  readonly timestamp: number;
  readonly signatures: readonly string[];
}

// Canonical digits only: the signed text is the number as the sender writes it.
const TIMESTAMP = /^(?:0|[1-9][0-9]*)$/;
const V1_SIGNATURE = /^[0-9a-f]{64}$/;

function parseSignatureHeader(header: unknown): ParsedSignatureHeader {
  if (header === null || header === undefined) throw new SignatureHeaderMissingError();
  if (typeof header !== "string") {
    throw new SignatureHeaderMalformedError(`it is ${describeValue(header)}, not one string`);
  }
  if (header.trim() === "") throw new SignatureHeaderMissingError();

  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const entry of header.split(",")) {
    const separator = entry.indexOf("=");
    if (separator === -1) {
      throw new SignatureHeaderMalformedError("an entry is not of the form key=value");
    }
    const key = entry.slice(0, separator).trim();
    const value = entry.slice(separator + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined) {
        throw new SignatureHeaderMalformedError("it has more than one t= entry");
      }
      timestamp = Number(value);
      if (!TIMESTAMP.test(value) || !Number.isSafeInteger(timestamp)) {
        throw new SignatureHeaderMalformedError("t= is not a whole number of Unix seconds");
      }
    } else if (key === "v1") {
      if (!V1_SIGNATURE.test(value)) {
        throw new SignatureHeaderMalformedError("a v1= entry is not 64 lowercase hex digits");
      }
      signatures.push(value);
    }
    // Entries of other schemes (v0=, a future v2=) are ignored, so that a sender can add a
    // scheme without breaking the receivers that do not know it.
  }
  if (timestamp === undefined) throw new SignatureHeaderMalformedError("it has no t= entry");
  if (signatures.length === 0) {
    throw new SignatureHeaderMalformedError(
      "it has no v1= entry (this verifies v1 signatures only; other schemes are ignored)",
    );
  }
  return { timestamp, signatures };
}

function equalInConstantTime(candidate: string, expected: Buffer): boolean {
  const candidateBytes = Buffer.from(candidate, "utf8");
  // timingSafeEqual throws on different lengths; the length of a hex HMAC is no secret.
  return candidateBytes.length === expected.length && timingSafeEqual(candidateBytes, expected);
}

function validTolerance(toleranceSeconds: unknown): number {
  const tolerance = toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (typeof tolerance !== "number" || !(tolerance > 0)) {
    throw new RangeError(
      "toleranceSeconds must be a positive number of seconds (default 300), or Infinity to " +
        "accept any timestamp.",
    );
  }
  return tolerance;
}

function validNow(now: unknown): Date {
  const date = now ?? new Date();
  // An invalid Date would make every age NaN, and NaN is never "outside" the tolerance.
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new RangeError("now must be a valid Date.");
  }
  return date;
}
