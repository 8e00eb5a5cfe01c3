import type { Delivery } from "./types.ts";

/** What the row or page offers to send a delivery again, and what it says once queued. */
export interface Repair {
  label: "Retry" | "Retry now" | "Resend";
  done: string;
}

/**
 * The API's retry (`POST …/deliveries/{id}/retry`) takes any delivery a worker does not hold
 * and makes it due now, through its destination's circuit (decision 40). So a failed one is
 * retried; one waiting for a retry or held by an open circuit is retried now, rather than at
 * its next attempt; a delivered one is resent (receivers deduplicate by Webhook-Id), as
 * Stripe's and Svix's dashboards offer. Nothing for one in flight (the API refuses it) nor for
 * one waiting for its first attempt, which is due already.
 */
export function repairOf(delivery: Pick<Delivery, "state" | "in_flight">): Repair | null {
  if (delivery.in_flight) return null;
  switch (delivery.state) {
    case "failed":
      return { label: "Retry", done: "Retry queued." };
    case "retry_scheduled":
    case "circuit_open":
      return { label: "Retry now", done: "Retry queued: due now." };
    case "delivered":
      return { label: "Resend", done: "Resend queued." };
    case "waiting":
    case "in_flight":
      return null;
    default:
      // A state added later: offer nothing rather than guess.
      return null;
  }
}
