import type { AttemptReport, Clock } from "../interfaces.ts";
import type { Database } from "./database.ts";
import type { DeliveryQueue } from "./delivery-queue.ts";
import {
  claimForListenStream,
  endListenSession,
  type ListenClaim,
  type ListenSessionRecord,
  type NewListenSession,
  type OpenedListenSession,
  openListenSession,
  releaseListenSession,
  selectListenDelivery,
  selectListenNextDue,
  selectListenSession,
  selectListenSessions,
  takeOverListenSession,
  touchListenSession,
} from "./sql/listen-sessions.ts";
import type { SqlOperations } from "./operations.ts";
import { SqlSlice } from "./sql-slice.ts";

export type { ListenClaim, ListenSessionRecord, NewListenSession, OpenedListenSession };

/** What a reported result did: recorded, or refused because the claim no longer holds it. */
export type ListenReport =
  | { readonly kind: "recorded" }
  | { readonly kind: "not_found" }
  | { readonly kind: "claim_expired" };

/**
 * Listen sessions (decision 34): destinations of another kind, whose deliveries the process
 * holding the session's stream claims, pushes and records as a worker does.
 */
export interface ListenSessions {
  /**
   * Creates a session, or resumes the live one of `session.name` if `mayResume` its opener;
   * `created` says which. Nothing when it would be created but the workspace has `limit` live
   * sessions already.
   */
  open(
    session: NewListenSession,
    options: { limit: number; mayResume: (openedBy: string | null) => boolean },
  ): Promise<OpenedListenSession>;
  get(workspaceId: string, id: string): Promise<ListenSessionRecord | null>;
  /** The workspace's live sessions, newest first. */
  list(workspaceId: string, limit: number): Promise<ListenSessionRecord[]>;
  /** Ends it; its pending deliveries end `failed` with `reason`. False if it was not live. */
  end(workspaceId: string, id: string, reason: string): Promise<boolean>;
  /** The stream `token` holds the session now; what earlier streams held is due again. */
  takeOver(id: string, token: string): Promise<boolean>;
  /** The stream `token` lets the session go. */
  release(id: string, token: string): Promise<void>;
  /** The stream `token` is still connected. */
  touch(id: string, token: string): Promise<void>;
  claim(
    id: string,
    token: string,
    options: { leaseMs: number; inFlight: number },
  ): Promise<ListenClaim>;
  /** When the session's next delivery is due, or null. */
  nextDueAt(id: string): Promise<Date | null>;
  /**
   * Records what the CLI met for the delivery of `eventId` to the live session, claimed under
   * `claim`: `decide` turns the delivery's schedule position into the report. `not_found`
   * when the workspace has no such live session or it no such delivery.
   */
  report(
    session: { workspaceId: string; id: string },
    eventId: string,
    claim: string,
    decide: (position: { attempts: number; retryBase: number }) => AttemptReport,
  ): Promise<ListenReport>;
}

/** The ListenSessions over any `Database`: the SQL is in `./sql/listen-sessions.ts`. */
export class SqlListenSessions extends SqlSlice implements ListenSessions {
  readonly #queue: Pick<DeliveryQueue, "finishAttempt">;
  readonly #operations: SqlOperations;

  constructor(
    db: Database,
    clock: Clock,
    queue: Pick<DeliveryQueue, "finishAttempt">,
    operations: SqlOperations,
  ) {
    super(db, clock);
    this.#queue = queue;
    this.#operations = operations;
  }

  open(
    session: NewListenSession,
    options: { limit: number; mayResume: (openedBy: string | null) => boolean },
  ): Promise<OpenedListenSession> {
    return this.db.transaction((tx) =>
      openListenSession(this.db, tx, session, { ...options, now: this.now() }),
    );
  }

  get(workspaceId: string, id: string): Promise<ListenSessionRecord | null> {
    return selectListenSession(this.db, workspaceId, id, this.now());
  }

  list(workspaceId: string, limit: number): Promise<ListenSessionRecord[]> {
    return selectListenSessions(this.db, workspaceId, limit, this.now());
  }

  async end(workspaceId: string, id: string, reason: string): Promise<boolean> {
    const ended = await this.db.transaction(async (tx) => {
      if ((await selectListenSession(tx, workspaceId, id, this.now())) === null) return false;
      const tell = this.#operations.listenSessionEnded(tx, id, "ended");
      return endListenSession(tx, id, reason, this.now(), tell);
    });
    if (ended && this.#operations.enabled) this.#operations.published();
    return ended;
  }

  takeOver(id: string, token: string): Promise<boolean> {
    return this.db.transaction((tx) => takeOverListenSession(tx, id, token, this.now()));
  }

  release(id: string, token: string): Promise<void> {
    return releaseListenSession(this.db, id, token, this.now());
  }

  touch(id: string, token: string): Promise<void> {
    return touchListenSession(this.db, id, token, this.now());
  }

  claim(
    id: string,
    token: string,
    options: { leaseMs: number; inFlight: number },
  ): Promise<ListenClaim> {
    return claimForListenStream(this.db, id, token, { ...options, now: this.now() });
  }

  nextDueAt(id: string): Promise<Date | null> {
    return selectListenNextDue(this.db, id);
  }

  async report(
    session: { workspaceId: string; id: string },
    eventId: string,
    claim: string,
    decide: (position: { attempts: number; retryBase: number }) => AttemptReport,
  ): Promise<ListenReport> {
    const delivery = await selectListenDelivery(this.db, session, eventId);
    if (delivery === null) return { kind: "not_found" };
    // The outbox's own report: only the claim that holds the delivery may record it.
    const recorded = await this.#queue.finishAttempt(claim, delivery.seq, decide(delivery));
    return recorded ? { kind: "recorded" } : { kind: "claim_expired" };
  }
}
