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
  UserWithMemberships,
  UserWithPassword,
  Workspace,
} from "../interfaces.ts";
import type { Database } from "./database.ts";
import type { ApiKeyCache, ChangeFeed } from "./api-key-cache.ts";
import { Batcher } from "./batcher.ts";
import {
  insertApiKey,
  markApiKeysUsed,
  revokeApiKey,
  selectActiveApiKeys,
  selectActiveApiKeysByHash,
} from "./sql/api-keys.ts";
import {
  insertSession,
  revokeSession,
  revokeUserSessions,
  selectActiveSessionByHash,
} from "./sql/sessions.ts";
import { countSignInAttempt, forgiveSignInAttempt } from "./sql/sign-in-attempts.ts";
import {
  deleteUser,
  insertUser,
  selectMembershipRole,
  selectMemberships,
  selectUserByEmail,
  selectUserByIdOrEmail,
  selectUsersWithMemberships,
  updatePasswordHash,
  upsertMembership,
} from "./sql/users.ts";
import {
  initialiseInstance,
  insertWorkspace,
  selectWorkspace,
  selectWorkspaces,
} from "./sql/workspaces.ts";
import { SqlSlice } from "./sql-slice.ts";

/** The most publishes, results or key lookups one batch carries. */
const maxBatch = 256;

/**
 * How often an API key's last use is written, at most: a key's `lastUsedAt` may be this much
 * older than its true last use. Keeping the write off most requests keeps a read-only request
 * read-only (decision 18: every write waits for an fsync on SQLite).
 */
export const apiKeyUseResolutionMs = 60_000;

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

  /** An unrevoked, unexpired key by the hash of its token. */
  findActiveApiKey(tokenHash: string): Promise<ApiKey | null>;

  /**
   * Keeps the keys it finds in memory while `changes` hears of every change to them (decision
   * 63); without it, each lookup reads the database.
   */
  cacheApiKeys(changes: ChangeFeed): void;

  /** Returns false when there is no such key; revoking twice is not an error. */
  revokeApiKey(id: string): Promise<boolean>;

  /**
   * Notes that the key was used now. Writes at most once per key in `apiKeyUseResolutionMs`
   * (in this process, and through the SQL across processes), with the notes of a burst of
   * requests in one statement; the other calls resolve at once, writing nothing.
   */
  recordApiKeyUse(id: string): Promise<void>;

  /** Every workspace, oldest first. */
  listWorkspaces(): Promise<Workspace[]>;

  /** The unrevoked API keys, of one workspace or of all (null), oldest first. */
  listApiKeys(workspaceId: string | null): Promise<ApiKey[]>;

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

  /** A user by id, or else by e-mail address (compared lower-cased). */
  findUser(idOrEmail: string): Promise<User | null>;

  /** Every user with their memberships, oldest first. */
  listUsers(): Promise<UserWithMemberships[]>;

  /**
   * Deletes the user, their memberships and their sessions (so that each session ends at
   * once), in one transaction. Returns how many memberships went and how many of the sessions
   * were still in use; null when
   * there is no such user.
   */
  deleteUser(userId: string): Promise<{ sessions: number; memberships: number } | null>;

  /**
   * Replaces the user's password hash and revokes their sessions, in one transaction: whoever
   * knew the old password is signed out. Returns how many sessions were revoked; null when
   * there is no such user.
   */
  setPassword(userId: string, passwordHash: string): Promise<number | null>;

  /** Revokes every session of the user still in use; returns how many. */
  revokeUserSessions(userId: string): Promise<number>;

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
export class SqlCredentialStore extends SqlSlice implements CredentialStore {
  /**
   * API key lookups, one per request not answered from `#keyCache`, gathered like the
   * writes: a burst of requests costs one SELECT. Each batch reads afresh.
   */
  readonly #keyLookups: Batcher<string, ApiKey | null>;
  /** Keys found, while changes to them are heard (decision 63); shared with the workspaces. */
  readonly #keyCache: ApiKeyCache;
  /** Uses of keys to write, gathered: a burst of first uses costs one UPDATE. */
  readonly #keyUses: Batcher<string, undefined>;
  /** When this process last wrote each key's use (bounded by the number of keys). */
  readonly #keyUseWritten = new Map<string, number>();

  constructor(db: Database, clock: Clock, keyCache: ApiKeyCache) {
    super(db, clock);
    this.#keyCache = keyCache;
    this.#keyLookups = new Batcher((hashes) => selectActiveApiKeysByHash(this.db, hashes), {
      maxBatch,
    });
    this.#keyUses = new Batcher(
      async (ids) => {
        const now = this.now();
        await markApiKeysUsed(this.db, [...new Set(ids)], now, now - apiKeyUseResolutionMs);
        return ids.map(() => undefined);
      },
      { maxBatch },
    );
  }

  initialise(workspace: { id: string; name: string }, key: NewApiKey): Promise<boolean> {
    return this.db.transaction((tx) => initialiseInstance(tx, workspace, key, this.now()));
  }

  createWorkspace(workspace: { id: string; name: string }): Promise<Workspace> {
    return insertWorkspace(this.db, workspace, this.now());
  }

  getWorkspace(id: string): Promise<Workspace | null> {
    return selectWorkspace(this.db, id);
  }

  createApiKey(key: NewApiKey): Promise<ApiKey> {
    return insertApiKey(this.db, key, this.now());
  }

  async findActiveApiKey(tokenHash: string): Promise<ApiKey | null> {
    const key = await this.#keyCache.find(tokenHash, (hash) => this.#keyLookups.add(hash));
    // Expiry is judged here, on this process's clock, so the batched lookup needs no time.
    const expired = key?.expiresAt != null && key.expiresAt.getTime() <= this.now();
    return expired ? null : key;
  }

  cacheApiKeys(changes: ChangeFeed): void {
    this.#keyCache.follow(changes);
  }

  revokeApiKey(id: string): Promise<boolean> {
    return this.#keyCache.afterChange(
      () => revokeApiKey(this.db, id, this.now()),
      (revoked) => revoked,
    );
  }

  async recordApiKeyUse(id: string): Promise<void> {
    const now = this.now();
    const written = this.#keyUseWritten.get(id);
    if (written !== undefined && now - written < apiKeyUseResolutionMs) return;
    // Noted before the write, and kept if it fails: a failed write is tried again a minute
    // later, not on the next request, so that a full disk adds no write to every request.
    this.#keyUseWritten.set(id, now);
    await this.#keyUses.add(id);
  }

  listWorkspaces(): Promise<Workspace[]> {
    return selectWorkspaces(this.db);
  }

  listApiKeys(workspaceId: string | null): Promise<ApiKey[]> {
    return selectActiveApiKeys(this.db, workspaceId);
  }

  findUser(idOrEmail: string): Promise<User | null> {
    return selectUserByIdOrEmail(this.db, idOrEmail);
  }

  listUsers(): Promise<UserWithMemberships[]> {
    return selectUsersWithMemberships(this.db);
  }

  deleteUser(userId: string): Promise<{ sessions: number; memberships: number } | null> {
    return this.db.transaction(async (tx) => {
      // Counted before they go: the sessions that were still in use.
      const sessions = await revokeUserSessions(tx, userId, this.now());
      const memberships = await deleteUser(tx, userId);
      return memberships === null ? null : { sessions, memberships };
    });
  }

  setPassword(userId: string, passwordHash: string): Promise<number | null> {
    return this.db.transaction(async (tx) => {
      if (!(await updatePasswordHash(tx, userId, passwordHash))) return null;
      return revokeUserSessions(tx, userId, this.now());
    });
  }

  revokeUserSessions(userId: string): Promise<number> {
    return revokeUserSessions(this.db, userId, this.now());
  }

  createUser(user: NewUser, membership: { workspaceId: string; role: Role }): Promise<User> {
    return this.db.transaction((tx) => insertUser(tx, user, membership, this.now()));
  }

  findUserByEmail(email: string): Promise<UserWithPassword | null> {
    return selectUserByEmail(this.db, email);
  }

  putMembership(userId: string, workspaceId: string, role: Role): Promise<Role | null> {
    return upsertMembership(this.db, userId, workspaceId, role, this.now());
  }

  findMembershipRole(userId: string, workspaceId: string): Promise<Role | null> {
    return selectMembershipRole(this.db, userId, workspaceId);
  }

  listMemberships(userId: string): Promise<Membership[]> {
    return selectMemberships(this.db, userId);
  }

  createSession(session: NewSession): Promise<Session> {
    return this.db.transaction((tx) => insertSession(tx, session, this.now()));
  }

  findActiveSession(tokenHash: string): Promise<Session | null> {
    return selectActiveSessionByHash(this.db, tokenHash, this.now());
  }

  revokeSession(id: string): Promise<boolean> {
    return revokeSession(this.db, id, this.now());
  }

  countSignInAttempt(subjects: readonly string[], windowMs: number): Promise<SignInFailures[]> {
    return countSignInAttempt(this.db, subjects, { now: this.now(), windowMs });
  }

  forgiveSignInAttempt(account: string, address: string): Promise<void> {
    return forgiveSignInAttempt(this.db, account, address);
  }

  /** Resolves once the lookups under way are answered. */
  async idle(): Promise<void> {
    await Promise.all([this.#keyLookups.idle(), this.#keyUses.idle()]);
  }
}
