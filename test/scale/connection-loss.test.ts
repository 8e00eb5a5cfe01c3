import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { adminQuery, testBackend, testDatabaseLocation } from "../support/database.ts";
import { deliveryEnv, settledDeliveryStatuses } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { distinctWebhookIds, publishMany } from "../support/publish.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

const total = 1500;

/**
 * Every connection of the service to PostgreSQL is terminated by the server
 * (`pg_terminate_backend`, as an administrator or a failover would) while deliveries are in
 * flight: pooled connections, those inside a transaction, and the LISTEN connection.
 */
describe(
  "connections terminated in the middle of a delivery burst",
  { skip: testBackend !== "postgres" && "PostgreSQL run only" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let receiver: Receiver;
    let apiServer: TestServer;
    let worker: TestServer;
    let databaseName: string;
    let dataDir: string;

    before(async () => {
      dir = await tempDir();
      const ca = await sharedTestCa();
      receiver = await startReceiver({
        ca,
        // A little slow, so that many attempts are in flight when the connections go.
        respond: () => ({ status: 200, delayMs: 5 }),
      });
      dataDir = join(dir.path, "data");
      databaseName = new URL(await testDatabaseLocation(dataDir)).pathname.slice(1);
      // One key publishes 1,500 events as fast as it can: no request budget (decision 45).
      const env = {
        ...deliveryEnv(ca),
        SVC_RETRY_SCHEDULE: "100ms,500ms,1s,2s,5s",
      };
      apiServer = await startTestServer({ dataDir, env, role: "api" });
      worker = await startTestServer({ dataDir, env, role: "worker" });
    });
    after(async () => {
      for (const server of [apiServer, worker]) {
        if (server.process.exitCode !== null) {
          console.log(`--- log of the crashed server ---\n${server.log()}`);
        }
      }
      await apiServer.stop();
      await worker.stop();
      await receiver.close();
      await dir.cleanup();
    });

    /** Ends every connection to the service's database; returns how many there were. */
    const terminateAll = async (): Promise<number> =>
      (
        await adminQuery(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = '${databaseName}' AND pid <> pg_backend_pid()`,
        )
      ).length;

    it("recovers by itself and delivers every notification", { timeout: 180_000 }, async () => {
      const owner = await initialise(apiServer);
      const created = await apiClient(apiServer.url, owner.key).post<DestinationJson>(
        `/v1/workspaces/${owner.id}/webhooks`,
        { url: `${receiver.url}/terminated` },
      );
      assert.equal(created.status, 201, created.text);
      const publish = (count: number) =>
        publishMany({ baseUrl: apiServer.url, key: owner.key, workspaceId: owner.id, count });

      // Publishing goes on throughout: the API answers 503 while it has no connection, and
      // the client sends the same request again with the same Idempotency-Key.
      const publishing = publish(total);
      await receiver.waitForRequests(total / 4, 60_000);
      const terminated = [await terminateAll()];
      const receivedAtTermination = [receiver.requests.length];
      await receiver.waitForRequests((total * 2) / 3, 60_000);
      terminated.push(await terminateAll());
      receivedAtTermination.push(receiver.requests.length);
      assert.ok(
        receivedAtTermination.every((count) => count < total),
        "terminated mid-burst",
      );
      const published = await publishing;

      const ids = await eventually(
        () => {
          const seen = distinctWebhookIds(receiver.requests);
          return Promise.resolve(seen.size >= total ? seen : undefined);
        },
        { timeoutMs: 120_000, what: `${total} distinct notifications` },
      );
      assert.deepEqual([...ids].sort(), [...published].sort(), "every notification arrived");
      assert.deepEqual(await settledDeliveryStatuses(dataDir), [
        { status: "delivered", count: total },
      ]);
      for (const server of [apiServer, worker]) {
        assert.equal(server.process.exitCode, null, "no process crashed");
        assert.equal((await fetch(new URL("/readyz", server.url))).status, 200);
      }
      await worker.logged(
        (line) => line.includes("listening for queued deliveries again"),
        "the worker's listener back",
      );
      console.log(
        `connection loss: ${terminated.join(" and ")} connections terminated after ` +
          `${receivedAtTermination.join(" and ")} deliveries; ` +
          `${receiver.requests.length - total} duplicates (at-least-once)`,
      );
    });
  },
);
