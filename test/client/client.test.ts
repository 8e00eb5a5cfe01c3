import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createClient, routes, SvcApiError, type OperationId } from "../../src/client/index.ts";
import { hashPassword } from "../../src/crypto/passwords.ts";
import { hashToken, newOperatorToken } from "../../src/crypto/tokens.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";
import { checkAnswer } from "../support/openapi-check.ts";
import { runProcess } from "../support/process.ts";

const openapiPath = fileURLToPath(new URL("../../../docs/openapi.json", import.meta.url));

/** The operationIds of the document the server publishes (docs/openapi.json). */
async function documentedOperations(): Promise<string[]> {
  const document = JSON.parse(await readFile(openapiPath, "utf8")) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  return Object.values(document.paths).flatMap((path) =>
    Object.values(path).map((operation) => operation.operationId),
  );
}

/** A fetch that counts the requests it sends. */
function countingFetch(): { fetch: typeof fetch; requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    fetch: (input, init) => {
      requests.push(
        `${init?.method ?? "GET"} ${input instanceof Request ? input.url : input.toString()}`,
      );
      return fetch(input, init);
    },
  };
}

/** A fetch that checks every JSON answer against the OpenAPI document; the count it checked. */
function documentCheckingFetch(): { fetch: typeof fetch; checked: () => number } {
  let checked = 0;
  return {
    checked: () => checked,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if ((response.headers.get("content-type") ?? "").startsWith("application/json")) {
        const url = new URL(input instanceof Request ? input.url : input.toString());
        const text = await response.clone().text();
        checkAnswer(init?.method ?? "GET", `${url.pathname}${url.search}`, response.status, text);
        checked += 1;
      }
      return response;
    },
  };
}

/** The typed client against the API listening on a loopback port, on the test's engine. */
describe("the client (svc-webhooks/client) against a real server", () => {
  let api: InProcessApi;
  let baseUrl: string;
  let operatorToken: string;
  const url = `https://${publicTestHost}/hooks`;

  before(async () => {
    api = await inProcessApi();
    baseUrl = await api.app.listen({ host: "127.0.0.1", port: 0 });
    operatorToken = newOperatorToken();
    await api.store.credentials.createApiKey({
      id: "key_operator",
      workspaceId: null,
      tokenHash: hashToken(operatorToken),
      scopes: ["workspaces:read", "workspaces:write", "portal:write"],
    });
    await api.store.credentials.createUser(
      { id: "usr_client", email: "client@example.com", passwordHash: await hashPassword("pw-1") },
      { workspaceId: api.workspaceId, role: "owner" },
    );
  });
  after(() => api.dispose());

  it("every operation of the document has a route in the client, and no other", async () => {
    assert.deepEqual(Object.keys(routes).sort(), (await documentedOperations()).sort());
  });

  it("calls every operation once through its named method; each answer parses against the contract", async () => {
    const ws = api.workspaceId;
    // Each answer is checked twice: by the contract's schemas (validate) and by the document.
    const checking = documentCheckingFetch();
    const options = { baseUrl, validate: true, fetch: checking.fetch };
    const client = createClient({ ...options, token: api.token });
    const operator = createClient({ ...options, token: operatorToken });
    const anonymous = createClient(options);
    const state: Record<string, string> = {};
    const called: [OperationId, () => Promise<unknown>][] = [
      [
        "createWebhook",
        async () => {
          const created = await client.destinations.create(ws, { url, events: ["*"] });
          assert.match(created.secret, /^whsec_/);
          state.destination = created.id;
        },
      ],
      [
        "listWebhooks",
        async () => {
          const ids = [];
          for await (const d of client.destinations.list(ws)) ids.push(d.id);
          assert.deepEqual(ids, [state.destination]);
        },
      ],
      ["getWebhook", () => client.destinations.get(ws, state.destination!)],
      [
        "updateWebhook",
        async () => {
          const updated = await client.destinations.update(ws, state.destination!, {
            url: `${url}/v2`,
          });
          assert.equal(updated.url, `${url}/v2`);
        },
      ],
      [
        "openListenSession",
        async () => {
          const session = await client.listenSessions.open(ws, { events: ["*"] });
          state.session = session.id;
        },
      ],
      [
        "streamListenSession",
        async () => {
          const controller = new AbortController();
          const response = await client.listenSessions.stream(ws, state.session!, {
            signal: controller.signal,
          });
          assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
          let streamed = "";
          const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
          // Published once the stream is ready; read up to the notification it forwards.
          const reading = (async () => {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) return;
              streamed += value;
              if (streamed.includes("event: ready") && state.event === undefined) {
                state.event = "publishing";
                state.event = (
                  await client.events.publish(ws, {
                    type: "job.completed",
                    data: { object: { job: 1 } },
                  })
                ).id;
              }
              if (/event: notification\nid: [^\n]*\ndata: .*\n/.test(streamed)) return;
            }
          })();
          await reading;
          controller.abort();
          const data = /event: notification\nid: [^\n]*\ndata: (.*)\n/.exec(streamed)![1]!;
          const notification = JSON.parse(data) as { delivery_id: string; claim: string };
          state.listenDelivery = notification.delivery_id;
          state.claim = notification.claim;
        },
      ],
      [
        "publishEvent",
        async () => {
          const replayed = await client.send("publishEvent", {
            params: { workspace: ws },
            body: {
              type: "job.failed",
              data: { object: { job: 2 } },
              destination: state.destination!,
            },
          });
          assert.equal(replayed.status, 202);
          state.testEvent = replayed.body.id;
        },
      ],
      [
        "reportListenResult",
        async () => {
          const delivery = await client.listenSessions.reportResult(ws, state.session!, {
            delivery_id: state.listenDelivery!,
            claim: state.claim!,
            status_code: 200,
            duration_ms: 3,
            error: null,
            response_body: "ok",
          });
          assert.equal(delivery.status, "delivered");
        },
      ],
      [
        "listListenSessions",
        async () => {
          const sessions = await client.listenSessions.list(ws);
          assert.ok(sessions.data.some((s) => s.id === state.session));
        },
      ],
      ["deleteListenSession", () => client.listenSessions.end(ws, state.session!)],
      [
        "listEvents",
        async () => {
          const ids = [];
          for await (const e of client.events.list(ws, { limit: 1 })) ids.push(e.id);
          assert.deepEqual(ids, [state.testEvent, state.event]);
        },
      ],
      [
        "getEvent",
        async () => {
          const event = await client.events.get(ws, state.testEvent!);
          state.delivery = event.deliveries[0]!.id;
        },
      ],
      [
        "listDeliveries",
        async () => {
          const ids = [];
          for await (const d of client.deliveries.list(ws, { destination: state.destination! }))
            ids.push(d.id);
          assert.ok(ids.includes(state.delivery!), "the test event's delivery is listed");
        },
      ],
      ["getDelivery", () => client.deliveries.get(ws, state.delivery!)],
      [
        "retryDelivery",
        async () => {
          const retried = await client.deliveries.retry(ws, state.delivery!);
          assert.equal(retried.status, "pending");
        },
      ],
      [
        "recoverWebhook",
        () =>
          client.destinations.recover(ws, state.destination!, { since: "2020-01-01T00:00:00Z" }),
      ],
      ["getDeliveryStats", () => client.deliveries.stats(ws)],
      ["deleteWebhook", () => client.destinations.delete(ws, state.destination!)],
      [
        "signIn",
        async () => {
          const signedIn = await anonymous.auth.signIn({
            email: "client@example.com",
            password: "pw-1",
          });
          state.sessionToken = signedIn.token;
        },
      ],
      [
        "signInBrowser",
        () => anonymous.auth.signInBrowser({ email: "client@example.com", password: "pw-1" }),
      ],
      [
        "whoAmI",
        async () => {
          const user = createClient({ ...options, token: state.sessionToken! });
          const me = await user.auth.whoAmI();
          assert.ok(me.workspaces.some((w) => w.id === ws));
        },
      ],
      ["signOut", () => createClient({ ...options, token: state.sessionToken! }).auth.signOut()],
      [
        "createWorkspace",
        async () => {
          const created = await operator.workspaces.create({ name: "Acme", external_id: "acme-1" });
          state.workspace = created.id;
        },
      ],
      [
        "listWorkspaces",
        async () => {
          const found = await operator.workspaces.list({ external_id: "acme-1" }).first();
          assert.deepEqual(
            found.data.map((w) => w.id),
            [state.workspace],
          );
        },
      ],
      ["getWorkspace", () => operator.workspaces.get(state.workspace!)],
      [
        "updateWorkspace",
        () => operator.workspaces.update(state.workspace!, { metadata: { plan: "pro" } }),
      ],
      [
        "mintApiKey",
        async () => {
          const key = await operator.apiKeys.mint(state.workspace!, { scopes: ["webhooks:read"] });
          state.key = key.id;
        },
      ],
      [
        "listApiKeys",
        async () => {
          const ids = [];
          for await (const k of operator.apiKeys.list(state.workspace!)) ids.push(k.id);
          assert.deepEqual(ids, [state.key]);
        },
      ],
      ["revokeApiKey", () => operator.apiKeys.revoke(state.workspace!, state.key!)],
      [
        "createPortalLink",
        async () => {
          const link = await operator.portal.createLink(state.workspace!, { role: "viewer" });
          state.portalToken = /token=([^&]+)/.exec(link.url)![1]!;
        },
      ],
      ["openPortalSession", () => anonymous.portal.openSession({ token: state.portalToken! })],
      [
        "endPortalSessions",
        async () => {
          const ended = await operator.portal.endSessions(state.workspace!);
          assert.equal(ended.ended, 1);
        },
      ],
      ["deleteWorkspace", () => operator.workspaces.delete(state.workspace!, { cascade: "true" })],
    ];
    assert.deepEqual(
      called.map(([id]) => id).sort(),
      (await documentedOperations()).sort(),
      "each operation of the document is called once",
    );
    for (const [id, call] of called) {
      await call().catch((error: unknown) => {
        throw new Error(`${id} failed`, { cause: error });
      });
    }
    // Every answer but the stream's (text/event-stream).
    assert.ok(
      checking.checked() >= called.length - 1,
      "the answers were checked against the document",
    );
  });

  it("a refusal is a SvcApiError with the catalog's code, the status and the API's message", async () => {
    const client = createClient({ baseUrl, token: api.token });
    const missing = await client.destinations.get(api.workspaceId, "wh_missing").then(
      () => assert.fail("answered"),
      (error: unknown) => error,
    );
    assert.ok(missing instanceof SvcApiError);
    assert.equal(missing.code, "not_found");
    assert.equal(missing.status, 404);
    assert.match(missing.message, /./);

    const operator = createClient({ baseUrl, token: operatorToken });
    await operator.workspaces.create({ name: "One", external_id: "taken-1" });
    await assert.rejects(operator.workspaces.create({ name: "Two", external_id: "taken-1" }), {
      name: "SvcApiError",
      code: "external_id_taken",
      status: 409,
    });
    await assert.rejects(
      createClient({ baseUrl, token: "sk_wrong" }).destinations.list(api.workspaceId).first(),
      { code: "unauthenticated", status: 401 },
    );
  });

  it("async iteration follows next_cursor over 260 events, 100 at a time", async () => {
    const ws = api.workspaceId;
    const client = createClient({ baseUrl, token: api.token });
    const published = new Set<string>();
    for (let n = 0; n < 260; n += 1) {
      const event = await client.events.publish(ws, {
        type: "collection.completed",
        data: { object: { n } },
      });
      published.add(event.id);
    }
    const counting = countingFetch();
    const reader = createClient({ baseUrl, token: api.token, fetch: counting.fetch });
    const seen: string[] = [];
    for await (const event of reader.events.list(ws, {
      type: "collection.completed",
      limit: 100,
    })) {
      seen.push(event.id);
    }
    assert.equal(seen.length, 260);
    assert.deepEqual(new Set(seen), published);
    assert.equal(counting.requests.length, 3, "three pages");
    assert.match(counting.requests[1]!, /cursor=/);
  });

  it("a change sent again with the same Idempotency-Key is replayed, not done twice", async () => {
    const ws = api.workspaceId;
    const client = createClient({ baseUrl, token: api.token });
    const input = {
      params: { workspace: ws },
      body: { type: "job.completed" as const, data: { object: { order: 7 } } },
      idempotencyKey: "order-7-completed",
    };
    const first = await client.send("publishEvent", input);
    const again = await client.send("publishEvent", input);
    assert.equal(first.replayed, false);
    assert.equal(again.replayed, true);
    assert.equal(again.body.id, first.body.id);
  });

  it("the sign-in rate limit's 429 is a typed error with its Retry-After; a sign-in is never sent twice", async () => {
    const counting = countingFetch();
    const anonymous = createClient({ baseUrl, fetch: counting.fetch });
    let refusal: unknown;
    for (let n = 0; n < 30 && refusal === undefined; n += 1) {
      await anonymous.auth
        .signIn({ email: "client@example.com", password: "wrong" })
        .catch((error: unknown) => {
          if (error instanceof SvcApiError && error.code === "rate_limited") refusal = error;
        });
    }
    assert.ok(refusal instanceof SvcApiError, "the limit is reached");
    assert.equal(refusal.status, 429);
    assert.ok((refusal.retryAfterSeconds ?? 0) > 0);
    const sent = counting.requests.length;
    await assert.rejects(
      anonymous.auth.signIn({ email: "client@example.com", password: "wrong" }),
      {
        code: "rate_limited",
      },
    );
    assert.equal(counting.requests.length, sent + 1, "a POST without a key is not retried");
  });
});

/** A loopback server answering each request from `answers` in turn. */
async function scriptedServer(
  answers: { status: number; headers?: Record<string, string>; body: unknown }[],
): Promise<{ url: string; times: number[]; keys: unknown[]; close: () => Promise<void> }> {
  const times: number[] = [];
  const keys: unknown[] = [];
  const server: Server = createServer((request, response) => {
    times.push(performance.now());
    keys.push(request.headers["idempotency-key"]);
    request.resume();
    const answer = answers[Math.min(times.length - 1, answers.length - 1)]!;
    response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    response.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    times,
    keys,
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}

describe("the client's retries", () => {
  const page = { data: [], next_cursor: null };
  const slowDown = {
    status: 429,
    headers: { "retry-after": "1" },
    body: { error: { code: "rate_limited", message: "Slow down." } },
  };

  it("a GET answered 429 is sent again after Retry-After, and succeeds", async () => {
    const server = await scriptedServer([slowDown, { status: 200, body: page }]);
    try {
      const client = createClient({ baseUrl: server.url, token: "sk_test" });
      assert.deepEqual(await client.destinations.list("ws_1").first(), page);
      assert.equal(server.times.length, 2);
      assert.ok(server.times[1]! - server.times[0]! >= 990, "waited Retry-After: 1");
    } finally {
      await server.close();
    }
  });

  it("gives up after maxAttempts with the last refusal; a sign-in is sent once, a keyed publish again with its key", async () => {
    const unavailable = {
      status: 503,
      headers: { "retry-after": "0" },
      body: { error: { code: "service_unavailable", message: "Not ready." } },
    };
    const server = await scriptedServer([unavailable]);
    try {
      const client = createClient({ baseUrl: server.url, token: "sk_test", maxAttempts: 2 });
      await assert.rejects(client.events.get("ws_1", "evt_1"), {
        code: "service_unavailable",
        status: 503,
      });
      assert.equal(server.times.length, 2);
      await assert.rejects(client.auth.signIn({ email: "a@example.com", password: "x" }), {
        code: "service_unavailable",
      });
      assert.equal(server.times.length, 3);
      // A key does not make a sign-in safe to repeat: the server keeps none for it.
      const keyed = { idempotencyKey: "sign-in-1" };
      await assert.rejects(client.auth.signIn({ email: "a@example.com", password: "x" }, keyed));
      assert.equal(server.times.length, 4);
      // A change gets a key of its own, and its retry carries the same one.
      await assert.rejects(
        client.events.publish("ws_1", { type: "job.completed", data: { object: {} } }),
      );
      assert.equal(server.times.length, 6);
      assert.match(String(server.keys[4]), /^svc-/);
      assert.equal(server.keys[5], server.keys[4]);
    } finally {
      await server.close();
    }
  });
});

describe("the client's time-out", () => {
  it("a request with no answer within timeoutMs is api_unreachable, saying so", async () => {
    const silent = createServer(() => {
      // Never answers.
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 200 });
      const started = performance.now();
      await assert.rejects(client.auth.whoAmI(), (error: unknown) => {
        assert.ok(error instanceof SvcApiError);
        assert.equal(error.code, "api_unreachable");
        assert.equal(error.status, 0);
        assert.match(error.message, /no answer within 0.2 s/);
        return true;
      });
      // Not tried again, even a GET: the server may still be working on it.
      assert.ok(performance.now() - started < 1000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe("the client's weight", () => {
  it("importing it loads no zod; validate: true loads the contract's schemas on first use", async () => {
    const client = pathToFileURL(
      fileURLToPath(new URL("../../src/client/index.js", import.meta.url)),
    );
    const server = await scriptedServer([{ status: 200, body: { kind: "api_key" } }]);
    // Every module the child resolves, through Node's module hooks.
    const script = [
      'import { registerHooks } from "node:module";',
      "const seen = [];",
      "registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });",
      "const zod = () => seen.filter((url) => url.includes('/node_modules/zod/')).length;",
      `const { createClient } = await import(${JSON.stringify(client.href)});`,
      "const imported = zod();",
      `const plain = createClient({ baseUrl: ${JSON.stringify(server.url)} });`,
      "await plain.auth.whoAmI();",
      "const called = zod();",
      `const checking = createClient({ baseUrl: ${JSON.stringify(server.url)}, validate: true });`,
      "const refused = await checking.auth.whoAmI().catch((error) => error.code);",
      "console.log(JSON.stringify({ imported, called, validated: zod() > 0, refused }));",
    ].join("\n");
    try {
      const run = await runProcess(process.execPath, ["--input-type=module", "-e", script], {
        env: { PATH: process.env.PATH },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), {
        imported: 0,
        called: 0,
        validated: true,
        refused: "bad_response",
      });
    } finally {
      await server.close();
    }
  });
});
