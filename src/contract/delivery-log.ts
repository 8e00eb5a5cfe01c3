import { z } from "zod";

/**
 * The wire shapes of the delivery log (CONTRACT.md "Delivery log and recovery"), declared
 * once: the server's serialisers are typed by them and the CLI parses answers with them.
 * Members the API may add later are kept (`looseObject`), so an older `svc` still reads a
 * newer server.
 */

const isoTime = z.string();

/** A notification's head, as the events list shows it. */
export const eventSummarySchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  api_version: z.string(),
  /** Unix seconds, as in the notification. */
  created: z.number(),
});
export type EventSummaryBody = z.infer<typeof eventSummarySchema>;

export const deliveryStatusSchema = z.enum(["pending", "delivered", "failed"]);

/** One notification to one destination. */
export const deliverySchema = z.looseObject({
  id: z.string(),
  event_id: z.string(),
  destination_id: z.string(),
  event_type: z.string(),
  status: deliveryStatusSchema,
  attempts: z.number(),
  created_at: isoTime,
  last_attempt_at: isoTime.nullable(),
  /** Null unless pending and waiting for its next attempt. */
  next_attempt_at: isoTime.nullable(),
  last_status_code: z.number().nullable(),
  last_error: z.string().nullable(),
  /** A worker is attempting it now. */
  in_flight: z.boolean(),
});
export type DeliveryBody = z.infer<typeof deliverySchema>;

/** One attempt of a delivery. */
export const attemptSchema = z.looseObject({
  /** 1 for the first. */
  attempt: z.number(),
  attempted_at: isoTime,
  duration_ms: z.number(),
  status_code: z.number().nullable(),
  error: z.string().nullable(),
  /** The first 2 KiB of the receiver's answer, as text. */
  response_body: z.string().nullable(),
});
export type AttemptBody = z.infer<typeof attemptSchema>;

/**
 * A delivery with its log: `attempts` is the list of the attempts still kept (the contract's
 * shape for `get`), oldest first; `attempt_count` how many were made in all.
 */
export const deliveryDetailSchema = deliverySchema.extend({
  attempts: z.array(attemptSchema),
  attempt_count: z.number(),
});
export type DeliveryDetailBody = z.infer<typeof deliveryDetailSchema>;

/** The notification as it was sent, with one delivery per destination it was queued for. */
export const eventDetailSchema = eventSummarySchema.extend({
  data: z.looseObject({ object: z.record(z.string(), z.unknown()) }),
  deliveries: z.array(deliverySchema),
});
export type EventDetailBody = z.infer<typeof eventDetailSchema>;

/** A page of a list, newest first; `next_cursor` continues it. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), next_cursor: z.string().nullable() });
}

export const recoverySchema = z.looseObject({ queued: z.number() });
