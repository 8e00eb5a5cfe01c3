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
  readonly createdAt: Date;
}

export interface ApiKey {
  readonly id: string;
  readonly workspaceId: string;
  /** As granted; `webhooks:write` implies `webhooks:read` when checked, not when stored. */
  readonly scopes: readonly Scope[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
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

/** A published event: the notification body is serialised once, here, and never again. */
export interface NewEvent {
  readonly id: string;
  readonly workspaceId: string;
  readonly type: EventType;
  /** The exact bytes every attempt sends and signs. */
  readonly body: string;
  readonly createdAt: Date;
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
}

/** Where a delivery stands after an attempt. */
export type DeliveryResult =
  | { readonly status: "delivered" }
  | { readonly status: "pending"; readonly nextAttemptAt: Date }
  | { readonly status: "failed" };

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
  readonly workspaceId: string;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  readonly tokenHash: string;
  readonly scopes: readonly Scope[];
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

/** The sign-in attempts counted against one subject (an account or a client address). */
export interface SignInFailures {
  readonly subject: string;
  readonly failures: number;
  /** When the window these failures are counted in ends (and the count restarts). */
  readonly windowEndsAt: Date;
}

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
 * The database, behind one narrow interface with a SQLite and a PostgreSQL implementation.
 * Every method is one transaction: it either happens whole or not at all.
 */
export interface Store {
  /**
   * Records that this database is initialised, with its first workspace and owner key.
   * Returns false, changing nothing, when it already was.
   */
  initialise(workspace: { id: string; name: string }, key: NewApiKey): Promise<boolean>;
  createWorkspace(workspace: { id: string; name: string }): Promise<Workspace>;
  getWorkspace(id: string): Promise<Workspace | null>;

  createApiKey(key: NewApiKey): Promise<ApiKey>;
  /** An unrevoked key by the hash of its token. */
  findActiveApiKey(tokenHash: string): Promise<ApiKey | null>;
  /** Returns false when there is no such key; revoking twice is not an error. */
  revokeApiKey(id: string): Promise<boolean>;

  /** Newest first; `cursor` continues after the last item of the previous page. */
  listDestinations(
    workspaceId: string,
    options: { limit: number; cursor: string | null },
  ): Promise<Page<Destination>>;
  createDestination(destination: NewDestination): Promise<Destination>;
  /** Null for an unknown, deleted, or other workspace's id. */
  getDestination(workspaceId: string, id: string): Promise<Destination | null>;
  updateDestination(
    workspaceId: string,
    id: string,
    changes: DestinationChanges,
  ): Promise<Destination | null>;
  /** Returns false for an unknown, already deleted, or other workspace's id. */
  deleteDestination(workspaceId: string, id: string): Promise<boolean>;
  /** The latest delivery to the destination, or null when none was ever queued. */
  getLastDelivery(workspaceId: string, destinationId: string): Promise<LastDelivery | null>;

  /**
   * The transactional outbox: records the event and one pending delivery per matching
   * destination (active, not deleted, subscribed by name or `*`) in one transaction.
   * Returns how many deliveries were queued.
   */
  publishEvent(event: NewEvent): Promise<number>;
  /**
   * From now on, the deliveries of this store's publishes go to `taker`, leased to it in the
   * publishing transaction, as many as it reserves; the rest stay due for a claim. Null stops.
   */
  handDeliveriesTo(taker: DeliveryTaker | null): void;
  /**
   * Claims due deliveries for `owner` until `leaseMs` from now, oldest due first within
   * `room`: they are due again by themselves if the owner never reports back. Deliveries of a
   * destination whose circuit is open are not claimed; of one half-open, one at most.
   */
  claimDueDeliveries(owner: string, room: ClaimRoom, leaseMs: number): Promise<ClaimedDelivery[]>;
  /**
   * Records the attempt, if one was made, and where the delivery now stands. Changes nothing,
   * returning false, if the claim `lease` no longer holds the delivery.
   */
  finishAttempt(lease: string, seq: number, report: AttemptReport): Promise<boolean>;
  /**
   * When the earliest pending delivery is due that a claim with these exclusions could take,
   * or null when there is none.
   */
  nextDueAt(exclusions?: ClaimExclusions): Promise<Date | null>;
  /**
   * Opens the destination's circuit until `until` (its `opens`-th opening in a row): its
   * pending deliveries that are not claimed wait until then, and those created before
   * `failCreatedBefore` end `failed` instead (their retries would be spent by then).
   */
  openCircuit(destinationId: string, opening: CircuitOpening): Promise<void>;
  /**
   * Gives deliveries claimed under `lease` back to the queue, due at `dueAt` (null: now), with
   * nothing attempted: a worker that will not send them after all.
   */
  releaseDeliveries(lease: string, seqs: readonly number[], dueAt: Date | null): Promise<void>;
  /** Closes the destination's circuit: a probe was delivered. */
  closeCircuit(destinationId: string): Promise<void>;
  /** Deletes attempt records that started before `before`; returns how many. */
  pruneAttempts(before: Date): Promise<number>;
  /**
   * Deletes events published before `before` whose deliveries have all ended (delivered or
   * failed), with those deliveries and their attempts; returns how many events.
   */
  pruneEvents(before: Date): Promise<number>;

  /**
   * Takes `key` for a request with `fingerprint`: locked for `lockMs`, kept for `ttlMs`. A key
   * whose lock expired (its request died) is taken over; an expired key is a new key.
   */
  acquireIdempotencyKey(
    workspaceId: string,
    key: string,
    fingerprint: string,
    options: { lockMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim>;
  /** Keeps the response of the request that holds the key, for replay. */
  completeIdempotencyKey(workspaceId: string, key: string, response: StoredResponse): Promise<void>;
  /** Frees a key whose request produced no response worth replaying (a 5xx). */
  releaseIdempotencyKey(workspaceId: string, key: string): Promise<void>;
  /** Deletes expired keys; returns how many. */
  purgeIdempotencyKeys(): Promise<number>;

  /**
   * Resolves when the database answers a trivial query (readiness). While writes are failing
   * for lack of space it also tries one cheap write, and rejects with `storage_full` until one
   * succeeds (decision 22).
   */
  ping(): Promise<void>;
  /** Since when writes have been failing for lack of space (`storage_full`); null while they succeed. */
  storageFullSince(): Date | null;

  /** A new user and their first membership, together. */
  createUser(user: NewUser, membership: { workspaceId: string; role: Role }): Promise<User>;
  /** By e-mail, compared lower-cased. */
  findUserByEmail(email: string): Promise<UserWithPassword | null>;
  /** Adds the membership, or changes its role; returns the role it had before (null: new). */
  putMembership(userId: string, workspaceId: string, role: Role): Promise<Role | null>;
  /** The user's role in the workspace; null when they are not a member. */
  findMembershipRole(userId: string, workspaceId: string): Promise<Role | null>;
  /** Every membership of the user, by workspace id. */
  listMemberships(userId: string): Promise<Membership[]>;

  createSession(session: NewSession): Promise<Session>;
  /** A session by the hash of its token: null when unknown, revoked or expired. */
  findActiveSession(tokenHash: string): Promise<Session | null>;
  /** Returns false when there is no such session; revoking twice is not an error. */
  revokeSession(id: string): Promise<boolean>;

  /**
   * Counts a sign-in attempt against each subject, before its password is checked, and
   * returns the counts: so that attempts running at once cannot all slip under a limit. A
   * subject's window of `windowMs` starts at its first counted attempt; when it has ended, the
   * count starts again.
   */
  countSignInAttempt(subjects: readonly string[], windowMs: number): Promise<SignInFailures[]>;
  /**
   * Takes back a successful attempt: the account's count starts again (its owner knows the
   * password); the address's attempt is uncounted, so that only failures add up there.
   */
  forgiveSignInAttempt(account: string, address: string): Promise<void>;
  /**
   * Deletes sessions that have expired or were revoked, and sign-in counts whose window of
   * `windowMs` has ended; returns how many rows went.
   */
  purgeAuthRecords(options: { signInWindowMs: number }): Promise<number>;

  close(): Promise<void>;
}

/** Resolves a host name to its addresses (IPv4 and IPv6, textual). */
export interface Resolver {
  resolve(hostname: string): Promise<string[]>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
