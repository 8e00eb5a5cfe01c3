/**
 * The shapes of the `/v1` answers the dashboard reads, as `docs/openapi.json` documents them
 * (the server's contract, `src/contract/`, is zod: importing it would bundle zod into the page
 * for types alone). Only the members the dashboard uses.
 */

export type Scope = "webhooks:read" | "webhooks:write" | "events:read" | "events:write";

export interface WorkspaceAccess {
  id: string;
  name: string;
  role: "owner" | "member" | "viewer" | null;
  scopes: Scope[];
}

export interface SignedIn {
  csrf_token?: string;
  user: { id: string; email: string } | null;
  workspaces: WorkspaceAccess[];
}

/** `POST /v1/auth/portal-sessions`: a customer portal's session (decision 43). */
export interface OpenedPortalSession {
  token: string;
  expires_at: string;
  workspace: WorkspaceAccess;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Destination {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  updated_at: string;
}

/** A destination's circuit, on its page (`GET …/webhooks/{id}`). */
export interface DestinationCircuit {
  state: "closed" | "open" | "half_open";
  open_until: string | null;
  opens: number;
  /** Why it opened, with the last failure; null while closed. */
  reason: string | null;
}

export interface DestinationWithCircuit extends Destination {
  circuit: DestinationCircuit;
}

export interface CreatedDestination extends Destination {
  secret: string;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

/** Where a delivery stands (states may be added: an unknown one is shown as it is). */
export type DeliveryState =
  "waiting" | "in_flight" | "retry_scheduled" | "circuit_open" | "delivered" | "failed";

export interface Delivery {
  id: string;
  event_id: string;
  destination_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  in_flight: boolean;
  state: DeliveryState | (string & {});
  /** Why it failed; null unless failed (reasons may be added). */
  failure_reason: string | null;
  /** Its event is a test event, sent to this destination alone. */
  test: boolean;
}

export interface Attempt {
  attempt: number;
  attempted_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  /** The request's headers as sent (the signature among them, never a secret); null if not kept. */
  request_headers: Record<string, string> | null;
}

export interface DeliveryDetail extends Omit<Delivery, "attempts"> {
  attempts: Attempt[];
  attempt_count: number;
}

export interface EventSummary {
  id: string;
  type: string;
  api_version: string;
  created: number;
  /** A test event, sent to one destination alone. */
  test: boolean;
}

export interface EventDetail extends EventSummary {
  data: { object: Record<string, unknown> };
  deliveries: Delivery[];
}

export interface DestinationHealth {
  destination_id: string;
  attempts: number;
  succeeded: number;
  success_rate: number;
  last_attempt_at: string | null;
  last_status_code: number | null;
  failing_since: string | null;
}

export interface DeliveryStats {
  since: string;
  bucket_seconds: number;
  buckets: { start: string; succeeded: number; failed: number }[];
  destinations: DestinationHealth[];
}

/** The event types the server publishes. */
export const EVENT_TYPES = ["job.completed", "job.failed", "collection.completed"];

/** The event types a destination may subscribe to (`*`: all). */
export const EVENT_SUBSCRIPTIONS = ["*", ...EVENT_TYPES];
