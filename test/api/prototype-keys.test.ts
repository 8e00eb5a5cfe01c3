import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertEnvelope } from "../support/envelope.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";

/**
 * Keys that name a prototype in JavaScript, in the object of an event: customer data, taken
 * as plain members and sent as they came (decision 38). Written out by hand, as a client's
 * bytes: an object literal would set the prototype instead of making a member.
 */
const object =
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":1,"deeper":[{"__proto__":{"polluted":true}}]}';

function assertUnpolluted(): void {
  const plain: Record<string, unknown> = {};
  assert.equal(plain.polluted, undefined, "Object.prototype has no new member");
  assert.equal(Object.getPrototypeOf(plain), Object.prototype);
}

describe("__proto__, constructor and prototype keys are plain data (decision 38)", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi();
  });
  after(async () => {
    await api.dispose();
  });

  it("publishes an event whose object has them, and keeps them in the notification body", async () => {
    const response = await api.call("POST", "/events", {
      body: `{"type":"job.completed","data":{"object":${object}}}`,
    });
    assert.equal(response.statusCode, 202, response.body);
    const { id } = response.json<{ id: string }>();
    const stored = await api.call("GET", `/events/${id}`);
    assert.equal(stored.statusCode, 200, stored.body);
    // The body every destination is sent, byte for byte: the object as it came.
    assert.ok(stored.body.includes(`"data":{"object":${object}}`), stored.body);
    const detail = stored.json<{ data: { object: Record<string, unknown> } }>();
    assert.deepEqual(Object.keys(detail.data.object), [
      "__proto__",
      "constructor",
      "prototype",
      "deeper",
    ]);
    assertUnpolluted();
  });

  it("refuses them as unknown parameters where the API has a shape, naming the key", async () => {
    for (const key of ["__proto__", "constructor"]) {
      const response = await api.call("POST", "/webhooks", {
        body: `{"url":"https://${publicTestHost}/","events":["*"],"${key}":{"prototype":{"polluted":true}}}`,
      });
      const { message, param } = assertEnvelope(response, "invalid_request");
      assert.equal(param, key);
      assert.equal(message, `Unknown parameter "${key}".`);
    }
    const listed = await api.call("GET", "/webhooks");
    assert.deepEqual(listed.json<{ data: unknown[] }>().data, [], "nothing was created");
    assertUnpolluted();
  });
});
