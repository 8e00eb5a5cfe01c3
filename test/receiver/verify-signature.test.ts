import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import {
  computeSignature,
  signatureHeader,
  verifySignature,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from "../../src/index.ts";

const secret = "whsec_dGVzdC1zaWduaW5nLXNlY3JldC1mb3ItZG9jcw";
const otherSecret = "whsec_YW5vdGhlci1zZWNyZXQtYWZ0ZXItcm90YXRpb24";
const signedAt = 1_700_000_000;
const body =
  '{"id":"evt_0123456789abcdef","type":"job.completed","api_version":"2026-11-01",' +
  '"created":1700000000,"data":{"object":{"id":"job_42","name":"café ☕"}}}';

/** A signature computed here with node:crypto, independently of the module under test. */
function hmacHex(key: string, timestamp: number, payload: string | Uint8Array): string {
  return createHmac("sha256", key).update(`${timestamp}.`).update(payload).digest("hex");
}

function headerFor(payload: string, timestamp = signedAt, key = secret): string {
  return `t=${timestamp},v1=${hmacHex(key, timestamp, payload)}`;
}

/** The receiver's clock, `offsetSeconds` after the default signing time. */
function clockAt(offsetSeconds: number): Date {
  return new Date((signedAt + offsetSeconds) * 1000);
}

/**
 * Asserts that `verify` throws a WebhookVerificationError with `code`, and that its message
 * gives away neither the secret nor the signature that was expected.
 */
function assertRefused(verify: () => unknown, code: WebhookVerificationErrorCode): void {
  assert.throws(verify, (error: unknown) => {
    assert.ok(
      error instanceof WebhookVerificationError,
      `not a WebhookVerificationError: ${String(error)}`,
    );
    assert.equal(error.code, code);
    for (const key of [secret, otherSecret]) {
      assert.ok(!error.message.includes(key), "the message contains the secret");
      assert.ok(
        !error.message.includes(hmacHex(key, signedAt, body)),
        "the message contains a signature",
      );
    }
    return true;
  });
}

/** Verifies `payload`, which may be anything a plain-JavaScript caller could pass, at signing time. */
const verifyPayload = (header: string | null | undefined, payload: unknown) =>
  verifySignature(secret, header, payload as string, { now: clockAt(0) });

const verifyAtSigningTime = (header: string | null | undefined) => verifyPayload(header, body);

describe("computeSignature", () => {
  it("is HMAC-SHA256 over `<timestamp>.<body>` keyed with the whole secret, in lowercase hex", () => {
    assert.equal(computeSignature(secret, signedAt, body), hmacHex(secret, signedAt, body));
  });

  it("matches the fixed vector computed with openssl and published in the docs", () => {
    // printf '%s' "1700000000.$body" | openssl dgst -sha256 -hmac "$secret" -hex
    assert.equal(
      computeSignature(secret, signedAt, body),
      "b50ae192e6f36aeaa15effdfd0d598337265e254f7eb1a9dd99003999b938f35",
    );
  });

  it("signs a string body as its UTF-8 bytes", () => {
    assert.equal(
      computeSignature(secret, signedAt, body),
      computeSignature(secret, signedAt, Buffer.from(body, "utf8")),
    );
  });

  it("refuses a timestamp that is not whole Unix seconds", () => {
    for (const timestamp of [1.5, -1, Number.NaN, Date.now() * 1000 * 1000]) {
      assert.throws(() => computeSignature(secret, timestamp, body), RangeError, String(timestamp));
    }
  });
});

describe("signatureHeader", () => {
  it("is t=<timestamp>,v1=<signature>", () => {
    assert.equal(signatureHeader(secret, signedAt, body), headerFor(body));
  });

  it("makes headers that verifySignature accepts", () => {
    const header = signatureHeader(secret, signedAt, body);
    assert.deepEqual(verifyAtSigningTime(header), { timestamp: signedAt });
  });
});

describe("verifySignature: signature", () => {
  it("accepts a valid signature and returns its timestamp", () => {
    assert.deepEqual(verifyAtSigningTime(headerFor(body)), { timestamp: signedAt });
  });

  it("refuses a body changed by one byte", () => {
    const changed = Buffer.from(body, "utf8");
    const index = changed.length - 2;
    changed[index] = changed[index]! ^ 0x01;
    assertRefused(() => verifyPayload(headerFor(body), changed), "signature_mismatch");
  });

  it("refuses the same JSON re-serialised with different whitespace", () => {
    const reserialised = JSON.stringify(JSON.parse(body), null, 2);
    assert.deepEqual(JSON.parse(reserialised), JSON.parse(body));
    assertRefused(() => verifyPayload(headerFor(body), reserialised), "signature_mismatch");
  });

  it("refuses a signature made with another secret", () => {
    assertRefused(
      () => verifyAtSigningTime(headerFor(body, signedAt, otherSecret)),
      "signature_mismatch",
    );
  });

  it("keys with the whole secret: a signature keyed without the whsec_ prefix does not match", () => {
    const withoutPrefix = secret.slice("whsec_".length);
    assertRefused(
      () => verifyAtSigningTime(headerFor(body, signedAt, withoutPrefix)),
      "signature_mismatch",
    );
  });

  it("says to check the raw body and the whole secret when no signature matches", () => {
    assert.throws(
      () => verifyPayload(headerFor(body), body.replace("job_42", "job_43")),
      /raw body exactly as received[\s\S]*whole whsec_… string/,
    );
  });
});

describe("verifySignature: several signatures and schemes", () => {
  const valid = hmacHex(secret, signedAt, body);
  const stale = hmacHex(otherSecret, signedAt, body);

  it("accepts several v1 entries when any one matches (secret rotation)", () => {
    for (const header of [
      `t=${signedAt},v1=${stale},v1=${valid}`,
      `t=${signedAt},v1=${valid},v1=${stale}`,
    ]) {
      assert.deepEqual(verifyAtSigningTime(header), { timestamp: signedAt }, header);
    }
  });

  it("refuses several v1 entries when none matches", () => {
    assertRefused(
      () => verifyAtSigningTime(`t=${signedAt},v1=${stale},v1=${stale}`),
      "signature_mismatch",
    );
  });

  it("ignores entries of unknown schemes next to a valid v1 entry", () => {
    const header = `v0=${stale},t=${signedAt},v2=anything,v1=${valid}`;
    assert.deepEqual(verifyAtSigningTime(header), { timestamp: signedAt });
  });

  it("refuses a header with only a v0 entry as malformed, since there is nothing to verify", () => {
    assertRefused(
      () => verifyAtSigningTime(`t=${signedAt},v0=${valid}`),
      "signature_header_malformed",
    );
  });

  it("tolerates spaces around entries", () => {
    assert.deepEqual(verifyAtSigningTime(` t=${signedAt} , v1=${valid} `), { timestamp: signedAt });
  });
});

describe("verifySignature: timestamp tolerance", () => {
  const header = headerFor(body);
  const verifyAt = (offsetSeconds: number, toleranceSeconds?: number) =>
    verifySignature(secret, header, body, { now: clockAt(offsetSeconds), toleranceSeconds });

  it("accepts a timestamp 299 s old with the default tolerance", () => {
    assert.deepEqual(verifyAt(299), { timestamp: signedAt });
  });

  it("accepts a timestamp exactly 300 s old: the bound is inclusive", () => {
    assert.deepEqual(verifyAt(300), { timestamp: signedAt });
  });

  it("compares whole seconds: 300.9 s after the timestamp is still 300 s", () => {
    assert.deepEqual(verifyAt(300.9), { timestamp: signedAt });
  });

  it("refuses a timestamp 301 s old with the default tolerance", () => {
    assertRefused(() => verifyAt(301), "signature_timestamp_out_of_tolerance");
  });

  it("accepts a timestamp 299 s in the future and refuses one 301 s in the future", () => {
    assert.deepEqual(verifyAt(-299), { timestamp: signedAt });
    assertRefused(() => verifyAt(-301), "signature_timestamp_out_of_tolerance");
  });

  it("says how far off the timestamp is and to check the clock", () => {
    assert.throws(
      () => verifyAt(301),
      /301 s in the past, outside the tolerance of 300 s[\s\S]*clock/,
    );
    assert.throws(() => verifyAt(-400), /400 s in the future/);
  });

  it("respects a custom tolerance", () => {
    assert.deepEqual(verifyAt(10, 10), { timestamp: signedAt });
    assertRefused(() => verifyAt(11, 10), "signature_timestamp_out_of_tolerance");
    assert.deepEqual(verifyAt(3600, 3600), { timestamp: signedAt });
  });

  it("accepts any timestamp with a tolerance of Infinity", () => {
    assert.deepEqual(verifyAt(10 * 365 * 86_400, Infinity), { timestamp: signedAt });
  });

  it("checks the signature first: a stale request with a wrong signature is a mismatch", () => {
    assertRefused(
      () => verifySignature(otherSecret, header, body, { now: clockAt(3600) }),
      "signature_mismatch",
    );
  });

  it("throws a RangeError for a tolerance of 0, a negative one or NaN", () => {
    for (const toleranceSeconds of [0, -1, Number.NaN, "300" as unknown as number]) {
      assert.throws(() => verifyAt(0, toleranceSeconds), RangeError, String(toleranceSeconds));
    }
  });

  it("throws a RangeError for an invalid clock", () => {
    assert.throws(
      () => verifySignature(secret, header, body, { now: new Date(Number.NaN) }),
      RangeError,
    );
  });
});

describe("verifySignature: header shape", () => {
  it("refuses a missing or empty header as missing", () => {
    for (const header of [undefined, null, "", "   "]) {
      assertRefused(() => verifyAtSigningTime(header), "signature_header_missing");
    }
  });

  it("refuses malformed headers", () => {
    const valid = hmacHex(secret, signedAt, body);
    const malformed = [
      `v1=${valid}`, // no t=
      `t=${signedAt}`, // no v1=
      `t=,v1=${valid}`,
      `t=abc,v1=${valid}`,
      `t=1700000000.5,v1=${valid}`,
      `t=-1700000000,v1=${valid}`,
      `t=01700000000,v1=${valid}`,
      `t=1e9,v1=${valid}`,
      `t=99999999999999999999,v1=${valid}`,
      `t=${signedAt},t=${signedAt},v1=${valid}`,
      `t=${signedAt},v1=`,
      `t=${signedAt},v1=${valid.toUpperCase()}`,
      `t=${signedAt},v1=${valid.slice(1)}`,
      `t=${signedAt},v1=${valid},`,
      `t=${signedAt};v1=${valid}`,
      "garbage",
    ];
    for (const header of malformed) {
      assertRefused(() => verifyAtSigningTime(header), "signature_header_malformed");
    }
  });

  it("refuses a header that is not one string as malformed", () => {
    const header = [headerFor(body)] as unknown as string;
    assertRefused(() => verifyAtSigningTime(header), "signature_header_malformed");
  });
});

describe("verifySignature: body", () => {
  const header = headerFor(body);

  it("accepts the body as a string, a Buffer or a Uint8Array, non-ASCII UTF-8 included", () => {
    const bytes = Buffer.from(body, "utf8");
    assert.notEqual(bytes.length, body.length, "the body should contain multi-byte characters");
    for (const payload of [body, bytes, new Uint8Array(bytes)]) {
      assert.deepEqual(verifyPayload(header, payload), { timestamp: signedAt });
    }
  });

  it("verifies only the viewed bytes of a Buffer that shares a larger ArrayBuffer", () => {
    const padded = Buffer.from(`xx${body}yy`, "utf8");
    const view = padded.subarray(2, padded.length - 2);
    assert.deepEqual(verifyPayload(header, view), { timestamp: signedAt });
  });

  it("refuses a body already parsed as JSON, saying to pass the raw body", () => {
    const parsed: unknown = JSON.parse(body);
    assertRefused(() => verifyPayload(header, parsed), "raw_body_required");
    assert.throws(() => verifyPayload(header, parsed), /raw request body/);
  });

  it("refuses bodies that are not text or bytes", () => {
    for (const payload of [undefined, null, 42, [1, 2], new ArrayBuffer(4)]) {
      assertRefused(() => verifyPayload(header, payload), "raw_body_required");
    }
  });
});

describe("verifySignature: secret", () => {
  it("refuses an empty secret instead of keying with nothing", () => {
    assertRefused(
      () => verifySignature("", headerFor(body), body, { now: clockAt(0) }),
      "signing_secret_invalid",
    );
  });

  it("refuses a secret with a trailing newline, naming the likely cause", () => {
    const verify = () => verifySignature(`${secret}\n`, headerFor(body), body, { now: clockAt(0) });
    assertRefused(verify, "signing_secret_invalid");
    assert.throws(verify, /trailing newline/);
  });

  it("refuses a secret that is not a string", () => {
    const missing = undefined as unknown as string;
    assertRefused(
      () => verifySignature(missing, headerFor(body), body, { now: clockAt(0) }),
      "signing_secret_invalid",
    );
  });
});
