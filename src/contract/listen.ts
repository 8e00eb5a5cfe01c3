import { z } from "zod";
import { isoTime, memberParams } from "./common.ts";
import { eventNames } from "./destinations.ts";

/**
 * Listen sessions (CONTRACT.md "Local forwarding", decision 34): what `svc listen` asks of
 * the API, and what the stream carries.
 */

/** Letters, digits, `.`, `_` and `-`, 1 to 64: a name a user types on the command line. */
export const LISTEN_SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const openListenSessionBody = z
  .strictObject({
    name: z
      .string()
      .regex(LISTEN_SESSION_NAME, {
        error:
          "name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
      })
      .optional()
      .meta({
        description:
          "Resumes the live session of this name, if the workspace has one (keeping its secret and what it missed); otherwise creates it. Without a name, a new session every time.",
        examples: ["laptop"],
      }),
    events: eventNames.default(["*"]),
  })
  .meta({ id: "OpenListenSession" });

export const listenSessionSchema = z
  .object({
    id: z.string().meta({ examples: ["lsn_5f0c2a9e81b34d7c6a1e0f93"] }),
    name: z.string().nullable(),
    events: z.array(z.string()),
    created_at: isoTime,
    last_seen_at: isoTime.nullable().meta({ description: "When its stream was last connected." }),
    expires_at: isoTime.meta({
      description:
        "When it ends unless a stream connects before (listenSessionTtl after the last).",
    }),
    connected: z.boolean().meta({ description: "Whether a stream holds it now." }),
    pending: z.number().int().meta({ description: "Deliveries waiting for it or in flight." }),
  })
  .meta({ id: "ListenSession", description: "A listen session; never its signing secret." });

export const openedListenSessionSchema = listenSessionSchema
  .extend({
    created: z.boolean().meta({ description: "False when an existing named session resumed." }),
    secret: z.string().min(1).optional().meta({
      description: "The signing secret (whsec_…), in the answer that created the session only.",
    }),
  })
  .meta({ id: "OpenedListenSession" });

/**
 * Every live session of a workspace, in one answer: there are at most 20, so the list has no
 * pages, and no `next_cursor` that a paging client would follow (issue 30).
 */
export const listenSessionListSchema = z
  .object({ data: z.array(listenSessionSchema) })
  .meta({ id: "ListenSessionList" });

export const listenSessionParams = memberParams(
  "The listen session's id.",
  "lsn_5f0c2a9e81b34d7c6a1e0f93",
);

/** What the CLI met when it forwarded one notification. */
export const listenResultBody = z
  .strictObject({
    delivery_id: z.string().min(1).max(200),
    claim: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: "The `claim` of the notification as the stream carried it." }),
    status_code: z
      .number()
      .int()
      .min(100)
      .max(599)
      .nullable()
      .meta({ description: "The local answer's status; null when none came." }),
    duration_ms: z.number().min(0).max(3_600_000),
    error: z
      .string()
      .max(500)
      .nullable()
      .meta({ description: "Why no answer came (refused, timed out…); null when one did." }),
    response_body: z
      .string()
      .max(2048)
      .nullable()
      .meta({ description: "The first 2 KiB of the local answer, as text." }),
  })
  .meta({ id: "ListenResult" });

/** One notification on the stream: the event `notification` of the server-sent events. */
export const streamedNotificationSchema = z
  .object({
    delivery_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    attempt: z.number().int().meta({ description: "1 for the first attempt, 2 for a retry…" }),
    claim: z.string().meta({ description: "Pass it back with the result." }),
    headers: z.record(z.string(), z.string()).meta({
      description:
        "The notification's headers, signed with the session's secret when sent: Content-Type, User-Agent, Webhook-Id, Webhook-Signature.",
    }),
    body: z.string().meta({ description: "The notification's body, the bytes to POST." }),
  })
  .meta({ id: "StreamedNotification" });
export type StreamedNotification = z.output<typeof streamedNotificationSchema>;

/** The first event of a stream: `ready`. */
export const streamReadySchema = z
  .object({
    session_id: z.string(),
    heartbeat_ms: z
      .number()
      .int()
      .meta({ description: "How often a heartbeat comment comes (listenHeartbeat)." }),
    lease_ms: z.number().int().meta({
      description:
        "How long a pushed notification is the stream's: its result must come back sooner.",
    }),
  })
  .meta({ id: "ListenStreamReady" });

/** The data of a stream's last event: whose stream it was. */
const streamEndingSchema = z.object({ session_id: z.string() }).meta({ id: "ListenStreamEnding" });

/**
 * One server-sent event as an SSE parser hands it over: `event` is its name, `data` its one
 * `data:` line parsed as JSON, `id` the notification's delivery id (src/api/listen/streams.ts
 * writes them). Heartbeats are comment lines (`: heartbeat`), which parsers do not hand over.
 */
function streamEvent<E extends string, D extends z.ZodType>(
  event: E,
  description: string,
  data: D,
) {
  return z
    .object({
      event: z.literal(event),
      data: data.meta({ description: "The event's `data:` line: JSON on one line." }),
    })
    .meta({ description });
}

/**
 * The stream, event by event (issue 30): the media type's schema is one event, the way
 * OpenAPI 3.1 generators read `text/event-stream` (each item of the stream is one of these),
 * and what OpenAPI 3.2's `itemSchema` says, which `contract/openapi.ts` also writes.
 */
export const listenStreamEventSchema = z
  .discriminatedUnion("event", [
    streamEvent("ready", "First, once: the stream holds the session.", streamReadySchema),
    // The one event with an `id:` line (its members in the order the stream writes them).
    z
      .object({
        event: z.literal("notification"),
        id: z.string().meta({ description: "The delivery's id, as `delivery_id`." }),
        data: streamedNotificationSchema.meta({
          description: "The event's `data:` line: JSON on one line.",
        }),
      })
      .meta({
        description:
          "A delivery to forward: POST `body` with `headers` to the local receiver, then report the result with its `claim`.",
      }),
    streamEvent(
      "replaced",
      "Last: another stream took the session; the server closes this one.",
      streamEndingSchema,
    ),
    streamEvent(
      "ended",
      "Last: the session ended (deleted or expired); the server closes the stream.",
      streamEndingSchema,
    ),
    streamEvent(
      "shutdown",
      "Last: the server is stopping; connect again (to it or another) to go on.",
      streamEndingSchema,
    ),
  ])
  .meta({ id: "ListenStreamEvent" });
