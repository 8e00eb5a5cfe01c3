import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { runSvc } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

/** `svc server --role api|worker`: processes that share one database, each doing its part. */
describe("server roles", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let receiver: Receiver;
  let apiServer: TestServer;
  let worker: TestServer | undefined;

  before(async () => {
    dir = await tempDir();
    dataDir = join(dir.path, "data");
    const ca = await sharedTestCa();
    env = deliveryEnv(ca);
    receiver = await startReceiver({ ca });
    apiServer = await startTestServer({ dataDir, env, role: "api" });
  });
  after(async () => {
    await apiServer.stop();
    await worker?.stop();
    await receiver.close();
    await dir.cleanup();
  });

  it("an api process queues deliveries without sending them; a worker process sends them", async () => {
    const owner = await initialise(apiServer);
    const api = apiClient(apiServer.url, owner.key);
    const created = await api.post<DestinationJson>(`/v1/workspaces/${owner.id}/webhooks`, {
      url: `${receiver.url}/roles`,
    });
    assert.equal(created.status, 201, created.text);
    const published = await api.post<{ id: string }>(`/v1/workspaces/${owner.id}/events`, {
      type: "job.completed",
      data: { object: {} },
    });
    assert.equal(published.status, 202);
    // The absence of a delivery cannot be awaited as an event: give an in-process worker,
    // were there one, ample time (it would start at once on publishing).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(receiver.requests.length, 0, "the api role runs no worker");

    worker = await startTestServer({ dataDir, env, role: "worker" });
    const [request] = await receiver.waitForRequests(1);
    assert.equal(request?.headers["webhook-id"], published.body.id);
  });

  it("a worker process answers /healthz and /readyz, and no API route", async () => {
    worker ??= await startTestServer({ dataDir, env, role: "worker" });
    const health = await fetch(new URL("/healthz", worker.url));
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const ready = await fetch(new URL("/readyz", worker.url));
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: "ready" });
    const route = await fetch(new URL("/v1/workspaces/ws_x/webhooks", worker.url));
    assert.equal(route.status, 404);
    assert.equal(
      ((await route.json()) as { error: { code: string } }).error.code,
      "route_not_found",
    );
  });

  it("an api process answers /readyz while its database answers", async () => {
    const ready = await fetch(new URL("/readyz", apiServer.url));
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: "ready" });
  });

  it("refuses an unknown role as invalid configuration, exit 2", async () => {
    const run = await runSvc(["server", "--role", "scheduler", "--port", "0"], {
      env: apiServer.env,
    });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /role \(SVC_ROLE\)/);
  });
});
