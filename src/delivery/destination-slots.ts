import type { ClaimExclusions, ClaimRoom, ClaimedDelivery, HandOverRoom } from "../interfaces.ts";

export interface DestinationLimits {
  /** Attempts of one destination sent at once: its connections. One while half-open. */
  readonly sending: number;
  /** Deliveries a destination that answers fast may hold: being sent, or waiting for a turn. */
  readonly heldWhenFast: number;
  /** Deliveries of one workspace held at once. */
  readonly perWorkspace: number;
  /**
   * An exchange shorter than this shows the destination is fast (for `fastForMs`); a longer
   * one, or an attempt under way for longer, shows it is not.
   */
  readonly fastExchangeMs: number;
}

/**
 * What a destination that answers fast may hold, and so how many connections its pool may
 * open: half the worker's slots, or the per-destination limit if that is more.
 */
export function heldWhenFast(destinationConcurrency: number, deliveryConcurrency: number): number {
  return Math.max(destinationConcurrency, Math.floor(deliveryConcurrency / 2));
}

/** How long one fast exchange vouches for a destination. */
const fastForMs = 10_000;

/** How a delivery's turn came: at once, after a wait, or never (given up, see `shedSlow`). */
export type Turn = "at-once" | "after-wait" | "given-up";

interface Waiter {
  readonly delivery: ClaimedDelivery;
  readonly resolve: (turn: Turn) => void;
}

/** What the worker holds of one destination. */
interface DestinationLoad {
  readonly workspaceId: string;
  held: number;
  /** When each attempt being sent began, by delivery, oldest first. */
  readonly sending: Map<number, number>;
  /** Half-open: its circuit lets one attempt through at a time. */
  probing: boolean;
  readonly waiting: Waiter[];
}

/**
 * The worker's share-keeping per destination and workspace (decision 24). A delivery is held
 * from the moment the worker takes it until its exchange has ended; at most `sending` of one
 * destination are sent at once, each on a connection of its own, so no request waits for a
 * connection and its timeout is the exchange alone. The rest wait here for a turn, which does
 * not count against their timeout.
 *
 * How many a destination may hold depends on how it answers. One not known to be fast (new,
 * slow, or hanging) holds no more than it sends at once: it cannot tie up more of the worker.
 * One whose exchanges end within `fastExchangeMs` may hold `heldWhenFast`, so that a single
 * busy, healthy destination keeps the worker's whole pace; if it stops answering, its waiting
 * deliveries are given back (`shedSlow`) as soon as an attempt has been under way too long.
 */
export class DestinationSlots {
  readonly #limits: DestinationLimits;
  readonly #now: () => number;
  readonly #destinations = new Map<string, DestinationLoad>();
  readonly #workspaces = new Map<string, number>();
  /** Destinations shown to be fast, until when. */
  readonly #fastUntil = new Map<string, number>();

  constructor(limits: DestinationLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Whether the worker may take `delivery` now: its destination and workspace have room. */
  hasRoom(delivery: ClaimedDelivery): boolean {
    const { id, workspaceId, circuitOpens } = delivery.destination;
    const load = this.#destinations.get(id);
    const limit = circuitOpens > 0 ? 1 : this.#heldLimit(id, load);
    return (
      (load?.held ?? 0) < limit &&
      (this.#workspaces.get(workspaceId) ?? 0) < this.#limits.perWorkspace
    );
  }

  /**
   * Takes `delivery` and resolves when it may be sent (pair it with one `release`), or when it
   * was given up while it waited (`given-up`: nothing more to do for it here).
   */
  acquire(delivery: ClaimedDelivery): Promise<Turn> {
    const { id, workspaceId, circuitOpens } = delivery.destination;
    let load = this.#destinations.get(id);
    if (load === undefined) {
      load = { workspaceId, held: 0, sending: new Map(), probing: false, waiting: [] };
      this.#destinations.set(id, load);
    }
    load.held += 1;
    if (circuitOpens > 0) load.probing = true;
    this.#workspaces.set(workspaceId, (this.#workspaces.get(workspaceId) ?? 0) + 1);
    if (load.sending.size < this.#heldLimit(id, load)) {
      load.sending.set(delivery.seq, this.#now());
      return Promise.resolve("at-once");
    }
    const entry = load;
    return new Promise((resolve) => {
      entry.waiting.push({ delivery, resolve });
    });
  }

  /**
   * The exchange of `delivery` has ended, after `exchangeMs` (null: none was made): its turn
   * goes to the next. Returns whether its destination or workspace had no room before (claims
   * skipped them, so the worker should look again).
   */
  release(delivery: ClaimedDelivery, exchangeMs: number | null): boolean {
    const { id, workspaceId } = delivery.destination;
    const load = this.#destinations.get(id);
    if (load === undefined) return false;
    const hadNoRoom =
      load.held >= this.#heldLimit(id, load) ||
      (this.#workspaces.get(workspaceId) ?? 0) >= this.#limits.perWorkspace;
    load.sending.delete(delivery.seq);
    if (delivery.destination.circuitOpens > 0) load.probing = false;
    if (exchangeMs !== null) {
      if (exchangeMs < this.#limits.fastExchangeMs)
        this.#fastUntil.set(id, this.#now() + fastForMs);
      else this.#fastUntil.delete(id);
    }
    this.#drop(id, load, 1);
    while (load.waiting.length > 0 && load.sending.size < this.#heldLimit(id, load)) {
      const next = load.waiting.shift() as Waiter;
      load.sending.set(next.delivery.seq, this.#now());
      next.resolve("after-wait");
    }
    return hadNoRoom;
  }

  /**
   * Gives up the waiting deliveries of destinations that are not fast any more (an attempt
   * has been under way longer than `fastExchangeMs`), or of `destinationId`: they are
   * returned for the worker to give back to the queue. Also forgets expired fast marks.
   */
  shedSlow(destinationId?: string): ClaimedDelivery[] {
    const now = this.#now();
    const shed: ClaimedDelivery[] = [];
    for (const [id, load] of this.#destinations) {
      if (load.waiting.length === 0) continue;
      if (id !== destinationId && this.#isFast(id, load, now)) continue;
      this.#fastUntil.delete(id);
      const waiting = load.waiting.splice(0);
      for (const { delivery, resolve } of waiting) {
        shed.push(delivery);
        resolve("given-up");
      }
      this.#drop(id, load, waiting.length);
    }
    for (const [id, until] of this.#fastUntil) if (until <= now) this.#fastUntil.delete(id);
    return shed;
  }

  #drop(id: string, load: DestinationLoad, count: number): void {
    load.held -= count;
    const inWorkspace = (this.#workspaces.get(load.workspaceId) ?? count) - count;
    if (inWorkspace > 0) this.#workspaces.set(load.workspaceId, inWorkspace);
    else this.#workspaces.delete(load.workspaceId);
    if (load.held === 0) this.#destinations.delete(id);
  }

  #isFast(id: string, load: DestinationLoad | undefined, now: number): boolean {
    if ((this.#fastUntil.get(id) ?? 0) <= now) return false;
    const oldest = load?.sending.values().next().value;
    return oldest === undefined || now - oldest < this.#limits.fastExchangeMs;
  }

  #heldLimit(id: string, load: DestinationLoad | undefined): number {
    if (load?.probing === true) return 1;
    return this.#isFast(id, load, this.#now()) ? this.#limits.heldWhenFast : this.#limits.sending;
  }

  /** What a claim of up to `total` may take now. */
  room(total: number): ClaimRoom {
    const destinationRoom = new Map<string, number>();
    for (const [id, load] of this.#destinations) {
      destinationRoom.set(id, Math.max(0, this.#heldLimit(id, load) - load.held));
    }
    const workspaceRoom = new Map<string, number>();
    for (const [id, held] of this.#workspaces) {
      workspaceRoom.set(id, Math.max(0, this.#limits.perWorkspace - held));
    }
    return {
      total,
      // A destination the worker holds nothing of is not known to be fast now.
      perDestination: this.#limits.sending,
      destinationRoom,
      perWorkspace: this.#limits.perWorkspace,
      workspaceRoom,
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
      if (load.held >= this.#heldLimit(id, load)) full.push(id);
    }
    return full;
  }
}
