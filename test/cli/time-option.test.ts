import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { AppError } from "../../src/errors.ts";
import { ISO_TIME, parseTimeOption, timeRange } from "../../src/cli/time-option.ts";

const now = new Date("2026-11-25T10:00:00.000Z");
const parse = (value: string) => parseTimeOption(value, "--since", "deliveries list", now);

/** A usage error (exit 2) that names the flag and the command's help. */
function assertUsageError(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof AppError);
    assert.equal(error.code, "usage_error");
    assert.equal(error.exit, 2);
    assert.match(error.message, pattern);
    assert.match(error.message, /See `svc deliveries list --help`\./);
    return true;
  });
}

describe("--since and --until: ISO 8601 or a duration back from now", () => {
  it("a duration counts back from now, in UTC", () => {
    assert.equal(parse("90s"), "2026-11-25T09:58:30.000Z");
    assert.equal(parse("30m"), "2026-11-25T09:30:00.000Z");
    assert.equal(parse("2h"), "2026-11-25T08:00:00.000Z");
    assert.equal(parse("7d"), "2026-11-18T10:00:00.000Z");
    assert.equal(parse("1w"), "2026-11-18T10:00:00.000Z");
    assert.equal(parse(" 2h "), "2026-11-25T08:00:00.000Z", "spaces around it are dropped");
  });

  it("an ISO 8601 time with a zone is sent in UTC", () => {
    assert.equal(parse("2026-11-25T09:00:00Z"), "2026-11-25T09:00:00.000Z");
    assert.equal(parse("2026-11-25T09:00:00.5Z"), "2026-11-25T09:00:00.500Z");
    assert.equal(parse("2026-11-25T10:00:00+01:00"), "2026-11-25T09:00:00.000Z");
  });

  it("refuses anything else with a usage error that says what is taken", () => {
    for (const value of [
      "",
      "yesterday",
      "2h30m",
      "-2h",
      "2 h",
      "2H",
      "1y",
      "1.5h",
      "2026-11-25",
      "2026-11-25T09:00:00",
      "2026-02-30T00:00:00Z",
      "1795273492",
    ]) {
      assertUsageError(
        () => parse(value),
        /--since must be an ISO 8601 time with a zone \(2026-11-25T09:00:00Z\) or a duration back from now \(30m, 2h, 7d\)/,
      );
    }
    assertUsageError(() => parse("0h"), /--since "0h" is not a usable duration/);
    assertUsageError(() => parse("999999999d"), /is not a usable duration/);
  });

  it("a range: each bound converted, since before until, either optional", () => {
    assert.deepEqual(timeRange({}, "deliveries list", now), {});
    assert.deepEqual(timeRange({ since: "2h", until: "30m" }, "deliveries list", now), {
      since: "2026-11-25T08:00:00.000Z",
      until: "2026-11-25T09:30:00.000Z",
    });
    assert.deepEqual(timeRange({ until: "2026-11-25T09:00:00Z" }, "deliveries list", now), {
      until: "2026-11-25T09:00:00.000Z",
    });
    assertUsageError(
      () => timeRange({ since: "30m", until: "2h" }, "deliveries list", now),
      /--since \(2026-11-25T09:30:00\.000Z\) must be before --until/,
    );
    assertUsageError(
      () => timeRange({ since: "2h", until: "later" }, "deliveries list", now),
      /--until must be/,
    );
  });
});

describe("an ISO time is what the API's zod schema takes, checked without zod", () => {
  const zodTime = z.iso.datetime({ offset: true });

  it("the pattern is zod's own", () => {
    const pattern = (zodTime._zod.def as { pattern?: RegExp }).pattern;
    assert.equal(ISO_TIME.source, pattern?.source);
  });

  it("accepts and refuses what zod does", () => {
    const samples = [
      "2026-11-25T09:00:00Z",
      "2026-11-25T09:00:00.5+01:00",
      "2026-11-25T09:00:00.123456789-23:59",
      "2026-11-25T09:00Z",
      "2026-11-25T09:00:00",
      "2026-11-25t09:00:00z",
      "2026-11-25 09:00:00Z",
      "2026-11-25",
      "2024-02-29T00:00:00Z",
      "2025-02-29T00:00:00Z",
      "2000-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-12-31T23:59:59Z",
      "2026-13-01T00:00:00Z",
      "2026-11-25T24:00:00Z",
      "2026-11-25T09:60:00Z",
      "2026-11-25T09:00:60Z",
      "2026-11-25T09:00:00+24:00",
      "2026-11-25T09:00:00+0100",
      "2026-11-25T09:00:00.Z",
      "+02026-11-25T09:00:00Z",
      "",
    ];
    const disagreements = samples.filter(
      (sample) => ISO_TIME.test(sample) !== zodTime.safeParse(sample).success,
    );
    assert.deepEqual(disagreements, []);
  });
});
