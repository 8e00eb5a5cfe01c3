import { membersOf } from "../../contract/common.ts";
import { eventDetailSchema, eventSummarySchema } from "../../contract/delivery-log.ts";
import { pathSegment, workspacePath } from "../client/api-paths.ts";

/**
 * The events of the delivery log as the command line reads them (CONTRACT.md "Delivery log
 * and recovery"); the answers are parsed with the contract's schemas (src/contract).
 */

/** A notification's head: what `events send` prints and `events list` lists. */
export const EVENT_FIELDS = membersOf(eventSummarySchema);

/** `events get`: the notification as it was sent, and its deliveries. */
export const EVENT_DETAIL_FIELDS = membersOf(eventDetailSchema);

export function eventsPath(workspace: string, command: string): string {
  return `${workspacePath(workspace, command)}/events`;
}

export function eventPath(workspace: string, id: string, command: string): string {
  return `${eventsPath(workspace, command)}/${pathSegment(id, "event id", command)}`;
}

/** Unix seconds (the notification's `created`) as every other time a person reads: ISO 8601. */
export function unixTime(seconds: number): string {
  const time = new Date(seconds * 1000);
  return Number.isNaN(time.getTime()) ? String(seconds) : time.toISOString();
}

/** A notification as a table or `key: value` lines show it: `created` as an ISO 8601 time. */
export function displayedEvent<Event extends { readonly created: number }>(
  event: Event,
): Omit<Event, "created"> & { created: string } {
  return { ...event, created: unixTime(event.created) };
}
