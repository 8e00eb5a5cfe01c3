import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import type { ClaimRoom, ClaimedDelivery, Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { queryTestDatabase, testDatabaseLocation } from "../support/database.ts";
import { manualClock } from "../support/clock.ts";
import { claimUpTo, roomFor } from "../support/delivery.ts";
import { tempDir } from "../support/temp.ts";

/** Decision 24: claims within each destination's and workspace's room, and circuits. */
describe("fair claims and circuits in the store", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  const clock = manualClock(Date.UTC(2026, 10, 22, 12));
  let counter = 0;

  const workspace = async (): Promise<string> => {
    counter += 1;
    return (await store.credentials.createWorkspace({ id: `ws_${counter}`, name: "fair" })).id;
  };
  const destination = async (workspaceId: string): Promise<string> => {
    counter += 1;
    const id = `dst_${counter}`;
    await store.destinations.createDestination({
      id,
      workspaceId,
      url: `https://hooks.test/${counter}`,
      events: ["*"],
      secretCiphertext: "sealed",
    });
    return id;
  };
  /** Publishes `count` events in `workspaceId`, a millisecond apart, oldest first. */
  const publish = async (workspaceId: string, count: number): Promise<void> => {
    for (let index = 0; index < count; index += 1) {
      counter += 1;
      await store.queue.publishEvent({
        id: `evt_${counter}`,
        workspaceId,
        type: "job.completed",
        apiVersion: "2026-11-01",
        body: "{}",
        createdAt: clock.now(),
      });
      clock.advance(1);
    }
  };
  const destinationsOf = (claimed: readonly ClaimedDelivery[]): string[] =>
    claimed.map((delivery) => delivery.destination.id);
  const count = (items: readonly string[], item: string): number =>
    items.filter((each) => each === item).length;
  const room = (changes: Partial<ClaimRoom>): ClaimRoom => ({ ...roomFor(10), ...changes });
  const statusOf = async (destinationId: string) =>
    queryTestDatabase<{ status: string; next_attempt_at: number | string | null }>(
      join(dir.path, "fair"),
      "SELECT status, next_attempt_at FROM deliveries WHERE destination_id = $1 ORDER BY seq",
      [destinationId],
    );

  before(async () => {
    dir = await tempDir();
    store = await openStore(await testDatabaseLocation(join(dir.path, "fair")), clock);
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });
  // Each test starts with nothing due: whatever earlier tests left is claimed away.
  beforeEach(async () => {
    clock.advance(86_400_000);
    while ((await claimUpTo(store, "drain", 1000, 86_400_000 * 365)).length > 0);
  });

  it("takes no more of a destination than its room, and reaches others' deliveries behind its backlog", async () => {
    const ws = await workspace();
    const busy = await destination(ws);
    await publish(ws, 12);
    const quiet = await destination(ws);
    await publish(ws, 2);

    const claimed = await store.queue.claimDueDeliveries(
      "w1",
      room({ total: 10, perDestination: 3 }),
      60_000,
    );
    const taken = destinationsOf(claimed);
    assert.equal(count(taken, busy), 3, "the busy destination's room");
    assert.equal(count(taken, quiet), 2, "the quiet destination's deliveries, though newer");
  });

  it("takes no more of a destination or workspace than its room, and skips those with none", async () => {
    const [first, second] = [await workspace(), await workspace()];
    const full = await destination(first);
    const roomy = await destination(first);
    const other = await destination(second);
    await publish(first, 4);
    await publish(second, 4);

    const claimed = await store.queue.claimDueDeliveries(
      "w1",
      room({
        total: 10,
        perDestination: 3,
        destinationRoom: new Map([
          [full, 0],
          [roomy, 2],
        ]),
        perWorkspace: 5,
        workspaceRoom: new Map([[first, 1]]),
        exclusions: { destinations: [full], workspaces: [] },
      }),
      60_000,
    );
    const taken = destinationsOf(claimed);
    assert.equal(count(taken, full), 0, "a destination at its limit");
    assert.equal(count(taken, roomy), 1, "the workspace had room for one more");
    assert.equal(count(taken, other), 3, "another workspace, up to the destination limit");

    const none = await store.queue.claimDueDeliveries(
      "w2",
      room({ exclusions: { destinations: [], workspaces: [first, second] } }),
      60_000,
    );
    assert.deepEqual(none, [], "excluded workspaces are not read");
  });

  it("holds a destination whose circuit is open, lets one probe through when it ends, and all after it closes", async () => {
    const ws = await workspace();
    const failing = await destination(ws);
    const healthy = await destination(ws);
    await publish(ws, 3);
    const until = new Date(clock.now().getTime() + 5000);
    await store.queue.openCircuit(failing, {
      until,
      opens: 1,
      error: "10 attempts in a row failed (last: connection failed (ECONNREFUSED))",
      failCreatedBefore: new Date(0),
    });

    // Its waiting deliveries are due when the circuit ends; others go on.
    const waiting = await statusOf(failing);
    assert.deepEqual(
      waiting.map((row) => Number(row.next_attempt_at)),
      [until.getTime(), until.getTime(), until.getTime()],
    );
    const open = await claimUpTo(store, "w1", 10, 60_000);
    assert.deepEqual(destinationsOf(open), [healthy, healthy, healthy]);
    assert.deepEqual(await store.queue.nextDueAt(), until, "a sleeping worker wakes when it ends");
    const last = await store.destinations.getLastDelivery(ws, failing);
    assert.equal(last?.circuit?.state, "open");
    assert.match(last.circuit.error ?? "", /ECONNREFUSED/);

    // Published while open: due when it ends too.
    await publish(ws, 1);
    assert.equal(Number((await statusOf(failing)).at(-1)?.next_attempt_at), until.getTime());

    clock.advance(5000);
    assert.equal(
      (await store.destinations.getLastDelivery(ws, failing))?.circuit?.state,
      "half_open",
    );
    const probe = await claimUpTo(store, "w1", 10, 60_000);
    assert.deepEqual(destinationsOf(probe).filter((id) => id === failing).length, 1, "one probe");
    assert.equal(
      probe.find((delivery) => delivery.destination.id === failing)?.destination.circuitOpens,
      1,
    );

    await store.queue.closeCircuit(failing);
    assert.equal((await store.destinations.getLastDelivery(ws, failing))?.circuit, null);
    const rest = await claimUpTo(store, "w1", 10, 60_000);
    assert.equal(count(destinationsOf(rest), failing), 3, "the rest, once it closed");
  });

  it("ends the attempted deliveries whose retries would be spent while the circuit is open, not the never attempted", async () => {
    const ws = await workspace();
    const failing = await destination(ws);
    await publish(ws, 3);
    // The first two were attempted and wait for a retry; the third never was.
    const [first, second] = await claimUpTo(store, "w1", 2, 60_000);
    for (const claimed of [first, second]) {
      if (claimed === undefined) throw new Error("two claimed");
      await store.queue.finishAttempt(claimed.lease, claimed.seq, {
        attempt: {
          startedAt: clock.now(),
          durationMs: 3,
          statusCode: 503,
          errorClass: "http_status",
        },
        result: { status: "pending", nextAttemptAt: new Date(clock.now().getTime() + 1000) },
        error: "the receiver answered 503",
      });
    }
    clock.advance(10_000);
    await publish(ws, 1);
    await store.queue.openCircuit(failing, {
      until: new Date(clock.now().getTime() + 60_000),
      opens: 3,
      error: "the probe failed (last: no answer within 10000ms)",
      failCreatedBefore: new Date(clock.now().getTime() - 5000),
    });
    const rows = await statusOf(failing);
    assert.deepEqual(
      rows.map((row) => row.status),
      ["failed", "failed", "pending", "pending"],
    );
    const [row] = await queryTestDatabase<{ last_error: string }>(
      join(dir.path, "fair"),
      "SELECT last_error FROM deliveries WHERE destination_id = $1 ORDER BY seq LIMIT 1",
      [failing],
    );
    assert.match(row?.last_error ?? "", /retries ran out while the destination's circuit was open/);
  });

  it("only ever extends a circuit: an earlier opening does not cut a later one short", async () => {
    const ws = await workspace();
    const failing = await destination(ws);
    const later = new Date(clock.now().getTime() + 30_000);
    await store.queue.openCircuit(failing, {
      until: later,
      opens: 2,
      error: "the probe failed",
      failCreatedBefore: new Date(0),
    });
    await store.queue.openCircuit(failing, {
      until: new Date(clock.now().getTime() + 5000),
      opens: 1,
      error: "10 attempts in a row failed",
      failCreatedBefore: new Date(0),
    });
    const circuit = (await store.destinations.getLastDelivery(ws, failing))?.circuit ?? null;
    assert.equal(circuit, null, "no delivery yet: nothing to show");
    await publish(ws, 1);
    const shown = (await store.destinations.getLastDelivery(ws, failing))?.circuit;
    assert.deepEqual(shown?.openUntil, later);
    assert.equal(shown.opens, 2);
  });

  it("closes a destination's circuit when its URL changes or it is turned on again", async () => {
    const ws = await workspace();
    const failing = await destination(ws);
    await publish(ws, 1);
    const opening = {
      until: new Date(clock.now().getTime() + 60_000),
      opens: 1,
      error: "failing",
      failCreatedBefore: new Date(0),
    };
    await store.queue.openCircuit(failing, opening);
    await store.destinations.updateDestination(ws, failing, { url: "https://hooks.test/fixed" });
    assert.equal((await store.destinations.getLastDelivery(ws, failing))?.circuit, null);
    await store.queue.openCircuit(failing, {
      ...opening,
      until: new Date(clock.now().getTime() + 120_000),
    });
    await store.destinations.updateDestination(ws, failing, { active: false });
    assert.notEqual(
      (await store.destinations.getLastDelivery(ws, failing))?.circuit,
      null,
      "off: still open",
    );
    await store.destinations.updateDestination(ws, failing, { active: true });
    assert.equal((await store.destinations.getLastDelivery(ws, failing))?.circuit, null);
  });

  it("hands a publish's deliveries over only for destinations with room and a closed circuit", async () => {
    const ws = await workspace();
    const full = await destination(ws);
    const open = await destination(ws);
    const roomy = await destination(ws);
    await store.queue.openCircuit(open, {
      until: new Date(clock.now().getTime() + 5000),
      opens: 1,
      error: "failing",
      failCreatedBefore: new Date(0),
    });
    const handed: ClaimedDelivery[] = [];
    store.queue.handDeliveriesTo({
      owner: "local",
      leaseMs: 60_000,
      reserve: () => ({ slots: 10, excludedDestinations: [full] }),
      take: (_reserved, deliveries) => {
        handed.push(...deliveries);
      },
      wake: () => undefined,
    });
    try {
      await publish(ws, 1);
    } finally {
      store.queue.handDeliveriesTo(null);
    }
    assert.deepEqual(destinationsOf(handed), [roomy]);
    assert.equal((await claimUpTo(store, "w1", 10, 60_000)).length, 1, "the full one's is due");
  });
});
