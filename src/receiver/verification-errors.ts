/**
 * What `verifySignature` refuses, each with a stable `code`. These are failures of a receiver
 * checking a notification, not of the service, so they live here rather than in the service's
 * error catalog (`src/errors.ts`), which maps codes to API statuses and `svc` exit statuses.
 * No message ever contains the secret or the expected signature.
 */

export type WebhookVerificationErrorCode =
  | "signature_header_missing"
  | "signature_header_malformed"
  | "signature_timestamp_out_of_tolerance"
  | "signature_mismatch"
  | "raw_body_required"
  | "signing_secret_invalid";

/** The base of every verification failure: catch this one to answer 400. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

export class SignatureHeaderMissingError extends WebhookVerificationError {
  constructor() {
    super(
      "signature_header_missing",
      "The Webhook-Signature header is missing or empty. Pass the header's value " +
        '(in Node: req.headers["webhook-signature"]) and check that no proxy strips it.',
    );
  }
}

export class SignatureHeaderMalformedError extends WebhookVerificationError {
  /** @param problem what is wrong with the header, e.g. "it has no t= entry" */
  constructor(problem: string) {
    super(
      "signature_header_malformed",
      `The Webhook-Signature header is malformed: ${problem}. ` +
        "Expected t=<Unix seconds>,v1=<64 lowercase hex digits>, with one or more v1= entries.",
    );
  }
}

export class SignatureTimestampOutOfToleranceError extends WebhookVerificationError {
  /** The header's timestamp, in Unix seconds. */
  readonly timestamp: number;

  constructor(timestamp: number, ageSeconds: number, toleranceSeconds: number) {
    const distance =
      ageSeconds >= 0 ? `${ageSeconds} s in the past` : `${-ageSeconds} s in the future`;
    super(
      "signature_timestamp_out_of_tolerance",
      `The signature is valid but its timestamp is ${distance}, outside the tolerance of ` +
        `${toleranceSeconds} s: the request may be a replay. Every delivery attempt is signed ` +
        "afresh, so if genuine notifications fail this way, check this machine's clock (NTP).",
    );
    this.timestamp = timestamp;
  }
}

export class SignatureMismatchError extends WebhookVerificationError {
  constructor() {
    super(
      "signature_mismatch",
      "No v1 signature in the Webhook-Signature header matches. Verify against the raw body " +
        "exactly as received, not re-serialised JSON or a body a framework has parsed; and is " +
        "the secret the whole whsec_… string from the secret file, prefix included and unchanged?",
    );
  }
}

export class RawBodyRequiredError extends WebhookVerificationError {
  /** @param received a description of what was passed instead, e.g. "an object" */
  constructor(received: string) {
    super(
      "raw_body_required",
      `The body to verify must be the raw request body (a string, Buffer or Uint8Array), but ` +
        `${received} was passed: a body already parsed as JSON cannot be verified. Pass the ` +
        "bytes as received (express.raw(), Fastify's rawBody, or the collected request stream); " +
        "wrap an ArrayBuffer in new Uint8Array(…).",
    );
  }
}

export class SigningSecretInvalidError extends WebhookVerificationError {
  /** @param problem what is wrong with the secret, e.g. "it is empty"; never the secret itself */
  constructor(problem: string) {
    super(
      "signing_secret_invalid",
      `The signing secret is unusable: ${problem}. Pass the whole whsec_… string exactly as ` +
        "saved in the secret file (the file holds the secret alone, with no newline).",
    );
  }
}
