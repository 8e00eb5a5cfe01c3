import type { Delivery } from "./types.ts";

/** Where a delivery stands, in words: a short label, its tone (the badge's colour), and why. */
export interface Standing {
  label: string;
  tone: "pending" | "delivered" | "failed";
  /** Why it is where it is, when there is more to say than the label. */
  reason: string | null;
}

/** Why a delivery failed, as the API names it (`failure_reason`), in a few words. */
const failureReasons: Record<string, string> = {
  retries_exhausted: "retries spent",
  circuit_open: "circuit open",
  destination_refused: "address refused",
  destination_deleted: "destination deleted",
  destination_inactive: "destination paused",
};

/**
 * A delivery's standing from what the API answers (`state`, `failure_reason`, `last_error`):
 * waiting for its first attempt, in flight, waiting for a retry, held by an open circuit,
 * delivered, failed and why. The time of the next attempt is a column of its own.
 */
export function standingOf(delivery: Delivery): Standing {
  const last = delivery.last_error === null ? null : `last error: ${delivery.last_error}`;
  switch (delivery.state) {
    case "delivered":
      return { label: "Delivered", tone: "delivered", reason: null };
    case "failed": {
      const why =
        delivery.failure_reason === null
          ? null
          : (failureReasons[delivery.failure_reason] ?? delivery.failure_reason);
      // The reason in the label ("Failed: retries spent"); the last error, in full, under it.
      return { label: why === null ? "Failed" : `Failed: ${why}`, tone: "failed", reason: last };
    }
    case "waiting":
      return { label: "Waiting for its first attempt", tone: "pending", reason: null };
    case "in_flight":
      return { label: "In flight", tone: "pending", reason: null };
    case "retry_scheduled":
      return { label: "Retry scheduled", tone: "pending", reason: last };
    case "circuit_open":
      // It goes when the circuit lets it (the next attempt's column says when).
      return { label: "Held: circuit open", tone: "pending", reason: last };
    default:
      return { label: delivery.state, tone: toneOf(delivery), reason: last };
  }
}

function toneOf(delivery: Delivery): Standing["tone"] {
  return delivery.status === "pending" ? "pending" : delivery.status;
}
