import type { ClaimExclusions, ClaimRoom, ClaimedDelivery, HandOverRoom } from "../interfaces.ts";

export interface DestinationLimits {
  /** Attempts of one destination in flight at once (one while its circuit is half-open). */
  readonly perDestination: number;
  /** Deliveries of one workspace that a worker holds before it claims others' first. */
  readonly perWorkspace: number;
}

/** What the worker holds of one destination: being sent, and waiting for a turn. */
interface DestinationLoad {
  readonly workspaceId: string;
  active: number;
  sending: number;
  /** Half-open: its circuit lets one attempt through at a time. */
  probing: boolean;
  readonly waiting: (() => void)[];
}

/**
 * The worker's per-destination and per-workspace bookkeeping (decision 22). A delivery is
 * `active` from the moment the worker takes it until its attempt has ended (its result may
 * still be being recorded); at most `perDestination` of one destination are sent at once, and
 * the rest wait here for a turn. Claims ask for no more than the room left (`room`), so only
 * deliveries handed over at publish can wait, and then only a publish batch's worth.
 */
export class DestinationSlots {
  readonly #limits: DestinationLimits;
  readonly #destinations = new Map<string, DestinationLoad>();
  readonly #workspaces = new Map<string, number>();

  constructor(limits: DestinationLimits) {
    this.#limits = limits;
  }

  /** Resolves when `delivery` may be sent; pair every call with one `release`. */
  acquire(delivery: ClaimedDelivery): Promise<void> {
    const { id, workspaceId, circuitOpens } = delivery.destination;
    let load = this.#destinations.get(id);
    if (load === undefined) {
      load = { workspaceId, active: 0, sending: 0, probing: false, waiting: [] };
      this.#destinations.set(id, load);
    }
    load.active += 1;
    if (circuitOpens > 0) load.probing = true;
    this.#workspaces.set(workspaceId, (this.#workspaces.get(workspaceId) ?? 0) + 1);
    const entry = load;
    if (entry.sending < this.#limitOf(entry)) {
      entry.sending += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      entry.waiting.push(() => {
        entry.sending += 1;
        resolve();
      });
    });
  }

  /** The attempt of `delivery` has ended (or will not be made): its turn goes to the next. */
  release(delivery: ClaimedDelivery): void {
    const { id, workspaceId } = delivery.destination;
    const load = this.#destinations.get(id);
    if (load === undefined) return;
    load.active -= 1;
    load.sending -= 1;
    if (delivery.destination.circuitOpens > 0) load.probing = false;
    const inWorkspace = (this.#workspaces.get(workspaceId) ?? 1) - 1;
    if (inWorkspace > 0) this.#workspaces.set(workspaceId, inWorkspace);
    else this.#workspaces.delete(workspaceId);
    while (load.waiting.length > 0 && load.sending < this.#limitOf(load)) load.waiting.shift()?.();
    if (load.active === 0) this.#destinations.delete(id);
  }

  #limitOf(load: DestinationLoad): number {
    return load.probing ? 1 : this.#limits.perDestination;
  }

  /** What a claim of up to `total` may take now. */
  room(total: number): ClaimRoom {
    const activeByDestination = new Map<string, number>();
    for (const [id, load] of this.#destinations) activeByDestination.set(id, load.active);
    return {
      total,
      destinationLimit: this.#limits.perDestination,
      workspaceLimit: this.#limits.perWorkspace,
      activeByDestination,
      activeByWorkspace: new Map(this.#workspaces),
      exclusions: this.exclusions(),
    };
  }

  /** The destinations and workspaces with no room left. */
  exclusions(): ClaimExclusions {
    return {
      destinations: this.#fullDestinations(),
      workspaces: [...this.#workspaces]
        .filter(([, count]) => count >= this.#limits.perWorkspace)
        .map(([id]) => id),
    };
  }

  /** A publish batch's hand-over: `slots`, and none of a destination with no room left. */
  handOver(slots: number): HandOverRoom {
    return { slots, excludedDestinations: this.#fullDestinations() };
  }

  #fullDestinations(): string[] {
    const full: string[] = [];
    for (const [id, load] of this.#destinations) {
      if (load.active >= this.#limitOf(load)) full.push(id);
    }
    return full;
  }
}
