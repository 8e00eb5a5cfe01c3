import { z } from "zod";
import { EVENT_TYPES } from "../interfaces.ts";
import { pageQuery, timeInput } from "./common.ts";

/** Publishing events (CONTRACT.md "Events"), and the notification they become. */

export const eventType = z.enum(EVENT_TYPES, {
  error: `type must be one of: ${EVENT_TYPES.join(", ")}`,
});

export const publishBody = z
  .strictObject({
    type: eventType,
    data: z.strictObject({
      // A plain-object check, not z.record: JSON's keys are strings already, and checking each
      // of a 256 KiB object's 20,000 members took the main thread 6–12 ms.
      object: z
        .custom<Record<string, unknown>>(
          (value) => typeof value === "object" && value !== null && !Array.isArray(value),
          { error: "data.object must be a JSON object" },
        )
        .meta({
          description:
            "The object the event is about, as your platform shows it; nested at most eventDepthLimit (32) deep.",
          override: { type: "object", additionalProperties: true },
          examples: [{ id: "job_42", status: "done" }],
        }),
    }),
    destination: z
      .string()
      .min(1)
      .optional()
      .meta({
        description:
          "A test event: sent to this destination alone (an active one of the workspace), whatever it subscribes to, signed and retried as any notification, and shown as a test in the log.",
        examples: ["dst_5f0c2a9e81b34d7c6a1e0f93"],
      }),
  })
  .meta({ id: "PublishEvent" });

/** A notification's head, as its body begins. */
export const notificationHeadSchema = z.object({
  id: z.string().meta({
    description: "The notification's id, sent as `Webhook-Id`.",
    examples: ["evt_01a1fea3869b5b1f7c0d9e2a4b36"],
  }),
  type: z.string().meta({
    description: `One of ${EVENT_TYPES.join(", ")} (types may be added: accept others).`,
    examples: ["job.completed"],
  }),
  api_version: z.string().meta({ examples: ["2026-11-01"] }),
  created: z
    .number()
    .int()
    .meta({ description: "Unix seconds.", examples: [1795273492] }),
});
export type NotificationHeadBody = z.infer<typeof notificationHeadSchema>;

/** A notification's head and whether it was a test: what publishing answers, and the lists show. */
export const eventSummarySchema = notificationHeadSchema
  .extend({
    test: z.boolean().meta({
      description:
        "A test event, sent to one destination alone (`destination` when published). Not part of the notification's body.",
    }),
  })
  .meta({ id: "EventSummary" });
export type EventSummaryBody = z.infer<typeof eventSummarySchema>;

/** `since` after `until` selects nothing: a mistake worth saying. */
export function sinceBeforeUntil(query: {
  since?: Date | undefined;
  until?: Date | undefined;
}): boolean {
  return query.since === undefined || query.until === undefined || query.since < query.until;
}
export const orderedRange = { error: "since must be before until", path: ["since"] };

export const listEventsQuery = z
  .strictObject({
    ...pageQuery,
    since: timeInput.optional().meta({ description: "Created at or after this time." }),
    until: timeInput.optional().meta({ description: "Created before this time." }),
    type: eventType.optional(),
  })
  .refine(sinceBeforeUntil, orderedRange);
