import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRetryAfter, RetrySchedule } from "../../src/delivery/retry-schedule.ts";
import { WorkSignal } from "../../src/delivery/work-signal.ts";
import { parseDuration } from "../../src/lib/duration.ts";

describe("retry schedule", () => {
  const middle = (): number => 0.5; // no jitter
  const schedule = new RetrySchedule([5000, 30_000, 120_000], middle);

  it("waits each step in turn, then gives up", () => {
    assert.equal(schedule.delayAfter(1, null), 5000);
    assert.equal(schedule.delayAfter(2, null), 30_000);
    assert.equal(schedule.delayAfter(3, null), 120_000);
    assert.equal(schedule.delayAfter(4, null), null);
  });

  it("jitters each wait within ±20%", () => {
    assert.equal(new RetrySchedule([1000], () => 0).delayAfter(1, null), 800);
    assert.equal(new RetrySchedule([1000], () => 1).delayAfter(1, null), 1200);
  });

  it("honours Retry-After up to the next step, never below the schedule", () => {
    assert.equal(schedule.delayAfter(1, 10_000), 10_000);
    assert.equal(schedule.delayAfter(1, 3_600_000), 30_000, "capped at the next step");
    assert.equal(schedule.delayAfter(1, 1000), 5000, "not shortened");
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = new Date("2026-11-21T12:00:00Z");
    assert.equal(parseRetryAfter("120", now), 120_000);
    assert.equal(parseRetryAfter("Sat, 21 Nov 2026 12:00:30 GMT", now), 30_000);
    assert.equal(parseRetryAfter("soon", now), null);
    assert.equal(parseRetryAfter(undefined, now), null);
  });

  it("parses durations from 50ms to days", () => {
    assert.equal(parseDuration("50ms"), 50);
    assert.equal(parseDuration("1.5s"), 1500);
    assert.equal(parseDuration("2m"), 120_000);
    assert.equal(parseDuration("24h"), 86_400_000);
    assert.equal(parseDuration("30d"), 2_592_000_000);
    assert.equal(parseDuration("5"), null);
    assert.equal(parseDuration("-5s"), null);
  });
});

describe("WorkSignal", () => {
  it("keeps a notification that arrives before the wait", async () => {
    const signal = new WorkSignal();
    signal.notify();
    const started = Date.now();
    await signal.wait(10_000);
    assert.ok(Date.now() - started < 1000);
  });

  it("wakes a waiter at once", async () => {
    const signal = new WorkSignal();
    const waiting = signal.wait(10_000);
    signal.notify();
    await waiting;
  });
});
