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

export function eventSummaryBody(event: EventSummary): EventSummaryBody {
  return {
    id: event.id,
    type: event.type,
    api_version: event.apiVersion,
    created: Math.floor(event.createdAt.getTime() / 1000),
  };
}

/**
 * The notification exactly as it was sent (its `data` included), with one delivery per
 * destination it was queued for.
 */
export function eventDetailBody(event: EventDetail): EventDetailBody {
  const notification = JSON.parse(event.body) as EventDetailBody;
  return { ...notification, deliveries: event.deliveries.map(deliveryBody) };
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
  };
}

export function deliveryDetailBody(delivery: DeliveryDetail): DeliveryDetailBody {
  return {
    ...deliveryBody(delivery),
    attempts: delivery.attemptLog.map(attemptBody),
    attempt_count: delivery.attempts,
  };
}

function attemptBody(attempt: AttemptEntry): AttemptBody {
  return {
    attempt: attempt.attempt,
    attempted_at: attempt.attemptedAt.toISOString(),
    duration_ms: attempt.durationMs,
    status_code: attempt.statusCode,
    error: attempt.error,
    response_body: attempt.responseBody,
  };
}
