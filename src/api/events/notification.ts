import type { EventType } from "../../interfaces.ts";

/** The version marker every notification body carries (`api_version`). */
export const API_VERSION = "2026-11-01";

export interface NotificationHead {
  readonly id: string;
  readonly type: EventType;
  readonly api_version: string;
  /** Unix seconds. */
  readonly created: number;
}

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
