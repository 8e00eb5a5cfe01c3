import type { KeyObject } from "node:crypto";
import { SecretUnreadableError } from "../crypto/secret-box.ts";
import { AppError } from "../errors.ts";
import type { AttemptReport, ClaimedDelivery, Clock, FailureReason } from "../interfaces.ts";
import {
  checkDestinationUrl,
  type CheckedUrl,
  type UrlCheckDependencies,
} from "../net/destination-url.ts";
import { signatureHeaderWithKey } from "../receiver/signature.ts";
import type { Tracing } from "../observability/tracing/tracing.ts";
import { USER_AGENT } from "../version.ts";
import type { Sender, SendOutcome } from "./http-sender.ts";
import { parseRetryAfter, type RetrySchedule } from "./retry-schedule.ts";
import type { SigningKeys } from "./signing-keys.ts";

/** The URL checks are the ones of creation and update, with the server's current settings. */
export interface AttemptDependencies extends UrlCheckDependencies {
  readonly signingKeys: SigningKeys;
  readonly sender: Sender;
  readonly schedule: RetrySchedule;
  readonly clock: Clock;
  readonly timeoutMs: number;
  /**
   * A span per attempt, linked to the publish (decision 47); absent or null when tracing is
   * off, and the worker then pays one test per attempt.
   */
  readonly tracing?: Tracing | null;
  /** Send the attempt span's `traceparent` to the receiver (`propagateTraceContext`). */
  readonly propagateTraceContext?: boolean;
}

/** What came of an attempt: the receiver's answer, a failure to reach it, or our own refusal. */
export type Outcome =
  SendOutcome | { kind: "refused"; message: string; errorClass: string; final: boolean };

/** Ends a delivery without an attempt: there is no longer anyone to deliver to. */
function notApplicable(error: string, reason: FailureReason): AttemptReport {
  return { attempt: null, result: { status: "failed", reason }, error };
}

/**
 * One attempt of one claimed delivery: re-check the destination and its addresses, sign the
 * stored body with a fresh timestamp, POST it (with `traceparent`, when not null, as a header:
 * decision 47), and decide what happens next.
 */
export async function attemptDelivery(
  delivery: ClaimedDelivery,
  dependencies: AttemptDependencies,
  traceparent: string | null = null,
): Promise<AttemptReport> {
  const { destination } = delivery;
  if (destination.deleted || destination.secretCiphertext === null) {
    return notApplicable("the destination was deleted before delivery", "destination_deleted");
  }
  if (!destination.active) {
    return notApplicable("the destination was deactivated before delivery", "destination_inactive");
  }

  const startedAt = dependencies.clock.now();
  // The schedule counts the attempts since the latest retry (decision 30).
  const attemptsMade = delivery.attempts - delivery.retryBase + 1;
  // The header the request was signed with, kept with the attempt (decision 40).
  let webhookSignature: string | null = null;
  const finish = (outcome: Outcome): AttemptReport =>
    decide(outcome, {
      startedAt,
      attemptsMade,
      now: dependencies.clock.now(),
      schedule: dependencies.schedule,
      webhookSignature,
    });

  try {
    return finish(
      await checkSignAndSend(delivery, destination.secretCiphertext, startedAt, dependencies, {
        signed: (header) => (webhookSignature = header),
        traceparent,
      }),
    );
  } catch (error) {
    // A bug, or a secret sealed with another encryption key: counted as an attempt and
    // retried on the schedule, so the delivery ends `failed` instead of looping forever.
    const reason = error instanceof Error ? error.message : String(error);
    const sealedElsewhere = error instanceof SecretUnreadableError;
    return finish({
      kind: "refused",
      errorClass: sealedElsewhere ? "secret_unreadable" : "internal",
      message: sealedElsewhere
        ? "the signing secret could not be decrypted: is SVC_ENCRYPTION_KEY the key it was sealed with?"
        : `internal error (${reason})`,
      final: false,
    });
  }
}

/**
 * Re-checks the address, signs the stored body with a fresh timestamp, and POSTs it (with the
 * `traceparent` header when there is one); tells `signed` the signature header before it sends.
 */
async function checkSignAndSend(
  delivery: ClaimedDelivery,
  secretCiphertext: string,
  startedAt: Date,
  dependencies: AttemptDependencies,
  signing: { signed(header: string): void; readonly traceparent: string | null },
): Promise<Outcome> {
  const { destination } = delivery;
  let checked: CheckedUrl;
  try {
    checked = await checkDestinationUrl(destination.url, dependencies);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    // A name that no longer resolves may come back; an address that is not public, a port
    // the settings no longer allow or a URL stored before today's rules is refused.
    const final = error.code !== "url_unresolvable";
    return { kind: "refused", message: error.message, errorClass: error.code, final };
  }
  const key = dependencies.signingKeys.keyFor(destination.id, secretCiphertext);
  const headers = notificationHeaders(key, delivery, startedAt);
  signing.signed(headers["webhook-signature"] as string);
  if (signing.traceparent !== null) headers.traceparent = signing.traceparent;
  return dependencies.sender.send({
    url: checked.url,
    addresses: checked.addresses,
    timeoutMs: dependencies.timeoutMs,
    body: delivery.body,
    headers,
  });
}

/**
 * The headers of one attempt of a notification, signed with `key` at `sentAt`: a webhook's,
 * and a listen session's as its stream carries them (decision 34).
 */
export function notificationHeaders(
  key: KeyObject,
  notification: { readonly eventId: string; readonly body: string },
  sentAt: Date,
): Record<string, string> {
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  return {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": notification.eventId,
    "webhook-signature": signatureHeaderWithKey(key, timestamp, notification.body),
  };
}

/**
 * What an attempt's outcome makes of its delivery: delivered on a 2xx, else retried on the
 * schedule (honouring a 429's or 503's Retry-After) until it is spent. A listen session's
 * attempts, made by the CLI, are decided here too (decision 34).
 */
export function decide(
  outcome: Outcome,
  context: {
    startedAt: Date;
    attemptsMade: number;
    now: Date;
    schedule: RetrySchedule;
    /** The signature header the attempt was sent with, if it was signed. */
    webhookSignature?: string | null;
  },
): AttemptReport {
  const { startedAt, attemptsMade, now } = context;
  const statusCode = outcome.kind === "response" ? outcome.statusCode : null;
  const attempt = {
    startedAt,
    durationMs: now.getTime() - startedAt.getTime(),
    statusCode,
    errorClass: errorClassOf(outcome),
    responseBody: outcome.kind === "response" ? (outcome.body ?? null) : null,
    webhookSignature: context.webhookSignature ?? null,
  };
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    return { attempt, result: { status: "delivered" }, error: null };
  }
  const error = describe(outcome);
  if (outcome.kind === "refused" && outcome.final) {
    return { attempt, result: { status: "failed", reason: "destination_refused" }, error };
  }
  const retryAfter =
    outcome.kind === "response" && (statusCode === 429 || statusCode === 503)
      ? parseRetryAfter(outcome.retryAfter, now)
      : null;
  const delay = context.schedule.delayAfter(attemptsMade, retryAfter);
  if (delay === null) {
    return {
      attempt,
      result: { status: "failed", reason: "retries_exhausted" },
      error: `${error}; retries exhausted`,
    };
  }
  return {
    attempt,
    result: { status: "pending", nextAttemptAt: new Date(now.getTime() + delay) },
    error,
  };
}

function errorClassOf(outcome: Outcome): string | null {
  switch (outcome.kind) {
    case "response":
      if (outcome.statusCode >= 200 && outcome.statusCode < 300) return null;
      return outcome.statusCode >= 300 && outcome.statusCode < 400 ? "redirect" : "http_status";
    case "error":
    case "refused":
      return outcome.errorClass;
  }
}

function describe(outcome: Outcome): string {
  switch (outcome.kind) {
    case "response":
      return outcome.statusCode >= 300 && outcome.statusCode < 400
        ? `the receiver answered ${outcome.statusCode}, a redirect, which is not followed`
        : `the receiver answered ${outcome.statusCode}`;
    case "error":
      return outcome.message;
    case "refused":
      return outcome.message;
  }
}
