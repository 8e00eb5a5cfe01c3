import type { EventDetailBody, EventSummaryBody } from "../../contract/delivery-log.ts";
import {
  arrayOf,
  isBoolean,
  isInteger,
  isRecord,
  isString,
  objectOf,
  type AnswerShape,
  type ObjectGuard,
} from "../client/answer-shape.ts";
import { pathSegment, workspacePath } from "../client/api-paths.ts";
import { isDelivery } from "../deliveries/delivery.ts";

/**
 * The events of the delivery log as the command line reads them (CONTRACT.md "Delivery log
 * and recovery"): the answers of the contract's schemas (src/contract/delivery-log.ts),
 * checked by guards that load no zod (`answer-shape.ts`).
 */

const contract = () => import("../../contract/delivery-log.ts");

const eventSummaryMembers = {
  id: isString,
  type: isString,
  api_version: isString,
  created: isInteger,
  test: isBoolean,
};

const isEventSummary: ObjectGuard<EventSummaryBody> = objectOf(eventSummaryMembers);

const isEventDetail: ObjectGuard<EventDetailBody> = objectOf({
  ...eventSummaryMembers,
  data: objectOf({ object: isRecord }),
  deliveries: arrayOf(isDelivery),
});

export const eventSummaryShape: AnswerShape<EventSummaryBody> = {
  accepts: isEventSummary,
  schema: async () => (await contract()).eventSummarySchema,
};

export const eventDetailShape: AnswerShape<EventDetailBody> = {
  accepts: isEventDetail,
  schema: async () => (await contract()).eventDetailSchema,
};

/** A notification's head: what `events send` prints and `events list` lists. */
export const EVENT_FIELDS = isEventSummary.members;

/** `events get`: the notification as it was sent, and its deliveries. */
export const EVENT_DETAIL_FIELDS = isEventDetail.members;

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
