import type {
  ApiKey,
  Clock,
  Membership,
  NewApiKey,
  NewSession,
  NewUser,
  Role,
  Session,
  SignInFailures,
  User,
  UserWithPassword,
  Workspace,
} from "../interfaces.ts";
import type { Database } from "./database.ts";
import { Batcher } from "./batcher.ts";
import { insertApiKey, revokeApiKey, selectActiveApiKeysByHash } from "./sql/api-keys.ts";
import { insertSession, revokeSession, selectActiveSessionByHash } from "./sql/sessions.ts";
import { countSignInAttempt, forgiveSignInAttempt } from "./sql/sign-in-attempts.ts";
import {
  insertUser,
  selectMembershipRole,
  selectMemberships,
  selectUserByEmail,
  upsertMembership,
} from "./sql/users.ts";
import { initialiseInstance, insertWorkspace, selectWorkspace } from "./sql/workspaces.ts";

/** The most publishes, results or key lookups one batch carries. */
const maxBatch = 256;

/** Workspaces and who may act in them: API keys, users, memberships, sessions, and the sign-in attempts counted against them. */
export interface CredentialStore {
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
}

/** The CredentialStore over any `Database`: the SQL is in `./sql/`. */
export class SqlCredentialStore implements CredentialStore {
  readonly #db: Database;
  readonly #clock: Clock;
  /**
   * API key lookups, one per request, gathered like the writes: a burst of requests costs
   * one SELECT. Each batch reads afresh, so a revocation counts from its commit on.
   */
  readonly #keyLookups: Batcher<string, ApiKey | null>;

  constructor(db: Database, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
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

  /** Resolves once the lookups under way are answered. */
  async idle(): Promise<void> {
    await this.#keyLookups.idle();
  }
}
