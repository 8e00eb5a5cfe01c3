import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson } from "../support/api.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { startTcpSwitch, type TcpSwitch } from "../support/tcp-switch.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

/**
 * The server reaches PostgreSQL through a proxy the test switches off and on: to the server
 * the database goes away (every connection broken, new ones refused) and comes back.
 */
describe(
  "a database outage",
  { skip: testBackend !== "postgres" && "PostgreSQL run only: SQLite cannot go away" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let proxy: TcpSwitch;
    let server: TestServer;
    let receiver: Receiver;
    let api: ApiClient;
    let paths: { hooks: string; events: string };

    const status = async (path: string): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(new URL(path, server.url));
      return { status: response.status, body: await response.json() };
    };

    before(async () => {
      dir = await tempDir();
      const dataDir = join(dir.path, "data");
      const direct = new URL(await testDatabaseLocation(dataDir));
      proxy = await startTcpSwitch(direct.hostname, Number(direct.port || 5432));
      const proxied = new URL(direct);
      proxied.hostname = "127.0.0.1";
      proxied.port = String(proxy.port);
      const ca = await sharedTestCa();
      receiver = await startReceiver({ ca });
      server = await startTestServer({
        dataDir,
        env: { ...deliveryEnv(ca), SVC_DATABASE_URL: proxied.toString() },
      });
      const owner = await initialise(server);
      api = apiClient(server.url, owner.key);
      paths = {
        hooks: `/v1/workspaces/${owner.id}/webhooks`,
        events: `/v1/workspaces/${owner.id}/events`,
      };
      const created = await api.post<DestinationJson>(paths.hooks, {
        url: `${receiver.url}/outage`,
      });
      assert.equal(created.status, 201);
    });
    after(async () => {
      await server.stop();
      await proxy.close();
      await receiver.close();
      await dir.cleanup();
    });

    it("makes /readyz and the API answer 503 service_unavailable, while /healthz stays 200", async () => {
      assert.equal((await status("/readyz")).status, 200);
      proxy.cut();
      const notReady = await eventually(
        async () => {
          const answer = await status("/readyz");
          return answer.status === 503 ? answer : undefined;
        },
        { what: "/readyz to say not ready" },
      );
      assert.deepEqual(
        (notReady.body as { error: { code: string } }).error.code,
        "service_unavailable",
      );
      const list = await api.get<{ error: { code: string } }>(paths.hooks);
      assert.equal(list.status, 503);
      assert.equal(list.body.error.code, "service_unavailable");
      assert.deepEqual(await status("/healthz"), { status: 200, body: { status: "ok" } });
      assert.equal(server.process.exitCode, null, "the server is still running");
    });

    it("recovers by itself when the database is back: ready again, and delivering at once", async () => {
      proxy.restore();
      await eventually(async () => ((await status("/readyz")).status === 200 ? true : undefined), {
        what: "/readyz to say ready again",
      });
      const published = await api.post<{ id: string }>(paths.events, {
        type: "job.completed",
        data: { object: {} },
      });
      assert.equal(published.status, 202);
      const [request] = await receiver.waitForRequests(1);
      assert.equal(request?.headers["webhook-id"], published.body.id);
      await eventually(
        () =>
          Promise.resolve(
            server.log().includes("listening for queued deliveries again") ? true : undefined,
          ),
        { what: "the LISTEN connection to be back" },
      );
    });
  },
);
