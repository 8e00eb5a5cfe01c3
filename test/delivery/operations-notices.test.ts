import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { OPERATIONAL_EVENT_TYPES } from "../../src/operations/event-types.ts";
import { apiClient, type ApiClient, type DestinationJson, type ErrorJson } from "../support/api.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { operatorKeyOf, serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, startReceiver, type ReceivedRequest, type Receiver } from "../support/receiver.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { mountSmallDisk, postgresDiskFull, type SmallDisk } from "../support/full-disk.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

/** A notice as the operations endpoint receives it. */
interface Notice {
  id: string;
  type: string;
  api_version: string;
  created: number;
  data: { object: Record<string, unknown> };
}

const operationsSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`;

/**
 * The notices of `type` the receiver has, each checked as any receiver would check a
 * notification: its signature with the operations secret, `Webhook-Id` the body's id, and the
 * body's shape.
 */
function noticesOf(receiver: Receiver, secret: string, type: string): Notice[] {
  return receiver.requests
    .map((request) => verifiedNotice(request, secret))
    .filter((notice) => notice.type === type);
}

function verifiedNotice(request: ReceivedRequest, secret: string): Notice {
  verifiedTimestamp(request, secret);
  const notice = JSON.parse(request.bodyText) as Notice;
  assert.equal(request.headers["webhook-id"], notice.id);
  assert.deepEqual(Object.keys(notice).sort(), ["api_version", "created", "data", "id", "type"]);
  assert.match(notice.id, /^evt_/);
  return notice;
}

/** Waits for a notice of `type` whose object matches `where`. */
async function awaitNotice(
  receiver: Receiver,
  secret: string,
  type: string,
  where: Record<string, unknown>,
): Promise<Notice> {
  return eventually(
    () =>
      Promise.resolve(
        noticesOf(receiver, secret, type).find((notice) =>
          Object.entries(where).every(([key, value]) => notice.data.object[key] === value),
        ),
      ),
    { what: `${type} with ${JSON.stringify(where)}` },
  );
}

/**
 * Issue 31's operational notifications end to end (decision 48): a real server process with an
 * operations endpoint, real HTTPS receivers on loopback.
 */
describe("operational notifications", () => {
  let ca: TestCa;
  let operations: Receiver;
  let everything: Receiver;
  let fixture: ServerFixture;
  let api: ApiClient;
  const secret = operationsSecret();
  const receivers: Receiver[] = [];

  const receiver = async (status: number): Promise<Receiver> => {
    const started = await startReceiver({ ca, respond: always(status) });
    receivers.push(started);
    return started;
  };
  const webhooks = () => `/v1/workspaces/${fixture.owner.id}/webhooks`;
  const register = async (url: string, events: string[]): Promise<DestinationJson> => {
    const response = await api.post<DestinationJson>(webhooks(), { url, events });
    assert.equal(response.status, 201, response.text);
    return response.body;
  };
  const publish = async (type: string, object: Record<string, unknown> = {}): Promise<void> => {
    const response = await api.post(`/v1/workspaces/${fixture.owner.id}/events`, {
      type,
      data: { object },
    });
    assert.equal(response.status, 202, response.text);
  };

  before(async () => {
    ca = await sharedTestCa();
    operations = await receiver(200);
    everything = await receiver(200);
    fixture = await serverFixture({
      ...deliveryEnv(ca),
      SVC_OPERATIONS_URL: `https://hooks.test:${operations.port}/operations`,
      SVC_OPERATIONS_SECRET: secret,
      SVC_CIRCUIT_THRESHOLD: "2",
    });
    api = apiClient(fixture.server.url, fixture.owner.key);
    await register(`https://hooks.test:${everything.port}/everything`, ["*"]);
  });
  after(async () => {
    await fixture.dispose();
    await Promise.all(receivers.map((item) => item.close()));
  });

  it("tells destination.failing when a circuit opens, with the reason, signed with the operations secret", async () => {
    const failing = await receiver(500);
    const destination = await register(`https://hooks.test:${failing.port}/down`, ["job.failed"]);
    await publish("job.failed");
    await publish("job.failed");
    const notice = await awaitNotice(operations, secret, "destination.failing", {
      destination_id: destination.id,
    });
    assert.equal(notice.api_version, "2026-11-01");
    assert.equal(notice.data.object.workspace_id, fixture.owner.id);
    assert.match(String(notice.data.object.reason), /failed \(last: .*500/);

    // Its probe is delivered once the receiver answers again: destination.recovered.
    failing.setResponder(always(200));
    const recovered = await awaitNotice(operations, secret, "destination.recovered", {
      destination_id: destination.id,
    });
    assert.deepEqual(recovered.data.object, {
      workspace_id: fixture.owner.id,
      destination_id: destination.id,
    });
  });

  it("tells delivery.failed when a delivery's retries are spent, naming it without its body or any secret", async () => {
    const refusing = await receiver(400);
    const destination = await register(`https://hooks.test:${refusing.port}/refuses`, [
      "collection.completed",
    ]);
    await publish("collection.completed", { marker: "the-event-body-stays-home" });
    const notice = await awaitNotice(operations, secret, "delivery.failed", {
      destination_id: destination.id,
    });
    const { object } = notice.data;
    assert.equal(object.workspace_id, fixture.owner.id);
    assert.match(String(object.delivery_id), /^dlv_/);
    assert.equal(object.reason, "retries_exhausted");
    assert.equal(object.attempts, 3);
    assert.equal(object.last_status_code, 400);
    const text = JSON.stringify(notice);
    assert.ok(!text.includes("the-event-body-stays-home"), "no event body");
    assert.ok(!text.includes(destination.secret ?? "whsec_"), "no destination secret");
    assert.ok(!text.includes(secret), "no operations secret");

    // The delivery it names is the workspace's, as its own log shows it.
    const log = await api.get<{ id: string; status: string }>(
      `/v1/workspaces/${fixture.owner.id}/deliveries/${String(object.delivery_id)}`,
    );
    assert.equal(log.status, 200, log.text);
    assert.equal(log.body.status, "failed");
  });

  it("tells listen_session.ended when a listen session is ended", async () => {
    const opened = await api.post<{ id: string }>(
      `/v1/workspaces/${fixture.owner.id}/listen-sessions`,
      { events: ["job.completed"] },
    );
    assert.equal(opened.status, 200, opened.text);
    const ended = await api.delete(
      `/v1/workspaces/${fixture.owner.id}/listen-sessions/${opened.body.id}`,
    );
    assert.equal(ended.status, 200, ended.text);
    const notice = await awaitNotice(operations, secret, "listen_session.ended", {
      listen_session_id: opened.body.id,
    });
    assert.deepEqual(notice.data.object, {
      workspace_id: fixture.owner.id,
      listen_session_id: opened.body.id,
      reason: "ended",
    });
  });

  it("refuses an operational type from a workspace, to publish or to subscribe to (operational_event_type)", async () => {
    for (const type of OPERATIONAL_EVENT_TYPES) {
      const published = await api.post<ErrorJson>(`/v1/workspaces/${fixture.owner.id}/events`, {
        type,
        data: { object: {} },
      });
      assert.equal(published.status, 400, published.text);
      assert.equal(published.body.error.code, "operational_event_type");
      assert.equal(published.body.error.param, "type");
    }
    const subscribed = await api.post<ErrorJson>(webhooks(), {
      url: `https://hooks.test:${everything.port}/sneaky`,
      events: ["job.completed", "destination.failing"],
    });
    assert.equal(subscribed.status, 400, subscribed.text);
    assert.equal(subscribed.body.error.code, "operational_event_type");
    assert.match(subscribed.body.error.message, /destination\.failing is an operational event/);
  });

  it("keeps the operations workspace out of an operator key's reach", async () => {
    const operator = apiClient(
      fixture.server.url,
      await operatorKeyOf(fixture, "workspaces:read,webhooks:read,events:read"),
    );
    const listed = await operator.get<{ data: { id: string }[] }>("/v1/workspaces?limit=100");
    assert.equal(listed.status, 200, listed.text);
    assert.ok(!listed.body.data.some((workspace) => workspace.id === "ws_operations"));
    for (const path of ["/v1/workspaces/ws_operations", "/v1/workspaces/ws_operations/events"]) {
      const refused = await operator.get<ErrorJson>(path);
      assert.ok([403, 404].includes(refused.status), `${path}: ${refused.text}`);
    }
  });

  // Last: by now every type a workspace's change causes has been told.
  it("never sends an operational type to a workspace destination subscribed to everything", async () => {
    const before = everything.requests.length;
    await publish("job.completed");
    await everything.waitForRequests(before + 1);
    const types = new Set(
      everything.requests.map((request) => (JSON.parse(request.bodyText) as Notice).type),
    );
    for (const type of OPERATIONAL_EVENT_TYPES) assert.ok(!types.has(type), `${type} leaked`);
    assert.ok(types.has("job.completed"));
    assert.ok(operations.requests.length >= 4, "the operations endpoint was told meanwhile");
  });
});

describe("a restart between a circuit opening and its notice's delivery", () => {
  let ca: TestCa;
  const receivers: Receiver[] = [];
  const secret = operationsSecret();
  let fixture: ServerFixture;
  let restarted: TestServer | null = null;

  before(async () => {
    ca = await sharedTestCa();
  });
  after(async () => {
    await restarted?.stop();
    await fixture.dispose();
    await Promise.all(receivers.map((item) => item.close()));
  });

  it("loses nothing: the notice written with the opening is sent after the crash", async () => {
    // The operations endpoint takes the notice and never answers: it is in flight, not
    // delivered, when the server is killed.
    const operations = await startReceiver({ ca, respond: () => ({ status: 200, hang: true }) });
    const failing = await startReceiver({ ca, respond: always(503) });
    receivers.push(operations, failing);
    fixture = await serverFixture({
      ...deliveryEnv(ca),
      SVC_OPERATIONS_URL: `https://hooks.test:${operations.port}/operations`,
      SVC_OPERATIONS_SECRET: secret,
      SVC_CIRCUIT_THRESHOLD: "1",
      SVC_RETRY_SCHEDULE: "1m",
      // Long enough that the hanging attempt is still in flight when the server is killed;
      // after the restart its lease ends and the notice is claimed again.
      SVC_DELIVERY_TIMEOUT: "3s",
      SVC_DELIVERY_LEASE: "4s",
    });
    const api = apiClient(fixture.server.url, fixture.owner.key);
    const created = await api.post<DestinationJson>(`/v1/workspaces/${fixture.owner.id}/webhooks`, {
      url: `https://hooks.test:${failing.port}/down`,
      events: ["*"],
    });
    assert.equal(created.status, 201, created.text);
    await api.post(`/v1/workspaces/${fixture.owner.id}/events`, {
      type: "job.failed",
      data: { object: {} },
    });
    const [inFlight] = await operations.waitForRequests(1);
    assert.ok(inFlight);
    const notice = verifiedNotice(inFlight, secret);
    assert.equal(notice.type, "destination.failing");
    await fixture.server.kill();

    const seen = operations.requests.length;
    operations.setResponder(always(204));
    restarted = await startTestServer({ dataDir: fixture.server.dataDir, env: fixture.server.env });
    const again = await operations.waitForRequests(seen + 1, 15_000);
    const resent = verifiedNotice(again[seen] as ReceivedRequest, secret);
    assert.equal(resent.id, notice.id, "the same notice, under the same Webhook-Id");
    assert.equal(resent.data.object.destination_id, created.body.id);
  });
});

/**
 * Storage full and recovered: on SQLite a real small file system filled up, on PostgreSQL the
 * server's own disk_full error from every write (test/support/full-disk.ts).
 */
describe("storage notices", () => {
  let ca: TestCa;
  let operations: Receiver;
  let server: TestServer | null = null;
  let disk: SmallDisk | string | null = null;
  let dir: { path: string; cleanup: () => Promise<void> };
  const secret = operationsSecret();

  before(async () => {
    ca = await sharedTestCa();
    operations = await startReceiver({ ca, respond: always(200) });
    dir = await tempDir();
  });
  after(async () => {
    await server?.stop();
    if (typeof disk === "object" && disk !== null) await disk.cleanup();
    await operations.close();
    await dir.cleanup();
  });

  it("tells storage.full, then storage.recovered once there is room again", async (t) => {
    let dataDir = join(dir.path, "data");
    if (testBackend === "sqlite") {
      disk = await mountSmallDisk(16);
      if (typeof disk === "string") {
        t.skip(disk);
        return;
      }
      dataDir = join(disk.path, "data");
    }
    server = await startTestServer({
      dataDir,
      env: {
        ...deliveryEnv(ca),
        SVC_OPERATIONS_URL: `https://hooks.test:${operations.port}/operations`,
        SVC_OPERATIONS_SECRET: secret,
      },
    });
    const owner = await initialise(server);
    const api = apiClient(server.url, owner.key);
    const publish = () =>
      api.post<ErrorJson>(`/v1/workspaces/${owner.id}/events`, {
        type: "job.completed",
        data: { object: { padding: "x".repeat(200_000) } },
      });

    const small = disk;
    const full =
      typeof small === "object" && small !== null
        ? await small.fill().then(() => ({ free: () => small.free() }))
        : await postgresDiskFull(await testDatabaseLocation(dataDir));
    try {
      // Until a write meets the full disk (SQLite's file may have room for a few).
      await eventually(async () => {
        const answer = await publish();
        return answer.status === 503 ? answer : undefined;
      });
    } finally {
      await full.free();
    }
    const fullNotice = await awaitNotice(operations, secret, "storage.full", {});
    const recovered = await awaitNotice(operations, secret, "storage.recovered", {});
    assert.equal(fullNotice.data.object.workspace_id, null);
    assert.equal(fullNotice.data.object.database, testBackend);
    assert.ok(
      Date.parse(String(fullNotice.data.object.full_since)) <=
        Date.parse(String(recovered.data.object.recovered_at)),
    );
    assert.ok(
      operations.requests.findIndex((request) => request.bodyText.includes("storage.full")) <
        operations.requests.findIndex((request) => request.bodyText.includes("storage.recovered")),
      "full before recovered",
    );
  });
});
