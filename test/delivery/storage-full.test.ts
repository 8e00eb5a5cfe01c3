import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { HttpSender } from "../../src/delivery/http-sender.ts";
import { RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import { SigningKeys } from "../../src/delivery/signing-keys.ts";
import { DeliveryWorker } from "../../src/delivery/worker.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { PortSet } from "../../src/net/port-set.ts";
import { DeliveryEvents } from "../../src/observability/delivery-events.ts";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { SqlStore } from "../../src/store/sql-store.ts";
import { withOverrides } from "../support/delivery.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { mountSmallDisk, postgresDiskFull, type SmallDisk } from "../support/full-disk.ts";
import { tempDir } from "../support/temp.ts";

const leaseMs = 300;

/**
 * A worker whose report of an attempt meets a full disk (decision 22): on SQLite a real one
 * (a small tmpfs, filled), on PostgreSQL the server's own disk_full error from every write.
 * Its attempts wait on a resolver the test holds, then fail to resolve (a retry an hour
 * later): no network.
 */
describe("the worker while the disk is full", () => {
  let skip: string | null = null;
  let disk: SmallDisk | null = null;
  let dir: { path: string; cleanup: () => Promise<void> } | null = null;
  let location: string;
  let db: Database;
  let store: SqlStore;
  let sender: HttpSender;

  before(async () => {
    if (testBackend === "sqlite") {
      const mounted = await mountSmallDisk(8);
      if (typeof mounted === "string") {
        skip = mounted;
        return;
      }
      disk = mounted;
      location = join(disk.path, "svc.db");
    } else {
      dir = await tempDir();
      location = await testDatabaseLocation(join(dir.path, "worker"));
    }
    db = openDatabase(location);
    await migrate(db);
    store = new SqlStore(db, { now: () => new Date() });
    sender = new HttpSender({ timeoutMs: 1000 });
  });
  after(async () => {
    if (skip !== null) return;
    await sender.close();
    await store.close();
    await disk?.cleanup();
    await dir?.cleanup();
  });

  /** Fills the disk; resolves to what frees it. */
  const fillStorage = async (): Promise<() => Promise<void>> => {
    if (disk === null) {
      const full = await postgresDiskFull(location);
      return () => full.free();
    }
    const small = disk;
    // An empty WAL: the report must take new space, not reuse the file's old frames.
    await db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    await small.fill();
    return () => small.free();
  };

  it("keeps the result of an attempt until it can be recorded, past the lease, and claims nothing meanwhile", async (t) => {
    if (skip !== null) {
      t.skip(skip);
      return;
    }
    const workspaceId = (await store.credentials.createWorkspace({ id: "ws_full", name: "full" }))
      .id;
    await store.destinations.createDestination({
      id: "dst_full",
      workspaceId,
      url: "https://hooks.test/full",
      events: ["*"],
      secretCiphertext: "sealed",
    });
    await store.queue.publishEvent({
      id: "evt_full",
      workspaceId,
      type: "job.completed",
      apiVersion: "2026-11-01",
      body: "{}",
      createdAt: new Date(),
    });

    const held: (() => void)[] = [];
    let lookups = 0;
    let claimsWhileFull = 0;
    const watched = {
      queue: withOverrides(store.queue, {
        claimDueDeliveries: (owner, limit, lease) => {
          if (store.health.storageFullSince() !== null) claimsWhileFull += 1;
          return store.queue.claimDueDeliveries(owner, limit, lease);
        },
      }),
      health: store.health,
    };
    const retries: string[] = [];
    const logger = pino(
      { level: "warn" },
      {
        write: (line: string) => {
          if (line.includes("storage full; retrying report")) retries.push(line);
        },
      },
    );
    const worker = new DeliveryWorker(
      watched,
      {
        signingKeys: new SigningKeys(new SecretBox(Buffer.alloc(32, 1))),
        resolver: {
          resolve: () =>
            new Promise((_, reject) => {
              lookups += 1;
              held.push(() => {
                reject(new Error("the lookup failed"));
              });
            }),
        },
        addressPolicy: new AddressPolicy(),
        destinationPorts: new PortSet(["443"]),
        sender,
        schedule: new RetrySchedule([3_600_000]),
        clock: { now: () => new Date() },
        timeoutMs: 1000,
      },
      logger,
      {
        concurrency: 1,
        destinationConcurrency: 1,
        workspaceConcurrency: 1,
        circuitThreshold: 10,
        leaseMs,
        idlePollMs: () => 50,
      },
      new DeliveryEvents(),
    );
    worker.start();
    let free: (() => Promise<void>) | null = null;
    try {
      await eventually(() => Promise.resolve(held.length === 1 ? true : undefined), {
        what: "the attempt under way",
      });
      const claimedAt = Date.now();
      free = await fillStorage();
      for (const release of held.splice(0)) release();

      // Back-off 100, 200, 400, 800 ms: the fourth retry comes well after the lease's end.
      await eventually(() => Promise.resolve(retries.length >= 4 ? true : undefined), {
        what: "the report retried past the lease",
      });
      assert.ok(Date.now() > claimedAt + leaseMs, "the lease has ended");
      assert.notEqual(store.health.storageFullSince(), null);
      assert.equal(lookups, 1, "not attempted again while its result waits");
      assert.equal(claimsWhileFull, 0, "no claim while writes fail for lack of space");

      await free();
      free = null;
      const row = await eventually(
        async () => {
          const [delivery] = await db.query<{
            attempts: number | string;
            lease_owner: string | null;
          }>("SELECT attempts, lease_owner FROM deliveries");
          return delivery?.lease_owner === null ? delivery : undefined;
        },
        { what: "the result recorded once space was freed" },
      );
      assert.equal(Number(row.attempts), 1);
      assert.equal(store.health.storageFullSince(), null);
      assert.equal(lookups, 1, "the notification was attempted once");
    } finally {
      await free?.();
      for (const release of held.splice(0)) release();
      await worker.stop();
    }
  });
});
