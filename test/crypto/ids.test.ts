import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import {
  hashToken,
  newApiToken,
  newEventId,
  newId,
  newOperatorToken,
} from "../../src/crypto/tokens.ts";

describe("identifiers", () => {
  it("gives other resources a prefix and 96 random bits", () => {
    const ids = Array.from({ length: 2000 }, () => newId("dst"));
    for (const id of ids) assert.match(id, /^dst_[0-9a-f]{24}$/);
    assert.equal(new Set(ids).size, ids.length);
  });

  it("starts an event id with its creation time, so ids sort in the order they were made", () => {
    const at = new Date("2026-11-21T12:00:00.000Z");
    const id = newEventId(at);
    assert.match(id, /^evt_[0-9a-f]{28}$/);
    assert.equal(parseInt(id.slice(4, 16), 16), at.getTime());
    const later = newEventId(new Date(at.getTime() + 1));
    assert.ok(later > id, `${later} sorts after ${id}`);
  });

  it("keeps event ids made in the same millisecond apart, across refills of the random pool", () => {
    const at = new Date("2026-11-21T12:00:00.000Z");
    // 20,000 ids use 160,000 random bytes: the 4 KiB pool is refilled ~40 times.
    const ids = Array.from({ length: 20_000 }, () => newEventId(at));
    assert.equal(new Set(ids).size, ids.length);
    const tails = new Set(ids.map((id) => id.slice(16)));
    assert.equal(tails.size, ids.length, "the random parts differ");
  });

  it("clamps times outside 48 bits instead of growing the id", () => {
    assert.match(newEventId(new Date(-1)), /^evt_000000000000[0-9a-f]{16}$/);
    assert.match(newEventId(new Date(8.64e15)), /^evt_ffffffffffff[0-9a-f]{16}$/);
  });
});

describe("stored tokens", () => {
  it("are the hex SHA-256 of the token's UTF-8, as every release has stored them", () => {
    // A known answer, then tokens of every kind, a non-ASCII one among them (never issued,
    // but presented ones are hashed too).
    assert.equal(
      hashToken("svc_test"),
      createHash("sha256").update("svc_test", "utf8").digest("hex"),
    );
    assert.equal(
      hashToken("abc"),
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    for (const token of [newApiToken(), newOperatorToken(), "svc_é\u{1F600}", ""]) {
      assert.equal(hashToken(token), createHash("sha256").update(token, "utf8").digest("hex"));
    }
  });
});
