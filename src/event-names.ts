import { EVENT_SUBSCRIPTIONS, type EventSubscription } from "./interfaces.ts";
import { isOperationalEventType } from "./operations/event-types.ts";

/**
 * Why a list of event names cannot be a subscription, or null if it can: one message for the
 * API and the command line, which checks before sending.
 */
export function eventNamesProblem(names: readonly string[]): string | null {
  const allowed = EVENT_SUBSCRIPTIONS as readonly string[];
  if (names.length === 0) return `events must name at least one of: ${allowed.join(", ")}.`;
  const unknown = names.filter((name) => !allowed.includes(name));
  if (unknown.length === 0) return null;
  const operational = unknown.find(isOperationalEventType);
  if (operational !== undefined) return operationalTypeProblem(operational);
  const quoted = unknown.map((name) => JSON.stringify(name)).join(", ");
  return `Unknown event ${quoted}. Allowed: ${allowed.join(", ")}.`;
}

/** Only call after `eventNamesProblem` returned null. */
export function asSubscriptions(names: readonly string[]): EventSubscription[] {
  return names as EventSubscription[];
}

/**
 * Why a workspace may not name `type` (decision 48): the operator's notices go to the
 * operations endpoints alone (the message of `operational_event_type`).
 */
export function operationalTypeProblem(type: string): string {
  return `${type} is an operational event type: the server sends it to the operator's operations endpoints alone, and a workspace can neither publish it nor subscribe to it.`;
}
