import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { attemptDelivery, type AttemptDependencies } from "../../src/delivery/attempt.ts";
import type { Sender, SendRequest } from "../../src/delivery/http-sender.ts";
import { RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import { SigningKeys } from "../../src/delivery/signing-keys.ts";
import type { ClaimedDelivery } from "../../src/interfaces.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { PortSet } from "../../src/net/port-set.ts";

/**
 * A destination is checked before every attempt with the server's current settings: one
 * stored under older rules or settings fails with a clear last_error and is never sent.
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
    destinationPorts: new PortSet(["443", "8443"]),
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
    retryBase: 0,
    traceparent: null,
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

  it("fails a destination whose port the settings no longer allow, without sending", async () => {
    const report = await attemptDelivery(
      deliveryTo("https://93.184.215.14:2222/hook"),
      dependencies,
    );
    assert.deepEqual(report.result, { status: "failed", reason: "destination_refused" });
    assert.equal(report.attempt?.errorClass, "url_port_not_allowed");
    assert.equal(
      report.error,
      "The destination port 2222 is not allowed; this server delivers to ports 443, 8443.",
    );
    assert.equal(sent.length, 0);
  });

  it("fails a destination stored before today's address and URL rules, without sending", async () => {
    for (const url of ["https://[::7f00:1]/", "https://[4000::1]/", "https://8.8.8.8/a\u001b[2J"]) {
      const report = await attemptDelivery(deliveryTo(url), dependencies);
      assert.deepEqual(report.result, { status: "failed", reason: "destination_refused" }, url);
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
