import type {
  AttemptEntry,
  DeliveryDetail,
  DeliveryRecord,
  EventDetail,
  EventSummary,
} from "../../interfaces.ts";

/** A notification as the events list shows it: its head, as the receiver got it. */
export interface EventSummaryBody {
  readonly id: string;
  readonly type: string;
  readonly api_version: string;
  /** Unix seconds, as in the notification. */
  readonly created: number;
}

/** A delivery as the API shows it (CONTRACT.md "Delivery log and recovery"). */
export interface DeliveryBody {
  readonly id: string;
  readonly event_id: string;
  readonly destination_id: string;
  readonly event_type: string;
  readonly status: DeliveryRecord["status"];
  readonly attempts: number;
  readonly created_at: string;
  readonly last_attempt_at: string | null;
  /** Null unless pending and waiting for its next attempt. */
  readonly next_attempt_at: string | null;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  /** A worker is attempting it now. */
  readonly in_flight: boolean;
}

export interface AttemptBody {
  readonly attempt: number;
  readonly attempted_at: string;
  readonly duration_ms: number;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly response_body: string | null;
}

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
export function eventDetailBody(event: EventDetail): Record<string, unknown> {
  const notification = JSON.parse(event.body) as Record<string, unknown>;
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

/**
 * A delivery with its log: `attempts` is the list of the attempts still kept (the contract's
 * shape for `get`), oldest first; `attempt_count` how many were made in all.
 */
export function deliveryDetailBody(
  delivery: DeliveryDetail,
): Omit<DeliveryBody, "attempts"> & { attempts: AttemptBody[]; attempt_count: number } {
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
