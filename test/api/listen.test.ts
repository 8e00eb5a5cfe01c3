import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { StreamedNotification } from "../../src/contract/listen.ts";
import { verifySignature } from "../../src/receiver/verify-signature.ts";
import { assertEnvelope } from "../support/envelope.ts";
import { eventually } from "../support/eventually.ts";
import { openStream } from "../support/listen-stream.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { isolatedConfigHome } from "../support/svc.ts";
import { inProcessApi, signInAs, type InProcessApi } from "../support/in-process-api.ts";

interface SessionJson {
  id: string;
  name: string | null;
  events: string[];
  connected: boolean;
  pending: number;
  created: boolean;
  secret?: string;
  expires_at: string;
  last_seen_at: string | null;
}

/** Listen sessions over the API (CONTRACT.md "Local forwarding", decision 34). */
describe("listen sessions over the API", () => {
  let api: InProcessApi;
  let base: string;

  before(async () => {
    api = await inProcessApi({ settings: { listenHeartbeat: "100ms" } });
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await api.dispose();
  });

  const open = async (body: unknown, token?: string) =>
    api.call("POST", "/listen-sessions", {
      body,
      ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
    });

  it("opens a session with its secret once; its name resumes it without; never a destination", async () => {
    const created = await open({ name: "laptop", events: ["job.failed"] });
    assert.equal(created.statusCode, 200, created.body);
    const session = created.json<SessionJson>();
    assert.equal(session.created, true);
    assert.match(session.secret ?? "", /^whsec_/);
    assert.match(session.id, /^lsn_[0-9a-f]{24}$/);
    assert.equal(
      Date.parse(session.expires_at) - Date.parse(session.last_seen_at ?? ""),
      72 * 3_600_000,
    );

    const resumed = (await open({ name: "laptop", events: ["*"] })).json<SessionJson>();
    assert.equal(resumed.created, false);
    assert.equal(resumed.id, session.id);
    assert.deepEqual(resumed.events, ["*"]);
    assert.equal(resumed.secret, undefined, "the secret is shown once");

    const listed = (await api.call("GET", "/listen-sessions")).json<{ data: SessionJson[] }>();
    assert.deepEqual(
      listed.data.map((each) => [each.id, each.name]),
      [[session.id, "laptop"]],
    );
    assert.ok(!JSON.stringify(listed).includes("whsec_"));
    assert.deepEqual(Object.keys(listed), ["data"], "the whole list, no next_cursor to follow");
    const webhooks = (await api.call("GET", "/webhooks")).json<{ data: unknown[] }>();
    assert.deepEqual(webhooks.data, []);
    assertEnvelope(await api.call("GET", `/webhooks/${session.id}`), "not_found");

    assert.equal((await api.call("DELETE", `/listen-sessions/${session.id}`)).statusCode, 200);
    assertEnvelope(await api.call("DELETE", `/listen-sessions/${session.id}`), "not_found");

    // No one can resume an unnamed session once its command is gone: it goes after an hour.
    const unnamed = (await open({})).json<SessionJson>();
    assert.equal(
      Date.parse(unnamed.expires_at) - Date.parse(unnamed.last_seen_at ?? ""),
      3_600_000,
    );
    assert.equal((await api.call("DELETE", `/listen-sessions/${unnamed.id}`)).statusCode, 200);
  });

  it("refuses a bad name, unknown types and a key without events:read", async () => {
    assertEnvelope(await open({ name: "no spaces" }), "invalid_request");
    assertEnvelope(await open({ events: ["job.done"] }), "invalid_events");
    assertEnvelope(await open({ extra: 1 }), "invalid_request");
    const webhooksOnly = await api.key(["webhooks:write"]);
    assertEnvelope(await open({}, webhooksOnly), "insufficient_scope");
    const reader = await api.key(["events:read"]);
    assert.equal((await open({}, reader)).statusCode, 200, "a viewer may listen");
    assertEnvelope(await api.call("GET", "/listen-sessions/dst_x/stream"), "not_found");
  });

  it("streams each notification signed with the session's secret, takes its result, and hands over to a newer stream", async () => {
    const session = (await open({ events: ["job.completed"] })).json<SessionJson>();
    const path = `/v1/workspaces/${api.workspaceId}/listen-sessions/${session.id}/stream`;
    const stream = await openStream(base, path, api.token);
    const ready = JSON.parse((await stream.next("ready")).data) as { heartbeat_ms: number };
    assert.equal(ready.heartbeat_ms, 100);
    await stream.next("comment"); // a heartbeat

    const published = await api.call("POST", "/events", {
      body: { type: "job.completed", data: { object: { id: "job_1" } } },
    });
    await api.call("POST", "/events", { body: { type: "job.failed", data: { object: {} } } });
    const eventId = published.json<{ id: string }>().id;
    const pushed = await stream.next("notification");
    const notification = JSON.parse(pushed.data) as StreamedNotification;
    assert.equal(pushed.id, notification.delivery_id);
    assert.equal(notification.event_id, eventId);
    assert.equal(notification.attempt, 1);
    assert.equal(notification.headers["webhook-id"], eventId);
    const verified = verifySignature(
      session.secret ?? "",
      notification.headers["webhook-signature"],
      notification.body,
    );
    assert.ok(Math.abs(verified.timestamp - Date.now() / 1000) < 5, "signed as it was sent");
    assert.equal((JSON.parse(notification.body) as { id: string }).id, eventId);

    const report = (claim: string) =>
      api.call("POST", `/listen-sessions/${session.id}/results`, {
        body: {
          delivery_id: notification.delivery_id,
          claim,
          status_code: 200,
          duration_ms: 3.5,
          error: null,
          response_body: "ok",
        },
      });
    assertEnvelope(await report("stream_x:0"), "listen_claim_expired");

    // What PostgreSQL could not keep (NUL) or is not UTF-8 (a lone surrogate) is replaced.
    const recorded = await api.call("POST", `/listen-sessions/${session.id}/results`, {
      body: {
        delivery_id: notification.delivery_id,
        claim: notification.claim,
        status_code: 200,
        duration_ms: 3.5,
        error: null,
        response_body: "c\u0000d\ud800",
      },
    });
    assert.equal(recorded.statusCode, 200, recorded.body);
    assert.equal(recorded.json<{ status: string }>().status, "delivered");
    const detail = await api.call("GET", `/deliveries/${notification.delivery_id}`);
    assert.deepEqual(
      detail
        .json<{ attempts: { response_body: string }[] }>()
        .attempts.map((each) => each.response_body),
      ["c\ufffdd\ufffd"],
    );
    assertEnvelope(
      await api.call("POST", `/listen-sessions/${session.id}/results`, {
        body: {
          delivery_id: "dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93",
          claim: "x",
          status_code: 200,
          duration_ms: 1,
          error: null,
          response_body: null,
        },
      }),
      "not_found",
    );

    // A second stream takes the session; the first is told and closed.
    const newer = await openStream(base, path, api.token);
    await newer.next("ready");
    await api.call("POST", "/events", { body: { type: "job.completed", data: { object: {} } } });
    await newer.next("notification");
    await stream.next("replaced");
    await stream.next("eof");
    newer.close();
    stream.close();
  });

  it("a workspace has at most 20 live sessions; a name resumes one beyond", async () => {
    const live = (await api.call("GET", "/listen-sessions")).json<{ data: SessionJson[] }>().data;
    const opened: string[] = [];
    for (let count = live.length; count < 20; count += 1) {
      const answer = await open({ ...(count === 19 ? { name: "last" } : {}) });
      assert.equal(answer.statusCode, 200, answer.body);
      opened.push(answer.json<SessionJson>().id);
    }
    assertEnvelope(await open({}), "too_many_listen_sessions");
    assert.equal((await open({ name: "last" })).json<SessionJson>().created, false);
    for (const id of [...opened, ...live.map((each) => each.id)]) {
      assert.equal((await api.call("DELETE", `/listen-sessions/${id}`)).statusCode, 200);
    }
  });

  it("only the credential that opened a session, or one with events:write, may resume, end or take it over", async () => {
    const viewer = await signInAs(api, "viewer");
    const otherReader = await api.key(["events:read"]);
    const writer = await api.key(["events:write"]);
    const opener = await api.key(["events:read"]);
    const session = (await open({ name: "mine", events: ["*"] }, opener)).json<SessionJson>();
    const member = `/listen-sessions/${session.id}`;
    const path = `/v1/workspaces/${api.workspaceId}${member}/stream`;
    const stream = await openStream(base, path, opener);
    await stream.next("ready");

    for (const token of [viewer.token, otherReader]) {
      const headers = { authorization: `Bearer ${token}` };
      assertEnvelope(
        await api.call("GET", `${member}/stream`, { headers }),
        "listen_session_forbidden",
      );
      assertEnvelope(await api.call("DELETE", member, { headers }), "listen_session_forbidden");
      assertEnvelope(
        await open({ name: "mine", events: ["job.failed"] }, token),
        "listen_session_forbidden",
      );
    }
    // The opener's stream was never taken, nor its types changed: it still gets this.
    await api.call("POST", "/events", { body: { type: "job.completed", data: { object: {} } } });
    await stream.next("notification");

    // A viewer still opens and ends sessions of its own, from any of its user's sessions.
    const own = (await open({ name: "viewer-laptop" }, viewer.token)).json<SessionJson>();
    const again = await signInAs(api, "viewer", viewer.email);
    assert.equal(
      (await open({ name: "viewer-laptop" }, again.token)).json<SessionJson>().created,
      false,
    );
    const byAgain = { authorization: `Bearer ${again.token}` };
    assert.equal(
      (await api.call("DELETE", `/listen-sessions/${own.id}`, { headers: byAgain })).statusCode,
      200,
    );

    // The opener resumes it; events:write takes it over and ends it.
    assert.equal((await open({ name: "mine" }, opener)).json<SessionJson>().created, false);
    const taken = await openStream(base, path, writer);
    await taken.next("ready");
    await stream.next("replaced");
    const byWriter = { authorization: `Bearer ${writer}` };
    assert.equal((await api.call("DELETE", member, { headers: byWriter })).statusCode, 200);
    await taken.next("ended");
    taken.close();
    stream.close();
  });

  it("a session ended elsewhere ends its stream", async () => {
    const session = (await open({})).json<SessionJson>();
    const path = `/v1/workspaces/${api.workspaceId}/listen-sessions/${session.id}/stream`;
    const stream = await openStream(base, path, api.token);
    await stream.next("ready");
    assert.equal((await api.call("DELETE", `/listen-sessions/${session.id}`)).statusCode, 200);
    await stream.next("ended");
    await stream.next("eof");
    stream.close();
  });
});

/** `svc listen` in this process (`runCli`) against the API: the command's own rules. */
describe("svc listen in process", () => {
  let api: InProcessApi;
  let base: string;
  let local: Receiver;

  before(async () => {
    // A lease of 7 s: the command's local time-out must stay inside it (2 s at most).
    api = await inProcessApi({
      settings: { listenHeartbeat: "100ms", deliveryTimeout: "1s", deliveryLease: "7s" },
    });
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    local = await startReceiver({ ca: null, respond: always(202) });
  });
  after(async () => {
    await local.close();
    // The command's own keep-alive connections (this process's fetch) are the test's to end.
    api.app.server.closeAllConnections();
    await api.dispose();
  });

  it("forwards what is published, prints a line each, and an interrupt ends it with 0", async () => {
    const interrupt = new AbortController();
    const running = runCliInMemory(
      [
        "listen",
        "--forward-to",
        `${local.url}/in-process`,
        "--events",
        "job.failed",
        "--local-timeout",
        "30s",
      ],
      {
        env: {
          SERVICE_API_URL: base,
          SERVICE_API_KEY: api.token,
          XDG_CONFIG_HOME: isolatedConfigHome,
        },
        interrupt: interrupt.signal,
      },
    );
    await eventually(
      async () => {
        const list = (await api.call("GET", "/listen-sessions")).json<{ data: SessionJson[] }>();
        return list.data.some((each) => each.connected) ? true : undefined;
      },
      { what: "svc listen's stream to connect" },
    );
    const published = await api.call("POST", "/events", {
      body: { type: "job.failed", data: { object: { id: "job_9" } } },
    });
    const [request] = await local.waitForRequests(1);
    assert.equal(request?.path, "/in-process");
    assert.equal(request.headers["webhook-id"], published.json<{ id: string }>().id);
    await eventually(
      async () => {
        const list = (await api.call("GET", "/deliveries")).json<{ data: { status: string }[] }>();
        return list.data[0]?.status === "delivered" ? true : undefined;
      },
      { what: "the local answer to be reported" },
    );
    interrupt.abort();
    const run = await running;
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /Z {2}job\.failed +evt_\w+ {2}202 {2}\d+ ms\n$/);
    assert.match(run.stderr, /^This session's signing secret \(shown once; .*\): whsec_/m);
    assert.match(run.stderr, /Stopped after 1 notification\(s\); session lsn_\w+ ended\./);
    assert.match(
      run.stderr,
      /--local-timeout is 2 s at most on this server \(its delivery lease\)/,
    );
    const left = (await api.call("GET", "/listen-sessions")).json<{ data: SessionJson[] }>();
    assert.deepEqual(left.data, []);
  });
});
