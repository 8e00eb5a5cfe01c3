import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { assertExit, envelope } from "../support/cli.ts";
import { json, startStubApi, type StubApi } from "../support/stub-api.ts";
import { runSvc, type SvcRun } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";
import { sqlitePassOnly } from "../support/backend.ts";

const workspace = "ws_0123456789abcdef01234567";
const key = "svc_stub-key";
const url = "https://public.example.test/hooks";
const destination = {
  id: "dst_0123456789abcdef01234567",
  url,
  events: ["*"],
  active: true,
  created_at: "2026-11-01T10:00:00.000Z",
  updated_at: "2026-11-01T10:00:00.000Z",
};

/**
 * How `svc` reports what the API answers, against a scripted stand-in for the API: the answers
 * the real server does not give yet (SPEC section 7) or would never give.
 */
describe("svc webhooks: API answers and errors", { skip: sqlitePassOnly }, () => {
  let stub: StubApi;
  let dir: { path: string; cleanup: () => Promise<void> };
  let files = 0;
  const newPath = (): string => join(dir.path, `secret-${(files += 1)}.txt`);

  before(async () => {
    stub = await startStubApi();
    dir = await tempDir();
  });
  beforeEach(() => {
    stub.received.length = 0;
  });
  after(async () => {
    await stub.close();
    await dir.cleanup();
  });

  const svc = (args: readonly string[]): Promise<SvcRun> =>
    runSvc(args, {
      env: { SERVICE_API_URL: stub.url, SERVICE_API_KEY: key, SERVICE_WORKSPACE_ID: workspace },
    });

  it("sends the create request as documented, with --idempotency-key as the Idempotency-Key header", async () => {
    const secret = `whsec_${"s".repeat(43)}`;
    stub.answer(json(201, { ...destination, secret }));
    const output = newPath();
    const run = await svc([
      "webhooks",
      "create",
      "--url",
      url,
      "--events",
      "job.completed",
      "--idempotency-key",
      "  order-42  ",
      "--output",
      output,
    ]);
    assertExit(run, 0);
    assert.equal(stub.received.length, 1);
    const [request] = stub.received;
    assert.equal(request?.method, "POST");
    assert.equal(request.url, `/v1/workspaces/${workspace}/webhooks`);
    assert.equal(request.headers.authorization, `Bearer ${key}`);
    assert.equal(request.headers["idempotency-key"], "order-42", "sent trimmed");
    assert.equal(request.headers["content-type"], "application/json");
    assert.match(request.headers["user-agent"] ?? "", /^svc\/\d+\.\d+\.\d+/);
    assert.equal(request.body, JSON.stringify({ url, events: ["job.completed"] }));
    assert.equal(await readFile(output, "utf8"), secret);
  });

  it("idempotency key reused with a different request: 409 idempotency_error, exit 3, no file (SPEC 7)", async () => {
    stub.answer(
      json(409, {
        error: { code: "idempotency_error", message: "This key was used for a different request." },
      }),
    );
    const output = newPath();
    const run = await svc([
      "webhooks",
      "create",
      "--url",
      url,
      "--idempotency-key",
      "k1",
      "--output",
      output,
      "--json",
    ]);
    assertExit(run, 3);
    assert.deepEqual(envelope(run), {
      ok: false,
      error: {
        code: "idempotency_error",
        message: "This key was used for a different request.",
        status: 409,
      },
    });
    await assert.rejects(stat(output), { code: "ENOENT" }, "the secret file is removed again");
  });

  it("idempotency key still in progress: waits Retry-After and tries again, then gives up with 409 idempotency_in_progress, exit 3 (SPEC 7)", async () => {
    stub.answer(
      json(
        409,
        { error: { code: "idempotency_in_progress", message: "Still in progress; retry." } },
        { "retry-after": "0" },
      ),
    );
    const before = stub.received.length;
    const run = await svc([
      "webhooks",
      "create",
      "--url",
      url,
      "--idempotency-key",
      "k1",
      "--output",
      newPath(),
    ]);
    assertExit(run, 3);
    assert.match(run.stderr, /error: Still in progress; retry\. \(idempotency_in_progress\)\n$/);
    const tries = stub.received.slice(before);
    assert.equal(tries.length, 4, "a bounded number of tries");
    assert.ok(tries.every((request) => request.headers["idempotency-key"] === "k1"));
  });

  it("idempotency key in progress, then done: the retry after Retry-After succeeds", async () => {
    let calls = 0;
    const inProgress = json(
      409,
      { error: { code: "idempotency_in_progress", message: "Still in progress; retry." } },
      { "retry-after": "1" },
    );
    const created = json(201, {
      id: "dst_0123456789abcdef01234567",
      url,
      events: ["*"],
      active: true,
      created_at: "2026-11-21T12:00:00.000Z",
      updated_at: "2026-11-21T12:00:00.000Z",
      secret: "whsec_c2VjcmV0LWZvci10aGUtcmV0cnktdGVzdA",
    });
    stub.answer((request, response) => {
      calls += 1;
      (calls === 1 ? inProgress : created)(request, response);
    });
    const started = Date.now();
    const run = await svc(["webhooks", "create", "--url", url, "--output", newPath(), "--json"]);
    assertExit(run, 0);
    assert.ok(Date.now() - started >= 1000, "it waited the Retry-After");
    assert.equal(calls, 2);
    const [first, second] = stub.received.slice(-2);
    assert.equal(first?.headers["idempotency-key"], second?.headers["idempotency-key"]);
    assert.match(String(first?.headers["idempotency-key"]), /^svc-/, "a key svc generated");
  });

  it("an error code svc does not know keeps the API's code and message, exit 1", async () => {
    stub.answer(json(429, { error: { code: "quota_exceeded", message: "Slow down." } }));
    const run = await svc(["webhooks", "list", "--json"]);
    assertExit(run, 1);
    const { error } = envelope(run);
    assert.equal(error.code, "unknown_api_error");
    assert.equal(error.status, 429);
    assert.match(error.message, /HTTP 429 quota_exceeded: Slow down\./);
  });

  it("a server error is reported in one line, exit 1", async () => {
    stub.answer(json(500, { error: { code: "internal_error", message: "The server failed." } }));
    const run = await svc(["webhooks", "get", destination.id]);
    assertExit(run, 1);
    assert.equal(run.stderr, "error: The server failed. (internal_error)\n");
  });

  it("something that is not the svc API is bad_response, naming the address", async () => {
    stub.answer((_request, response) => {
      response.writeHead(404, { "content-type": "text/html" }).end("<h1>Not Found</h1>");
    });
    const run = await svc(["webhooks", "list"]);
    assertExit(run, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `The API at ${stub.url} answered HTTP 404 .*<h1>Not Found</h1>.*\\(bad_response\\)`,
      ),
    );
  });

  it("a 2xx body of the wrong shape is bad_response, not a crash", async () => {
    stub.answer(json(200, { items: [] }));
    const run = await svc(["webhooks", "list"]);
    assertExit(run, 1);
    assert.match(run.stderr, /unexpected body \(data: .*\(bad_response\)/);
  });

  it("a redirect is refused, not followed: credentials never go elsewhere", async () => {
    stub.answer((_request, response) => {
      response.writeHead(307, { location: "http://127.0.0.1:9/elsewhere" }).end();
    });
    const run = await svc(["webhooks", "list"]);
    assertExit(run, 1);
    assert.equal(stub.received.length, 1);
    assert.match(
      run.stderr,
      /redirect \(HTTP 307\) to http:\/\/127\.0\.0\.1:9\/elsewhere.*\(bad_response\)/,
    );
  });

  it("a secret missing from a 201 answer is bad_response, and leaves no file behind", async () => {
    stub.answer(json(201, destination));
    const output = newPath();
    const run = await svc(["webhooks", "create", "--url", url, "--output", output]);
    assertExit(run, 1);
    assert.match(run.stderr, /secret: .*\(bad_response\)/);
    await assert.rejects(stat(output), { code: "ENOENT" });
  });
});
