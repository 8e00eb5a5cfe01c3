import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson } from "../support/api.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { distinctWebhookIds, publishMany } from "../support/publish.ts";
import { always, startReceiver, type Receiver, type Responder } from "../support/receiver.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

/** Never answers: the connection stays open until the sender gives up. */
const hang: Responder = () => ({ status: 200, hang: true });

interface CircuitJson {
  state: "open" | "half_open";
  open_until: string;
  opens: number;
  error: string | null;
}

/**
 * Decision 24, end to end: a destination that hangs, answers slowly or keeps failing holds
 * only its own share of the worker, and the rest keeps flowing.
 */
describe("delivery isolation", () => {
  let ca: TestCa;
  const receivers: Receiver[] = [];
  const fixtures: ServerFixture[] = [];

  const receiver = async (respond: Responder): Promise<Receiver> => {
    const started = await startReceiver({ ca, respond });
    receivers.push(started);
    return started;
  };
  const server = async (env: NodeJS.ProcessEnv): Promise<ServerFixture> => {
    const fixture = await serverFixture({ ...deliveryEnv(ca), ...env });
    fixtures.push(fixture);
    return fixture;
  };
  const register = async (api: ApiClient, workspace: string, url: string) => {
    const response = await api.post<DestinationJson>(`/v1/workspaces/${workspace}/webhooks`, {
      url,
    });
    assert.equal(response.status, 201, response.text);
    return response.body;
  };
  const publish = (fixture: ServerFixture, workspace: Workspace, count: number) =>
    publishMany({
      baseUrl: fixture.server.url,
      key: workspace.key,
      workspaceId: workspace.id,
      count,
    });

  before(async () => {
    ca = await sharedTestCa();
  });
  after(async () => {
    await Promise.all(receivers.map((item) => item.close()));
    await Promise.all(fixtures.map((item) => item.dispose()));
  });

  describe("with a 10 s timeout, 32 slots, 4 per destination and 16 per workspace", () => {
    let fixture: ServerFixture;
    let api: ApiClient;
    // The timeout is long so that no hanging attempt ends (and frees its turn for another)
    // before the checks: they hold on a loaded machine too.
    const limits = {
      SVC_DELIVERY_TIMEOUT: "10s",
      SVC_DELIVERY_LEASE: "40s",
      SVC_DELIVERY_CONCURRENCY: "32",
      SVC_DESTINATION_CONCURRENCY: "4",
      SVC_WORKSPACE_CONCURRENCY: "16",
      SVC_RETRY_SCHEDULE: "1m",
      SVC_CIRCUIT_THRESHOLD: "1000",
    };

    before(async () => {
      fixture = await server(limits);
      api = apiClient(fixture.server.url, fixture.owner.key);
    });

    it("delivers to a healthy destination while one of the same workspace hangs", async () => {
      const hanging = await receiver(hang);
      const healthy = await receiver(always(204));
      await register(api, fixture.owner.id, `https://hooks.test:${hanging.port}/hangs`);
      await register(api, fixture.owner.id, `https://hooks.test:${healthy.port}/ok`);

      await publish(fixture, fixture.owner, 40);
      // Well inside the 10 s timeout: nothing waited for a hanging attempt to give up.
      await healthy.waitForRequests(40, 4000);
      assert.ok(
        hanging.requests.length <= 4,
        `the hanging destination had ${hanging.requests.length} attempts in flight (limit 4)`,
      );
    });

    it("delivers another workspace's notifications while one workspace's destinations all hang", async () => {
      const [noisy, other] = [
        await createWorkspace(fixture.server),
        await createWorkspace(fixture.server),
      ];
      const hanging = await receiver(hang);
      const healthy = await receiver(always(204));
      const noisyApi = apiClient(fixture.server.url, noisy.key);
      for (let index = 0; index < 10; index += 1) {
        await register(noisyApi, noisy.id, `https://hooks.test:${hanging.port}/h${index}`);
      }
      await register(
        apiClient(fixture.server.url, other.key),
        other.id,
        `https://hooks.test:${healthy.port}/other`,
      );

      await publish(fixture, noisy, 10);
      await hanging.waitForRequests(16, 4000);
      await publish(fixture, other, 10);
      await healthy.waitForRequests(10, 3000);
      assert.ok(
        hanging.requests.length <= 16,
        `one workspace had ${hanging.requests.length} attempts in flight (its limit is 16 of 32)`,
      );
    });
  });

  it("delivers each of several hundred notifications exactly once to a receiver that answers in 1.5 s (timeout 5 s)", async () => {
    const fixture = await server({
      SVC_DELIVERY_TIMEOUT: "5s",
      SVC_DELIVERY_LEASE: "30s",
      SVC_DESTINATION_CONCURRENCY: "64",
    });
    const api = apiClient(fixture.server.url, fixture.owner.key);
    const slow = await receiver(() => ({ status: 204, delayMs: 1500 }));
    await register(api, fixture.owner.id, `https://hooks.test:${slow.port}/slow`);

    const ids = await publish(fixture, fixture.owner, 300);
    await slow.waitForRequests(300, 30_000);
    // Give any duplicate (a false time-out's retry, after 50 ms) the time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal(slow.requests.length, 300, "no notification was sent twice");
    assert.deepEqual(distinctWebhookIds(slow.requests), new Set(ids));
  });

  it("opens the circuit of a destination that keeps timing out, then probes it and closes it when it answers", async () => {
    const fixture = await server({
      SVC_DELIVERY_TIMEOUT: "500ms",
      SVC_DELIVERY_LEASE: "10s",
      SVC_DESTINATION_CONCURRENCY: "4",
      SVC_CIRCUIT_THRESHOLD: "4",
      SVC_RETRY_SCHEDULE: "5s,5s,5s",
    });
    const api = apiClient(fixture.server.url, fixture.owner.key);
    const failing = await receiver(hang);
    const destination = await register(
      api,
      fixture.owner.id,
      `https://hooks.test:${failing.port}/times-out`,
    );
    const ids = await publish(fixture, fixture.owner, 30);

    const circuit = await eventually(
      async () => {
        const { body } = await api.get<{ last_delivery: { circuit: CircuitJson | null } }>(
          `/v1/workspaces/${fixture.owner.id}/webhooks/${destination.id}`,
        );
        return body.last_delivery.circuit ?? undefined;
      },
      { what: "the circuit to open" },
    );
    assert.equal(circuit.state, "open");
    assert.equal(circuit.opens, 1);
    assert.match(
      circuit.error ?? "",
      /4 attempts in a row failed \(last: no answer within 500ms\)/,
    );
    // While it is open, nothing more is sent: the attempts in flight when it opened, at most
    // two rounds of the destination's 4, not 30 (nor 30 time-outs in a row). Those sent just
    // before it opened have arrived within a timeout (500 ms).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const made = failing.requests.length;
    assert.ok(made >= 4 && made <= 8, `${made} attempts before the circuit opened`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(failing.requests.length, made, "nothing was sent while the circuit was open");

    // It answers again: the probe after the cool-down gets through and the rest follow.
    failing.setResponder(always(204));
    await eventually(
      () =>
        Promise.resolve(
          distinctWebhookIds(failing.requests).size === ids.length ? true : undefined,
        ),
      { what: "every notification delivered after the circuit closed", timeoutMs: 15_000 },
    );
    const { body } = await api.get<{ last_delivery: { circuit: CircuitJson | null } }>(
      `/v1/workspaces/${fixture.owner.id}/webhooks/${destination.id}`,
    );
    assert.equal(body.last_delivery.circuit, null);
  });
});
