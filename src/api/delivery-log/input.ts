import { z } from "zod";
import { EVENT_TYPES } from "../../interfaces.ts";
import { queryInteger } from "../webhooks/input.ts";

/** A time in a query or body: ISO 8601 with a time and a zone (`2026-11-25T12:00:00Z`). */
const time = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 time such as 2026-11-25T12:00:00Z" })
  .transform((text) => new Date(text));

const page = {
  limit: queryInteger(1, 100).default(20),
  cursor: z.string().min(1).optional(),
  since: time.optional(),
  until: time.optional(),
};

/** `since` after `until` selects nothing: a mistake worth saying. */
function sinceBeforeUntil(query: { since?: Date | undefined; until?: Date | undefined }): boolean {
  return query.since === undefined || query.until === undefined || query.since < query.until;
}
const orderedRange = { error: "since must be before until", path: ["since"] };

export const eventsQuery = z
  .strictObject({ ...page, type: z.enum(EVENT_TYPES).optional() })
  .refine(sinceBeforeUntil, orderedRange);

export const deliveriesQuery = z
  .strictObject({
    ...page,
    destination: z.string().min(1).optional(),
    event: z.string().min(1).optional(),
    status: z.enum(["pending", "delivered", "failed"]).optional(),
  })
  .refine(sinceBeforeUntil, orderedRange);

export const recoverBody = z.strictObject({ since: time });

export const memberParams = z.object({ workspace: z.string(), id: z.string() });
