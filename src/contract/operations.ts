import type { z } from "zod";
import type { ErrorCode } from "../errors.ts";
import { OPERATOR_SCOPES, type OperatorScope, type Scope } from "../interfaces.ts";
import {
  browserSignedInSchema,
  signedInSchema,
  signedOutSchema,
  signInBody,
  whoAmISchema,
} from "./auth.ts";
import { workspaceParams } from "./common.ts";
import {
  deliveryDetailSchema,
  deliveryPageSchema,
  deliveryParams,
  deliverySchema,
  eventDetailSchema,
  eventPageSchema,
  eventParams,
  listDeliveriesQuery,
  recoverBody,
  recoverySchema,
} from "./delivery-log.ts";
import {
  createDestinationBody,
  createdDestinationSchema,
  deletionSchema,
  destinationPageSchema,
  destinationParams,
  destinationSchema,
  destinationWithDeliverySchema,
  listDestinationsQuery,
  updateDestinationBody,
} from "./destinations.ts";
import { deliveryStatsQuery, deliveryStatsSchema } from "./delivery-stats.ts";
import { examples } from "./examples.ts";
import { platformOperations } from "./platform-operations.ts";
import { eventSummarySchema, listEventsQuery, publishBody } from "./events.ts";
import { portalOperations } from "./portal-operations.ts";
import {
  listenResultBody,
  listenSessionListSchema,
  listenSessionParams,
  openedListenSessionSchema,
  listenStreamEventSchema,
  openListenSessionBody,
} from "./listen.ts";

/**
 * Every `/v1` operation, once (decision 31): its path, who may call it, what it reads and what
 * it answers. The routes take their paths, scopes and parsers from here, and
 * `contract/openapi.ts` makes the OpenAPI document of it.
 */
export interface Operation {
  readonly method: "get" | "post" | "patch" | "delete";
  /** OpenAPI's template: `/v1/workspaces/{workspace}/webhooks/{id}`. */
  readonly path: string;
  readonly tag:
    | "Destinations"
    | "Events"
    | "Deliveries"
    | "Listen"
    | "Sign-in"
    | "Workspaces"
    | "API keys"
    | "Portal";
  readonly summary: string;
  readonly description?: string;
  /**
   * A scope in the path's workspace; an operator scope, which only an operator key may hold
   * (decision 42); `credential`: any valid one; `none`: public.
   */
  readonly access: Scope | OperatorScope | "credential" | "none";
  /**
   * `false`: the dashboard's session cookie is refused here, only an `Authorization` header
   * is taken (decisions 35a, 39). For routes whose GET changes something (a listen stream
   * takes its session over), which no CSRF token guards, and which the dashboard never calls.
   */
  readonly cookie?: false;
  /**
   * `false`: exempt from the request budget (`requestRate`, decision 45), so never answered 429
   * `too_many_requests`: a listen stream, which is one request for as long as it lasts.
   */
  readonly budget?: false;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly success: {
    readonly status: number;
    readonly description: string;
    readonly schema: z.ZodType;
    /** Its media type; `application/json` unless said. */
    readonly mediaType?: "text/event-stream";
    /** Headers it carries besides the common ones (`Set-Cookie` of a browser sign-in). */
    readonly headers?: Readonly<Record<string, ResponseHeader>>;
    /** A whole answer, as the document shows it (it must match `schema`: the lint checks). */
    readonly example?: unknown;
  };
  /** A whole request body, as the document shows it. */
  readonly bodyExample?: unknown;
  /** What it may refuse beyond what every operation may (`commonErrors`). */
  readonly errors: readonly ErrorCode[];
}

/** A response header an operation declares. */
export interface ResponseHeader {
  readonly description: string;
  /** Whether every such answer carries it. */
  readonly required: boolean;
}

/** What any `/v1` operation may answer, whatever it does. */
export const commonErrors: readonly ErrorCode[] = [
  "invalid_request",
  "unauthenticated",
  "too_many_requests",
  "internal_error",
  "service_unavailable",
];
/** What an operation with a workspace in its path may answer besides. */
export const workspaceErrors: readonly ErrorCode[] = ["workspace_forbidden", "insufficient_scope"];
/** What an operation with a body may answer besides. */
export const bodyErrors: readonly ErrorCode[] = [
  "invalid_json",
  "payload_too_large",
  "unsupported_media_type",
];
/** What a POST, PATCH or DELETE may answer besides: idempotency keys, a full disk. */
export const changeErrors: readonly ErrorCode[] = [
  "invalid_idempotency_key",
  "idempotency_error",
  "idempotency_in_progress",
  "storage_full",
];

/**
 * Whether a change's answer with this status is kept for its Idempotency-Key and replayed
 * (decision 31's document says so with `Idempotent-Replayed`): successes, and client errors
 * the same request would meet again, as Stripe does. Not 5xx (the operation may not have run,
 * so a retry must be able to run it) nor 401/403/409/429, which say nothing about it.
 */
export function isReplayableStatus(status: number): boolean {
  return status < 500 && ![401, 403, 409, 429].includes(status);
}

/** What an operator operation may answer besides: not an operator key, or one without the scope. */
export const operatorErrors: readonly ErrorCode[] = ["operator_key_required", "insufficient_scope"];

/** An operation only an operator key may call (decision 42). */
export function isOperatorOperation(operation: Operation): boolean {
  return (OPERATOR_SCOPES as readonly string[]).includes(operation.access);
}

/**
 * What an operation with a path parameter may answer besides: a malformed percent-encoding in
 * a parameter's segment, which the router refuses before the route (decision 28).
 */
export const pathParamErrors: readonly ErrorCode[] = ["invalid_path"];

/** What a change that takes the dashboard's cookie may answer besides: the cookie without its CSRF token. */
export const cookieChangeErrors: readonly ErrorCode[] = ["csrf_token_invalid"];

const listQueryErrors: readonly ErrorCode[] = ["invalid_cursor"];
const destinationUrlErrors: readonly ErrorCode[] = [
  "invalid_url",
  "url_not_public",
  "url_port_not_allowed",
  "url_unresolvable",
  "invalid_events",
  "operational_event_type",
];

export const operations = {
  listWebhooks: {
    method: "get",
    path: "/v1/workspaces/{workspace}/webhooks",
    tag: "Destinations",
    summary: "List destinations",
    description: "The workspace's webhook destinations, newest first, a page at a time.",
    access: "webhooks:read",
    params: workspaceParams,
    query: listDestinationsQuery,
    success: {
      status: 200,
      description: "A page of destinations.",
      schema: destinationPageSchema,
      example: examples.destinationPage,
    },
    errors: listQueryErrors,
  },
  createWebhook: {
    method: "post",
    path: "/v1/workspaces/{workspace}/webhooks",
    tag: "Destinations",
    summary: "Create a destination",
    description:
      "Registers an https:// URL to receive the workspace's events. The answer carries the signing secret, once. A workspace has at most destinationLimit (1,000 by default) destinations.",
    access: "webhooks:write",
    params: workspaceParams,
    body: createDestinationBody,
    bodyExample: examples.createDestination,
    success: {
      status: 201,
      description: "The destination, with its signing secret.",
      schema: createdDestinationSchema,
      example: examples.createdDestination,
    },
    errors: [...destinationUrlErrors, "destination_limit_reached"],
  },
  getWebhook: {
    method: "get",
    path: "/v1/workspaces/{workspace}/webhooks/{id}",
    tag: "Destinations",
    summary: "Get a destination",
    description: "Its configuration and the outcome of its latest delivery.",
    access: "webhooks:read",
    params: destinationParams,
    success: {
      status: 200,
      description: "The destination and its last delivery.",
      schema: destinationWithDeliverySchema,
    },
    errors: ["not_found"],
  },
  updateWebhook: {
    method: "patch",
    path: "/v1/workspaces/{workspace}/webhooks/{id}",
    tag: "Destinations",
    summary: "Update a destination",
    description: "Changes only the members given.",
    access: "webhooks:write",
    params: destinationParams,
    body: updateDestinationBody,
    success: { status: 200, description: "The destination as updated.", schema: destinationSchema },
    errors: ["not_found", "empty_update", ...destinationUrlErrors],
  },
  deleteWebhook: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/webhooks/{id}",
    tag: "Destinations",
    summary: "Delete a destination",
    description: "It receives nothing more; its pending deliveries end failed.",
    access: "webhooks:write",
    params: destinationParams,
    success: { status: 200, description: "Deleted.", schema: deletionSchema },
    errors: ["not_found"],
  },
  recoverWebhook: {
    method: "post",
    path: "/v1/workspaces/{workspace}/webhooks/{id}/recover",
    tag: "Deliveries",
    summary: "Recover a destination's failed deliveries",
    description:
      "Queues again the destination's failed deliveries created at or after `since`: the same bytes under the same Webhook-Id, freshly signed, the retry schedule started over.",
    access: "events:write",
    params: destinationParams,
    body: recoverBody,
    bodyExample: examples.recover,
    success: {
      status: 202,
      description: "How many were queued.",
      schema: recoverySchema,
      example: examples.recovery,
    },
    errors: ["not_found", "destination_inactive"],
  },
  publishEvent: {
    method: "post",
    path: "/v1/workspaces/{workspace}/events",
    tag: "Events",
    summary: "Publish an event",
    description:
      "Commits the event and one delivery per active destination subscribed to its type before answering. With `destination`, a test event: one delivery, to that destination alone. An event that would reach more than eventFanOutLimit destinations (1,000 by default) is refused, nothing written.",
    access: "events:write",
    params: workspaceParams,
    body: publishBody,
    bodyExample: examples.publish,
    success: {
      status: 202,
      description: "The notification's head.",
      schema: eventSummarySchema,
      example: examples.eventSummary,
    },
    errors: [
      "data_too_deep",
      "not_found",
      "destination_inactive",
      "event_fan_out_exceeded",
      "operational_event_type",
    ],
  },
  listEvents: {
    method: "get",
    path: "/v1/workspaces/{workspace}/events",
    tag: "Events",
    summary: "List events",
    description: "The workspace's notifications, newest first, by type and time.",
    access: "events:read",
    params: workspaceParams,
    query: listEventsQuery,
    success: { status: 200, description: "A page of notifications.", schema: eventPageSchema },
    errors: listQueryErrors,
  },
  getEvent: {
    method: "get",
    path: "/v1/workspaces/{workspace}/events/{id}",
    tag: "Events",
    summary: "Get an event",
    description: "The notification as sent, with one delivery per destination.",
    access: "events:read",
    params: eventParams,
    success: { status: 200, description: "The notification.", schema: eventDetailSchema },
    errors: ["not_found", "event_expired"],
  },
  listDeliveries: {
    method: "get",
    path: "/v1/workspaces/{workspace}/deliveries",
    tag: "Deliveries",
    summary: "List deliveries",
    description: "Newest first, by destination, event, status and time.",
    access: "events:read",
    params: workspaceParams,
    query: listDeliveriesQuery,
    success: { status: 200, description: "A page of deliveries.", schema: deliveryPageSchema },
    errors: listQueryErrors,
  },
  getDelivery: {
    method: "get",
    path: "/v1/workspaces/{workspace}/deliveries/{id}",
    tag: "Deliveries",
    summary: "Get a delivery",
    description: "With every attempt kept: time, duration, status code or error, and the answer.",
    access: "events:read",
    params: deliveryParams,
    success: {
      status: 200,
      description: "The delivery and its attempts.",
      schema: deliveryDetailSchema,
    },
    errors: ["not_found", "delivery_expired"],
  },
  retryDelivery: {
    method: "post",
    path: "/v1/workspaces/{workspace}/deliveries/{id}/retry",
    tag: "Deliveries",
    summary: "Retry a delivery",
    description:
      "Sends the delivery again: the same bytes under the same Webhook-Id, freshly signed, the retry schedule started over. One waiting for its next attempt is made due now; one in flight is refused.",
    access: "events:write",
    params: deliveryParams,
    success: {
      status: 202,
      description: "The delivery, pending.",
      schema: deliverySchema,
      example: examples.retriedDelivery,
    },
    errors: ["not_found", "delivery_expired", "delivery_in_flight", "destination_inactive"],
  },
  openListenSession: {
    method: "post",
    path: "/v1/workspaces/{workspace}/listen-sessions",
    tag: "Listen",
    summary: "Open a listen session",
    description:
      "What `svc listen` forwards from: a session receives the workspace's notifications of its event types through its stream, signed with its own secret, and keeps what it misses while no stream is connected (decision 34). With a name, the live session of that name resumes (200, `created: false`, no secret) if the credential opened it or has events:write (otherwise 403 `listen_session_forbidden`); otherwise a session is created (`created: true`, its secret in this answer only). A workspace has at most 20 live sessions; an unnamed one without a stream ends after an hour, a named one after listenSessionTtl.",
    access: "events:read",
    cookie: false,
    params: workspaceParams,
    body: openListenSessionBody,
    success: {
      status: 200,
      description: "The session; its secret when it was created.",
      schema: openedListenSessionSchema,
    },
    errors: [
      "invalid_events",
      "operational_event_type",
      "too_many_listen_sessions",
      "listen_session_forbidden",
    ],
  },
  listListenSessions: {
    method: "get",
    path: "/v1/workspaces/{workspace}/listen-sessions",
    tag: "Listen",
    summary: "List listen sessions",
    description:
      "All the workspace's live listen sessions, newest first, in one answer: a workspace has at most 20, so the list has no pages.",
    access: "events:read",
    cookie: false,
    params: workspaceParams,
    success: {
      status: 200,
      description: "The sessions.",
      schema: listenSessionListSchema,
    },
    errors: [],
  },
  deleteListenSession: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/listen-sessions/{id}",
    tag: "Listen",
    summary: "End a listen session",
    description:
      "It receives nothing more; its waiting deliveries end failed; a stream holding it ends. Only the credential that opened it (the same API key, or the same user) or one with events:write may end it.",
    access: "events:read",
    cookie: false,
    params: listenSessionParams,
    success: { status: 200, description: "Ended.", schema: deletionSchema },
    errors: ["not_found", "listen_session_forbidden"],
  },
  streamListenSession: {
    method: "get",
    path: "/v1/workspaces/{workspace}/listen-sessions/{id}/stream",
    tag: "Listen",
    summary: "Stream a listen session's notifications",
    description:
      "Server-sent events: `ready` first, then one `notification` per delivery (its `data` a StreamedNotification), a comment line as heartbeat every listenHeartbeat, and `replaced` (another stream took the session), `ended` (the session ended) or `shutdown` (the server is stopping) before the server closes it. Opening a stream takes the session from any earlier one: only the credential that opened the session (the same API key, or the same user) or one with events:write may.",
    access: "events:read",
    cookie: false,
    budget: false,
    params: listenSessionParams,
    success: {
      status: 200,
      description:
        "A stream of server-sent events, each one ListenStreamEvent (`event`, `data` as JSON, `id` on a notification); a heartbeat is a comment line, which SSE parsers skip.",
      schema: listenStreamEventSchema,
      mediaType: "text/event-stream",
    },
    errors: ["not_found", "listen_session_forbidden"],
  },
  reportListenResult: {
    method: "post",
    path: "/v1/workspaces/{workspace}/listen-sessions/{id}/results",
    tag: "Listen",
    summary: "Report a forwarded notification's result",
    description:
      "What the local receiver answered (or why it did not): recorded as an attempt of the delivery, which is delivered on a 2xx and otherwise retried on the schedule.",
    access: "events:read",
    cookie: false,
    params: listenSessionParams,
    body: listenResultBody,
    success: { status: 200, description: "The delivery as it now stands.", schema: deliverySchema },
    errors: ["not_found", "listen_claim_expired"],
  },
  getDeliveryStats: {
    method: "get",
    path: "/v1/workspaces/{workspace}/delivery-stats",
    tag: "Deliveries",
    summary: "Delivery statistics",
    description:
      "The last 24 hours of attempts, succeeded (2xx) and failed, in hourly buckets, with each destination's success rate, last attempt and the time it began failing: what the dashboard draws.",
    access: "events:read",
    params: workspaceParams,
    query: deliveryStatsQuery,
    success: { status: 200, description: "The statistics.", schema: deliveryStatsSchema },
    errors: [],
  },
  signIn: {
    method: "post",
    path: "/v1/auth/sessions",
    tag: "Sign-in",
    summary: "Sign in",
    description: "A session for a user's e-mail address and password.",
    access: "none",
    body: signInBody,
    bodyExample: examples.signIn,
    success: { status: 201, description: "The session and its token.", schema: signedInSchema },
    errors: ["invalid_credentials", "rate_limited"],
  },
  signInBrowser: {
    method: "post",
    path: "/v1/auth/browser-sessions",
    tag: "Sign-in",
    summary: "Sign in the dashboard",
    description:
      "As signing in, for a browser: the session's token is set in an HttpOnly, SameSite=Strict cookie (`__Host-svc_session`, Secure, when the request came over TLS or with `behindTls`; `svc_session` on plain http) and is not in the answer, which carries the session's CSRF token instead. A request that authenticates with the cookie and changes anything must send that token as `X-CSRF-Token`.",
    access: "none",
    body: signInBody,
    success: {
      status: 201,
      description: "The session, its cookie set.",
      schema: browserSignedInSchema,
      headers: {
        "Set-Cookie": {
          description:
            "The session cookie (`svc_session`, or `__Host-svc_session` over TLS): HttpOnly, SameSite=Strict, Path=/, until the session expires.",
          required: true,
        },
      },
    },
    errors: ["invalid_credentials", "rate_limited"],
  },
  whoAmI: {
    method: "get",
    path: "/v1/auth/session",
    tag: "Sign-in",
    summary: "The credential in use",
    description: "Who the request's credential is, and its workspaces.",
    access: "credential",
    success: { status: 200, description: "The credential.", schema: whoAmISchema },
    errors: [],
  },
  signOut: {
    method: "delete",
    path: "/v1/auth/session",
    tag: "Sign-in",
    summary: "Sign out",
    description:
      "Revokes the session the request carries; with the dashboard's cookie, clears it too.",
    access: "credential",
    success: {
      status: 200,
      description: "Revoked.",
      schema: signedOutSchema,
      headers: {
        "Set-Cookie": {
          description: "Clears the session cookie, when the request came with it.",
          required: false,
        },
      },
    },
    errors: [],
  },
  ...platformOperations,
  ...portalOperations,
} as const satisfies Record<string, Operation>;

export type OperationId = keyof typeof operations;

/** Fastify's form of an operation's path: `{id}` → `:id`. */
export function routePath(operation: Operation): string {
  return operation.path.replace(/\{(\w+)\}/g, ":$1");
}

/** What `registerAuthorisation` reads of a route's config. */
export interface RouteAccess {
  readonly scope?: Scope;
  readonly operatorScope?: OperatorScope;
  readonly authenticated?: boolean;
  readonly cookie?: false;
  readonly budget?: false;
}

/**
 * The route options an operation's access gives. Every access decision reads these, on the
 * route the router matched, never the request's URL (decision 39): `listen%2Dsessions` is the
 * same route as `listen-sessions` to the router, and so to the checks.
 */
/** Whether the dashboard's session cookie authenticates it (decisions 35, 39). */
export function acceptsCookie(operation: Operation): boolean {
  return operation.access !== "none" && operation.cookie !== false;
}

export function accessConfig(operation: Operation): { config: RouteAccess } {
  const cookie = {
    ...(operation.cookie === false ? { cookie: false as const } : {}),
    ...(operation.budget === false ? { budget: false as const } : {}),
  };
  switch (operation.access) {
    case "none":
      return { config: { ...cookie } };
    case "credential":
      return { config: { authenticated: true, ...cookie } };
    case "webhooks:read":
    case "webhooks:write":
    case "events:read":
    case "events:write":
      return { config: { scope: operation.access, ...cookie } };
    case "workspaces:read":
    case "workspaces:write":
    case "portal:write":
      return { config: { operatorScope: operation.access, ...cookie } };
  }
}

/** What an operation answers on success. */
export type SuccessBody<O extends Operation> = z.output<O["success"]["schema"]>;

/**
 * A success answer as its operation declares it: the compiler holds the route to the
 * contract (and the suite's responses are checked against the document at run time).
 */
export function successBody<O extends Operation>(
  _operation: O,
  body: SuccessBody<O>,
): SuccessBody<O> {
  return body;
}
