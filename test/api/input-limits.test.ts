import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertEnvelope } from "../support/envelope.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";

/** An object nested `depth` deep, the outermost at depth 1: {"a":{"a":…{}}}. */
function nested(depth: number): Record<string, unknown> {
  let object: Record<string, unknown> = {};
  for (let level = 1; level < depth; level += 1) object = { a: object };
  return object;
}

describe("limits on what one request may bring (decision 28)", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi({ settings: { eventDepthLimit: "8" } });
  });
  after(async () => {
    await api.dispose();
  });

  const create = (body: unknown) => api.call("POST", "/webhooks", { body });
  const publish = (object: unknown) =>
    api.call("POST", "/events", { body: { type: "job.completed", data: { object } } });

  it("refuses a destination body over requestBodyLimit (16 KiB) with 413, naming the limit", async () => {
    const response = await create({
      url: `https://${publicTestHost}/`,
      events: Array(9000).fill(0),
    });
    const { message } = assertEnvelope(response, "payload_too_large");
    assert.match(message, /16KiB.*requestBodyLimit/);
    const listed = await api.call("GET", "/webhooks");
    assert.deepEqual(listed.json<{ data: unknown[] }>().data, [], "nothing was created");
  });

  it("refuses a list of events longer than 32 before reading its elements", async () => {
    const response = await create({ url: `https://${publicTestHost}/`, events: Array(33).fill(0) });
    const { message, param } = assertEnvelope(response, "invalid_events");
    assert.equal(param, "events");
    assert.match(message, /at most 32/, "the length, not the elements' type, is the problem");
  });

  it("takes a publish up to eventBodyLimit (256 KiB) and refuses one over it with 413", async () => {
    const padding = (bytes: number) => ({ id: "job_1", padding: "x".repeat(bytes) });
    assert.equal((await publish(padding(200 * 1024))).statusCode, 202);
    const { message } = assertEnvelope(await publish(padding(256 * 1024)), "payload_too_large");
    assert.match(message, /256KiB.*eventBodyLimit/);
  });

  it("refuses data.object nested deeper than eventDepthLimit, and takes it at the limit", async () => {
    assert.equal((await publish(nested(8))).statusCode, 202);
    const { param } = assertEnvelope(await publish(nested(9)), "data_too_deep");
    assert.equal(param, "data.object");
  });

  it("answers data.object nested 4,500 deep with 400, not a stack overflow's 500", async () => {
    // Written out by hand: JSON.stringify could not serialise it either.
    const deep = (open: string, close: string) =>
      `{"type":"job.completed","data":{"object":{"a":${open.repeat(4500)}0${close.repeat(4500)}}}}`;
    assertEnvelope(
      await api.call("POST", "/events", { body: deep('{"a":', "}") }),
      "data_too_deep",
    );
    assertEnvelope(await api.call("POST", "/events", { body: deep("[", "]") }), "data_too_deep");
  });

  it("counts arrays and objects alike, and scalars not at all", async () => {
    assert.equal((await publish({ a: [[[[[[{ b: 1 }]]]]]] })).statusCode, 202, "depth 8");
    assertEnvelope(await publish({ a: [[[[[[[{ b: 1 }]]]]]]] }), "data_too_deep");
  });
});

describe("text that could name nothing is refused before the database sees it", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi();
  });
  after(async () => {
    await api.dispose();
  });

  it("a destination id with a NUL or other odd characters is 404 not_found", async () => {
    for (const id of ["%00", "a%00b", "%E2%80%AE", "dst%20x", "%0A"]) {
      for (const method of ["GET", "DELETE"] as const) {
        assertEnvelope(await api.call(method, `/webhooks/${id}`), "not_found", `${method} ${id}`);
      }
      const update = await api.call("PATCH", `/webhooks/${id}`, { body: { active: false } });
      assertEnvelope(update, "not_found", `PATCH ${id}`);
    }
  });

  it("a workspace id with a NUL is 403 workspace_forbidden", async () => {
    assertEnvelope(await api.call("GET", "/v1/workspaces/%00/webhooks"), "workspace_forbidden");
  });

  it("a sign-in whose e-mail holds a control character is 400 invalid_request", async () => {
    const response = await api.call("POST", "/v1/auth/sessions", {
      body: { email: "a\u0000@example.test", password: "correct horse battery" },
    });
    assert.equal(assertEnvelope(response, "invalid_request").param, "email");
  });
});

describe("numbers in query strings (decision 28)", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi();
  });
  after(async () => {
    await api.dispose();
  });

  for (const limit of ["0x10", "%205", "5%20", "1e1", "-1", "+5", "5.0", "0", "101", "", "５"]) {
    it(`refuses limit=${limit}`, async () => {
      const response = await api.call("GET", `/webhooks?limit=${limit}`);
      assert.equal(assertEnvelope(response, "invalid_request", limit).param, "limit");
    });
  }

  it("takes limit in decimal digits from 1 to 100", async () => {
    for (const limit of ["1", "007", "100"]) {
      assert.equal((await api.call("GET", `/webhooks?limit=${limit}`)).statusCode, 200, limit);
    }
  });

  it("refuses a limit given twice", async () => {
    assertEnvelope(await api.call("GET", "/webhooks?limit=5&limit=6"), "invalid_request");
  });
});
