/**
 * The operator's notices (issue 31, decision 48): sent to the operations endpoints only, never
 * to a workspace's destinations, which can neither subscribe to these types nor publish them.
 */
export const OPERATIONAL_EVENT_TYPES = [
  "destination.failing",
  "destination.recovered",
  "delivery.failed",
  "storage.full",
  "storage.recovered",
  "listen_session.ended",
] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

/**
 * The internal workspace whose events are the notices and whose destinations are the
 * operations endpoints. Not a `newId` (no random part): it is found by name, and no route,
 * list or credential reaches it (`sql/workspaces.ts` leaves it out of every lookup).
 */
export const OPERATIONS_WORKSPACE_ID = "ws_operations";

export function isOperationalEventType(name: unknown): name is OperationalEventType {
  return (OPERATIONAL_EVENT_TYPES as readonly unknown[]).includes(name);
}
