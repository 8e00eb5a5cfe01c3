import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { ClaimRoom, ClaimedDelivery, Store } from "../../src/interfaces.ts";
import { queryTestDatabase } from "./database.ts";
import { eventually } from "./eventually.ts";
import type { ReceivedRequest } from "./receiver.ts";
import { testResolve } from "./server.ts";
import type { TestCa } from "./tls.ts";

/**
 * A workspace `ws_<name>` with one destination, `dst_<name>`, subscribed to every event, made
 * through the store; returns the workspace's id.
 */
export async function workspaceWithDestination(
  store: Pick<Store, "credentials" | "destinations">,
  name: string,
): Promise<string> {
  const workspace = (await store.credentials.createWorkspace({ id: `ws_${name}`, name })).id;
  await store.destinations.createDestination({
    id: `dst_${name}`,
    workspaceId: workspace,
    url: `https://hooks.test/${name}`,
    events: ["*"],
    secretCiphertext: "sealed",
  });
  return workspace;
}

/** Delivery settings for tests: loopback allowlisted, the test CA trusted, a short schedule. */
export function deliveryEnv(ca: TestCa, extraResolve = ""): NodeJS.ProcessEnv {
  return {
    SVC_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1/128",
    NODE_EXTRA_CA_CERTS: ca.caCertPath,
    SVC_RETRY_SCHEDULE: "50ms,100ms",
    SVC_DELIVERY_TIMEOUT: "1s",
    SVC_DELIVERY_LEASE: "3s",
    SVC_RESOLVE: `${testResolve},hooks.test=127.0.0.1${extraResolve}`,
  };
}

/** Checks a notification's signature from first principles, as a receiver in any stack would. */
export function verifiedTimestamp(request: ReceivedRequest, secret: string): number {
  const header = request.headers["webhook-signature"];
  assert.equal(typeof header, "string");
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header as string);
  assert.ok(match, `malformed Webhook-Signature: ${String(header)}`);
  const [, timestamp = "", signature] = match;
  const expected = createHmac("sha256", secret)
    .update(`${timestamp}.`)
    .update(request.rawBody)
    .digest("hex");
  assert.equal(signature, expected, "the signature verifies with the destination's secret");
  return Number(timestamp);
}

/**
 * How many deliveries of the database of `dataDir` are in each status, once none is pending.
 * A receiver can have a notification before the worker has recorded it (and, after a crash,
 * it is recorded only when its lease ends and it is sent again), so a test that saw every
 * notification arrive waits here for the store to agree.
 */
export async function settledDeliveryStatuses(
  dataDir: string,
  timeoutMs = 30_000,
): Promise<{ status: string; count: number }[]> {
  return eventually(
    async () => {
      const rows = await queryTestDatabase<{ status: string; count: number | string }>(
        dataDir,
        "SELECT status, COUNT(*) AS count FROM deliveries GROUP BY status ORDER BY status",
      );
      const statuses = rows.map((row) => ({ status: row.status, count: Number(row.count) }));
      return statuses.some((row) => row.status === "pending") ? undefined : statuses;
    },
    { timeoutMs, what: "no delivery to be pending" },
  );
}

/**
 * Claims up to `limit` due deliveries with room for all of them (no destination or workspace
 * held), as a worker with nothing in flight would: the store's claim, for tests of the queue.
 */
export async function claimUpTo(
  store: Pick<Store, "queue">,
  owner: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  return store.queue.claimDueDeliveries(owner, roomFor(limit), leaseMs);
}

/**
 * `target` with `overrides` in place of some of its methods; the others are `target`'s own,
 * called on it (so that its private fields stay reachable): a store slice a test watches.
 */
export function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value: unknown = Reflect.get(object, key, object);
      return typeof value === "function"
        ? (value as (...args: unknown[]) => unknown).bind(object)
        : value;
    },
  });
}

/** A claim's room for `limit` deliveries, whatever their destinations and workspaces. */
export function roomFor(limit: number): ClaimRoom {
  return {
    total: limit,
    perDestination: limit,
    destinationRoom: new Map(),
    perWorkspace: limit,
    workspaceRoom: new Map(),
    exclusions: { destinations: [], workspaces: [] },
  };
}
