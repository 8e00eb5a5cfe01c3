import type { CredentialStore } from "./store/credential-store.ts";
import type { DeliveryLog } from "./store/delivery-log.ts";
import type { DeliveryQueue } from "./store/delivery-queue.ts";
import type { DestinationStore } from "./store/destination-store.ts";
import type { EncryptionKeyStore } from "./store/encryption-key-store.ts";
import type { Housekeeping } from "./store/housekeeping.ts";
import type { IdempotencyStore } from "./store/idempotency-store.ts";
import type { ListenSessions } from "./store/listen-sessions.ts";
import type { PortalAccess } from "./store/portal-access.ts";
import type { Operations } from "./store/operations.ts";
import type { StorageHealth } from "./store/storage-health.ts";
import type { WorkspaceStore } from "./store/workspace-store.ts";

/**
 * The public types of the service, in one place: the resources of the API, the store the
 * database sits behind, and the seams (clock, resolver) that modules receive as arguments.
 */

export const EVENT_TYPES = ["job.completed", "job.failed", "collection.completed"] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** A destination subscribes to event types by name, or to all of them with `*`. */
export type EventSubscription = EventType | "*";
export const EVENT_SUBSCRIPTIONS: readonly EventSubscription[] = ["*", ...EVENT_TYPES];

export const SCOPES = ["webhooks:read", "webhooks:write", "events:read", "events:write"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What only an operator API key (one bound to no workspace) may hold (decision 42): the
 * workspaces and their keys, and portal links. An operator key may hold the workspace scopes
 * too, which then hold in every workspace.
 */
export const OPERATOR_SCOPES = ["workspaces:read", "workspaces:write", "portal:write"] as const;
export type OperatorScope = (typeof OPERATOR_SCOPES)[number];
/** Any scope an API key may be granted. */
export type KeyScope = Scope | OperatorScope;

/** A user's role in a workspace; what it grants is ROLE_SCOPES. */
export const ROLES = ["owner", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** The scopes a role grants in its workspace (CONTRACT.md, "Scopes"). */
export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: SCOPES,
  member: SCOPES,
  viewer: ["webhooks:read", "events:read"],
};

export interface Workspace {
  readonly id: string;
  readonly name: string;
  /** The platform's own id for it (its customer's), unique on the server; null when unset. */
  readonly externalId: string | null;
  /** A small flat object of strings the platform keeps with it (decision 42). */
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface ApiKey {
  readonly id: string;
  /** Null for an operator key, which belongs to no workspace (decision 42). */
  readonly workspaceId: string | null;
  /** As granted; `webhooks:write` implies `webhooks:read` when checked, not when stored. */
  readonly scopes: readonly KeyScope[];
  readonly name: string | null;
  readonly createdAt: Date;
  /** After this the key is refused as if revoked; null: never. */
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  /** Roughly: written at most once a minute (`apiKeyUseResolutionMs`); null if never used. */
  readonly lastUsedAt: Date | null;
}

export interface Destination {
  readonly id: string;
  readonly workspaceId: string;
  readonly url: string;
  readonly events: readonly EventSubscription[];
  readonly active: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";
export const DELIVERY_STATUSES = [
  "pending",
  "delivered",
  "failed",
] as const satisfies readonly DeliveryStatus[];

/** The outcome of the latest delivery to a destination; never a secret or a body. */
export interface LastDelivery {
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly lastAttemptAt: Date | null;
  readonly event: EventType;
  /** The notification id (`Webhook-Id`). */
  readonly notificationId: string;
  /** When the next attempt is due; null unless pending. */
  readonly nextAttemptAt: Date | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  /** The destination's circuit, when it is not closed: why its deliveries wait. */
  readonly circuit: CircuitState | null;
}

/**
 * A destination whose attempts kept failing is slowed down as a unit (decision 24): its
 * circuit opens until `openUntil` (nothing of it is claimed), then half-opens (one attempt at
 * a time probes it) once that has passed.
 */
export interface CircuitState {
  readonly state: "open" | "half_open";
  readonly openUntil: Date;
  /** Openings in a row; the n-th waits the retry schedule's n-th step. */
  readonly opens: number;
  /** Why it opened, in words. */
  readonly error: string | null;
}

/**
 * A destination's circuit as its page shows it (decision 40): closed, or open until
 * `openUntil`, or half-open (one attempt at a time probes it); `opens` in a row, and why.
 */
export interface DestinationCircuit {
  readonly state: "closed" | "open" | "half_open";
  readonly openUntil: Date | null;
  readonly opens: number;
  readonly reason: string | null;
}

/** A published event: the notification body is serialised once, here, and never again. */
export interface NewEvent {
  readonly id: string;
  readonly workspaceId: string;
  readonly type: EventType;
  /** The notification's `api_version`. */
  readonly apiVersion: string;
  /** The exact bytes every attempt sends and signs. */
  readonly body: string;
  readonly createdAt: Date;
  /**
   * The W3C `traceparent` of the span that published it, kept with the event so that its
   * attempts, in any worker process, link to it (decision 47); absent unless traced.
   */
  readonly traceparent?: string | null;
}

/** A delivery claimed by a worker, with everything one attempt needs. */
export interface ClaimedDelivery {
  readonly seq: number;
  /** This claim's token: only it may report on the delivery (`finishAttempt`). */
  readonly lease: string;
  readonly eventId: string;
  readonly eventType: EventType;
  readonly body: string;
  /** Attempts made before this one. */
  readonly attempts: number;
  /** Attempts made before its latest retry: the schedule counts from there (decision 30). */
  readonly retryBase: number;
  /** The publish's `traceparent` (decision 47); null when the publish was not traced. */
  readonly traceparent: string | null;
  readonly destination: {
    readonly id: string;
    readonly url: string;
    readonly active: boolean;
    readonly deleted: boolean;
    /** Null once the destination is deleted. */
    readonly secretCiphertext: string | null;
    readonly workspaceId: string;
    /** Openings of its circuit in a row; more than 0 while open or half-open. */
    readonly circuitOpens: number;
  };
}

/** What a claimer will not take now: destinations and workspaces with no room left. */
export interface ClaimExclusions {
  readonly destinations: readonly string[];
  readonly workspaces: readonly string[];
}

/**
 * How much one claim may take (decision 24): `total` at most, and no more of a destination or
 * a workspace than its room (of a destination whose circuit is half-open, one at most). The
 * excluded ones, with no room at all, are skipped in the due index.
 */
export interface ClaimRoom {
  readonly total: number;
  /** The room of a destination the claimer holds nothing of. */
  readonly perDestination: number;
  /** The room of each destination the claimer holds some of. */
  readonly destinationRoom: ReadonlyMap<string, number>;
  /** The room of a workspace the claimer holds nothing of. */
  readonly perWorkspace: number;
  readonly workspaceRoom: ReadonlyMap<string, number>;
  readonly exclusions: ClaimExclusions;
}

/** Slots a taker sets aside for a publish batch, and the destinations it will not take. */
export interface HandOverRoom {
  readonly slots: number;
  readonly excludedDestinations: readonly string[];
}

/**
 * A delivery worker in the same process as the API, taking the deliveries of its publishes as
 * they commit, already claimed (`Store.handDeliveriesTo`).
 */
export interface DeliveryTaker {
  /** Starts each lease token, as a claim's does. */
  readonly owner: string;
  readonly leaseMs: number;
  /**
   * Slots set aside for the publish batch about to be written (0 declines it), and the
   * destinations whose deliveries it will not take now.
   */
  reserve(): HandOverRoom;
  /**
   * After the batch: the deliveries leased to the taker (at most `reserved`, none if the batch
   * failed). The reservation ends here either way.
   */
  take(reserved: number, deliveries: readonly ClaimedDelivery[]): void;
  /** The batch left deliveries due for a claim. */
  wake(): void;
}

export interface CircuitOpening {
  readonly until: Date;
  readonly opens: number;
  readonly error: string;
  readonly failCreatedBefore: Date;
}

/** One attempt as the attempts log keeps it. */
export interface AttemptRecord {
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  /** A short class such as `timeout`, `connection`, `http_status`; null when delivered. */
  readonly errorClass: string | null;
  /** The first 2 KiB of the receiver's answer, as text, when it had one. */
  readonly responseBody?: string | null;
  /** The `Webhook-Signature` header it was sent with, when one was (decision 40). */
  readonly webhookSignature?: string | null;
}

/**
 * Why a delivery ended `failed` (decision 40): its retries were spent; they would have been
 * spent while its destination's circuit was open; the destination's address or URL is refused
 * for good; the destination was deleted or deactivated before the attempt.
 */
export type FailureReason =
  | "retries_exhausted"
  | "circuit_open"
  | "destination_refused"
  | "destination_deleted"
  | "destination_inactive";

/** Where a delivery stands after an attempt. */
export type DeliveryResult =
  | { readonly status: "delivered" }
  | { readonly status: "pending"; readonly nextAttemptAt: Date }
  | { readonly status: "failed"; readonly reason: FailureReason };

/** What a worker reports for a claimed delivery. */
export interface AttemptReport {
  /** Null when no attempt was made (for example, the destination was deactivated). */
  readonly attempt: AttemptRecord | null;
  readonly result: DeliveryResult;
  /** For `last_error`: what went wrong, in words; never a body or a secret. */
  readonly error: string | null;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque; null when this page is the last. */
  readonly nextCursor: string | null;
}

export interface NewDestination {
  readonly id: string;
  readonly workspaceId: string;
  readonly url: string;
  readonly events: readonly EventSubscription[];
  /** The signing secret, already encrypted for storage. */
  readonly secretCiphertext: string;
}

/** Only the members present change. */
export interface DestinationChanges {
  readonly url?: string;
  readonly events?: readonly EventSubscription[];
  readonly active?: boolean;
}

export interface NewApiKey {
  readonly id: string;
  /** Null for an operator key. */
  readonly workspaceId: string | null;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  readonly tokenHash: string;
  readonly scopes: readonly KeyScope[];
  readonly name?: string | null;
  readonly expiresAt?: Date | null;
}

export interface User {
  readonly id: string;
  /** Lower-cased. */
  readonly email: string;
  readonly createdAt: Date;
}

/** A user with the stored password hash, for signing in; never leaves the server. */
export interface UserWithPassword extends User {
  /** `scrypt$N$r$p$salt$hash`. */
  readonly passwordHash: string;
}

export interface NewUser {
  readonly id: string;
  readonly email: string;
  readonly passwordHash: string;
}

/** A user's role in one workspace. */
export interface Membership {
  readonly workspaceId: string;
  readonly workspaceName: string;
  readonly role: Role;
}

/** A user and every membership they have, by workspace id. */
export interface UserWithMemberships extends User {
  readonly memberships: readonly Membership[];
}

/** A signed-in session: what `svs_…` tokens stand for. */
export interface Session {
  readonly id: string;
  readonly user: User;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface NewSession {
  readonly id: string;
  readonly userId: string;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  readonly tokenHash: string;
  readonly expiresAt: Date;
}

/** The roles a portal link may give (decision 43): a customer reads, or also changes. */
export const PORTAL_ROLES = ["viewer", "member"] as const;
export type PortalRole = (typeof PORTAL_ROLES)[number];

/** A customer portal's session: one workspace, a role's scopes there, no user account. */
export interface PortalSession {
  readonly id: string;
  readonly workspaceId: string;
  readonly role: PortalRole;
  readonly expiresAt: Date;
}

/** A portal link about to be made: only the hash of its one-time token is stored. */
export interface NewPortalLink {
  readonly id: string;
  readonly workspaceId: string;
  readonly role: PortalRole;
  readonly tokenHash: string;
  readonly expiresAt: Date;
}

/** The sign-in attempts counted against one subject (an account or a client address). */
export interface SignInFailures {
  readonly subject: string;
  readonly failures: number;
  /** When the window these failures are counted in ends (and the count restarts). */
  readonly windowEndsAt: Date;
}

/** A published event as the delivery log lists it (its body aside). */
export interface EventSummary {
  readonly id: string;
  readonly type: EventType;
  readonly apiVersion: string;
  readonly createdAt: Date;
  /** A test event, sent to one destination alone (decision 40). */
  readonly test: boolean;
}

/** An event with its notification body and one delivery per destination it was queued for. */
export interface EventDetail extends EventSummary {
  /** The exact bytes every attempt sends. */
  readonly body: string;
  readonly deliveries: readonly DeliveryRecord[];
}

/** One notification to one destination, as the delivery log shows it. */
export interface DeliveryRecord {
  /** `dlv_…`, public and stable. */
  readonly id: string;
  readonly eventId: string;
  readonly destinationId: string;
  readonly eventType: EventType;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly lastAttemptAt: Date | null;
  /** When the next attempt is due; null unless pending and waiting (not being attempted). */
  readonly nextAttemptAt: Date | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  /** A worker holds it: an attempt is under way. */
  readonly inFlight: boolean;
  /** Where it stands, in more detail than `status` (decision 40). */
  readonly state: DeliveryState;
  /** Why it failed; null unless `failed`. */
  readonly failureReason: FailureReason | null;
  /** Its event is a test event, sent to this destination alone (decision 40). */
  readonly test: boolean;
}

/**
 * Where a delivery stands: waiting for its first attempt, being attempted, waiting for a
 * retry at `nextAttemptAt`, held by its destination's open circuit until `nextAttemptAt`,
 * delivered, or failed (`failureReason` says why).
 */
export type DeliveryState =
  "waiting" | "in_flight" | "retry_scheduled" | "circuit_open" | "delivered" | "failed";

/** One attempt of a delivery, as the log keeps it (`attemptRetention`). */
export interface AttemptEntry {
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly attemptedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  /** What went wrong, in words; null when delivered. */
  readonly error: string | null;
  /** The first 2 KiB of the receiver's answer, as text. */
  readonly responseBody: string | null;
  /** The `Webhook-Signature` header it was sent with; null when none was kept. */
  readonly webhookSignature: string | null;
}

export interface DeliveryDetail extends DeliveryRecord {
  readonly attemptLog: readonly AttemptEntry[];
}

/** `since` is inclusive, `until` exclusive; absent members do not filter. */
export interface EventFilter {
  readonly type?: EventType;
  readonly since?: Date;
  readonly until?: Date;
}

export interface DeliveryFilter {
  readonly destinationId?: string;
  readonly eventId?: string;
  readonly status?: DeliveryStatus;
  readonly eventType?: EventType;
  readonly since?: Date;
  readonly until?: Date;
}

/** What became of asking for a delivery to be sent again (decision 30). */
export type RetryOutcome =
  | { readonly kind: "queued"; readonly delivery: DeliveryRecord }
  /** A worker is attempting it now: its outcome is not known yet. */
  | { readonly kind: "in_flight" }
  /** Its destination is paused or deleted. */
  | { readonly kind: "destination_inactive" };

/** A response kept for replay under an idempotency key. */
export interface StoredResponse {
  readonly status: number;
  readonly contentType: string;
  /** The body, sealed: a create's response carries the signing secret. */
  readonly sealedBody: string;
}

/** What became of an attempt to take an idempotency key for a request. */
export type IdempotencyClaim =
  /** The key is this request's until it completes or releases it (or the lock expires). */
  | { readonly kind: "acquired" }
  /** The same request completed before: answer with its response. */
  | { readonly kind: "replay"; readonly response: StoredResponse }
  /** The key was used for a different request. */
  | { readonly kind: "mismatch" }
  /** The same request is still running under the key. */
  | { readonly kind: "in_progress" };

/**
 * The database, in slices, each an interface beside its SQL in `store/` (decision 30): every
 * consumer is handed the slices it uses. Every method that changes something is one
 * transaction: it either happens whole or not at all.
 */
export interface Store {
  readonly destinations: DestinationStore;
  readonly queue: DeliveryQueue;
  readonly log: DeliveryLog;
  readonly credentials: CredentialStore;
  readonly idempotency: IdempotencyStore;
  readonly housekeeping: Housekeeping;
  readonly health: StorageHealth;
  readonly encryptionKeys: EncryptionKeyStore;
  readonly listen: ListenSessions;
  readonly workspaces: WorkspaceStore;
  readonly portal: PortalAccess;
  /** The operator's notices and where they go (decision 48). */
  readonly operations: Operations;
  /** Waits for the batches under way, then closes the database. */
  close(): Promise<void>;
}

/** Resolves a host name to its addresses (IPv4 and IPv6, textual). */
export interface Resolver {
  resolve(hostname: string): Promise<string[]>;
}

export interface Clock {
  now(): Date;
  /**
   * The time in milliseconds, without a `Date`: for the delivery worker, which reads the
   * time about eleven times a delivery (decision 59). A clock without it is read by `now()`.
   */
  nowMs?(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };
