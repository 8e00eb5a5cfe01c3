import type { NotificationHeadBody } from "../../contract/events.ts";
import type { EventType } from "../../interfaces.ts";

/** The version marker every notification body carries (`api_version`). */
export const API_VERSION = "2026-11-01";

/** The notification's head, of a type this server publishes. */
export type NotificationHead = NotificationHeadBody & { readonly type: EventType };

/**
 * The notification body, serialised once at publishing: every attempt to every destination
 * sends and signs exactly these bytes.
 */
export function serialiseNotification(
  head: NotificationHead,
  object: Record<string, unknown>,
): string {
  return JSON.stringify({ ...head, data: { object } });
}
