import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { HttpSender } from "../../src/delivery/http-sender.ts";
import { RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import { SigningKeys } from "../../src/delivery/signing-keys.ts";
import { DeliveryWorker } from "../../src/delivery/worker.ts";
import type { ClaimedDelivery, Store } from "../../src/interfaces.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { openStore } from "../../src/store/open-store.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The worker's side of the hand-over (decision 19): it takes a publish's deliveries only while
 * it is caught up, so that a backlog is still sent oldest due first. Its attempts here wait on
 * a resolver the test holds, then fail to resolve (a retry an hour later): no network.
 */
describe("fresh deliveries handed to the worker in the same process", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  let sender: HttpSender;
  let counter = 0;
  /** Lookups waiting for the test to let them fail. */
  const held: (() => void)[] = [];
  const releaseLookups = (): void => {
    for (const release of held.splice(0)) release();
  };
  /** Waits until `check` holds (it may act meanwhile). */
  const until = (check: () => boolean, what: string): Promise<true> =>
    eventually(() => Promise.resolve(check() ? true : undefined), { what });

  before(async () => {
    dir = await tempDir();
    store = await openStore(await testDatabaseLocation(join(dir.path, "hand-over")), {
      now: () => new Date(),
    });
    sender = new HttpSender({ connectionsPerOrigin: 1, timeoutMs: 1000 });
  });
  after(async () => {
    releaseLookups();
    await sender.close();
    await store.close();
    await dir.cleanup();
  });

  const publish = async (workspaceId: string): Promise<string> => {
    counter += 1;
    const id = `evt_hand_${counter}`;
    await store.publishEvent({
      id,
      workspaceId,
      type: "job.completed",
      body: `{"n":${counter}}`,
      createdAt: new Date(),
    });
    return id;
  };

  it("takes fresh deliveries only while no backlog waits, and the backlog goes first", async () => {
    const workspace = (await store.createWorkspace({ id: "ws_hand", name: "hand" })).id;
    await store.createDestination({
      id: "dst_hand",
      workspaceId: workspace,
      url: "https://hooks.test/hand",
      events: ["*"],
      secretCiphertext: "sealed",
    });
    const backlog = [await publish(workspace), await publish(workspace), await publish(workspace)];

    const worker = new DeliveryWorker(
      store,
      {
        signingKeys: new SigningKeys(new SecretBox(Buffer.alloc(32, 1))),
        resolver: {
          resolve: () =>
            new Promise((_, reject) => {
              held.push(() => {
                reject(new Error("held lookup let go"));
              });
            }),
        },
        addressPolicy: new AddressPolicy(),
        sender,
        schedule: new RetrySchedule([3_600_000]),
        clock: { now: () => new Date() },
        timeoutMs: 1000,
      },
      pino({ level: "silent" }),
      { concurrency: 2, leaseMs: 60_000, idlePollMs: () => 50 },
    );
    /** Which events the worker got, and how: claimed by its loop or handed by a publish. */
    const handed: string[] = [];
    store.handDeliveriesTo({
      owner: worker.owner,
      leaseMs: worker.leaseMs,
      reserve: () => worker.reserve(),
      take: (reserved: number, deliveries: readonly ClaimedDelivery[]) => {
        handed.push(...deliveries.map((delivery) => delivery.eventId));
        worker.take(reserved, deliveries);
      },
      wake: () => {
        worker.wake();
      },
    });
    assert.equal(worker.reserve(), 0, "a worker that has not started takes nothing");
    worker.start();
    try {
      // Two slots, three due: the loop claims the two oldest, and knows one more waits.
      await until(() => held.length === 2, "two attempts under way");
      const fresh = await publish(workspace);
      assert.equal(handed.length, 0, "with a backlog, nothing is handed over");

      // The slots free: the loop claims the oldest due (the third of the backlog) before the
      // fresh one, each in its turn.
      releaseLookups();
      await until(() => held.length === 2, "the rest of the backlog and the fresh event under way");
      releaseLookups();
      const last = await store.getLastDelivery(workspace, "dst_hand");
      assert.equal(last?.notificationId, fresh);

      // Caught up now (its last claim found less than it had room for): a publish is handed
      // over whole, and is attempted without a claim.
      await eventually(
        async () =>
          (await store.getLastDelivery(workspace, "dst_hand"))?.attempts === 1 ? true : undefined,
        { what: "the fresh event attempted" },
      );
      await until(() => {
        if (held.length > 0) releaseLookups();
        // The first reservation that is granted is given back at once, unused.
        return worker.reserve() > 0;
      }, "the worker caught up");
      worker.take(2, []);
      const next = await publish(workspace);
      assert.deepEqual(handed, [next]);
      assert.equal(
        (await store.claimDueDeliveries("elsewhere", 10, 1000)).length,
        0,
        "the handed delivery is claimed already",
      );
      await until(() => held.length === 1, "the handed delivery attempted");
      assert.ok(backlog.every((id) => !handed.includes(id)));
    } finally {
      releaseLookups();
      store.handDeliveriesTo(null);
      await worker.stop();
    }
  });
});
