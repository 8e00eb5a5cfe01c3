import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { deliveryEnv, settledDeliveryStatuses } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { publishMany } from "../support/publish.ts";
import { startReceiver, type ReceivedRequest, type Receiver } from "../support/receiver.ts";
import {
  createWorkspace,
  initialise,
  startTestServer,
  type TestServer,
  type Workspace,
} from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

const workerCount = 4;
/** Per worker (decision 24): its slots, a slow destination's share, a workspace's share. */
const slots = 16;
const destinationShare = 3;
const workspaceShare = 4;
/** The slow receiver's answer time: above min(1 s, timeout / 4), so never "known to be fast". */
const slowMs = 800;
const leaseSeconds = 10;
/** A busy workspace: events fanned out to its two slow destinations. */
const busyEvents = 120;
/** A quiet workspace: events to one fast destination, published after the busy backlog. */
const quietEvents = 150;

/**
 * The most requests of `requests` in flight at once, each from its arrival for `holdMs`
 * (the receiver answers each after `holdMs`).
 */
function mostInFlight(requests: readonly ReceivedRequest[], holdMs: number): number {
  const times = requests.map((request) => request.receivedAt).sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < times.length; last += 1) {
    while ((times[first] ?? 0) + holdMs <= (times[last] ?? 0)) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * Scale-out beyond two processes (issue 32): one `--role api` process and four `--role
 * worker` processes of the built binary on one PostgreSQL database, under a backlog that
 * keeps every worker busy. Every notification arrives once at each destination, the work is
 * shared, the shares of decision 24 hold across the cluster (each worker keeps its own, so a
 * destination has at most four times its share in flight, a workspace four times its), a
 * quiet workspace is not held behind a busy one's backlog, and no statement waits on a lock
 * anywhere near a lease (sampled from pg_stat_activity through the run).
 */
describe(
  "one api and four worker processes on PostgreSQL, under load",
  { skip: testBackend !== "postgres" && "PostgreSQL run only: processes share one database" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let slow: Receiver;
    let fast: Receiver;
    const servers: TestServer[] = [];

    before(async () => {
      dir = await tempDir();
      const ca = await sharedTestCa();
      slow = await startReceiver({ ca, respond: () => ({ status: 200, delayMs: slowMs }) });
      fast = await startReceiver({ ca });
    });
    after(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await slow.close();
      await fast.close();
      await dir.cleanup();
    });

    it(
      "delivers each notification once, shares the work, keeps the shares and fairness, and never waits a lease on a lock",
      { timeout: 120_000 },
      async () => {
        const ca = await sharedTestCa();
        const env = {
          ...deliveryEnv(ca),
          SVC_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
          SVC_DELIVERY_TIMEOUT: "3s",
          SVC_DELIVERY_LEASE: `${leaseSeconds}s`,
          SVC_DELIVERY_CONCURRENCY: String(slots),
          SVC_DESTINATION_CONCURRENCY: String(destinationShare),
          SVC_WORKSPACE_CONCURRENCY: String(workspaceShare),
          SVC_RETRY_SCHEDULE: "100ms,500ms,1s,2s,5s",
          SVC_DATABASE_POOL_SIZE: "6",
          SVC_LOG_LEVEL: "debug",
        };
        const dataDir = join(dir.path, "cluster");
        const api = await startTestServer({ dataDir, env, role: "api" });
        servers.push(api);
        const busy = await initialise(api);
        const quiet: Workspace = await createWorkspace(api);
        const register = async (workspace: Workspace, url: string): Promise<string> => {
          const created = await apiClient(api.url, workspace.key).post<DestinationJson>(
            `/v1/workspaces/${workspace.id}/webhooks`,
            { url },
          );
          assert.equal(created.status, 201, created.text);
          return created.body.id;
        };
        await register(busy, `${slow.url}/busy-1`);
        await register(busy, `${slow.url}/busy-2`);
        await register(quiet, `${fast.url}/quiet`);

        // Lock waits, sampled every 100 ms through the run: the longest a statement of this
        // database has been waiting on a lock (heavyweight locks: rows, tuples, transactions).
        const database = new URL(await testDatabaseLocation(dataDir)).pathname.slice(1);
        const monitor = new pg.Client({ connectionString: await testDatabaseLocation(dataDir) });
        await monitor.connect();
        let longestLockWait = { seconds: 0, query: "" };
        let lockWaitSamples = 0;
        const run = { sampling: true };
        const sampler = (async () => {
          while (run.sampling) {
            const { rows } = await monitor.query<{ waited: number; query: string }>(
              `SELECT EXTRACT(EPOCH FROM clock_timestamp() - query_start)::float8 AS waited,
                 wait_event || ': ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS query
               FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'
               ORDER BY query_start LIMIT 1`,
              [database],
            );
            const [row] = rows;
            if (row !== undefined) {
              lockWaitSamples += 1;
              if (row.waited > longestLockWait.seconds) {
                longestLockWait = { seconds: row.waited, query: row.query };
              }
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();

        const workers = await Promise.all(
          Array.from({ length: workerCount }, () =>
            startTestServer({ dataDir, env, role: "worker" }),
          ),
        );
        servers.push(...workers);
        const started = Date.now();
        const busyIds = await publishMany({
          baseUrl: api.url,
          key: busy.key,
          workspaceId: busy.id,
          count: busyEvents,
        });
        const quietPublishedAt = Date.now();
        const quietIds = await publishMany({
          baseUrl: api.url,
          key: quiet.key,
          workspaceId: quiet.id,
          count: quietEvents,
        });
        const arrived = (receiver: Receiver, path: string) =>
          receiver.requests.filter((request) => request.path === path);
        await eventually(
          () =>
            Promise.resolve(
              new Set(arrived(fast, "/quiet").map((request) => request.headers["webhook-id"]))
                .size >= quietEvents || undefined,
            ),
          { timeoutMs: 60_000, what: "the quiet workspace's notifications" },
        );
        const quietDoneAt = Date.now();
        await eventually(
          () =>
            Promise.resolve(
              new Set(
                slow.requests.map(
                  (request) => `${request.path} ${String(request.headers["webhook-id"])}`,
                ),
              ).size >=
                2 * busyEvents || undefined,
            ),
          { timeoutMs: 90_000, what: "the busy workspace's notifications" },
        );
        const busyDoneAt = Date.now();
        run.sampling = false;
        await sampler;
        await monitor.end();

        // Exactly once at each destination (no attempt timed out: the slow answer is well
        // inside the timeout, and a lease is three timeouts long).
        const ids = (receiver: Receiver, path: string) =>
          arrived(receiver, path).map((request) => String(request.headers["webhook-id"]));
        for (const path of ["/busy-1", "/busy-2"]) {
          assert.deepEqual(ids(slow, path).sort(), [...busyIds].sort(), `each once at ${path}`);
        }
        assert.deepEqual(ids(fast, "/quiet").sort(), [...quietIds].sort(), "each once at /quiet");
        assert.deepEqual(await settledDeliveryStatuses(dataDir), [
          { status: "delivered", count: 2 * busyEvents + quietEvents },
        ]);

        // The work is shared: every worker made attempts. Stopped, the workers have written
        // their last log lines (a log goes out in blocks).
        await Promise.all(workers.map((worker) => worker.stop()));
        const perWorker = workers.map(
          (worker) =>
            worker
              .log()
              .split("\n")
              .filter((line) => line.includes('"msg":"delivery attempted"')).length,
        );
        assert.ok(
          perWorker.every((count) => count > 0),
          `per worker: ${perWorker.join(", ")}`,
        );

        // The shares hold across the cluster, and more than one worker's share was used.
        const perDestination = ["/busy-1", "/busy-2"].map((path) =>
          mostInFlight(arrived(slow, path), slowMs),
        );
        const perWorkspace = mostInFlight(slow.requests, slowMs);
        // A request is counted from its arrival for slowMs; one arriving just as another is
        // answered may overlap it by the receiver's own scheduling, hence + 1.
        for (const most of perDestination) {
          assert.ok(most <= workerCount * destinationShare + 1, `a destination had ${most}`);
        }
        assert.ok(
          perWorkspace <= workerCount * workspaceShare + 1,
          `the busy workspace had ${perWorkspace} in flight`,
        );
        assert.ok(
          perWorkspace > workspaceShare,
          `several workers served the busy workspace at once (${perWorkspace} in flight)`,
        );

        // Fairness: the quiet workspace went through while the busy one still had a backlog.
        assert.ok(
          quietDoneAt < busyDoneAt,
          "the quiet workspace's notifications all arrived before the busy backlog drained",
        );

        // No lock wait anywhere near a lease.
        assert.ok(
          longestLockWait.seconds < leaseSeconds,
          `the longest lock wait was ${longestLockWait.seconds.toFixed(2)} s (${longestLockWait.query})`,
        );
        console.log(
          `four workers: busy ${2 * busyEvents} deliveries in ${((busyDoneAt - started) / 1000).toFixed(1)} s, ` +
            `quiet ${quietEvents} in ${((quietDoneAt - quietPublishedAt) / 1000).toFixed(1)} s after publishing; ` +
            `per worker ${perWorker.join(", ")}; most in flight per destination ${perDestination.join(", ")}, ` +
            `per workspace ${perWorkspace}; lock waits seen in ${lockWaitSamples} samples, ` +
            `longest ${longestLockWait.seconds.toFixed(3)} s (${longestLockWait.query})`,
        );
      },
    );
  },
);
