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
import { PortSet } from "../../src/net/port-set.ts";
import { DeliveryEvents } from "../../src/observability/delivery-events.ts";
import { openStore } from "../../src/store/open-store.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { claimUpTo, withOverrides, workspaceWithDestination } from "../support/delivery.ts";
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
    sender = new HttpSender({ timeoutMs: 1000 });
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
    await store.queue.publishEvent({
      id,
      workspaceId,
      type: "job.completed",
      apiVersion: "2026-11-01",
      body: `{"n":${counter}}`,
      createdAt: new Date(),
    });
    return id;
  };

  /**
   * A worker on the store, its lookups held by the test (or failing at once), registered as
   * the store's taker; it records which events it claimed, in order, and which it was handed.
   */
  const startWorker = (options: { holdLookups: boolean; concurrency: number }) => {
    const claimed: string[] = [];
    const handed: string[] = [];
    const polls = { nextDueAt: 0 };
    /** Called as each claim starts, before it reaches the store. */
    const hooks: { duringClaim: (limit: number) => void } = { duringClaim: () => undefined };
    const claiming = withOverrides(store.queue, {
      claimDueDeliveries: async (owner, room, leaseMs) => {
        hooks.duringClaim(room.total);
        const deliveries = await store.queue.claimDueDeliveries(owner, room, leaseMs);
        claimed.push(...deliveries.map((delivery) => delivery.eventId));
        return deliveries;
      },
      nextDueAt: (exclusions) => {
        polls.nextDueAt += 1;
        return store.queue.nextDueAt(exclusions);
      },
    });
    const worker = new DeliveryWorker(
      { queue: claiming, health: store.health },
      {
        signingKeys: new SigningKeys(new SecretBox(Buffer.alloc(32, 1))),
        resolver: {
          resolve: () =>
            new Promise((_, reject) => {
              const fail = (): void => {
                reject(new Error("the lookup failed"));
              };
              if (options.holdLookups) held.push(fail);
              else fail();
            }),
        },
        addressPolicy: new AddressPolicy(),
        destinationPorts: new PortSet(["443"]),
        sender,
        schedule: new RetrySchedule([3_600_000]),
        clock: { now: () => new Date() },
        timeoutMs: 1000,
      },
      pino({ level: "silent" }),
      {
        concurrency: options.concurrency,
        destinationConcurrency: options.concurrency,
        workspaceConcurrency: options.concurrency,
        circuitThreshold: 10,
        leaseMs: 60_000,
        idlePollMs: () => 50,
      },
      new DeliveryEvents(),
    );
    store.queue.handDeliveriesTo({
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
    assert.equal(worker.reserve().slots, 0, "a worker that has not started takes nothing");
    worker.start();
    return {
      worker,
      claimed,
      handed,
      polls,
      hooks,
      stop: async (): Promise<void> => {
        releaseLookups();
        store.queue.handDeliveriesTo(null);
        await worker.stop();
      },
    };
  };

  it("takes fresh deliveries only while no backlog waits, and the backlog goes first", async () => {
    const workspace = await workspaceWithDestination(store, "hand");
    const backlog = [await publish(workspace), await publish(workspace), await publish(workspace)];
    const { worker, claimed, handed, stop } = startWorker({ holdLookups: true, concurrency: 2 });
    try {
      // Two slots, three due: the loop claims the two oldest, and knows one more waits.
      await until(() => held.length === 2, "two attempts under way");
      const fresh = await publish(workspace);
      assert.equal(handed.length, 0, "with a backlog, nothing is handed over");

      // The slots free: the loop claims the rest of the backlog, then the fresh one.
      releaseLookups();
      await until(
        () => claimed.length === 4,
        "the rest of the backlog and the fresh event claimed",
      );
      assert.deepEqual(claimed, [...backlog, fresh], "oldest due first");
      releaseLookups();

      // Caught up now (its last claim found less than it had room for): a publish is handed
      // over whole, and is attempted without a claim.
      let granted = 0;
      await until(() => {
        if (held.length > 0) releaseLookups();
        granted = worker.reserve().slots;
        return granted > 0;
      }, "the worker caught up");
      worker.take(granted, []); // the probe's reservation, given back unused
      const next = await publish(workspace);
      assert.deepEqual(handed, [next]);
      assert.equal(
        (await claimUpTo(store, "elsewhere", 10, 1000)).length,
        0,
        "the handed delivery is claimed already",
      );
      await until(() => held.length === 1, "the handed delivery attempted");
      assert.equal(claimed.length, 4, "it was never claimed by the loop");
    } finally {
      await stop();
    }
  });

  it("waits for a publish's reservation without polling, then claims what fell due meanwhile", async () => {
    const workspace = await workspaceWithDestination(store, "steady");
    // A delivery claimed elsewhere whose lease ends soon: due again, and nobody announces it.
    const abandoned = await publish(workspace);
    const [lost] = await claimUpTo(store, "crashed", 1, 200);
    assert.equal(lost?.eventId, abandoned);
    const { worker, claimed, polls, stop } = startWorker({ holdLookups: false, concurrency: 4 });
    try {
      // A publish batch takes every free slot, and is slow to commit.
      let granted = 0;
      await until(() => (granted = worker.reserve().slots) > 0, "the worker caught up");
      assert.equal(granted, 4);
      const before = polls.nextDueAt;
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.ok(
        polls.nextDueAt - before < 30,
        `the loop polled ${polls.nextDueAt - before} times in 600 ms (idle poll: 50 ms)`,
      );
      assert.ok(!claimed.includes(abandoned), "no slot was free for it");
      assert.equal(worker.reserve().slots, 0, "nothing is free while the reservation holds");

      // The batch commits with nothing for the worker: the slots come back, and the delivery
      // that fell due is claimed before any fresh one is taken.
      worker.take(granted, []);
      assert.equal(worker.reserve().slots, 0, "something is due: no fresh deliveries are taken");
      await until(() => claimed.includes(abandoned), "the abandoned delivery claimed");
    } finally {
      await stop();
    }
  });

  it("never lets a claim and a publish's reservation count the same free slot", async () => {
    const workspace = await workspaceWithDestination(store, "slots");
    const { worker, hooks, stop } = startWorker({ holdLookups: true, concurrency: 4 });
    try {
      let granted = 0;
      await until(() => (granted = worker.reserve().slots) > 0, "the worker caught up");
      worker.take(granted, []);
      // One delivery, handed over; its attempt waits on the test's lookup.
      await publish(workspace);
      await until(() => held.length === 1, "the handed delivery attempted");
      // When it fails, a retry is scheduled and the loop claims with every free slot; a publish
      // batch starting during that claim finds none left for it.
      const during: { limit: number; reserved: number }[] = [];
      hooks.duringClaim = (limit) => {
        during.push({ limit, reserved: worker.reserve().slots });
      };
      releaseLookups();
      await until(() => during.length > 0, "the loop's claim");
      const [first] = during;
      assert.ok(first !== undefined && first.limit > 0);
      assert.equal(first.reserved, 0, `a claim of ${first.limit} left slots to reserve`);
    } finally {
      await stop();
    }
  });
});
