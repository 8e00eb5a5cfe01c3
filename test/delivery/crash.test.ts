import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv, settledDeliveryStatuses } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

const eventCount = 1000;

describe("crash safety of delivery", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    dir = await tempDir();
    // A little slow, so that the kill lands while deliveries are in flight.
    receiver = await startReceiver({
      ca: await sharedTestCa(),
      respond: () => ({ status: 200, delayMs: 2 }),
    });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
    await dir.cleanup();
  });

  it(`delivers all of ${eventCount} events after a SIGKILL mid-delivery and a restart`, async () => {
    const env = deliveryEnv(await sharedTestCa());
    const dataDir = join(dir.path, "data");
    server = await startTestServer({ dataDir, env });
    const owner = await initialise(server);
    const api = apiClient(server.url, owner.key);
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
    const receivedBeforeKill = receiver.requests.length;
    assert.ok(receivedBeforeKill < eventCount, "the kill must land mid-delivery");
    await server.kill();

    server = await startTestServer({ dataDir, env });
    // At-least-once: notifications in flight at the kill may arrive twice; count distinct ids.
    const distinctIds = (): Set<string> =>
      new Set(receiver.requests.map((request) => String(request.headers["webhook-id"])));
    const ids = await eventually(
      () => Promise.resolve(distinctIds().size >= eventCount ? distinctIds() : undefined),
      { timeoutMs: 60_000, what: `${eventCount} distinct notifications` },
    );
    assert.equal(ids.size, eventCount, "every notification arrived");
    assert.deepEqual([...ids].sort(), [...published].sort());
    assert.deepEqual(await settledDeliveryStatuses(dataDir), [
      { status: "delivered", count: eventCount },
    ]);
    await server.stop();
    console.log(
      `crash test: ${receivedBeforeKill} received before SIGKILL, ${receiver.requests.length - eventCount} duplicates after restart`,
    );
  });
});
