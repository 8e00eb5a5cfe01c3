import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { verifySignature } from "../../src/index.ts";
import { assertExit, clientEnv, envelope } from "../support/cli.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { runSvc } from "../support/svc.ts";
import { sharedTestCa } from "../support/tls.ts";

/** The README's quickstart, as a user runs it: from nothing to a verified delivery. */
describe("quickstart: from zero to a verified delivery, through svc", () => {
  let fixture: ServerFixture;
  let receiver: Receiver;

  before(async () => {
    const ca = await sharedTestCa();
    receiver = await startReceiver({ ca });
    fixture = await serverFixture(deliveryEnv(ca));
  });
  after(async () => {
    await receiver.close();
    await fixture.dispose();
  });

  it("registers a destination, publishes an event, and the receiver verifies it with the secret file", async () => {
    const env = clientEnv(fixture);
    const secretFile = join(fixture.dir, "whsec.txt");
    const created = await runSvc(
      [
        "webhooks",
        "create",
        "--url",
        `https://hooks.test:${receiver.port}/hooks`,
        "--events",
        "job.completed",
        "--output",
        secretFile,
        "--json",
      ],
      { env },
    );
    assertExit(created, 0);
    const destination = envelope<{ id: string }>(created).data;

    const sent = await runSvc(
      ["events", "send", "--type", "job.completed", "--data", '{"id":"job_42"}', "--json"],
      { env },
    );
    assertExit(sent, 0);
    const notification = envelope<{ id: string }>(sent).data;

    const [request] = await receiver.waitForRequests(1);
    assert.ok(request);
    const secret = await readFile(secretFile, "utf8");
    verifySignature(secret, request.headers["webhook-signature"] as string, request.rawBody);
    assert.equal(request.headers["webhook-id"], notification.id);

    const status = await eventually(
      async () => {
        const got = await runSvc(["webhooks", "get", destination.id, "--field", "last_delivery"], {
          env,
        });
        const last = JSON.parse(got.stdout) as { status: string } | null;
        return last?.status === "delivered" ? last : undefined;
      },
      { what: "last_delivery to show delivered" },
    );
    assert.equal(status.status, "delivered");
  });
});
