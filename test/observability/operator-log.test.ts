import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AttemptLog, failureLineIntervalMs } from "../../src/observability/attempt-log.ts";
import type { AttemptFinished } from "../../src/observability/delivery-events.ts";
import { manualClock } from "../support/clock.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { memoryLogger } from "../support/memory-log.ts";

/** pino's level numbers. */
const debug = 20;
const info = 30;
const warn = 40;

const failure = (
  destinationId: string,
  overrides: Partial<AttemptFinished> = {},
): AttemptFinished => ({
  destinationId,
  eventId: "evt_1",
  attempt: 2,
  outcome: "retry",
  exchange: { durationMs: 12, statusCode: 503, errorClass: "http_status" },
  error: "the receiver answered 503",
  nextAttemptAt: new Date("2026-03-01T12:00:30Z"),
  recorded: true,
  ...overrides,
});

describe("the operator log of delivery attempts", () => {
  const setUp = () => {
    const clock = manualClock(Date.parse("2026-03-01T12:00:00Z"));
    const log = memoryLogger("info");
    const attempts = new AttemptLog(log.logger, clock);
    const warnings = () => log.lines().filter((line) => line.level === warn);
    return { clock, attempts, warnings, log };
  };

  it("writes a failed attempt as a warn line with its destination, status or error class, and next attempt", () => {
    const { attempts, warnings } = setUp();
    attempts.attemptFinished(failure("dst_down"));
    attempts.attemptFinished(
      failure("dst_gone", {
        outcome: "failed",
        exchange: { durationMs: 3, statusCode: null, errorClass: "connection_refused" },
        nextAttemptAt: null,
      }),
    );
    const [retrying, failed] = warnings();
    assert.ok(retrying && failed);
    assert.equal(retrying.msg, "delivery attempt failed; retrying");
    assert.equal(retrying.destination_id, "dst_down");
    assert.equal(retrying.status_code, 503);
    assert.equal(retrying.next_attempt_at, "2026-03-01T12:00:30.000Z");
    assert.equal(retrying.held_back, 0);
    assert.equal(failed.msg, "delivery failed");
    assert.equal(failed.error_class, "connection_refused");
    assert.equal(failed.next_attempt_at, null);
  });

  it("writes at most one failure line per destination a minute, the next carrying how many were held back", () => {
    const { clock, attempts, warnings } = setUp();
    for (let failed = 0; failed < 50; failed += 1) {
      attempts.attemptFinished(failure("dst_down"));
      clock.advance(1000);
    }
    assert.equal(warnings().length, 1, "an outage of 50 s is one line");
    clock.advance(failureLineIntervalMs);
    attempts.attemptFinished(failure("dst_down"));
    const lines = warnings();
    assert.equal(lines.length, 2);
    assert.equal(lines[1]?.held_back, 49);
  });

  it("keeps each destination's failure lines apart", () => {
    const { attempts, warnings } = setUp();
    attempts.attemptFinished(failure("dst_down"));
    attempts.attemptFinished(failure("dst_down"));
    attempts.attemptFinished(failure("dst_other"));
    assert.deepEqual(
      warnings().map((line) => line.destination_id),
      ["dst_down", "dst_other"],
    );
  });

  it("reports lines held back even when no later failure of their destination comes", () => {
    const { clock, attempts, warnings } = setUp();
    attempts.attemptFinished(failure("dst_brief"));
    attempts.attemptFinished(failure("dst_brief"));
    attempts.attemptFinished(failure("dst_brief"));
    clock.advance(failureLineIntervalMs);
    attempts.attemptFinished(failure("dst_other"));
    const summary = warnings().find(
      (line) => line.msg === "delivery failures held back, and none since",
    );
    assert.deepEqual(
      { destination: summary?.destination_id, heldBack: summary?.held_back },
      { destination: "dst_brief", heldBack: 2 },
    );
  });

  it("writes no warn line for a delivered attempt, and a debug line for every attempt", () => {
    const clock = manualClock(0);
    const log = memoryLogger("debug");
    const attempts = new AttemptLog(log.logger, clock);
    attempts.attemptFinished(
      failure("dst_up", { outcome: "delivered", error: null, nextAttemptAt: null }),
    );
    attempts.attemptFinished(failure("dst_down"));
    attempts.attemptFinished(failure("dst_down"));
    const lines = log.lines();
    assert.deepEqual(
      lines
        .filter((line) => line.level === debug)
        .map((line) => [line.destination_id, line.status]),
      [
        ["dst_up", "delivered"],
        ["dst_down", "pending"],
        ["dst_down", "pending"],
      ],
    );
    assert.deepEqual(
      lines.filter((line) => line.level === warn).map((line) => line.destination_id),
      ["dst_down"],
    );
  });
});

describe("the access log of probes", () => {
  const log = memoryLogger("info");
  let api: InProcessApi;

  before(async () => {
    api = await inProcessApi({ logger: log.logger });
  });
  after(() => api.dispose());

  it("logs probes (/healthz, /readyz, /metrics) below info, and other requests at info", async () => {
    for (const url of ["/healthz", "/readyz", "/metrics"]) {
      assert.equal((await api.app.inject({ method: "GET", url })).statusCode, 200);
    }
    assert.equal((await api.call("GET", "/webhooks")).statusCode, 200);
    const completed = log.lines().filter((line) => line.msg === "request completed");
    assert.deepEqual(
      completed.map((line) => [line.level, line.url]),
      [[info, `/v1/workspaces/${api.workspaceId}/webhooks`]],
    );
  });
});
