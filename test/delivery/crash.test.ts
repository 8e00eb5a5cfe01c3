import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { queryTestDatabase } from "../support/database.ts";
import { deliveryEnv, settledDeliveryStatuses } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

const eventCount = 1000;

describe("crash safety of delivery", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let apiServer: TestServer | undefined;
  let worker: TestServer | undefined;
  let receiver: Receiver;
  /** Until the worker is killed, the receiver answers the first requests and holds the rest. */
  let killed = false;
  const answeredBeforeKill = 100;

  before(async () => {
    dir = await tempDir();
    receiver = await startReceiver({
      ca: await sharedTestCa(),
      respond: (_request, index) =>
        killed || index < answeredBeforeKill
          ? { status: 200, delayMs: 2 }
          : { status: 200, hang: true },
    });
  });
  after(async () => {
    await worker?.stop();
    await apiServer?.stop();
    await receiver.close();
    await dir.cleanup();
  });

  it(`delivers all of ${eventCount} events after a SIGKILL mid-delivery and a restart`, async () => {
    // Room for a loaded machine: an attempt slowed by the load is retried, not failed, and no
    // run of timeouts opens the destination's circuit. The lease (what a restart waits for
    // the killed worker's claims) must exceed the timeout.
    const env = {
      ...deliveryEnv(await sharedTestCa()),
      SVC_DELIVERY_TIMEOUT: "5s",
      SVC_DELIVERY_LEASE: "6s",
      SVC_RETRY_SCHEDULE: "500ms,1s,2s,5s",
      SVC_CIRCUIT_THRESHOLD: "1000",
    };
    const dataDir = join(dir.path, "data");
    // The events are all published before any is sent (an api process runs no worker), and
    // the worker is killed with deliveries in flight (held by the receiver): however fast or
    // loaded the machine, the kill lands mid-delivery.
    apiServer = await startTestServer({ dataDir, env, role: "api" });
    const owner = await initialise(apiServer);
    const api = apiClient(apiServer.url, owner.key);
    const created = await api.post<DestinationJson>(`/v1/workspaces/${owner.id}/webhooks`, {
      url: `${receiver.url}/crash`,
    });
    assert.equal(created.status, 201);

    const published = new Set<string>();
    const publishOne = async (): Promise<void> => {
      const response = await api.post<{ id: string }>(`/v1/workspaces/${owner.id}/events`, {
        type: "job.completed",
        data: { object: { n: published.size } },
      });
      assert.equal(response.status, 202, response.text);
      published.add(response.body.id);
    };
    for (let batch = 0; batch < eventCount / 10; batch += 1) {
      await Promise.all(Array.from({ length: 10 }, publishOne));
    }
    worker = await startTestServer({ dataDir, env, role: "worker" });
    await receiver.waitForRequests(answeredBeforeKill + 1);
    await worker.kill();
    killed = true;
    const receivedBeforeKill = receiver.requests.length;
    assert.ok(receivedBeforeKill < eventCount, "the kill must land mid-delivery");

    worker = await startTestServer({ dataDir, env, role: "worker" });
    // At-least-once: notifications in flight at the kill may arrive twice; count distinct ids.
    const distinctIds = (): Set<string> =>
      new Set(receiver.requests.map((request) => String(request.headers["webhook-id"])));
    const ids = await eventually(
      () => Promise.resolve(distinctIds().size >= eventCount ? distinctIds() : undefined),
      { timeoutMs: 60_000, what: `${eventCount} distinct notifications` },
    ).catch(async (error: unknown) => {
      // What arrived and what the store says: a lost delivery and a slow machine differ here.
      const statuses = await queryTestDatabase(
        dataDir,
        "SELECT status, substr(last_error, 1, 60) AS error, COUNT(*) AS count FROM deliveries GROUP BY 1, 2 ORDER BY 1, 2",
      ).catch((reason: unknown) => String(reason));
      throw new Error(
        `${String(error)}: ${distinctIds().size} distinct of ${receiver.requests.length} received (${receivedBeforeKill} before the kill); the store: ${JSON.stringify(statuses)}`,
        { cause: error },
      );
    });
    assert.equal(ids.size, eventCount, "every notification arrived");
    assert.deepEqual([...ids].sort(), [...published].sort());
    assert.deepEqual(await settledDeliveryStatuses(dataDir), [
      { status: "delivered", count: eventCount },
    ]);
    console.log(
      `crash test: ${receivedBeforeKill} received before SIGKILL, ${receiver.requests.length - eventCount} duplicates after restart`,
    );
  });
});
