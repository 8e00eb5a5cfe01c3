import type {
  DestinationBody,
  DestinationCircuitBody,
  LastDeliveryBody,
} from "../../contract/destinations.ts";
import type { Destination, DestinationCircuit, LastDelivery } from "../../interfaces.ts";

/** The destination as the API shows it (the contract's `Destination`): never its secret. */
export function destinationBody(destination: Destination): DestinationBody {
  return {
    id: destination.id,
    url: destination.url,
    events: [...destination.events],
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

/** The destination's circuit on its page (decision 40). */
export function circuitBody(circuit: DestinationCircuit): DestinationCircuitBody {
  return {
    state: circuit.state,
    open_until: circuit.openUntil?.toISOString() ?? null,
    opens: circuit.opens,
    reason: circuit.reason,
  };
}
