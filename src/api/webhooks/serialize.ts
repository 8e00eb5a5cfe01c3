import type { Destination, LastDelivery } from "../../interfaces.ts";

/** The destination as the API shows it. The signing secret is never a member of it. */
export interface DestinationBody {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly active: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface LastDeliveryBody {
  readonly status: LastDelivery["status"];
  readonly attempts: number;
  readonly last_attempt_at: string | null;
  readonly event: string;
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
