import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { attemptDelivery, type AttemptDependencies } from "../../src/delivery/attempt.ts";
import type { Sender, SendRequest } from "../../src/delivery/http-sender.ts";
import { RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import { SigningKeys } from "../../src/delivery/signing-keys.ts";
import type { ClaimedDelivery } from "../../src/interfaces.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";

/**
 * A destination is checked before every attempt with the rules of the day: one stored under
 * older rules fails with a clear last_error and is never sent.
 */
describe("the URL checks at delivery", () => {
  const box = new SecretBox(Buffer.alloc(32, 3));
  const sent: SendRequest[] = [];
  const sender: Sender = {
    send(message) {
      sent.push(message);
      return Promise.resolve({ kind: "response", statusCode: 200 });
    },
    close: () => Promise.resolve(),
  };
  const dependencies: AttemptDependencies = {
    signingKeys: new SigningKeys(box),
    resolver: { resolve: () => Promise.reject(new Error("no names in this test")) },
    addressPolicy: new AddressPolicy(),
    sender,
    schedule: new RetrySchedule([60_000]),
    clock: { now: () => new Date() },
    timeoutMs: 1000,
  };
  const deliveryTo = (url: string): ClaimedDelivery => ({
    seq: 1,
    lease: "lease",
    eventId: "evt_1",
    eventType: "job.completed",
    body: "{}",
    attempts: 0,
    destination: {
      id: "dst_1",
      url,
      active: true,
      deleted: false,
      secretCiphertext: box.encrypt("whsec_test", "dst_1"),
      workspaceId: "ws_1",
      circuitOpens: 0,
    },
  });

  it("fails a destination stored before today's address and URL rules, without sending", async () => {
    for (const url of ["https://[::7f00:1]/", "https://[4000::1]/", "https://8.8.8.8/a\u001b[2J"]) {
      const report = await attemptDelivery(deliveryTo(url), dependencies);
      assert.deepEqual(report.result, { status: "failed" }, url);
      assert.match(report.error ?? "", /not on the public internet|contains U\+001B/, url);
    }
    assert.equal(sent.length, 0);
  });

  it("sends to the canonical form of an allowed destination", async () => {
    const report = await attemptDelivery(
      deliveryTo("https://93.184.215.14:443/a/../hook"),
      dependencies,
    );
    assert.deepEqual(report.result, { status: "delivered" });
    assert.equal(sent.at(-1)?.url.href, "https://93.184.215.14/hook");
    assert.deepEqual(sent.at(-1)?.addresses, ["93.184.215.14"]);
  });
});
