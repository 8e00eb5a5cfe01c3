import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

/**
 * A name that was public when registered and is private when delivered to must not be
 * contacted. Here 127.0.0.1 plays "public" (allowlisted) and 127.0.0.2 "private" (not), and
 * a receiver listens on 127.0.0.2 to catch any request that slips through.
 */
describe("DNS that changes between registration and delivery", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let server: TestServer;
  let trap: Receiver;

  before(async () => {
    dir = await tempDir();
    trap = await startReceiver({ ca: await sharedTestCa(), host: "127.0.0.2" });
  });
  after(async () => {
    await server.stop();
    await trap.close();
    await dir.cleanup();
  });

  it("re-checks the address at delivery and never contacts the now-private one", async () => {
    const ca = await sharedTestCa();
    const env = (address: string): NodeJS.ProcessEnv => ({
      ...deliveryEnv(ca, `,rebind.test=${address}`),
      SVC_ALLOW_PRIVATE_NETWORKS: "127.0.0.1/32",
    });
    const dataDir = join(dir.path, "data");
    server = await startTestServer({ dataDir, env: env("127.0.0.1") });
    const owner = await initialise(server);
    const hooks = `/v1/workspaces/${owner.id}/webhooks`;
    const created = await apiClient(server.url, owner.key).post<DestinationJson>(hooks, {
      url: `https://rebind.test:${trap.port}/hook`,
    });
    assert.equal(created.status, 201, "public (allowlisted) at registration");
    await server.stop();

    server = await startTestServer({ dataDir, env: env("127.0.0.2") });
    const api = apiClient(server.url, owner.key);
    const published = await api.post(`/v1/workspaces/${owner.id}/events`, {
      type: "job.completed",
      data: { object: {} },
    });
    assert.equal(published.status, 202);
    const last = await eventually(
      async () => {
        const body = (
          await api.get<{ last_delivery: { status: string; last_error: string } | null }>(
            `${hooks}/${created.body.id}`,
          )
        ).body;
        return body.last_delivery?.status === "failed" ? body.last_delivery : undefined;
      },
      { what: "the delivery to fail" },
    );
    assert.match(last.last_error, /rebind\.test is not on the public internet/);
    assert.doesNotMatch(last.last_error, /127\.0\.0\.2/, "the resolved address is not told");
    assert.equal(trap.requests.length, 0, "the private address was never contacted");
  });
});
