import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit, envelope, registerDirectly } from "../support/cli.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { runSvc } from "../support/svc.ts";
import { sharedTestCa } from "../support/tls.ts";

const oldKey = randomBytes(32).toString("base64");
const newKey = randomBytes(32).toString("base64");

/** A destination created with an Idempotency-Key: the answer kept for replay carries the secret. */
async function createWithIdempotencyKey(
  fixture: ServerFixture,
  url: string,
): Promise<{ status: number; text: string }> {
  const response = await fetch(
    new URL(`/v1/workspaces/${fixture.owner.id}/webhooks`, fixture.server.url),
    {
      method: "POST",
      headers: {
        authorization: `Bearer ${fixture.owner.key}`,
        "content-type": "application/json",
        "idempotency-key": "rotation-replay",
      },
      body: JSON.stringify({ url, events: ["job.completed"] }),
    },
  );
  return { status: response.status, text: await response.text() };
}

describe("svc admin encryption-key rotate", () => {
  let fixture: ServerFixture;
  let receiver: Receiver;
  let rotated: TestServer | undefined;

  before(async () => {
    const ca = await sharedTestCa();
    receiver = await startReceiver({ ca });
    fixture = await serverFixture({ ...deliveryEnv(ca), SVC_ENCRYPTION_KEY: oldKey });
  });
  after(async () => {
    await rotated?.stop();
    await receiver.close();
    await fixture.dispose();
  });

  it("re-seals every secret under the new key: after a restart with it, a delivery signs with the same whsec", async () => {
    const url = `https://hooks.test:${receiver.port}/hooks`;
    const destination = await registerDirectly(fixture, { url, events: ["job.completed"] });
    const kept = await createWithIdempotencyKey(fixture, url);
    assert.equal(kept.status, 201, kept.text);
    await fixture.server.stop();

    const newKeyFile = join(fixture.dir, "new.key");
    await writeFile(newKeyFile, `${newKey}\n`, { mode: 0o600 });
    const rotation = await runSvc(
      ["admin", "encryption-key", "rotate", "--new-key-file", newKeyFile, "--json"],
      { env: fixture.server.env },
    );
    assertExit(rotation, 0);
    assert.deepEqual(envelope(rotation).data, {
      destinations: 2,
      idempotency_responses: 1,
      new_key_file: newKeyFile,
    });
    assert.match(rotation.stderr, /Restart every svc process with it now/);

    const stale = await runSvc(["server", "--port", "0"], { env: fixture.server.env });
    assertExit(stale, 1);
    assert.match(stale.stderr, /\(encryption_key_mismatch\)/);

    rotated = await startTestServer({
      dataDir: fixture.server.dataDir,
      env: { ...fixture.server.env, SVC_ENCRYPTION_KEY: newKey },
    });
    const env = {
      SERVICE_API_URL: rotated.url,
      SERVICE_API_KEY: fixture.owner.key,
      SERVICE_WORKSPACE_ID: fixture.owner.id,
    };
    const sent = await runSvc(
      ["events", "send", "--type", "job.completed", "--data", '{"id":"job_42"}', "--json"],
      { env },
    );
    assertExit(sent, 0);
    const requests = await receiver.waitForRequests(2);
    const verified = requests.filter((request) => {
      try {
        verifiedTimestamp(request, destination.secret);
        return true;
      } catch {
        return false;
      }
    });
    assert.equal(
      verified.length,
      1,
      "the first destination's notification verifies with its whsec",
    );

    const replay = await createWithIdempotencyKey({ ...fixture, server: rotated }, url);
    assert.equal(replay.status, 201);
    assert.equal(
      replay.text,
      kept.text,
      "the kept answer, secret included, opens with the new key",
    );
  });

  it("refuses a new key file that is missing, and the current key again", async () => {
    const env = { ...fixture.server.env, SVC_ENCRYPTION_KEY: newKey };
    const missing = await runSvc(
      ["admin", "encryption-key", "rotate", "--new-key-file", join(fixture.dir, "none.key")],
      { env },
    );
    assertExit(missing, 2);
    assert.match(missing.stderr, /none\.key does not exist/);
    const same = join(fixture.dir, "same.key");
    await writeFile(same, `${newKey}\n`, { mode: 0o600 });
    const again = await runSvc(["admin", "encryption-key", "rotate", "--new-key-file", same], {
      env,
    });
    assertExit(again, 2);
    assert.match(again.stderr, /holds the current key already/);
  });

  it("refuses to rotate from a key that is not the database's, and changes nothing", async () => {
    const otherKeyFile = join(fixture.dir, "other.key");
    await writeFile(otherKeyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const stale = await runSvc(
      ["admin", "encryption-key", "rotate", "--new-key-file", otherKeyFile],
      { env: { ...fixture.server.env, SVC_ENCRYPTION_KEY: oldKey } },
    );
    assertExit(stale, 1);
    assert.match(stale.stderr, /\(encryption_key_mismatch\)\n$/);
    const restarted = await startTestServer({
      dataDir: fixture.server.dataDir,
      env: { ...fixture.server.env, SVC_ENCRYPTION_KEY: newKey },
    });
    assert.equal(await restarted.stop(), 0, "the new key is still the database's");
  });
});
