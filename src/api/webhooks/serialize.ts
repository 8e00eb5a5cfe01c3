import type { CircuitState, Destination, LastDelivery } from "../../interfaces.ts";

/** The destination as the API shows it. The signing secret is never a member of it. */
export interface DestinationBody {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly active: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

/** `last_delivery` of `get`: what happened, never a secret or a body. */
export interface LastDeliveryBody {
  readonly status: LastDelivery["status"];
  readonly attempts: number;
  readonly last_attempt_at: string | null;
  readonly event: string;
  readonly notification_id: string;
  readonly next_attempt_at: string | null;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  /** Null while the destination's circuit is closed; else why its deliveries wait. */
  readonly circuit: CircuitBody | null;
}

export interface CircuitBody {
  readonly state: CircuitState["state"];
  readonly open_until: string;
  readonly opens: number;
  readonly error: string | null;
}

export function destinationBody(destination: Destination): DestinationBody {
  return {
    id: destination.id,
    url: destination.url,
    events: destination.events,
    active: destination.active,
    created_at: destination.createdAt.toISOString(),
    updated_at: destination.updatedAt.toISOString(),
  };
}

export function lastDeliveryBody(delivery: LastDelivery): LastDeliveryBody {
  return {
    status: delivery.status,
    attempts: delivery.attempts,
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    event: delivery.event,
    notification_id: delivery.notificationId,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    circuit:
      delivery.circuit === null
        ? null
        : {
            state: delivery.circuit.state,
            open_until: delivery.circuit.openUntil.toISOString(),
            opens: delivery.circuit.opens,
            error: delivery.circuit.error,
          },
  };
}
