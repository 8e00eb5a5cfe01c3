import type { Database, SqlExecutor } from "./database.ts";
import { listenSessionEnded, type OperationalNotice } from "../operations/operational-events.ts";
import { insertOperationalEvents } from "./sql/operational-events.ts";
import { syncOperationsEndpoints, type EndpointSecrets } from "./sql/operations-endpoints.ts";
import { SqlSlice } from "./sql-slice.ts";
import type { Clock } from "../interfaces.ts";

/** An operations endpoint as the settings give it. */
export interface OperationsEndpoint {
  readonly url: string;
  /** `whsec_…`: the endpoint verifies its notices with it. */
  readonly secret: string;
}

/** What the start-up sync changed among the operations workspace's destinations. */
export interface EndpointsSync {
  readonly kept: number;
  readonly added: number;
  readonly removed: number;
}

/**
 * The operator's notices (decision 48): where they go and how often a failing destination is
 * told. Until `configure` is given endpoints, the other slices publish no notice and run not
 * one statement more than without this feature.
 */
export interface Operations {
  /**
   * Makes the operations workspace's destinations exactly `endpoints` (matched by URL and
   * secret; others deleted, missing ones made), then publishes notices from this process if
   * there are any. Every process of a deployment must be given the same endpoints.
   */
  configure(
    endpoints: readonly OperationsEndpoint[],
    options: { failingIntervalMs: number; secrets: EndpointSecrets },
  ): Promise<EndpointsSync>;

  /** Publishes notices in a transaction of their own (those that follow no change of the store). */
  publish(notices: readonly OperationalNotice[]): Promise<void>;
}

/** The Operations slice over any `Database`; the other slices publish through it. */
export class SqlOperations extends SqlSlice implements Operations {
  /** Null until endpoints are configured: no notice is published. */
  #failingIntervalMs: number | null = null;
  readonly #queued: () => void;

  /** `queued` is told after a commit that queued notices (the worker wakes for them). */
  constructor(db: Database, clock: Clock, queued: () => void) {
    super(db, clock);
    this.#queued = queued;
  }

  /** Whether notices are published; false costs the other slices nothing. */
  get enabled(): boolean {
    return this.#failingIntervalMs !== null;
  }

  /** The least time between two `destination.failing` of one destination; 0 when not enabled. */
  get failingIntervalMs(): number {
    return this.#failingIntervalMs ?? 0;
  }

  async configure(
    endpoints: readonly OperationsEndpoint[],
    options: { failingIntervalMs: number; secrets: EndpointSecrets },
  ): Promise<EndpointsSync> {
    const sync = await this.db.transaction((tx) =>
      syncOperationsEndpoints(this.db, tx, endpoints, options.secrets, this.now()),
    );
    this.#failingIntervalMs = endpoints.length > 0 ? options.failingIntervalMs : null;
    return sync;
  }

  /**
   * Call inside the transaction of the change `notices` tell of; does nothing unless enabled.
   * Returns whether any was written: then call `published` after the commit.
   */
  async publishWithin(tx: SqlExecutor, notices: readonly OperationalNotice[]): Promise<boolean> {
    if (!this.enabled || notices.length === 0) return false;
    await insertOperationalEvents(tx, notices, this.now());
    return true;
  }

  /** After the commit of a `publishWithin` that wrote: wakes the workers. */
  published(): void {
    this.#queued();
  }

  /**
   * The `onEnded` of `endListenSession` inside `tx`: publishes `listen_session.ended`;
   * undefined when not enabled. Call `published` after the commit.
   */
  listenSessionEnded(
    tx: SqlExecutor,
    sessionId: string,
    reason: string,
  ): ((workspaceId: string) => Promise<void>) | undefined {
    if (!this.enabled) return undefined;
    return async (workspaceId) => {
      await this.publishWithin(tx, [listenSessionEnded(workspaceId, sessionId, reason)]);
    };
  }

  async publish(notices: readonly OperationalNotice[]): Promise<void> {
    if (!this.enabled || notices.length === 0) return;
    await this.db.transaction((tx) => insertOperationalEvents(tx, notices, this.now()));
    this.published();
  }
}
