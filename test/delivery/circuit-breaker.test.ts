import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CircuitBreaker } from "../../src/delivery/circuit-breaker.ts";
import { RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import type { AttemptReport, ClaimedDelivery } from "../../src/interfaces.ts";

const destination = (circuitOpens = 0): ClaimedDelivery => ({
  seq: 1,
  lease: "l",
  eventId: "evt_1",
  eventType: "job.completed",
  body: "{}",
  attempts: 0,
  retryBase: 0,
  traceparent: null,
  destination: {
    id: "dst_1",
    url: "https://hooks.test/",
    active: true,
    deleted: false,
    secretCiphertext: "sealed",
    workspaceId: "ws_1",
    circuitOpens,
  },
});
const report = (statusCode: number | null, errorClass: string | null): AttemptReport => ({
  attempt: { startedAt: new Date(0), durationMs: 5, statusCode, errorClass },
  result:
    statusCode !== null && statusCode < 300
      ? { status: "delivered" }
      : { status: "pending", nextAttemptAt: new Date(5000) },
  error: statusCode === null ? "connection failed (ECONNREFUSED)" : `answered ${statusCode}`,
});

/** Decision 24: when a destination is slowed down as a unit. */
describe("a destination's circuit breaker", () => {
  const breaker = () => new CircuitBreaker(3, new RetrySchedule([5000, 30_000, 120_000]));

  it("opens after the threshold of destination failures in a row, for the schedule's first step", () => {
    const circuit = breaker();
    assert.equal(circuit.record(destination(), report(null, "connection"), 0), null);
    assert.equal(circuit.record(destination(), report(503, "http_status"), 0), null);
    const change = circuit.record(destination(), report(null, "timeout"), 1000);
    assert.ok(change?.kind === "open");
    assert.equal(change.opening.until.getTime(), 6000);
    assert.equal(change.opening.opens, 1);
    assert.match(change.opening.error, /^3 attempts in a row failed \(last: /);
    assert.equal(change.opening.failCreatedBefore.getTime(), 6000 - 155_000);
    assert.equal(circuit.openUntil("dst_1"), 6000);
    assert.equal(
      circuit.record(destination(), report(null, "timeout"), 2000),
      null,
      "failures of attempts made before it opened change nothing",
    );
  });

  it("does not count answers that are the notification's problem, and a success starts over", () => {
    const circuit = breaker();
    circuit.record(destination(), report(null, "connection"), 0);
    circuit.record(destination(), report(null, "connection"), 0);
    assert.equal(circuit.record(destination(), report(400, "http_status"), 0), null);
    assert.equal(
      circuit.record(destination(), report(null, "connection"), 0),
      null,
      "one in a row",
    );
    assert.equal(circuit.record(destination(), report(200, null), 0), null);
    assert.equal(circuit.record(destination(), report(null, "connection"), 0), null);
  });

  it("neither counts nor closes on what the service itself refused, such as a name that does not resolve", () => {
    const circuit = breaker();
    circuit.record(destination(), report(null, "connection"), 0);
    circuit.record(destination(), report(null, "connection"), 0);
    assert.equal(circuit.record(destination(), report(null, "url_unresolvable"), 0), null);
    assert.equal(circuit.record(destination(1), report(null, "internal"), 0), null, "no close");
    assert.equal(circuit.record(destination(), report(null, "timeout"), 0)?.kind, "open");
  });

  it("reopens for the next step when a probe fails, and closes when one gets an answer", () => {
    const circuit = breaker();
    const failed = circuit.record(destination(2), report(null, "timeout"), 0);
    assert.ok(failed?.kind === "open");
    assert.equal(failed.opening.opens, 3);
    assert.equal(failed.opening.until.getTime(), 120_000);
    assert.match(failed.opening.error, /^the probe failed/);
    assert.deepEqual(circuit.record(destination(1), report(204, null), 200_000), {
      kind: "close",
    });
    assert.equal(circuit.cooldown(9), 120_000, "the last step thereafter");
    const daily = new CircuitBreaker(3, new RetrySchedule([5000, 86_400_000]));
    assert.equal(daily.cooldown(2), 3_600_000, "an hour at the most");
  });
  it("holds what it claimed before its opening, and lets through a claim that read the opening: a user's repair (decision 40)", () => {
    const circuit = breaker();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      circuit.record(destination(), report(503, "http_status"), 1000);
    }
    assert.equal(circuit.openUntil("dst_1"), 6000);
    assert.equal(circuit.heldUntil(destination(0), 2000), 6000, "claimed before it opened");
    // The database let a claim through that saw this opening (circuit_opens 1): a retry made
    // the circuit half-open early. It goes now, as the probe.
    assert.equal(circuit.heldUntil(destination(1), 2000), 0);
    assert.equal(circuit.openUntil("dst_1"), 0, "the worker's note of the opening is forgotten");
    const change = circuit.record(destination(1), report(503, "http_status"), 2500);
    assert.ok(change?.kind === "open", "a failed probe opens it again at once");
    assert.equal(change.opening.opens, 2);
    assert.equal(change.opening.until.getTime(), 2500 + 30_000, "for the next step");
    assert.match(change.opening.error, /^the probe failed \(last: answered 503\)$/);
  });
});
