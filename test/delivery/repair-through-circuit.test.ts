import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer, type Workspace } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

interface CircuitJson {
  state: "closed" | "open" | "half_open";
  open_until: string | null;
  opens: number;
  reason: string | null;
}

interface DeliveryJson {
  id: string;
  event_id: string;
  status: "pending" | "delivered" | "failed";
  state: string;
  next_attempt_at: string | null;
  in_flight: boolean;
  attempts: number;
}

/**
 * A circuit that opens at the first failure for five minutes, then (a failed probe) for ten:
 * the "long window". A delivery's own retry after its first failure is 4 to 6 minutes away.
 */
const longCircuit = { SVC_RETRY_SCHEDULE: "5m,10m", SVC_CIRCUIT_THRESHOLD: "1" };
/** Deliveries that fail fast (two attempts 50 ms apart) and never open a circuit. */
const failFast = { SVC_RETRY_SCHEDULE: "50ms", SVC_CIRCUIT_THRESHOLD: "1000" };
/** "Within a second or two" of the repair, on a loaded machine too. */
const promptlyMs = 2500;

/**
 * The API process and the worker: one `--role all` process, or an `--role api` and a
 * `--role worker` process on one database. `restartWorker` starts the worker again with other
 * delivery settings (in `all`, the whole process: its URL changes, so `api()` is asked anew).
 */
interface Deployment {
  readonly owner: Workspace;
  api(): ApiClient;
  restartWorker(env: NodeJS.ProcessEnv): Promise<void>;
  dispose(): Promise<void>;
}

async function deploy(
  kind: "all" | "split",
  env: NodeJS.ProcessEnv,
  workerEnv: NodeJS.ProcessEnv,
): Promise<Deployment> {
  const dir = await tempDir();
  const dataDir = join(dir.path, "data");
  const start = (role: "all" | "api" | "worker", extra: NodeJS.ProcessEnv) =>
    startTestServer({ dataDir, role, env: { ...env, ...extra } });
  let apiServer: TestServer = await start(kind === "all" ? "all" : "api", workerEnv);
  let worker: TestServer | null = kind === "split" ? await start("worker", workerEnv) : null;
  const owner = await initialise(apiServer);
  return {
    owner,
    api: () => apiClient(apiServer.url, owner.key),
    async restartWorker(next) {
      if (worker === null) {
        await apiServer.stop();
        apiServer = await start("all", next);
      } else {
        await worker.stop();
        worker = await start("worker", next);
      }
    },
    async dispose() {
      await worker?.stop();
      await apiServer.stop();
      await dir.cleanup();
    },
  };
}

/**
 * Decision 40, end to end with the built binary: a retry or a recovery goes out at once,
 * through a circuit that the worker opened for a long window, in one process and in an api and
 * a worker process alike; a probe that fails opens the circuit again, and the API says so.
 */
for (const kind of ["all", "split"] as const) {
  describe(`a repair goes out now (--role ${kind === "all" ? "all" : "api + --role worker"})`, () => {
    let ca: TestCa;
    const receivers: Receiver[] = [];
    const deployments: Deployment[] = [];

    const setUp = async (workerEnv: NodeJS.ProcessEnv) => {
      const receiver = await startReceiver({ ca, respond: always(503) });
      receivers.push(receiver);
      const deployment = await deploy(kind, deliveryEnv(ca), workerEnv);
      deployments.push(deployment);
      const created = await deployment
        .api()
        .post<DestinationJson>(`/v1/workspaces/${deployment.owner.id}/webhooks`, {
          url: `https://hooks.test:${receiver.port}/hooks`,
        });
      assert.equal(created.status, 201, created.text);
      return { receiver, deployment, destination: created.body };
    };
    const publish = async (deployment: Deployment): Promise<string> => {
      const response = await deployment
        .api()
        .post<{ id: string }>(`/v1/workspaces/${deployment.owner.id}/events`, {
          type: "job.completed",
          data: { object: { id: "job_1" } },
        });
      assert.equal(response.status, 202, response.text);
      return response.body.id;
    };
    const circuitOf = async (deployment: Deployment, destinationId: string) => {
      const response = await deployment
        .api()
        .get<{ circuit: CircuitJson }>(
          `/v1/workspaces/${deployment.owner.id}/webhooks/${destinationId}`,
        );
      assert.equal(response.status, 200, response.text);
      return response.body.circuit;
    };
    const deliveryOf = async (deployment: Deployment, eventId: string) => {
      const list = await deployment
        .api()
        .get<{ data: DeliveryJson[] }>(
          `/v1/workspaces/${deployment.owner.id}/deliveries?event=${eventId}`,
        );
      const [delivery] = list.body.data;
      assert.ok(delivery, `a delivery of ${eventId}`);
      return delivery;
    };
    /** Waits until the worker has opened the circuit and recorded the attempt that opened it. */
    const circuitOpened = (deployment: Deployment, destinationId: string, eventId: string) =>
      eventually(
        async () => {
          const circuit = await circuitOf(deployment, destinationId);
          const delivery = await deliveryOf(deployment, eventId);
          const held = circuit.state === "open" && delivery.attempts >= 1 && !delivery.in_flight;
          return held ? { circuit, delivery } : undefined;
        },
        { what: "the circuit to open" },
      );

    before(async () => {
      ca = await sharedTestCa();
    });
    after(async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await Promise.all(deployments.map((deployment) => deployment.dispose()));
    });

    it("a retry through a circuit open for five minutes reaches the receiver that came back at once, and closes the circuit", async () => {
      const { receiver, deployment, destination } = await setUp(longCircuit);
      const eventId = await publish(deployment);
      const opened = await circuitOpened(deployment, destination.id, eventId);
      assert.ok(
        Date.parse(opened.circuit.open_until ?? "") - Date.now() > 3 * 60_000,
        "the circuit is open for the schedule's first step, 5 minutes",
      );
      // Held by the circuit, or by its own retry if that falls later (the schedule's jitter).
      assert.ok(["circuit_open", "retry_scheduled"].includes(opened.delivery.state));
      assert.ok(
        Date.parse(opened.delivery.next_attempt_at ?? "") >=
          Date.parse(opened.circuit.open_until ?? ""),
      );

      receiver.setResponder(always(200));
      const retried = await deployment
        .api()
        .post<DeliveryJson>(
          `/v1/workspaces/${deployment.owner.id}/deliveries/${opened.delivery.id}/retry`,
          {},
        );
      const answeredAt = Date.now();
      assert.equal(retried.status, 202, retried.text);
      assert.equal(retried.body.status, "pending");
      assert.ok(
        Date.parse(retried.body.next_attempt_at ?? "") <= answeredAt,
        "the retry is due now",
      );
      // Half-open from the retry on (the retry is its probe), or closed already by the probe.
      const circuit = await circuitOf(deployment, destination.id);
      assert.ok(["half_open", "closed"].includes(circuit.state), circuit.state);
      assert.ok(Date.parse(circuit.open_until ?? "0") <= answeredAt);

      await receiver.waitForRequests(2, promptlyMs);
      await eventually(
        async () =>
          (await deliveryOf(deployment, eventId)).status === "delivered" ? true : undefined,
        { what: "the retried delivery to be delivered" },
      );
      await eventually(
        async () =>
          (await circuitOf(deployment, destination.id)).state === "closed" ? true : undefined,
        { what: "the probe that got through to close the circuit" },
      );
    });

    it("a retry against a receiver still down opens the circuit again for the next step, and the API says so", async () => {
      const { receiver, deployment, destination } = await setUp(longCircuit);
      const eventId = await publish(deployment);
      const opened = await circuitOpened(deployment, destination.id, eventId);
      assert.equal(opened.circuit.opens, 1);

      const retried = await deployment
        .api()
        .post<DeliveryJson>(
          `/v1/workspaces/${deployment.owner.id}/deliveries/${opened.delivery.id}/retry`,
          {},
        );
      assert.equal(retried.status, 202, retried.text);
      await receiver.waitForRequests(2, promptlyMs);
      const reopened = await eventually(
        async () => {
          const circuit = await circuitOf(deployment, destination.id);
          const delivery = await deliveryOf(deployment, eventId);
          return circuit.opens === 2 && !delivery.in_flight && delivery.attempts === 2
            ? { circuit, delivery }
            : undefined;
        },
        { what: "the failed probe to open the circuit again" },
      );
      assert.equal(reopened.circuit.state, "open");
      assert.match(reopened.circuit.reason ?? "", /probe failed.*HTTP 503|503/);
      assert.equal(reopened.delivery.state, "circuit_open");
      assert.equal(reopened.delivery.status, "pending");
      assert.ok(Date.parse(reopened.circuit.open_until ?? "") - Date.now() > 8 * 60_000);
      assert.equal(
        reopened.delivery.next_attempt_at,
        reopened.circuit.open_until,
        "its own retry (4 to 6 minutes) waits for the circuit's ten, and says so",
      );
      // What the API says is what the worker does: nothing more is sent meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(receiver.requests.length, 2);
    });

    it("a recovery through a circuit open for five minutes releases every failed delivery at once", async () => {
      const { receiver, deployment, destination } = await setUp(failFast);
      const since = new Date(Date.now() - 1000).toISOString();
      const failed = [
        await publish(deployment),
        await publish(deployment),
        await publish(deployment),
      ];
      await eventually(
        async () => {
          const states = await Promise.all(failed.map((id) => deliveryOf(deployment, id)));
          return states.every((delivery) => delivery.status === "failed") ? true : undefined;
        },
        { what: "three deliveries to fail" },
      );
      // The worker now opens a long circuit at the first failure.
      await deployment.restartWorker(longCircuit);
      await circuitOpened(deployment, destination.id, await publish(deployment));
      // Published while the circuit is open: held until it ends, never attempted.
      const held = await publish(deployment);
      const heldDelivery = await deliveryOf(deployment, held);
      assert.equal(heldDelivery.state, "circuit_open");
      assert.equal(heldDelivery.attempts, 0);
      const sentBefore = receiver.requests.length;

      receiver.setResponder(always(200));
      const recovered = await deployment
        .api()
        .post<{ queued: number }>(
          `/v1/workspaces/${deployment.owner.id}/webhooks/${destination.id}/recover`,
          { since },
        );
      assert.equal(recovered.status, 202, recovered.text);
      assert.deepEqual(recovered.body, { queued: 3 });
      // The three recovered, and the one the circuit held: the probe closed it and released it.
      await receiver.waitForRequests(sentBefore + 4, promptlyMs);
      for (const id of [...failed, held]) {
        await eventually(
          async () =>
            (await deliveryOf(deployment, id)).status === "delivered" ? true : undefined,
          { what: `${id} to be delivered` },
        );
      }
    });
  });
}
