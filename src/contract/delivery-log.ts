import { z } from "zod";
import { isoTime, memberParams, pageOf, pageQuery, timeInput } from "./common.ts";
import { eventSummarySchema, eventType, orderedRange, sinceBeforeUntil } from "./events.ts";

/**
 * The delivery log (CONTRACT.md "Delivery log and recovery"): its queries and its answers.
 * The server's serialisers are typed by these; the CLI checks answers with guards held to them
 * (test/cli/answer-shapes.test.ts), and with them for an answer a guard refuses.
 */

export { eventSummarySchema, type EventSummaryBody } from "./events.ts";

export const deliveryStatusSchema = z.enum(["pending", "delivered", "failed"]);

/** Where a delivery stands (decision 40): a finer `status`. */
export const deliveryStateSchema = z
  .enum(["waiting", "in_flight", "retry_scheduled", "circuit_open", "delivered", "failed"])
  .meta({
    description:
      "waiting: for its first attempt, at next_attempt_at; in_flight: being attempted; retry_scheduled: its next attempt is at next_attempt_at; circuit_open: held by its destination's open circuit until next_attempt_at; delivered; failed (failure_reason says why). States may be added: accept others.",
  });

/** Why a delivery failed (decision 40). */
export const failureReasonSchema = z
  .enum([
    "retries_exhausted",
    "circuit_open",
    "destination_refused",
    "destination_deleted",
    "destination_inactive",
  ])
  .meta({
    description:
      "retries_exhausted: every attempt of the schedule failed (last_error says how); circuit_open: its retries would have run out while its destination's circuit was open; destination_refused: the destination's address or URL is refused for good (not public, a port not allowed); destination_deleted / destination_inactive: deleted or deactivated before it could be attempted. Reasons may be added: accept others.",
  });

/** One notification to one destination. */
export const deliverySchema = z
  .object({
    id: z.string().meta({
      description: "Stable: the event's and the destination's ids; treat it as opaque.",
      examples: ["dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93"],
    }),
    event_id: z.string().meta({ examples: ["evt_01a1fea3869b5b1f7c0d9e2a4b36"] }),
    destination_id: z.string().meta({ examples: ["dst_5f0c2a9e81b34d7c6a1e0f93"] }),
    event_type: z.string().meta({ examples: ["job.completed"] }),
    status: deliveryStatusSchema,
    attempts: z.number().int().meta({ description: "How many attempts were made." }),
    created_at: isoTime,
    last_attempt_at: isoTime.nullable(),
    next_attempt_at: isoTime
      .nullable()
      .meta({ description: "Null unless pending and waiting for its next attempt." }),
    last_status_code: z.number().int().nullable(),
    last_error: z
      .string()
      .nullable()
      .meta({ description: "The last attempt's error or answer, in words; null when delivered." }),
    in_flight: z.boolean().meta({ description: "A worker is attempting it now." }),
    state: deliveryStateSchema,
    failure_reason: failureReasonSchema.nullable().meta({ description: "Null unless failed." }),
    test: z.boolean().meta({
      description:
        "Its event is a test event (published with `destination`), sent to this destination alone.",
    }),
  })
  .meta({ id: "Delivery" });
export type DeliveryBody = z.infer<typeof deliverySchema>;

/** One attempt of a delivery. */
export const attemptSchema = z
  .object({
    attempt: z.number().int().meta({ description: "1 for the first." }),
    attempted_at: isoTime,
    duration_ms: z.number().int(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    response_body: z
      .string()
      .nullable()
      .meta({ description: "The first 2 KiB of the receiver's answer, as text." }),
    request_headers: z
      .record(z.string(), z.string())
      .nullable()
      .meta({
        description:
          "The headers the request was sent with (Content-Type, User-Agent, Webhook-Id, Webhook-Signature); never a secret. Its body is the event's. Null when none were kept: an attempt made before the server kept them, or a listen session's (the CLI sent it).",
        examples: [
          {
            "Content-Type": "application/json",
            "User-Agent": "svc-webhooks/0.1.0",
            "Webhook-Id": "evt_01a1fea3869b5b1f7c0d9e2a4b36",
            "Webhook-Signature":
              "t=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
          },
        ],
      }),
  })
  .meta({ id: "Attempt" });
export type AttemptBody = z.infer<typeof attemptSchema>;

/**
 * A delivery with its log: `attempts` is the list of the attempts still kept (the contract's
 * shape for `get`), oldest first; `attempt_count` how many were made in all.
 */
export const deliveryDetailSchema = deliverySchema
  .extend({
    attempts: z.array(attemptSchema).meta({ description: "The attempts kept, oldest first." }),
    attempt_count: z.number().int().meta({ description: "How many attempts were made." }),
  })
  .meta({ id: "DeliveryDetail" });
export type DeliveryDetailBody = z.infer<typeof deliveryDetailSchema>;

/** The notification as it was sent, with one delivery per destination it was queued for. */
export const eventDetailSchema = eventSummarySchema
  .extend({
    data: z.object({ object: z.record(z.string(), z.unknown()) }),
    deliveries: z.array(deliverySchema),
  })
  .meta({ id: "EventDetail" });
export type EventDetailBody = z.infer<typeof eventDetailSchema>;

/** A page of a list, newest first; `next_cursor` continues it. */
export const pageSchema = pageOf;
export const eventPageSchema = pageOf(eventSummarySchema).meta({ id: "EventPage" });
export const deliveryPageSchema = pageOf(deliverySchema).meta({ id: "DeliveryPage" });

export const recoverySchema = z
  .object({ queued: z.number().int().meta({ description: "How many deliveries were queued." }) })
  .meta({ id: "Recovery" });

export const listDeliveriesQuery = z
  .strictObject({
    ...pageQuery,
    since: timeInput.optional().meta({ description: "Created at or after this time." }),
    until: timeInput.optional().meta({ description: "Created before this time." }),
    destination: z.string().min(1).optional().meta({ description: "A destination's id." }),
    event: z.string().min(1).optional().meta({ description: "An event's id." }),
    status: deliveryStatusSchema.optional(),
    type: eventType.optional().meta({ description: "Only deliveries of events of this type." }),
  })
  .refine(sinceBeforeUntil, orderedRange);

export const recoverBody = z
  .strictObject({
    since: timeInput.meta({
      description: "Re-queue the failed deliveries created at or after this time.",
    }),
  })
  .meta({ id: "Recover" });

export const eventParams = memberParams("The event's id.", "evt_01a1fea3869b5b1f7c0d9e2a4b36");
export const deliveryParams = memberParams(
  "The delivery's id.",
  "dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93",
);
