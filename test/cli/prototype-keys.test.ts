import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { startStubApi, type StubApi } from "../support/stub-api.ts";

/** Keys that name a prototype in JavaScript: customer data for svc (decision 38). */
const object =
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":1}';

const summary = {
  id: "evt_1",
  type: "job.completed",
  api_version: "2026-11-01",
  created: 1,
  test: false,
};

describe("svc events send and get keep __proto__, constructor and prototype keys", () => {
  let stub: StubApi;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    stub = await startStubApi();
    env = { SERVICE_API_URL: stub.url, SERVICE_API_KEY: "svc_test", SERVICE_WORKSPACE_ID: "ws_1" };
  });
  after(() => stub.close());

  const answerWith = (status: number, body: string) => {
    stub.answer((_request, response) => {
      response.writeHead(status, { "content-type": "application/json" }).end(body);
    });
  };

  it("sends them as they were given, with --data and with --stdin", async () => {
    answerWith(202, JSON.stringify(summary));
    const withData = await runCliInMemory(
      ["events", "send", "--type", "job.completed", "--data", object],
      { env },
    );
    assert.equal(withData.status, 0, withData.stderr);
    const withStdin = await runCliInMemory(["events", "send", "--stdin"], {
      env,
      stdin: `{"type":"job.completed","data":{"object":${object}}}`,
    });
    assert.equal(withStdin.status, 0, withStdin.stderr);
    for (const request of stub.received.slice(-2)) {
      assert.equal(request.body, `{"type":"job.completed","data":{"object":${object}}}`);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("shows them in an event's object (--json), not dropped", async () => {
    answerWith(
      200,
      `{${JSON.stringify(summary).slice(1, -1)},"data":{"object":${object}},"deliveries":[]}`,
    );
    const run = await runCliInMemory(["events", "get", "evt_1", "--json"], { env });
    assert.equal(run.status, 0, run.stderr);
    assert.ok(run.stdout.includes(`"object":${object}`), run.stdout);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
