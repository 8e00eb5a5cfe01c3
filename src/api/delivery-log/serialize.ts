import type {
  AttemptBody,
  DeliveryBody,
  DeliveryDetailBody,
  EventDetailBody,
  EventSummaryBody,
} from "../../contract/delivery-log.ts";
import type {
  AttemptEntry,
  DeliveryDetail,
  DeliveryRecord,
  EventDetail,
  EventSummary,
} from "../../interfaces.ts";
import { USER_AGENT } from "../../version.ts";

export function eventSummaryBody(event: EventSummary): EventSummaryBody {
  return {
    id: event.id,
    type: event.type,
    api_version: event.apiVersion,
    created: Math.floor(event.createdAt.getTime() / 1000),
    test: event.test,
  };
}

/**
 * The notification exactly as it was sent (its `data` included), with one delivery per
 * destination it was queued for.
 */
export function eventDetailBody(event: EventDetail): EventDetailBody {
  const notification = JSON.parse(event.body) as EventDetailBody;
  return { ...notification, test: event.test, deliveries: event.deliveries.map(deliveryBody) };
}

export function deliveryBody(delivery: DeliveryRecord): DeliveryBody {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    destination_id: delivery.destinationId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    created_at: delivery.createdAt.toISOString(),
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    in_flight: delivery.inFlight,
    state: delivery.state,
    failure_reason: delivery.failureReason,
    test: delivery.test,
  };
}

export function deliveryDetailBody(delivery: DeliveryDetail): DeliveryDetailBody {
  return {
    ...deliveryBody(delivery),
    attempts: delivery.attemptLog.map((attempt) => attemptBody(delivery.eventId, attempt)),
    attempt_count: delivery.attempts,
  };
}

function attemptBody(eventId: string, attempt: AttemptEntry): AttemptBody {
  return {
    attempt: attempt.attempt,
    attempted_at: attempt.attemptedAt.toISOString(),
    duration_ms: attempt.durationMs,
    status_code: attempt.statusCode,
    error: attempt.error,
    response_body: attempt.responseBody,
    request_headers:
      attempt.webhookSignature === null ? null : requestHeaders(eventId, attempt.webhookSignature),
  };
}

/**
 * The headers an attempt was sent with (CONTRACT.md "Notifications"): all but the signature
 * follow from the notification and the release; the signature was kept with the attempt
 * (decision 40). A signature is not a secret: it proves nothing without the body and the key.
 */
function requestHeaders(eventId: string, webhookSignature: string): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    "Webhook-Id": eventId,
    "Webhook-Signature": webhookSignature,
  };
}
