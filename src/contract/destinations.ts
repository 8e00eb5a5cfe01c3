import { z } from "zod";
import { asSubscriptions, eventNamesProblem } from "../event-names.ts";
import { EVENT_SUBSCRIPTIONS, type EventSubscription } from "../interfaces.ts";
import { isOperationalEventType } from "../operations/event-types.ts";
import { isoTime, memberParams, pageOf, pageQuery } from "./common.ts";

/** The destinations API (CONTRACT.md "HTTP API"): its requests and its answers. */

/** More names than any subscription needs: a longer list is refused before its elements are read. */
export const MAX_EVENT_NAMES = 32;

/**
 * Typed, for what sends it (the client), as the document says: names from the list. The parser
 * itself takes any array, so that a wrong name is `invalid_events` listing the names allowed
 * rather than zod's generic message; hence the cast, which changes types only.
 */
export const eventNames = z
  .array(z.unknown())
  .max(MAX_EVENT_NAMES, { error: `events may list at most ${MAX_EVENT_NAMES} names` })
  .pipe(z.array(z.string()))
  .transform((names, context) => {
    const problem = eventNamesProblem(names);
    if (problem !== null) {
      // An operator's type has a code of its own (decision 48), which parse-input reads here.
      const code = names.some(isOperationalEventType) ? "operational_event_type" : undefined;
      context.addIssue({ code: "custom", message: problem, params: { code } });
      return z.NEVER;
    }
    // Duplicates are dropped; the order given is kept.
    return asSubscriptions([...new Set(names)]);
  })
  .meta({
    description: `Event types to receive, or \`*\` for all: ${EVENT_SUBSCRIPTIONS.join(", ")}. Duplicates are dropped.`,
    override: {
      type: "array",
      items: { type: "string", enum: [...EVENT_SUBSCRIPTIONS] },
      minItems: 1,
      maxItems: MAX_EVENT_NAMES,
    },
  }) as unknown as z.ZodType<EventSubscription[], EventSubscription[]>;

const urlMeta = {
  description:
    "An https:// URL on a public address (port 443 or one the operator allows), at most 2048 characters.",
  examples: ["https://example.com/hooks"],
};

export const createDestinationBody = z
  .strictObject({
    url: z.string({ error: "url is required and must be a string" }).meta(urlMeta),
    events: eventNames.default(["*"]),
  })
  .meta({ id: "CreateDestination" });

export const updateDestinationBody = z
  .strictObject({
    url: z.string().optional().meta(urlMeta),
    events: eventNames.optional(),
    active: z
      .boolean({ error: "active must be true or false" })
      .optional()
      .meta({ description: "Whether it receives notifications." }),
  })
  .meta({
    id: "UpdateDestination",
    description: "The members to change: at least one of url, events, active.",
  });

export const listDestinationsQuery = z.strictObject(pageQuery);

export const destinationParams = memberParams(
  "The destination's id.",
  "dst_5f0c2a9e81b34d7c6a1e0f93",
);

export const destinationSchema = z
  .object({
    id: z.string().meta({ examples: ["dst_5f0c2a9e81b34d7c6a1e0f93"] }),
    url: z.string().meta({ examples: ["https://example.com/hooks"] }),
    events: z.array(z.string()).meta({
      description: `Its subscriptions: ${EVENT_SUBSCRIPTIONS.join(", ")} (types may be added: accept others).`,
      examples: [["job.completed", "job.failed"]],
    }),
    active: z.boolean(),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: "Destination", description: "A webhook destination; never its signing secret." });
export type DestinationBody = z.infer<typeof destinationSchema>;

export const circuitSchema = z
  .object({
    state: z.enum(["open", "half_open"]),
    open_until: isoTime,
    opens: z.number().int().meta({ description: "How many times in a row it opened." }),
    error: z.string().nullable().meta({ description: "The failure that opened it." }),
  })
  .meta({
    id: "Circuit",
    description: "Why the destination's deliveries wait: its circuit is open or half-open.",
  });
export type CircuitBody = z.infer<typeof circuitSchema>;

export const lastDeliverySchema = z
  .object({
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int(),
    last_attempt_at: isoTime.nullable(),
    event: z.string().meta({ examples: ["job.completed"] }),
    notification_id: z.string().meta({ examples: ["evt_01a1fea3869b5b1f7c0d9e2a4b36"] }),
    next_attempt_at: isoTime.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    circuit: circuitSchema.nullable(),
  })
  .meta({
    id: "LastDelivery",
    description: "The latest delivery to the destination; never a body or a secret.",
  });
export type LastDeliveryBody = z.infer<typeof lastDeliverySchema>;

/** The destination's circuit on its page, closed included (decision 40). */
export const destinationCircuitSchema = z
  .object({
    state: z.enum(["closed", "open", "half_open"]).meta({
      description:
        "closed: deliveries go as due; open: none goes until open_until; half_open: one at a time probes the destination (after open_until, or at once after a retry or recovery).",
    }),
    open_until: isoTime
      .nullable()
      .meta({ description: "When it stops holding; null while closed." }),
    opens: z
      .number()
      .int()
      .meta({ description: "How many times in a row it opened; 0 while closed." }),
    reason: z
      .string()
      .nullable()
      .meta({
        description: "Why it opened, with the last failure; null while closed.",
        examples: ["10 attempts in a row failed (last: the receiver answered 503)"],
      }),
  })
  .meta({ id: "DestinationCircuit" });
export type DestinationCircuitBody = z.infer<typeof destinationCircuitSchema>;

export const destinationWithDeliverySchema = destinationSchema
  .extend({
    last_delivery: lastDeliverySchema.nullable(),
    circuit: destinationCircuitSchema,
  })
  .meta({ id: "DestinationWithLastDelivery" });

export const createdDestinationSchema = destinationSchema
  .extend({
    secret: z
      .string()
      .min(1)
      .meta({
        description: "The signing secret (whsec_…), shown in this answer only.",
        examples: ["whsec_…"],
      }),
  })
  .meta({ id: "CreatedDestination" });

export const destinationPageSchema = pageOf(destinationSchema).meta({ id: "DestinationPage" });

export const deletionSchema = z
  .object({ id: z.string(), deleted: z.literal(true) })
  .meta({ id: "Deletion" });
