import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient } from "../support/api.ts";
import { assertExit, clientEnv, closedPortUrl, envelope, svcAgainst } from "../support/cli.ts";
import { testBackend } from "../support/database.ts";
import { verifiedTimestamp } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startListen, stopLeftoverListens } from "../support/listen.ts";
import { always, sequence, startReceiver, type Receiver } from "../support/receiver.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import type { SvcRun, SvcRunOptions } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

/** Stream heartbeats and retries fast enough for a test. */
const listenEnv = {
  SVC_LISTEN_HEARTBEAT: "200ms",
  SVC_RETRY_SCHEDULE: "50ms,100ms",
};

/** One output line: time, type, id, the local answer, its time. */
const resultLine =
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}(\S+)\s+(evt_\w+) {2}(\d{3}|error: .+?) {2}(\d+) ms/;

interface DeliveryJson {
  id: string;
  destination_id: string;
  status: string;
  attempts: number;
}

/**
 * `svc listen` end to end through the built binary: a real server, a local plain-HTTP
 * receiver (as a developer's own server), and the session's secret from its file.
 */
describe("svc listen end to end", () => {
  let fixture: ServerFixture;
  let api: ApiClient;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;
  const receivers: Receiver[] = [];

  const receiver = async (status = 200): Promise<Receiver> => {
    const started = await startReceiver({ ca: null, respond: always(status) });
    receivers.push(started);
    return started;
  };
  const publish = async (type: string, id = randomBytes(4).toString("hex")): Promise<string> => {
    const response = await api.post<{ id: string }>(`/v1/workspaces/${fixture.owner.id}/events`, {
      type,
      data: { object: { id } },
    });
    assert.equal(response.status, 202, response.text);
    return response.body.id;
  };
  const deliveriesOf = async (eventId: string) =>
    (
      await api.get<{ data: DeliveryJson[] }>(
        `/v1/workspaces/${fixture.owner.id}/deliveries?event=${eventId}`,
      )
    ).body.data;
  const sessions = async () =>
    (
      await api.get<{ data: { id: string; name: string | null; pending: number }[] }>(
        `/v1/workspaces/${fixture.owner.id}/listen-sessions`,
      )
    ).body.data;
  const listen = (args: readonly string[]) =>
    startListen(args, { ...clientEnv(fixture), ...listenEnv });

  before(async () => {
    fixture = await serverFixture(listenEnv);
    api = apiClient(fixture.server.url, fixture.owner.key);
    svc = svcAgainst(fixture);
  });
  after(async () => {
    const leaked = await stopLeftoverListens();
    await Promise.all(receivers.map((each) => each.close()));
    await fixture.dispose();
    assert.equal(leaked, 0, "every svc listen a test started has exited");
  });

  it("forwards the types asked for, signed with the saved secret; Ctrl-C exits 0 and ends the session", async () => {
    const local = await receiver();
    const secretFile = join(fixture.dir, "listen-secret.txt");
    const run = listen([
      "--forward-to",
      `${local.url}/hooks`,
      "--events",
      "job.completed",
      "--output",
      secretFile,
    ]);
    await run.waitForNote(/^Listening: job\.completed of workspace/);
    const secret = await readFile(secretFile, "utf8");
    assert.match(secret, /^whsec_/);

    const skipped = await publish("job.failed");
    const wanted = await publish("job.completed");
    const [request] = await local.waitForRequests(1);
    assert.ok(request);
    assert.equal(request.path, "/hooks");
    assert.equal(request.headers["webhook-id"], wanted);
    assert.equal(request.headers["content-type"], "application/json");
    verifiedTimestamp(request, secret);
    assert.equal((JSON.parse(request.bodyText) as { type: string }).type, "job.completed");

    const [line = ""] = await run.waitForLines(1);
    const [, type, id, answer] = resultLine.exec(line) ?? [];
    assert.deepEqual([type, id, answer], ["job.completed", wanted, "200"], line);
    // The local answer is an attempt in the delivery log, as for any destination.
    const delivered = await eventually(
      async () => (await deliveriesOf(wanted)).find((each) => each.status === "delivered"),
      { what: "the forwarded delivery to be recorded delivered" },
    );
    assert.ok(delivered.destination_id.startsWith("lsn_"));
    const detail = await api.get<{ attempts: { status_code: number; response_body: string }[] }>(
      `/v1/workspaces/${fixture.owner.id}/deliveries/${delivered.id}`,
    );
    assert.deepEqual(
      detail.body.attempts.map((attempt) => [attempt.status_code, attempt.response_body]),
      [[200, "OK"]],
    );
    assert.deepEqual(await deliveriesOf(skipped), [], "a type not asked for is not queued");

    // Sessions are never destinations: `svc webhooks list` does not show them.
    const webhooks = await svc(["webhooks", "list", "--json"]);
    assertExit(webhooks, 0);
    assert.deepEqual(envelope<unknown[]>(webhooks).data, []);

    assert.equal(await run.interrupt(), 0);
    assert.ok(
      run.notes.some((note) => /session lsn_\w+ ended/.test(note)),
      run.notes.join("\n"),
    );
    assert.deepEqual(await sessions(), [], "an unnamed session ends with svc listen");
    assert.equal(local.requests.length, 1);
    assert.ok(!run.notes.join("\n").includes(secret), "the saved secret is not printed");
  });

  it("a named session resumes with what was published while it was away, under its first secret", async () => {
    const local = await receiver();
    const secretFile = join(fixture.dir, "named-secret.txt");
    const first = listen([
      "--name",
      "laptop",
      "--forward-to",
      `${local.url}/hooks`,
      "--output",
      secretFile,
    ]);
    await first.waitForNote(/^Listening: /);
    assert.equal(await first.interrupt(), 0);
    assert.ok(first.notes.some((note) => note.includes("svc listen --name laptop resumes it")));
    const secret = await readFile(secretFile, "utf8");

    const missed = [await publish("job.completed"), await publish("collection.completed")];
    const [kept] = await sessions();
    assert.equal(kept?.name, "laptop");
    assert.equal(kept.pending, 2);

    const second = listen(["--name", "laptop", "--forward-to", `${local.url}/hooks`]);
    await second.waitForNote(/^Resumed: .*Session laptop \(lsn_\w+\), 2 waiting/);
    const requests = await local.waitForRequests(2);
    // Pushed in publish order; forwarded side by side, as a webhook's may arrive.
    assert.deepEqual(
      requests.map((request) => request.headers["webhook-id"]).sort(),
      missed.sort(),
    );
    for (const request of requests) verifiedTimestamp(request, secret);
    assert.ok(!second.notes.some((note) => note.includes("whsec_")), "no secret on resume");
    await second.waitForLines(2);
    assert.equal(await second.interrupt(), 0);
    assert.equal(local.requests.length, 2, "nothing was forwarded twice");

    const end = await svc(["listen", "--end", "laptop", "--json"]);
    assertExit(end, 0);
    assert.deepEqual(envelope(end).data, { id: kept.id, deleted: true });
    assert.deepEqual(await sessions(), []);
    assertExit(await svc(["listen", "--end", "laptop"]), 5);
  });

  it("--route sends a type to another URL; --json prints one object per notification", async () => {
    const general = await receiver();
    const failures = await receiver();
    const run = listen([
      "--forward-to",
      `${general.url}/hooks`,
      "--route",
      `job.failed=${failures.url}/failed`,
      "--json",
    ]);
    await run.waitForNote(/^Listening: \* .*job\.failed → http:\/\/127\.0\.0\.1:\d+\/failed/);
    const completed = await publish("job.completed");
    const failed = await publish("job.failed");
    await general.waitForRequests(1);
    await failures.waitForRequests(1);
    const objects = (await run.waitForLines(2)).map(
      (line) => JSON.parse(line) as Record<string, unknown>,
    );
    const byType = new Map(objects.map((object) => [object.type, object]));
    assert.equal(byType.get("job.completed")?.event_id, completed);
    assert.equal(byType.get("job.failed")?.event_id, failed);
    assert.equal(byType.get("job.failed")?.url, `${failures.url}/failed`);
    assert.equal(byType.get("job.failed")?.status_code, 200);
    assert.equal(general.requests[0]?.headers["webhook-id"], completed);
    assert.equal(failures.requests[0]?.headers["webhook-id"], failed);
    assert.equal(await run.interrupt(), 0);
  });

  it("a local server that fails: its answer is shown and reported, and the schedule sends it again", async () => {
    const local = await startReceiver({
      ca: null,
      respond: sequence({ status: 500, body: "boom" }, { status: 204 }),
    });
    receivers.push(local);
    const run = listen(["--forward-to", `${local.url}/hooks`]);
    await run.waitForNote(/^Listening: /);
    const eventId = await publish("job.failed");
    const lines = await run.waitForLines(2);
    assert.match(lines[0] ?? "", / 500 {2}\d+ ms$/);
    assert.match(lines[1] ?? "", / 204 {2}\d+ ms {2}\(attempt 2\)$/);
    const delivery = await eventually(
      async () => (await deliveriesOf(eventId)).find((each) => each.status === "delivered"),
      { what: "the retried delivery to be delivered" },
    );
    assert.equal(delivery.attempts, 2);
    const [first, second] = await local.waitForRequests(2);
    assert.equal(first?.headers["webhook-id"], second?.headers["webhook-id"]);
    assert.equal(first?.bodyText, second?.bodyText, "the same bytes on every attempt");
    assert.equal(await run.interrupt(), 0);
  });

  it("refuses what it cannot do before it listens: no URL, a bad URL, an unknown type", async () => {
    const cases: [string[], RegExp][] = [
      [[], /--forward-to <url> is required/],
      [["--forward-to", "localhost:3000"], /must be an http:\/\/ or https:\/\/ URL/],
      [["--forward-to", "http://localhost:3000", "--events", "job.done"], /not job\.done/],
      [["--route", "job.failed"], /--route takes <type>=<url>/],
    ];
    for (const [args, message] of cases) {
      const run = await svc(["listen", ...args]);
      assertExit(run, 2);
      assert.match(run.stderr, message);
    }
    // Routed types only: the others have nowhere to go unless --events says so.
    const routed = await svc([
      "listen",
      "--route",
      "job.failed=http://localhost:3000",
      "--events",
      "*",
    ]);
    assertExit(routed, 2);
    assert.match(routed.stderr, /\* would have nowhere to go/);
  });

  it("an API that cannot be reached at start ends it at once with exit 6", async () => {
    const run = await svc(["listen", "--forward-to", "http://localhost:3000/hooks"], {
      env: { SERVICE_API_URL: await closedPortUrl() },
    });
    assertExit(run, 6);
    assert.match(run.stderr, /Could not reach the API .*\(api_unreachable\)/);
  });
});

describe("svc listen when the server goes away", () => {
  it("reconnects while it can, then exits 6 saying what was lost", async () => {
    const fixture = await serverFixture(listenEnv);
    const local = await startReceiver({ ca: null, respond: always(200) });
    try {
      const run = startListen(
        ["--name", "away", "--forward-to", `${local.url}/hooks`, "--reconnect-for", "1s"],
        { ...clientEnv(fixture), ...listenEnv },
      );
      await run.waitForNote(/^Listening: /);
      // Its stream is open (not merely about to be) when the server stops.
      const api = apiClient(fixture.server.url, fixture.owner.key);
      await eventually(
        async () => {
          const list = await api.get<{ data: { connected: boolean }[] }>(
            `/v1/workspaces/${fixture.owner.id}/listen-sessions`,
          );
          return list.body.data[0]?.connected === true ? true : undefined;
        },
        { what: "the session's stream to be connected" },
      );
      await fixture.server.stop();
      await run.waitForNote(/^Connection lost \(the server is shutting down\); reconnecting/);
      assert.equal(await run.exited, 6);
      const last = run.notes.at(-1) ?? "";
      assert.match(last, /could not restore it within 1 s/);
      assert.match(
        last,
        /run svc listen --name away again to receive it\. \(listen_connection_lost\)$/,
      );
    } finally {
      assert.equal(await stopLeftoverListens(), 0);
      await local.close();
      await fixture.dispose();
    }
  });
});

describe(
  "svc listen with separate api and worker processes on PostgreSQL",
  { skip: testBackend !== "postgres" && "PostgreSQL run only: processes share one database" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    const servers: TestServer[] = [];
    let local: Receiver;

    before(async () => {
      dir = await tempDir();
      local = await startReceiver({ ca: null, respond: always(200) });
    });
    after(async () => {
      await stopLeftoverListens();
      await Promise.all(servers.map((server) => server.stop()));
      await local.close();
      await dir.cleanup();
    });

    it("the api process holding the stream forwards what another api process publishes; no worker takes it", async () => {
      const env = {
        ...listenEnv,
        SVC_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      };
      const dataDir = join(dir.path, "cluster");
      const streaming = await startTestServer({ dataDir, env, role: "api" });
      servers.push(streaming);
      const owner = await initialise(streaming);
      const publishing = await startTestServer({ dataDir, env, role: "api" });
      // A worker on the same database, which must never attempt a session's deliveries
      // (one attempt each, the local answer, says it did not).
      const worker = await startTestServer({ dataDir, env, role: "worker" });
      servers.push(publishing, worker);

      const run = startListen(["--forward-to", `${local.url}/hooks`], {
        SERVICE_API_URL: streaming.url,
        SERVICE_API_KEY: owner.key,
        SERVICE_WORKSPACE_ID: owner.id,
      });
      await run.waitForNote(/^Listening: /);
      const client = apiClient(publishing.url, owner.key);
      const published: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        const response = await client.post<{ id: string }>(`/v1/workspaces/${owner.id}/events`, {
          type: "job.completed",
          data: { object: { index } },
        });
        assert.equal(response.status, 202, response.text);
        published.push(response.body.id);
      }
      const requests = await local.waitForRequests(5);
      assert.deepEqual(
        requests.map((request) => request.headers["webhook-id"]).sort(),
        published.sort(),
      );
      await run.waitForLines(5);
      // Reported through the publishing process's database: every delivery delivered, once.
      const statuses = await eventually(
        async () => {
          const list = await client.get<{ data: DeliveryJson[] }>(
            `/v1/workspaces/${owner.id}/deliveries`,
          );
          return list.body.data.every((each) => each.status === "delivered")
            ? list.body.data
            : undefined;
        },
        { what: "every forwarded delivery to be delivered" },
      );
      assert.deepEqual(
        statuses.map((each) => each.attempts),
        [1, 1, 1, 1, 1],
      );
      assert.equal(await run.interrupt(), 0);
      assert.equal(local.requests.length, 5, "nothing was sent twice");
    });
  },
);
