import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { StreamedNotification } from "../../src/contract/listen.ts";
import { verifySignature } from "../../src/receiver/verify-signature.ts";
import { assertEnvelope } from "../support/envelope.ts";
import { eventually } from "../support/eventually.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { isolatedConfigHome } from "../support/svc.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";

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

/** An open stream of the API listening on loopback: its events as they come. */
interface OpenStream {
  readonly events: EventSourceMessage[];
  next(kind: string): Promise<EventSourceMessage>;
  close(): void;
}

async function openStream(base: string, path: string, token: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events: EventSourceMessage[] = [];
  const waiting = new Set<() => void>();
  const parser = createParser({
    onEvent(event) {
      events.push(event);
      for (const check of waiting) check();
    },
    onComment(comment) {
      events.push({ event: "comment", data: comment });
      for (const check of waiting) check();
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch {
      // Closed by the test.
    }
    events.push({ event: "eof", data: "" });
    for (const check of waiting) check();
  })();
  let read = 0;
  return {
    events,
    next: (kind) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`no ${kind} event: ${JSON.stringify(events)}`));
        }, 10_000);
        const check = () => {
          while (read < events.length) {
            const event = events[read] as EventSourceMessage;
            read += 1;
            if (event.event === kind) {
              clearTimeout(timer);
              waiting.delete(check);
              resolve(event);
              return;
            }
          }
        };
        waiting.add(check);
        check();
      }),
    close: () => {
      controller.abort();
    },
  };
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
