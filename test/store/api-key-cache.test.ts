import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ApiKey } from "../../src/interfaces.ts";
import { ApiKeyCache, apiKeyCacheTtlMs, type ChangeFeed } from "../../src/store/api-key-cache.ts";
import { manualClock } from "../support/clock.ts";

/** A feed the test drives: `hear(true)`, `change()`. */
function handFeed(): ChangeFeed & { hear(on: boolean): void; change(): void } {
  let handlers: { changed(): void; hearing(on: boolean): void } | null = null;
  return {
    start: (given) => {
      handlers = given;
    },
    stop: () => Promise.resolve(),
    hear: (on) => handlers?.hearing(on),
    change: () => handlers?.changed(),
  };
}

const key = (id: string): ApiKey => ({
  id,
  workspaceId: "ws_1",
  scopes: ["webhooks:read"],
  name: null,
  createdAt: new Date(0),
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
});

/** A cache, its feed and clock, and a database of keys that counts its lookups. */
function setUp(): {
  cache: ApiKeyCache;
  feed: ReturnType<typeof handFeed>;
  clock: ReturnType<typeof manualClock>;
  keys: Map<string, ApiKey>;
  lookUp: (hash: string) => Promise<ApiKey | null>;
  lookups: () => number;
} {
  const clock = manualClock(1_000_000);
  const cache = new ApiKeyCache(() => clock.now().getTime());
  const feed = handFeed();
  cache.follow(feed);
  const keys = new Map([["hash_a", key("key_a")]]);
  let lookups = 0;
  return {
    cache,
    feed,
    clock,
    keys,
    lookUp: (hash) => {
      lookups += 1;
      return Promise.resolve(keys.get(hash) ?? null);
    },
    lookups: () => lookups,
  };
}

describe("ApiKeyCache (decision 63)", () => {
  it("keeps nothing until its feed hears changes", async () => {
    const { cache, lookUp, lookups } = setUp();
    await cache.find("hash_a", lookUp);
    await cache.find("hash_a", lookUp);
    assert.equal(lookups(), 2);
    assert.equal(cache.size, 0);
  });

  it("keeps a found key while changes are heard, and never a key not found", async () => {
    const { cache, feed, keys, lookUp, lookups } = setUp();
    feed.hear(true);
    assert.equal((await cache.find("hash_a", lookUp))?.id, "key_a");
    keys.delete("hash_a");
    assert.equal((await cache.find("hash_a", lookUp))?.id, "key_a", "kept");
    assert.equal(lookups(), 1);
    assert.equal(await cache.find("hash_unknown", lookUp), null);
    assert.equal(await cache.find("hash_unknown", lookUp), null);
    assert.equal(lookups(), 3, "a key not found is looked up each time");
  });

  it("forgets everything when a change is heard, and when hearing stops or starts again", async () => {
    const { cache, feed, keys, lookUp } = setUp();
    feed.hear(true);
    await cache.find("hash_a", lookUp);
    keys.delete("hash_a");
    feed.change();
    assert.equal(await cache.find("hash_a", lookUp), null, "a change forgets");

    keys.set("hash_a", key("key_a"));
    await cache.find("hash_a", lookUp);
    assert.equal(cache.size, 1);
    feed.hear(false);
    assert.equal(cache.size, 0, "hearing stopped: changes may come unheard");
    await cache.find("hash_a", lookUp);
    assert.equal(cache.size, 0, "nothing kept while not hearing");
    feed.hear(true);
    await cache.find("hash_a", lookUp);
    assert.equal(cache.size, 1);
    feed.hear(true);
    assert.equal(cache.size, 0, "hearing again: what changed meanwhile was not heard");
  });

  it("does not keep an answer if a change was heard while it was being looked up", async () => {
    const { cache, feed } = setUp();
    feed.hear(true);
    let answer: (key: ApiKey | null) => void = () => undefined;
    const slowLookUp = (): Promise<ApiKey | null> =>
      new Promise((resolve) => {
        answer = resolve;
      });
    const found = cache.find("hash_a", slowLookUp);
    // The revocation commits and its notice arrives before the answer read before it.
    feed.change();
    answer(key("key_a"));
    assert.equal((await found)?.id, "key_a", "this request was already under way");
    assert.equal(cache.size, 0, "but the answer is not kept");

    const local = cache.find("hash_a", slowLookUp);
    cache.forget();
    answer(key("key_a"));
    await local;
    assert.equal(cache.size, 0, "nor after this process's own change");
  });

  it("keeps a key for the TTL at most, should a change go unheard", async () => {
    const { cache, feed, keys, clock, lookUp, lookups } = setUp();
    feed.hear(true);
    await cache.find("hash_a", lookUp);
    keys.delete("hash_a");
    clock.advance(apiKeyCacheTtlMs - 1);
    assert.equal((await cache.find("hash_a", lookUp))?.id, "key_a");
    clock.advance(1);
    assert.equal(await cache.find("hash_a", lookUp), null);
    assert.equal(lookups(), 2);
  });

  it("times a key from before its lookup, and drops it when the clock goes back", async () => {
    const { cache, feed, keys, clock, lookUp } = setUp();
    feed.hear(true);
    const slowLookUp = async (hash: string): Promise<ApiKey | null> => {
      clock.advance(1000);
      return lookUp(hash);
    };
    await cache.find("hash_a", slowLookUp);
    keys.delete("hash_a");
    clock.advance(apiKeyCacheTtlMs - 1000 - 1);
    assert.equal((await cache.find("hash_a", lookUp))?.id, "key_a");
    clock.advance(1);
    assert.equal(await cache.find("hash_a", lookUp), null, "the lookup's second counted");

    keys.set("hash_a", key("key_a"));
    await cache.find("hash_a", lookUp);
    keys.delete("hash_a");
    clock.advance(-60_000);
    assert.equal(await cache.find("hash_a", lookUp), null, "a clock set back ends it");
  });

  it("forgets after this process's change if it changed a key, or failed", async () => {
    const { cache, feed, lookUp } = setUp();
    feed.hear(true);
    await cache.find("hash_a", lookUp);
    assert.equal(
      await cache.afterChange(
        () => Promise.resolve(false),
        (changed) => changed,
      ),
      false,
    );
    assert.equal(cache.size, 1, "a change that changed nothing forgets nothing");
    await assert.rejects(
      cache.afterChange(
        () => Promise.reject(new Error("answer lost")),
        () => false,
      ),
      /answer lost/,
    );
    assert.equal(cache.size, 0, "a failed change may have committed");
    await cache.find("hash_a", lookUp);
    assert.equal(
      await cache.afterChange(
        () => Promise.resolve(true),
        (changed) => changed,
      ),
      true,
    );
    assert.equal(cache.size, 0);
  });

  it("keeps 10,000 keys at most, the oldest going first", async () => {
    const { cache, feed, keys, lookUp, lookups } = setUp();
    feed.hear(true);
    for (let i = 0; i < 10_001; i += 1) {
      keys.set(`hash_${i}`, key(`key_${i}`));
      await cache.find(`hash_${i}`, lookUp);
    }
    assert.equal(cache.size, 10_000);
    const before = lookups();
    await cache.find("hash_10000", lookUp);
    await cache.find("hash_1", lookUp);
    assert.equal(lookups(), before, "the newest are kept");
    await cache.find("hash_0", lookUp);
    assert.equal(lookups(), before + 1, "the oldest went");
  });
});
