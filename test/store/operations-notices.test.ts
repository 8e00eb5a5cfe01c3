import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { destinationSecretContext } from "../../src/crypto/sealing-contexts.ts";
import type { CircuitOpening, Store } from "../../src/interfaces.ts";
import { OPERATIONS_WORKSPACE_ID } from "../../src/operations/event-types.ts";
import type { EndpointSecrets } from "../../src/store/sql/operations-endpoints.ts";
import { openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { queryTestDatabase, testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

const minute = 60_000;
const hour = 60 * minute;
const box = new SecretBox(Buffer.alloc(32, 3));
const secrets: EndpointSecrets = {
  seal: (secret, id) => box.encrypt(secret, destinationSecretContext(id)),
  open: (sealed, id) => box.decrypt(sealed, destinationSecretContext(id)),
};
const endpoint = { url: "https://ops.example.test/notices", secret: `whsec_${"a".repeat(43)}` };

/**
 * Decision 48 in the store, on a clock the test moves: the notices are events of the
 * operations workspace written with the change they tell of, and how often a failing
 * destination is told is held in its row.
 */
describe("operational notices in the store", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let location: string;
  let store: Store;
  const clock = manualClock(Date.UTC(2026, 10, 25, 12));
  let counter = 0;
  let workspace: string;

  const restart = async (): Promise<void> => {
    await store.close();
    store = await openStore(location, clock);
    await store.operations.configure([endpoint], { failingIntervalMs: hour, secrets });
  };
  const destination = async (): Promise<string> => {
    counter += 1;
    const id = `dst_ops_test_${counter}`;
    await store.destinations.createDestination({
      id,
      workspaceId: workspace,
      url: `https://hooks.test/${counter}`,
      events: ["*"],
      secretCiphertext: "sealed",
    });
    return id;
  };
  /** The circuit's next opening, as the worker's breaker makes it after a failed probe. */
  const opening = (opens: number): CircuitOpening => ({
    until: new Date(clock.now().getTime() + 5 * minute),
    opens,
    error: "the probe failed (last: 503 Service Unavailable)",
    failCreatedBefore: new Date(0),
  });
  /** The notices written so far, oldest first, with the deliveries queued for each. */
  const notices = async (
    type: string,
  ): Promise<{ body: Record<string, unknown>; deliveries: number }[]> => {
    const rows = await queryTestDatabase<{ body: string; deliveries: number | string }>(
      join(dir.path, "data"),
      `SELECT e.body, (SELECT COUNT(*) FROM deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM events e WHERE e.workspace_id = $1 AND e.type = $2 ORDER BY e.seq`,
      [OPERATIONS_WORKSPACE_ID, type],
    );
    return rows.map((row) => ({
      body: JSON.parse(row.body) as Record<string, unknown>,
      deliveries: Number(row.deliveries),
    }));
  };

  before(async () => {
    dir = await tempDir();
    location = await testDatabaseLocation(join(dir.path, "data"));
    store = await openStore(location, clock);
    await store.operations.configure([endpoint], { failingIntervalMs: hour, secrets });
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });
  beforeEach(async () => {
    counter += 1;
    workspace = (
      await store.credentials.createWorkspace({ id: `ws_ops_test_${counter}`, name: "tenant" })
    ).id;
  });

  it("tells of a destination failing for an hour once, through restarts, and again after the interval", async () => {
    const failing = await destination();
    const before = (await notices("destination.failing")).length;
    // A probe fails every five minutes for 59 minutes (a worker restarts half way).
    for (let opens = 1; opens <= 12; opens += 1) {
      await store.queue.openCircuit(failing, opening(opens));
      if (opens === 6) await restart();
      clock.advance(5 * minute);
    }
    const told = (await notices("destination.failing")).slice(before);
    assert.equal(told.length, 1);
    const [first] = told;
    assert.equal(first?.deliveries, 1, "one delivery, to the one operations endpoint");
    assert.deepEqual(Object.keys(first.body).sort(), [
      "api_version",
      "created",
      "data",
      "id",
      "type",
    ]);
    assert.deepEqual((first.body.data as { object: unknown }).object, {
      workspace_id: workspace,
      destination_id: failing,
      reason: "the probe failed (last: 503 Service Unavailable)",
      circuit_open_until: new Date(Date.UTC(2026, 10, 25, 12) + 5 * minute).toISOString(),
      circuit_opens: 1,
    });

    // An hour after the first, the next opening is told again.
    clock.advance(hour);
    await store.queue.openCircuit(failing, opening(13));
    assert.equal((await notices("destination.failing")).slice(before).length, 2);
  });

  it("tells of a recovery once for each failing told, and of none never told failing", async () => {
    const failing = await destination();
    const before = (await notices("destination.recovered")).length;
    await store.queue.closeCircuit(failing);
    assert.equal((await notices("destination.recovered")).length, before, "never failing");

    await store.queue.openCircuit(failing, opening(1));
    await store.queue.closeCircuit(failing);
    // Flapping within the interval: the second opening is not told, nor its recovery.
    await store.queue.openCircuit(failing, opening(1));
    await store.queue.closeCircuit(failing);
    const told = (await notices("destination.recovered")).slice(before);
    assert.equal(told.length, 1);
    assert.deepEqual((told[0]?.body.data as { object: unknown }).object, {
      workspace_id: workspace,
      destination_id: failing,
    });
  });

  it("publishes nothing, and the workspace has no events, when no endpoint is configured", async () => {
    const quiet = await openStore(await testDatabaseLocation(join(dir.path, "quiet")), clock);
    try {
      await quiet.operations.configure([], { failingIntervalMs: hour, secrets });
      await quiet.credentials.createWorkspace({ id: "ws_quiet", name: "quiet" });
      await quiet.destinations.createDestination({
        id: "dst_quiet",
        workspaceId: "ws_quiet",
        url: "https://hooks.test/quiet",
        events: ["*"],
        secretCiphertext: "sealed",
      });
      await quiet.queue.openCircuit("dst_quiet", opening(1));
      await quiet.queue.closeCircuit("dst_quiet");
      const rows = await queryTestDatabase(
        join(dir.path, "quiet"),
        "SELECT id FROM workspaces WHERE id = $1",
        [OPERATIONS_WORKSPACE_ID],
      );
      assert.deepEqual(rows, [], "no operations workspace without endpoints");
    } finally {
      await quiet.close();
    }
  });

  it("keeps an endpoint whose URL and secret are unchanged at start-up, and replaces one that changed", async () => {
    const again = await store.operations.configure([endpoint], {
      failingIntervalMs: hour,
      secrets,
    });
    assert.deepEqual(again, { kept: 1, added: 0, removed: 0 });
    const rotated = { ...endpoint, secret: `whsec_${"b".repeat(43)}` };
    const changed = await store.operations.configure([rotated], {
      failingIntervalMs: hour,
      secrets,
    });
    assert.deepEqual(changed, { kept: 0, added: 1, removed: 1 });
    await store.operations.configure([endpoint], { failingIntervalMs: hour, secrets });
  });

  it("never finds the operations workspace by id or in a list", async () => {
    assert.equal(await store.credentials.getWorkspace(OPERATIONS_WORKSPACE_ID), null);
    assert.equal(await store.workspaces.getWorkspace(OPERATIONS_WORKSPACE_ID), null);
    const listed = await store.workspaces.listWorkspaces({
      limit: 100,
      cursor: null,
      externalId: null,
    });
    assert.ok(!listed.items.some((item) => item.id === OPERATIONS_WORKSPACE_ID));
  });
});
