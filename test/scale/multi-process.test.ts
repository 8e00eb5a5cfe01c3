import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { testBackend } from "../support/database.ts";
import { deliveryEnv, settledDeliveryStatuses } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { distinctWebhookIds, publishMany } from "../support/publish.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

const notificationCount = 3000;
const workerCount = 3;

/**
 * Scale-out on PostgreSQL: one `--role api` process and three `--role worker` processes on
 * one database, delivering to one local HTTPS receiver.
 */
describe(
  "one api and three worker processes on PostgreSQL",
  { skip: testBackend !== "postgres" && "PostgreSQL run only: processes share one database" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let receiver: Receiver;
    let env: NodeJS.ProcessEnv;
    const servers: TestServer[] = [];

    before(async () => {
      dir = await tempDir();
      const ca = await sharedTestCa();
      receiver = await startReceiver({ ca });
      env = {
        ...deliveryEnv(ca),
        // Every process must seal and open signing secrets with the same key.
        SVC_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        // Long enough that no lease runs out while its attempt is merely queued on a busy
        // machine, and that an attempt seldom times out: without a crash, nothing may arrive
        // twice but after an attempt that timed out (see duplicates()).
        SVC_DELIVERY_TIMEOUT: "5s",
        SVC_DELIVERY_LEASE: "10s",
        // A busy machine may miss a deadline now and then: retries, not failures, then.
        SVC_RETRY_SCHEDULE: "100ms,500ms,1s,2s,5s",
        SVC_DATABASE_POOL_SIZE: "6",
        SVC_LOG_LEVEL: "debug",
      };
    });
    after(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await receiver.close();
      await dir.cleanup();
    });

    /** A database of its own (by data directory), an api process and the workers on it. */
    const startCluster = async (name: string) => {
      receiver.requests.length = 0;
      const dataDir = join(dir.path, name);
      const apiServer = await startTestServer({ dataDir, env, role: "api" });
      servers.push(apiServer);
      const owner = await initialise(apiServer);
      const created = await apiClient(apiServer.url, owner.key).post<DestinationJson>(
        `/v1/workspaces/${owner.id}/webhooks`,
        { url: `${receiver.url}/${name}` },
      );
      assert.equal(created.status, 201, created.text);
      const workers = await Promise.all(
        Array.from({ length: workerCount }, () =>
          startTestServer({ dataDir, env, role: "worker" }),
        ),
      );
      servers.push(...workers);
      const publish = () =>
        publishMany({
          baseUrl: apiServer.url,
          key: owner.key,
          workspaceId: owner.id,
          count: notificationCount,
        });
      return { dataDir, workers, publish };
    };
    const allDistinctArrived = () =>
      eventually(
        () => {
          const ids = distinctWebhookIds(receiver.requests);
          return Promise.resolve(ids.size >= notificationCount ? ids : undefined);
        },
        { timeoutMs: 150_000, what: `${notificationCount} distinct notifications` },
      );
    /**
     * The notifications that arrived more than once, each with what the workers logged of it.
     * Without a crash, a second copy is owed to an attempt that the worker could not count as
     * delivered (it timed out after the receiver had the request, or its lease ran out before
     * the report): one with no such attempt logged was sent twice for nothing, a double claim.
     */
    const duplicates = (workers: readonly TestServer[]) => {
      const seen = new Set<string>();
      const twice = new Set<string>();
      for (const request of receiver.requests) {
        const id = String(request.headers["webhook-id"]);
        if (seen.has(id)) twice.add(id);
        seen.add(id);
      }
      const lines = workers.flatMap((worker, index) =>
        worker
          .log()
          .split("\n")
          .map((line) => `worker ${index}: ${line}`),
      );
      const logged = [...twice].map((id) => ({
        id,
        lines: lines.filter((line) => line.includes(id)),
      }));
      const unexplained = logged.filter(
        ({ lines: about }) =>
          !about.some(
            (line) => line.includes('"status":"pending"') || line.includes("lease expired"),
          ),
      );
      return { count: twice.size, unexplained };
    };
    const attemptsLogged = (server: TestServer): number =>
      server
        .log()
        .split("\n")
        .filter((line) => line.includes('"msg":"delivery attempted"')).length;

    it(
      `delivers ${notificationCount} notifications, each once, sharing the work`,
      { timeout: 240_000 },
      async () => {
        const { dataDir, workers, publish } = await startCluster("steady");
        const started = performance.now();
        const published = await publish();
        const publishedMs = performance.now() - started;
        const ids = await allDistinctArrived();
        const deliveredMs = performance.now() - started;

        assert.deepEqual([...ids].sort(), [...published].sort(), "every notification arrived");
        assert.deepEqual(await settledDeliveryStatuses(dataDir), [
          { status: "delivered", count: notificationCount },
        ]);
        // Stopped, the workers have written their last log lines (a log goes out in blocks).
        await Promise.all(workers.map((worker) => worker.stop()));
        const twice = duplicates(workers);
        assert.deepEqual(
          twice.unexplained,
          [],
          "none arrived twice but after an attempt that could not be counted as delivered",
        );
        const perWorker = workers.map(attemptsLogged);
        assert.ok(
          perWorker.every((count) => count > 0),
          `every worker delivered some: ${perWorker.join(", ")}`,
        );
        console.log(
          `scale-out: ${notificationCount} published in ${(publishedMs / 1000).toFixed(1)} s, ` +
            `all delivered in ${(deliveredMs / 1000).toFixed(1)} s ` +
            `(${Math.round(notificationCount / (deliveredMs / 1000))} deliveries/s); ` +
            `per worker: ${perWorker.join(", ")}; ${twice.count} arrived twice, each after an ` +
            "attempt that timed out",
        );
      },
    );

    it(
      `loses none of ${notificationCount} notifications when a worker is killed mid-way`,
      { timeout: 240_000 },
      async () => {
        const { dataDir, workers, publish } = await startCluster("killed");
        const publishing = publish();
        await receiver.waitForRequests(notificationCount / 3, 120_000);
        const receivedAtKill = receiver.requests.length;
        await workers[0]!.kill();
        const published = await publishing;
        const ids = await allDistinctArrived();

        assert.deepEqual([...ids].sort(), [...published].sort(), "every notification arrived");
        assert.deepEqual(await settledDeliveryStatuses(dataDir), [
          { status: "delivered", count: notificationCount },
        ]);
        for (const survivor of workers.slice(1)) {
          assert.equal(survivor.process.exitCode, null, "the other workers run on");
        }
        console.log(
          `scale-out with SIGKILL: ${receivedAtKill} received before the kill, ` +
            `${receiver.requests.length - notificationCount} duplicates (at-least-once)`,
        );
      },
    );
  },
);
