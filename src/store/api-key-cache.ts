import type { ApiKey } from "../interfaces.ts";

/** How long a found key is kept at most, should a lost connection go unnoticed. */
export const apiKeyCacheTtlMs = 10_000;
/** Keys kept at most (a process serves few: each platform's backend presents one or two). */
const maxKeys = 10_000;

/**
 * Tells whoever follows it of changes to something kept in memory elsewhere: `changed` after
 * each one, `hearing` as hearing them starts (true) and stops (false). Changes made while it
 * does not hear are not told.
 */
export interface ChangeFeed {
  start(handlers: { changed(): void; hearing(on: boolean): void }): void;
  stop(): Promise<void>;
}

/**
 * Unrevoked API keys by the hash of their token, kept while this process hears of every
 * change to `api_keys` (decision 63): a request's key costs no statement. It keeps nothing
 * until told that changes are heard, and forgets everything when one is heard, when hearing
 * starts (keys may have changed unheard) and when it stops. A lookup keeps its answer only if
 * no change was heard while it ran, so that an answer read before a revocation's commit and
 * returned after its notice is not kept. A key not found is not kept; a key found is kept
 * `apiKeyCacheTtlMs` at most. Expiry is for the caller to judge on each use.
 */
export class ApiKeyCache {
  readonly #now: () => number;
  /** Each kept key, with the time of the lookup that found it. */
  readonly #keys = new Map<string, { key: ApiKey; at: number }>();
  #hearing = false;
  /** Counts the changes heard and local, so that a lookup can tell whether one came. */
  #generation = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Follows `feed`: keys are kept from the moment it hears changes until it stops. */
  follow(feed: ChangeFeed): void {
    feed.start({
      changed: () => {
        this.forget();
      },
      hearing: (on) => {
        this.#hearing = on;
        this.forget();
      },
    });
  }

  /** Some key may have changed: nothing kept so far, nor by lookups under way, is used. */
  forget(): void {
    this.#generation += 1;
    this.#keys.clear();
  }

  /**
   * Runs this process's `change` to keys, then forgets what was kept if `changedKeys` says
   * its result changed some, or if it failed (it may have committed before its answer was
   * lost): the next request is answered without waiting for the change's notice.
   */
  async afterChange<T>(change: () => Promise<T>, changedKeys: (result: T) => boolean): Promise<T> {
    let result: T;
    try {
      result = await change();
    } catch (error) {
      this.forget();
      throw error;
    }
    if (changedKeys(result)) this.forget();
    return result;
  }

  /** The key with this token hash: kept, or from `lookUp`, and kept if it may be. */
  async find(
    tokenHash: string,
    lookUp: (tokenHash: string) => Promise<ApiKey | null>,
  ): Promise<ApiKey | null> {
    const now = this.#now();
    const kept = this.#keys.get(tokenHash);
    if (kept !== undefined) {
      // A clock set back (the lookup's time ahead of now) ends it too.
      if (now >= kept.at && now - kept.at < apiKeyCacheTtlMs) return kept.key;
      this.#keys.delete(tokenHash);
    }
    const generation = this.#generation;
    const key = await lookUp(tokenHash);
    if (key !== null && this.#hearing && generation === this.#generation) {
      // The oldest kept goes first: a Map iterates in the order of insertion.
      if (this.#keys.size >= maxKeys) this.#keys.delete(this.#keys.keys().next().value ?? "");
      // Timed from before the lookup: a lookup that waited does not add its wait.
      this.#keys.set(tokenHash, { key, at: now });
    }
    return key;
  }

  /** How many keys are kept (for tests). */
  get size(): number {
    return this.#keys.size;
  }
}
