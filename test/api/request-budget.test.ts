import assert from "node:assert/strict";
import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import { after, before, beforeEach, describe, it, mock } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { MAX_BUCKETS, TokenBuckets } from "../../src/api/request-budget.ts";
import { createClient, SvcApiError } from "../../src/client/index.ts";
import { loadServerConfig } from "../../src/config/server-config.ts";
import { operations } from "../../src/contract/operations.ts";
import { errorsOf } from "../../src/contract/openapi.ts";
import { hashPassword } from "../../src/crypto/passwords.ts";
import { manualClock } from "../support/clock.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { memoryLogger } from "../support/memory-log.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";

/** The budget of these tests: 10 requests a second, 5 at once. */
const RATE = 10;
const BURST = 5;

function errorOf(response: LightMyRequestResponse): { code: string; message: string } {
  return response.json<{ error: { code: string; message: string } }>().error;
}

/**
 * The request budget (decision 45), through `inject()` on a clock the tests move: every
 * request spends one of its client's budget before anything else is done with it.
 */
describe("the request budget", () => {
  let api: InProcessApi;
  const clock = manualClock(Date.parse("2026-11-25T12:00:00Z"));
  const get = (token: string | null, url: string, remoteAddress = "127.0.0.1") =>
    api.app.inject({
      method: "GET",
      url,
      remoteAddress,
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
  const webhooks = () => `/v1/workspaces/${api.workspaceId}/webhooks`;
  /** Spends `token`'s whole burst, each request answered as it would be without a budget. */
  const spend = async (token: string | null, remoteAddress?: string) => {
    for (let index = 0; index < BURST; index += 1) {
      const response = await get(token, webhooks(), remoteAddress);
      assert.notEqual(response.statusCode, 429, `request ${index + 1} of the burst`);
    }
  };

  before(async () => {
    api = await inProcessApi({
      clock,
      settings: { requestRate: String(RATE), requestBurst: String(BURST) },
    });
  });
  after(() => api.dispose());
  // Each test starts a second later, every bucket full again: a new key's first request also
  // spends one of its address's (127.0.0.1 for all), which the previous test may have spent.
  beforeEach(() => {
    clock.advance(1000);
  });

  it("past its burst a key is answered 429 too_many_requests in the envelope, with Retry-After and the RateLimit fields", async () => {
    const token = await api.key(["webhooks:read"]);
    await spend(token);
    const refused = await get(token, webhooks());
    assert.equal(refused.statusCode, 429);
    assert.equal(errorOf(refused).code, "too_many_requests");
    assert.match(errorOf(refused).message, /Retry-After/);
    assert.equal(refused.headers["retry-after"], "1");
    assert.equal(refused.headers["ratelimit-policy"], `"budget";q=${BURST};w=1`);
    assert.equal(refused.headers.ratelimit, `"budget";r=0;t=1`);
  });

  it("a key that waits as long as Retry-After says is served again; one that does not is not", async () => {
    const token = await api.key(["webhooks:read"]);
    await spend(token);
    clock.advance(1000 / RATE - 1);
    assert.equal((await get(token, webhooks())).statusCode, 429, "a moment too early");
    clock.advance(1);
    assert.equal((await get(token, webhooks())).statusCode, 200, "one request refilled");
    assert.equal((await get(token, webhooks())).statusCode, 429, "and only one");
    clock.advance(1000);
    await spend(token);
  });

  it("is counted before the credential is looked at: a key over budget is refused 429 where it would be 403", async () => {
    const token = await api.key(["events:read"]);
    assert.equal((await get(token, webhooks())).statusCode, 403);
    for (let index = 1; index < BURST; index += 1) await get(token, webhooks());
    assert.equal((await get(token, webhooks())).statusCode, 429);
  });

  it("hashes a request's token once: the credential is looked up by the hash the budget made", async () => {
    const token = await api.key(["webhooks:read"]);
    let hashesOfToken = 0;
    // hashToken's one-shot `hash`; a `Hash` object's input would be counted as well.
    const hash = crypto.hash;
    const createHash = crypto.createHash;
    const spies = [
      mock.method(crypto, "hash", (...args: Parameters<typeof hash>) => {
        if (args[1] === token) hashesOfToken += 1;
        return hash(...args);
      }),
      mock.method(crypto, "createHash", (...args: Parameters<typeof createHash>) => {
        const made = createHash(...args);
        const update = made.update.bind(made);
        made.update = (data: crypto.BinaryLike, encoding?: crypto.Encoding) => {
          if (data === token) hashesOfToken += 1;
          return encoding === undefined ? update(data) : update(data as string, encoding);
        };
        return made;
      }),
    ];
    syncBuiltinESMExports();
    try {
      assert.equal((await get(token, webhooks())).statusCode, 200);
      assert.equal((await get("svc_not_a_key", webhooks())).statusCode, 401);
    } finally {
      for (const spy of spies) spy.mock.restore();
      syncBuiltinESMExports();
    }
    assert.equal(hashesOfToken, 1);
  });

  it("one key's flood does not refuse another key of the same workspace, at the same address", async () => {
    const flooding = await api.key(["webhooks:read"]);
    const other = await api.key(["webhooks:read"]);
    assert.equal((await get(other, webhooks())).statusCode, 200, "known before the flood");
    await spend(flooding);
    for (let index = 0; index < 20; index += 1) {
      assert.equal((await get(flooding, webhooks())).statusCode, 429);
    }
    assert.equal((await get(other, webhooks())).statusCode, 200);
  });

  it("requests without credentials are budgeted by address, each address apart", async () => {
    await spend(null, "192.0.2.1");
    const refused = await get(null, webhooks(), "192.0.2.1");
    assert.equal(refused.statusCode, 429);
    assert.equal(errorOf(refused).code, "too_many_requests");
    assert.equal((await get(null, webhooks(), "192.0.2.2")).statusCode, 401);
    // An IPv6 client is one /64.
    await spend(null, "2001:db8:1:2::1");
    assert.equal((await get(null, webhooks(), "2001:db8:1:2::ffff")).statusCode, 429);
    assert.equal((await get(null, webhooks(), "2001:db8:1:3::1")).statusCode, 401);
  });

  it("made-up tokens, each new, spend their address's budget: a flood of them is held to it", async () => {
    const address = "192.0.2.30";
    for (let index = 0; index < BURST; index += 1) {
      assert.equal((await get(`svc_made_up_${index}`, webhooks(), address)).statusCode, 401);
    }
    const refused = await get("svc_made_up_next", webhooks(), address);
    assert.equal(refused.statusCode, 429, "refused before the token is looked up");
  });

  it("/healthz, /readyz and /metrics are never refused, even to an address over its budget", async () => {
    const address = "192.0.2.40";
    await spend(null, address);
    assert.equal((await get(null, webhooks(), address)).statusCode, 429);
    for (const probe of ["/healthz", "/readyz", "/metrics"]) {
      for (let index = 0; index < 2 * BURST; index += 1) {
        assert.equal((await get(null, probe, address)).statusCode, 200, probe);
      }
    }
  });

  it("a listen stream is exempt: a key over its budget still opens one, and the document gives it no 429", async () => {
    const token = await api.key(["events:read"]);
    const opened = await api.app.inject({
      method: "POST",
      url: `/v1/workspaces/${api.workspaceId}/listen-sessions`,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: "{}",
    });
    assert.equal(opened.statusCode, 200, opened.body);
    const { id } = opened.json<{ id: string }>();
    for (let index = 1; index < BURST; index += 1) await get(token, webhooks());
    assert.equal((await get(token, webhooks())).statusCode, 429);
    const stream = await api.app.inject({
      method: "GET",
      url: `/v1/workspaces/${api.workspaceId}/listen-sessions/${id}/stream`,
      headers: { authorization: `Bearer ${token}` },
      payloadAsStream: true,
    });
    assert.equal(stream.statusCode, 200);
    assert.match(String(stream.headers["content-type"]), /^text\/event-stream/);
    stream.stream().destroy();
    assert.equal(errorsOf(operations.streamListenSession).includes("too_many_requests"), false);
    assert.equal(errorsOf(operations.listWebhooks).includes("too_many_requests"), true);
  });

  it("keeps at most a bounded number of buckets, forgetting the least recently seen", () => {
    const buckets = new TokenBuckets(RATE, BURST, 100);
    for (let index = 0; index < 1000; index += 1) buckets.take(`client ${index}`, 0);
    assert.equal(buckets.size, 100);
    assert.equal(buckets.has("client 999"), true);
    assert.equal(buckets.has("client 899"), false);
    assert.equal(MAX_BUCKETS, 10_000, "the server's bound (decision 45)");
  });

  it("a refused request takes nothing from the bucket", () => {
    const buckets = new TokenBuckets(1, 1);
    assert.equal(buckets.take("client", 0), 0);
    for (let index = 0; index < 100; index += 1) assert.equal(buckets.take("client", 0), 1000);
    assert.equal(buckets.take("client", 1000), 0);
  });
});

describe("the request budget's refusals in the access log", () => {
  it("a client's refusals are logged at info once a second, the others at debug", async () => {
    const clock = manualClock(Date.parse("2026-11-25T12:00:00Z"));
    const log = memoryLogger("info");
    const api = await inProcessApi({
      clock,
      logger: log.logger,
      settings: { requestRate: "1", requestBurst: "1" },
    });
    try {
      const list = () => api.app.inject({ method: "GET", url: "/v1/auth/session" });
      const refusals = () =>
        log.lines().filter((line) => line.status_code === 429 && line.msg === "request completed");
      assert.equal((await list()).statusCode, 401);
      for (let index = 0; index < 10; index += 1) assert.equal((await list()).statusCode, 429);
      assert.equal(refusals().length, 1, "ten refusals in the same second, one line");
      clock.advance(1000);
      assert.equal((await list()).statusCode, 401, "served again once refilled");
      assert.equal((await list()).statusCode, 429);
      assert.equal(refusals().length, 2, "a second later, the next refusal has its line");
    } finally {
      await api.dispose();
    }
  });
});

describe("the request budget's setting", () => {
  it("defaults to 100 requests a second and 200 at once; 0 turns it off; below 0 is refused", () => {
    const config = (flags: Record<string, string>) =>
      loadServerConfig({ env: { SVC_DATA_DIR: "/tmp/svc-budget-config" }, flags });
    assert.equal(config({}).requestRate, 100);
    assert.equal(config({}).requestBurst, 200);
    assert.equal(config({ requestRate: "0" }).requestRate, 0);
    assert.throws(() => config({ requestRate: "-1" }), /requestRate \(SVC_REQUEST_RATE\)/);
    assert.throws(() => config({ requestBurst: "0" }), /requestBurst \(SVC_REQUEST_BURST\)/);
  });

  it("at 0 no request is ever refused", async () => {
    const api = await inProcessApi({
      clock: manualClock(0),
      settings: { requestRate: "0", requestBurst: "1" },
    });
    try {
      for (let index = 0; index < 300; index += 1) {
        assert.equal((await api.call("GET", "/webhooks")).statusCode, 200, `request ${index}`);
      }
    } finally {
      await api.dispose();
    }
  });
});

/**
 * svc and the typed client, against a listening server with a budget of one request a second:
 * a server for each test, since every client here comes from 127.0.0.1.
 */
describe("clients over the request budget", () => {
  const servers: InProcessApi[] = [];
  after(() => Promise.all(servers.map((server) => server.dispose())));
  const listening = async (): Promise<{ api: InProcessApi; baseUrl: string }> => {
    const api = await inProcessApi({ settings: { requestRate: "1", requestBurst: "1" } });
    servers.push(api);
    return { api, baseUrl: await api.app.listen({ host: "127.0.0.1", port: 0 }) };
  };

  it("the typed client waits Retry-After and sends again, even a sign-in (nothing was done)", async () => {
    const { api, baseUrl } = await listening();
    await api.store.credentials.createUser(
      { id: "usr_budget", email: "budget@example.com", passwordHash: await hashPassword("pw-1") },
      { workspaceId: api.workspaceId, role: "owner" },
    );
    const client = createClient({ baseUrl });
    await assert.rejects(client.auth.signIn({ email: "budget@example.com", password: "no" }), {
      code: "invalid_credentials",
    });
    const started = Date.now();
    await client.auth.signIn({ email: "budget@example.com", password: "pw-1" });
    assert.ok(Date.now() - started >= 500, "it waited for the budget");
  });

  it("svc waits Retry-After and sends again", async () => {
    const { api, baseUrl } = await listening();
    const env = { SERVICE_API_URL: baseUrl, SERVICE_API_KEY: api.token, HOME: "/nonexistent" };
    const first = await runCliInMemory(["webhooks", "list", "--json"], { env });
    assert.equal(first.status, 0, first.stdout + first.stderr);
    const started = Date.now();
    const second = await runCliInMemory(["webhooks", "list", "--json"], { env });
    assert.equal(second.status, 0, second.stdout + second.stderr);
    assert.ok(Date.now() - started >= 500, "it waited for the budget");
  });

  it("the typed client's error is typed when the wait is longer than it takes", async () => {
    const { api, baseUrl } = await listening();
    const client = createClient({ baseUrl, token: api.token, maxRetryDelayMs: 0 });
    await client.destinations.list(api.workspaceId).first();
    const refused: unknown = await client.destinations
      .list(api.workspaceId)
      .first()
      .catch((error: unknown) => error);
    assert.ok(refused instanceof SvcApiError, String(refused));
    assert.equal(refused.code, "too_many_requests");
    assert.equal(refused.status, 429);
    assert.equal(refused.retryAfterSeconds, 1);
  });
});
