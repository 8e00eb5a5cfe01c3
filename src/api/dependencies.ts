import type { SecretBox } from "../crypto/secret-box.ts";
import type { Clock, Store } from "../interfaces.ts";
import type { ServiceMetrics } from "../observability/metrics.ts";
import type { DeliveryQueue } from "../store/delivery-queue.ts";
import type { UrlCheckDependencies } from "../net/destination-url.ts";

/**
 * The slices of the store the API uses (decision 30): it publishes, but never claims or
 * reports on a delivery, nor does any housekeeping.
 */
export interface ApiStore extends Pick<
  Store,
  "destinations" | "log" | "credentials" | "idempotency" | "health"
> {
  readonly queue: Pick<DeliveryQueue, "publishEvent">;
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
}

/** What one request may bring (decision 28); each is a setting of the same name. */
export interface ApiLimits {
  /** Bytes of a request body, on every route but publishing an event (`requestBodyLimit`). */
  readonly requestBodyLimit: number;
  /** Bytes of a publish's body (`eventBodyLimit`). */
  readonly eventBodyLimit: number;
  /** Nesting of an event's `data.object`, the object itself at depth 1 (`eventDepthLimit`). */
  readonly eventDepthLimit: number;
}
