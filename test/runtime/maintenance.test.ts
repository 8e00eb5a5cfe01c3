import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Store } from "../../src/interfaces.ts";
import { startMaintenance } from "../../src/runtime/maintenance.ts";
import type { Housekeeping } from "../../src/store/housekeeping.ts";
import { openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { memoryLogger } from "../support/memory-log.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The hourly maintenance runs each of its tasks whatever the others did: one that fails is
 * logged with its name, and the rest of the round still runs.
 */
describe("maintenance rounds", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  const clock = manualClock(Date.UTC(2026, 10, 26, 12));

  before(async () => {
    dir = await tempDir();
    store = await openStore(await testDatabaseLocation(join(dir.path, "data")), clock);
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  it("runs every task when one fails, and names the one that failed", async () => {
    const real = store.housekeeping;
    const called: string[] = [];
    const failing = new Error("the database went away");
    // The store's own housekeeping, each call noted, its event pruning failing.
    const housekeeping: Housekeeping = {
      pruneAttempts: (before) => (called.push("pruneAttempts"), real.pruneAttempts(before)),
      pruneEvents: () => (called.push("pruneEvents"), Promise.reject(failing)),
      purgeIdempotencyKeys: () => (
        called.push("purgeIdempotencyKeys"),
        real.purgeIdempotencyKeys()
      ),
      purgeAuthRecords: (options) => (
        called.push("purgeAuthRecords"),
        real.purgeAuthRecords(options)
      ),
      adoptOlderDeliveries: () => (
        called.push("adoptOlderDeliveries"),
        real.adoptOlderDeliveries()
      ),
      expireListenSessions: (before, unnamed) => (
        called.push("expireListenSessions"),
        real.expireListenSessions(before, unnamed)
      ),
    };
    const log = memoryLogger();
    const maintenance = startMaintenance({ housekeeping }, clock, log.logger, {
      attemptRetentionMs: 86_400_000,
      eventRetentionMs: 86_400_000,
      listenSessionTtlMs: 86_400_000,
    });
    await maintenance.stop();

    assert.deepEqual(called, [
      "pruneAttempts",
      "pruneEvents",
      "purgeIdempotencyKeys",
      "purgeAuthRecords",
      "expireListenSessions",
      "adoptOlderDeliveries",
    ]);
    const errors = log.lines().filter((line) => line.level === 50);
    assert.equal(errors.length, 1, log.text());
    const [error] = errors;
    assert.ok(error !== undefined);
    assert.equal(error.task, "prune_events");
    assert.match(JSON.stringify(error.err), /the database went away/);
  });
});
