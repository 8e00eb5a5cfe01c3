import type {
  Clock,
  DeliveryDetail,
  DeliveryFilter,
  DeliveryRecord,
  EventDetail,
  EventFilter,
  EventSummary,
  Page,
  RetryOutcome,
} from "../interfaces.ts";
import type { Database } from "./database.ts";
import {
  releaseHeldAfterRepair,
  requeueDelivery,
  requeueFailedSince,
  selectDelivery,
  selectDeliveryPage,
  selectEvent,
  selectEventPage,
} from "./sql/delivery-log.ts";
import {
  selectAttemptBuckets,
  selectDestinationHealth,
  type AttemptBucket,
  type AttemptWindow,
  type DestinationHealth,
} from "./sql/delivery-stats.ts";
import { SqlSlice } from "./sql-slice.ts";

export type { AttemptBucket, AttemptWindow, DestinationHealth } from "./sql/delivery-stats.ts";

/** A page of a list: at most `limit` items, after `cursor` (null: from the newest). */
export interface PageRequest {
  readonly limit: number;
  readonly cursor: string | null;
}

/**
 * The delivery log as users see it: the workspace's events, their deliveries and each
 * attempt, newest first; and sending again what failed (decision 30). Every lookup is within
 * a workspace: another workspace's ids are not found.
 */
export interface DeliveryLog {
  listEvents(
    workspaceId: string,
    filter: EventFilter,
    page: PageRequest,
  ): Promise<Page<EventSummary>>;
  /** The event with its body and its deliveries; null when the workspace has no such event. */
  getEvent(workspaceId: string, id: string): Promise<EventDetail | null>;
  listDeliveries(
    workspaceId: string,
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<Page<DeliveryRecord>>;
  /** The delivery with every attempt still kept; null when the workspace has no such one. */
  getDelivery(workspaceId: string, id: string): Promise<DeliveryDetail | null>;
  /**
   * Sends the delivery again, now: pending and due now, its schedule started over, and let
   * through its destination's circuit as its probe (decision 40). Never doubled: one a worker
   * holds is `in_flight`, changed in nothing. Null when the workspace has no such delivery.
   */
  retryDelivery(workspaceId: string, id: string): Promise<RetryOutcome | null>;
  /**
   * Queues again, as a retry would (through the circuit), the destination's `failed`
   * deliveries created at or after `since`; returns how many. The destination must exist and
   * be active (the caller checks).
   */
  recoverDeliveries(destinationId: string, since: Date): Promise<number>;
  /** The workspace's attempts (or one destination's) in each bucket of the window. */
  attemptBuckets(
    workspaceId: string,
    destinationId: string | null,
    window: AttemptWindow,
  ): Promise<AttemptBucket[]>;
  /** How each destination (or one) attempted since `since` has fared. */
  destinationHealth(
    workspaceId: string,
    destinationId: string | null,
    since: Date,
  ): Promise<DestinationHealth[]>;
}

/**
 * The DeliveryLog over any `Database`: the SQL is in `./sql/delivery-log.ts`. `onQueued` is
 * told when deliveries were made due, so that workers look now rather than at their next poll.
 */
export class SqlDeliveryLog extends SqlSlice implements DeliveryLog {
  readonly #onQueued: () => void;

  constructor(db: Database, clock: Clock, onQueued: () => void) {
    super(db, clock);
    this.#onQueued = onQueued;
  }

  listEvents(
    workspaceId: string,
    filter: EventFilter,
    page: PageRequest,
  ): Promise<Page<EventSummary>> {
    return selectEventPage(this.db, workspaceId, filter, page);
  }

  getEvent(workspaceId: string, id: string): Promise<EventDetail | null> {
    return selectEvent(this.db, workspaceId, id, this.clock.now().getTime());
  }

  listDeliveries(
    workspaceId: string,
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<Page<DeliveryRecord>> {
    return selectDeliveryPage(this.db, workspaceId, filter, page, this.clock.now().getTime());
  }

  getDelivery(workspaceId: string, id: string): Promise<DeliveryDetail | null> {
    return selectDelivery(this.db, workspaceId, id, this.clock.now().getTime());
  }

  async retryDelivery(workspaceId: string, id: string): Promise<RetryOutcome | null> {
    const now = this.clock.now().getTime();
    const outcome = await this.db.transaction((tx) =>
      requeueDelivery(this.db, tx, workspaceId, id, now),
    );
    if (outcome?.kind !== "queued") return outcome;
    this.#onQueued();
    await releaseHeldAfterRepair(this.db, outcome.delivery.destinationId, outcome.heldUntil, now);
    return { kind: "queued", delivery: outcome.delivery };
  }

  attemptBuckets(
    workspaceId: string,
    destinationId: string | null,
    window: AttemptWindow,
  ): Promise<AttemptBucket[]> {
    return selectAttemptBuckets(this.db, workspaceId, destinationId, window);
  }

  destinationHealth(
    workspaceId: string,
    destinationId: string | null,
    since: Date,
  ): Promise<DestinationHealth[]> {
    return selectDestinationHealth(this.db, workspaceId, destinationId, since);
  }

  async recoverDeliveries(destinationId: string, since: Date): Promise<number> {
    const queued = await requeueFailedSince(
      this.db,
      destinationId,
      since.getTime(),
      this.clock.now().getTime(),
    );
    if (queued > 0) this.#onQueued();
    return queued;
  }
}
