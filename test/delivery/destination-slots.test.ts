import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DestinationSlots } from "../../src/delivery/destination-slots.ts";
import type { ClaimedDelivery } from "../../src/interfaces.ts";

let seq = 0;
function delivery(destination: string, workspace = "ws_1", circuitOpens = 0): ClaimedDelivery {
  seq += 1;
  return {
    seq,
    lease: "worker:lease",
    eventId: `evt_${seq}`,
    eventType: "job.completed",
    body: "{}",
    attempts: 0,
    retryBase: 0,
    traceparent: null,
    destination: {
      id: destination,
      url: "https://hooks.test/",
      active: true,
      deleted: false,
      secretCiphertext: "sealed",
      workspaceId: workspace,
      circuitOpens,
    },
  };
}

/** Decision 24: how much of the worker one destination and one workspace may hold. */
describe("a worker's share per destination and workspace", () => {
  const setUp = () => {
    let now = 0;
    const slots = new DestinationSlots(
      { sending: 2, heldWhenFast: 5, perWorkspace: 6, fastExchangeMs: 1000 },
      () => now,
    );
    return { slots, advance: (ms: number) => (now += ms) };
  };

  it("lets a destination not known to be fast hold only what it may send at once", async () => {
    const { slots } = setUp();
    const [a, b, c] = [delivery("dst_new"), delivery("dst_new"), delivery("dst_new")];
    assert.equal(await slots.acquire(a), "at-once");
    assert.equal(slots.hasRoom(b), true);
    assert.equal(await slots.acquire(b), "at-once");
    assert.equal(slots.hasRoom(c), false, "two held: no more");
    assert.deepEqual(slots.exclusions().destinations, ["dst_new"]);
    assert.equal(slots.room(10).perDestination, 2);
  });

  it("lets a destination that answered fast hold and send more, until an attempt is under way too long", async () => {
    const { slots, advance } = setUp();
    const first = delivery("dst_fast");
    await slots.acquire(first);
    slots.release(first, 20);
    const held = [1, 2, 3, 4, 5].map(() => delivery("dst_fast"));
    for (const each of held) assert.equal(await slots.acquire(each), "at-once");
    assert.equal(slots.hasRoom(delivery("dst_fast")), false, "five held: its fast share");

    advance(1500); // every attempt of it has been under way for 1.5 s: not fast any more
    assert.deepEqual(slots.exclusions().destinations, ["dst_fast"]);
    assert.equal(slots.room(10).destinationRoom.get("dst_fast"), 0);
  });

  it("gives up what waits for a destination that stopped answering, and wakes what waits for one that answers", async () => {
    const { slots, advance } = setUp();
    const warmUp = delivery("dst_x");
    await slots.acquire(warmUp);
    slots.release(warmUp, 20); // fast: it may hold five
    const held = [1, 2, 3, 4, 5].map(() => delivery("dst_x"));
    for (const each of held) await slots.acquire(each);
    // Handed over past its room (a claim and a publish crossed): it waits for a turn.
    const extra = delivery("dst_x");
    const waiting = slots.acquire(extra);
    advance(100);
    assert.deepEqual(slots.shedSlow(), [], "still fast: nothing is shed");
    slots.release(held[0] as ClaimedDelivery, 100);
    assert.equal(await waiting, "after-wait", "its turn came");

    const late = delivery("dst_x");
    const stuck = slots.acquire(late);
    advance(1200);
    assert.deepEqual(slots.shedSlow(), [late], "an attempt under way 1.3 s: what waits goes back");
    assert.equal(await stuck, "given-up");
  });

  it("sheds a destination's waiting deliveries when its circuit opens, fast or not", async () => {
    const { slots } = setUp();
    const [a, b, c] = [delivery("dst_c"), delivery("dst_c"), delivery("dst_c")];
    await slots.acquire(a);
    await slots.acquire(b);
    const waiting = slots.acquire(c);
    assert.deepEqual(slots.shedSlow("dst_c"), [c]);
    assert.equal(await waiting, "given-up");
  });

  it("probes a destination whose circuit is half-open one attempt at a time", async () => {
    const { slots } = setUp();
    const probe = delivery("dst_p", "ws_1", 1);
    assert.equal(await slots.acquire(probe), "at-once");
    assert.equal(slots.hasRoom(delivery("dst_p", "ws_1", 1)), false);
    assert.deepEqual(slots.exclusions().destinations, ["dst_p"]);
    assert.equal(slots.release(probe, 30), true, "it had no room: the worker should look again");
  });

  it("keeps a workspace to its share, whatever its destinations", async () => {
    const { slots } = setUp();
    for (const id of ["a", "b", "c"]) {
      await slots.acquire(delivery(`dst_${id}`, "ws_busy"));
      await slots.acquire(delivery(`dst_${id}`, "ws_busy"));
    }
    assert.equal(slots.hasRoom(delivery("dst_d", "ws_busy")), false, "six held in the workspace");
    assert.equal(slots.hasRoom(delivery("dst_e", "ws_quiet")), true, "another workspace has room");
    assert.deepEqual(slots.exclusions().workspaces, ["ws_busy"]);
  });
});
