import type {
  ApiKey,
  AttemptReport,
  CircuitOpening,
  ClaimExclusions,
  ClaimRoom,
  ClaimedDelivery,
  Clock,
  DeliveryTaker,
  Destination,
  DestinationChanges,
  IdempotencyClaim,
  LastDelivery,
  Membership,
  NewApiKey,
  NewEvent,
  NewDestination,
  NewSession,
  NewUser,
  Page,
  Role,
  Session,
  SignInFailures,
  Store,
  StoredResponse,
  User,
  UserWithPassword,
  Workspace,
} from "../interfaces.ts";
import type { Database } from "./database.ts";
import { Batcher } from "./batcher.ts";
import { retryWhileUnavailable } from "./retry-unavailable.ts";
import { insertApiKey, revokeApiKey, selectActiveApiKeysByHash } from "./sql/api-keys.ts";
import { closeCircuit, openCircuit } from "./sql/circuits.ts";
import {
  deleteDestination,
  insertDestination,
  selectDestination,
  selectDestinationPage,
  updateDestination,
} from "./sql/destinations.ts";
import {
  claimDueDeliveries,
  deleteAttemptsBefore,
  deleteEndedEventsBefore,
  finishAttempts,
  newLease,
  releaseDeliveries,
  selectLastDelivery,
  type FinishedAttempt,
  selectNextDueAt,
} from "./sql/deliveries.ts";
import { publishEvents, type PublishedBatch } from "./sql/events.ts";
import {
  acquireIdempotencyKey,
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  releaseIdempotencyKey,
} from "./sql/idempotency.ts";
import {
  deleteEndedSessions,
  insertSession,
  revokeSession,
  selectActiveSessionByHash,
} from "./sql/sessions.ts";
import {
  countSignInAttempt,
  deleteEndedSignInWindows,
  forgiveSignInAttempt,
} from "./sql/sign-in-attempts.ts";
import {
  insertUser,
  selectMembershipRole,
  selectMemberships,
  selectUserByEmail,
  upsertMembership,
} from "./sql/users.ts";
import { probeWrite } from "./sql/storage-probe.ts";
import { initialiseInstance, insertWorkspace, selectWorkspace } from "./sql/workspaces.ts";

/**
 * The most publishes or results one batch carries: 256 × 10 parameters stays far inside both
 * engines' limits on a statement's parameters.
 */
const maxBatch = 256;

/**
 * The Store over any `Database`: the SQL lives in `./sql/`, one module per resource, and is
 * the same for SQLite and PostgreSQL. Nothing here knows which engine runs it.
 */
export class SqlStore implements Store {
  readonly #db: Database;
  readonly #clock: Clock;
  /** Publishes and delivery results, the hot paths, are written in batches (`Batcher`). */
  readonly #publishes: Batcher<NewEvent, number>;
  readonly #results: Batcher<FinishedAttempt, boolean>;
  /**
   * API key lookups, one per request, gathered like the writes: a burst of requests costs
   * one SELECT. Each batch reads afresh, so a revocation counts from its commit on.
   */
  readonly #keyLookups: Batcher<string, ApiKey | null>;
  /** The worker in this process that takes fresh deliveries, if any (decision 19). */
  #taker: DeliveryTaker | null = null;

  constructor(db: Database, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
    this.#publishes = new Batcher((events) => this.#publishBatch(events), { maxBatch });
    this.#results = new Batcher((reports) => finishAttempts(this.#db, reports, this.#now()), {
      maxBatch,
    });
    this.#keyLookups = new Batcher((hashes) => selectActiveApiKeysByHash(this.#db, hashes), {
      maxBatch,
    });
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  initialise(workspace: { id: string; name: string }, key: NewApiKey): Promise<boolean> {
    return this.#db.transaction((tx) => initialiseInstance(tx, workspace, key, this.#now()));
  }

  createWorkspace(workspace: { id: string; name: string }): Promise<Workspace> {
    return insertWorkspace(this.#db, workspace, this.#now());
  }

  getWorkspace(id: string): Promise<Workspace | null> {
    return selectWorkspace(this.#db, id);
  }

  createApiKey(key: NewApiKey): Promise<ApiKey> {
    return insertApiKey(this.#db, key, this.#now());
  }

  findActiveApiKey(tokenHash: string): Promise<ApiKey | null> {
    return this.#keyLookups.add(tokenHash);
  }

  revokeApiKey(id: string): Promise<boolean> {
    return revokeApiKey(this.#db, id, this.#now());
  }

  listDestinations(
    workspaceId: string,
    options: { limit: number; cursor: string | null },
  ): Promise<Page<Destination>> {
    return selectDestinationPage(this.#db, workspaceId, options);
  }

  createDestination(destination: NewDestination): Promise<Destination> {
    return this.#db.transaction((tx) => insertDestination(tx, destination, this.#now()));
  }

  getDestination(workspaceId: string, id: string): Promise<Destination | null> {
    return selectDestination(this.#db, workspaceId, id);
  }

  updateDestination(
    workspaceId: string,
    id: string,
    changes: DestinationChanges,
  ): Promise<Destination | null> {
    return this.#db.transaction((tx) =>
      updateDestination(tx, workspaceId, id, changes, this.#now()),
    );
  }

  deleteDestination(workspaceId: string, id: string): Promise<boolean> {
    return deleteDestination(this.#db, workspaceId, id, this.#now());
  }

  getLastDelivery(workspaceId: string, destinationId: string): Promise<LastDelivery | null> {
    return selectLastDelivery(this.#db, workspaceId, destinationId, this.#now());
  }

  publishEvent(event: NewEvent): Promise<number> {
    return this.#publishes.add(event);
  }

  handDeliveriesTo(taker: DeliveryTaker | null): void {
    this.#taker = taker;
  }

  /**
   * One publish batch: its deliveries go to the taker, as many as it reserves, claimed in the
   * same transaction; workers hear only of what is left for a claim, after the commit.
   */
  async #publishBatch(events: readonly NewEvent[]): Promise<number[]> {
    const taker = this.#taker;
    const room = taker?.reserve() ?? { slots: 0, excludedDestinations: [] };
    const reserved = room.slots;
    const lease =
      taker !== null && reserved > 0
        ? {
            token: newLease(taker.owner),
            until: this.#now() + taker.leaseMs,
            limit: reserved,
            excludedDestinations: room.excludedDestinations,
          }
        : null;
    let published: PublishedBatch;
    try {
      published = await publishEvents(this.#db, events, lease);
    } catch (error) {
      taker?.take(reserved, []);
      throw error;
    }
    taker?.take(reserved, published.handed);
    const total = published.queued.reduce((sum, count) => sum + count, 0);
    if (total > published.handed.length) {
      this.#db.announceDeliveriesQueued();
      taker?.wake();
    }
    return published.queued;
  }

  claimDueDeliveries(owner: string, room: ClaimRoom, leaseMs: number): Promise<ClaimedDelivery[]> {
    return claimDueDeliveries(this.#db, owner, room, this.#now(), leaseMs);
  }

  finishAttempt(lease: string, seq: number, report: AttemptReport): Promise<boolean> {
    return this.#results.add({ lease, seq, report });
  }

  nextDueAt(exclusions?: ClaimExclusions): Promise<Date | null> {
    return selectNextDueAt(this.#db, this.#now(), exclusions);
  }

  openCircuit(destinationId: string, opening: CircuitOpening): Promise<void> {
    return openCircuit(this.#db, destinationId, opening, this.#now());
  }

  releaseDeliveries(lease: string, seqs: readonly number[], dueAt: Date | null): Promise<void> {
    return releaseDeliveries(this.#db, lease, seqs, dueAt?.getTime() ?? this.#now());
  }

  closeCircuit(destinationId: string): Promise<void> {
    return closeCircuit(this.#db, destinationId);
  }

  pruneEvents(before: Date): Promise<number> {
    return this.#db.transaction((tx) => deleteEndedEventsBefore(tx, before.getTime()));
  }

  pruneAttempts(before: Date): Promise<number> {
    return deleteAttemptsBefore(this.#db, before.getTime());
  }

  acquireIdempotencyKey(
    workspaceId: string,
    key: string,
    fingerprint: string,
    options: { lockMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim> {
    return acquireIdempotencyKey(this.#db, workspaceId, key, fingerprint, {
      ...options,
      now: this.#now(),
    });
  }

  completeIdempotencyKey(
    workspaceId: string,
    key: string,
    response: StoredResponse,
  ): Promise<void> {
    // Both may run twice (each changes only a key still in progress): see retryWhileUnavailable.
    return retryWhileUnavailable(() =>
      completeIdempotencyKey(this.#db, workspaceId, key, response),
    );
  }

  releaseIdempotencyKey(workspaceId: string, key: string): Promise<void> {
    return retryWhileUnavailable(() => releaseIdempotencyKey(this.#db, workspaceId, key));
  }

  purgeIdempotencyKeys(): Promise<number> {
    return deleteExpiredIdempotencyKeys(this.#db, this.#now());
  }

  async ping(): Promise<void> {
    await this.#db.query("SELECT 1");
    if (this.#db.storageFullSince() !== null) await probeWrite(this.#db);
  }

  storageFullSince(): Date | null {
    return this.#db.storageFullSince();
  }

  createUser(user: NewUser, membership: { workspaceId: string; role: Role }): Promise<User> {
    return this.#db.transaction((tx) => insertUser(tx, user, membership, this.#now()));
  }

  findUserByEmail(email: string): Promise<UserWithPassword | null> {
    return selectUserByEmail(this.#db, email);
  }

  putMembership(userId: string, workspaceId: string, role: Role): Promise<Role | null> {
    return upsertMembership(this.#db, userId, workspaceId, role, this.#now());
  }

  findMembershipRole(userId: string, workspaceId: string): Promise<Role | null> {
    return selectMembershipRole(this.#db, userId, workspaceId);
  }

  listMemberships(userId: string): Promise<Membership[]> {
    return selectMemberships(this.#db, userId);
  }

  createSession(session: NewSession): Promise<Session> {
    return this.#db.transaction((tx) => insertSession(tx, session, this.#now()));
  }

  findActiveSession(tokenHash: string): Promise<Session | null> {
    return selectActiveSessionByHash(this.#db, tokenHash, this.#now());
  }

  revokeSession(id: string): Promise<boolean> {
    return revokeSession(this.#db, id, this.#now());
  }

  countSignInAttempt(subjects: readonly string[], windowMs: number): Promise<SignInFailures[]> {
    return countSignInAttempt(this.#db, subjects, { now: this.#now(), windowMs });
  }

  forgiveSignInAttempt(account: string, address: string): Promise<void> {
    return forgiveSignInAttempt(this.#db, account, address);
  }

  purgeAuthRecords(options: { signInWindowMs: number }): Promise<number> {
    const now = this.#now();
    return this.#db.transaction(
      async (tx) =>
        (await deleteEndedSessions(tx, now)) +
        (await deleteEndedSignInWindows(tx, { now, windowMs: options.signInWindowMs })),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.#publishes.idle(), this.#results.idle(), this.#keyLookups.idle()]);
    await this.#db.close();
  }
}
