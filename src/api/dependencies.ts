import type { SecretBox } from "../crypto/secret-box.ts";
import type { RetrySchedule } from "../delivery/retry-schedule.ts";
import type { WakeUpSource } from "../delivery/wake-ups.ts";
import type { Clock, Store } from "../interfaces.ts";
import type { ServiceMetrics } from "../observability/metrics.ts";
import type { Tracing } from "../observability/tracing/tracing.ts";
import type { DeliveryQueue } from "../store/delivery-queue.ts";
import type { UrlCheckDependencies } from "../net/destination-url.ts";
import type { ConnectionLimits } from "./connection-limits.ts";
import type { PortalSettings } from "./portal/settings.ts";
import type { RequestBudgetLimits } from "./request-budget.ts";

/**
 * The slices of the store the API uses (decision 30): it publishes, but never claims or
 * reports on a delivery, nor does any housekeeping.
 */
export interface ApiStore extends Pick<
  Store,
  | "destinations"
  | "log"
  | "credentials"
  | "idempotency"
  | "health"
  | "listen"
  | "workspaces"
  | "portal"
> {
  readonly queue: Pick<DeliveryQueue, "publishEvent" | "publishTestEvent" | "whenQueued">;
}

/** What the API's routes are given by the composition root. */
export interface ApiDependencies extends UrlCheckDependencies {
  readonly store: ApiStore;
  readonly secretBox: SecretBox;
  readonly clock: Clock;
  /** Users reach the server over https through a proxy: the session cookie is Secure (`behindTls`). */
  readonly behindTls: boolean;
  /** How long a session lasts from sign-in (`sessionTtl`). */
  readonly sessionTtlMs: number;
  readonly limits: ApiLimits;
  /** How long events and their deliveries are kept once ended (`eventRetention`). */
  readonly eventRetentionMs: number;
  /** The process's metrics: the API counts publishes and requests, and serves `/metrics`. */
  readonly metrics: ServiceMetrics;
  /** What `svc listen`'s sessions and streams need (decision 34). */
  readonly listen: ListenSettings;
  /** The customer portal's links, sessions and framing (decision 43). */
  readonly portal: PortalSettings;
  /** Request, publish and listen-push spans (decision 47); absent or null when off. */
  readonly tracing?: Tracing | null;
}

/** The settings of listen sessions and their streams. */
export interface ListenSettings {
  /** How long a session is kept after its stream was last connected (`listenSessionTtl`). */
  readonly sessionTtlMs: number;
  /** A stream's heartbeat (`listenHeartbeat`). */
  readonly heartbeatMs: number;
  /** How long a pushed delivery is its stream's before it is due again (`deliveryLease`). */
  readonly leaseMs: number;
  /** The retry schedule, which a local answer other than 2xx follows as any other. */
  readonly schedule: RetrySchedule;
  /** Where this process hears of other processes' publishes (PostgreSQL), if anywhere. */
  readonly wakeUps?: WakeUpSource;
}

/**
 * What one request may bring or make (decisions 28, 39), what its connection may take
 * (decision 37) and how many requests one client may send (decision 45); each is a setting of
 * the same name.
 */
export interface ApiLimits extends ConnectionLimits, RequestBudgetLimits {
  /** Bytes of a request body, on every route but publishing an event (`requestBodyLimit`). */
  readonly requestBodyLimit: number;
  /** Bytes of a publish's body (`eventBodyLimit`). */
  readonly eventBodyLimit: number;
  /** Nesting of an event's `data.object`, the object itself at depth 1 (`eventDepthLimit`). */
  readonly eventDepthLimit: number;
  /** Webhook destinations a workspace may have (`destinationLimit`, decision 39). */
  readonly destinationLimit: number;
  /** Webhook destinations one event may reach; past it a publish is refused (`eventFanOutLimit`). */
  readonly eventFanOutLimit: number;
}
