import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { SecretBox, SecretUnreadableError } from "../../src/crypto/secret-box.ts";
import { SigningKeys } from "../../src/delivery/signing-keys.ts";
import { signatureHeader, signatureHeaderWithKey } from "../../src/receiver/signature.ts";
import { hmacSha256ByDefinition } from "../support/signing.ts";

/** A SecretBox that counts how many sealed values it opens. */
class CountingSecretBox extends SecretBox {
  opened = 0;

  override decrypt(sealed: string, context: string): string {
    this.opened += 1;
    return super.decrypt(sealed, context);
  }
}

const secretFor = (label: string): string =>
  `whsec_${label}_${randomBytes(24).toString("base64url")}`;

describe("signing keys kept per destination", () => {
  const timestamp = 1_795_000_000;
  const bodies = ['{"type":"job.completed","data":{"object":{"n":1}}}', '{"name":"café ✓ 日本"}'];

  it("signs exactly as signatureHeader does with the plain secret", () => {
    const box = new SecretBox(randomBytes(32));
    const keys = new SigningKeys(box);
    const secret = secretFor("plain");
    const key = keys.keyFor("dst_1", box.encrypt(secret, "dst_1"));
    for (const body of bodies) {
      const header = signatureHeaderWithKey(key, timestamp, body);
      assert.equal(header, signatureHeader(secret, timestamp, body));
      // And from first principles, over the UTF-8 bytes of `<timestamp>.<body>`.
      const expected = hmacSha256ByDefinition(
        Buffer.from(secret, "utf8"),
        Buffer.from(`${timestamp}.${body}`, "utf8"),
      );
      assert.equal(header, `t=${timestamp},v1=${expected}`);
    }
  });

  it("opens a sealed value once and hands out the same key after that", () => {
    const box = new CountingSecretBox(randomBytes(32));
    const keys = new SigningKeys(box);
    const sealed = box.encrypt(secretFor("once"), "dst_1");
    const first = keys.keyFor("dst_1", sealed);
    const second = keys.keyFor("dst_1", sealed);
    assert.equal(second, first, "the very same KeyObject");
    assert.equal(box.opened, 1, "decrypted once");
  });

  it("opens a new sealed value of the same destination afresh (rotation)", () => {
    const box = new CountingSecretBox(randomBytes(32));
    const keys = new SigningKeys(box);
    const [oldSecret, newSecret] = [secretFor("old"), secretFor("new")];
    const body = bodies[0]!;
    const oldKey = keys.keyFor("dst_1", box.encrypt(oldSecret, "dst_1"));
    const newKey = keys.keyFor("dst_1", box.encrypt(newSecret, "dst_1"));
    assert.equal(box.opened, 2);
    assert.notEqual(newKey, oldKey);
    assert.equal(
      signatureHeaderWithKey(newKey, timestamp, body),
      signatureHeader(newSecret, timestamp, body),
    );
    assert.notEqual(
      signatureHeaderWithKey(newKey, timestamp, body),
      signatureHeader(oldSecret, timestamp, body),
    );
    // The same secret sealed again is a new sealed value too: opened again, same signatures.
    const resealed = keys.keyFor("dst_1", box.encrypt(newSecret, "dst_1"));
    assert.equal(box.opened, 3);
    assert.equal(
      signatureHeaderWithKey(resealed, timestamp, body),
      signatureHeader(newSecret, timestamp, body),
    );
  });

  it("keeps each destination's key apart", () => {
    const box = new SecretBox(randomBytes(32));
    const keys = new SigningKeys(box);
    const [secretA, secretB] = [secretFor("a"), secretFor("b")];
    const keyA = keys.keyFor("dst_a", box.encrypt(secretA, "dst_a"));
    const keyB = keys.keyFor("dst_b", box.encrypt(secretB, "dst_b"));
    const body = bodies[0]!;
    assert.equal(
      signatureHeaderWithKey(keyA, timestamp, body),
      signatureHeader(secretA, timestamp, body),
    );
    assert.equal(
      signatureHeaderWithKey(keyB, timestamp, body),
      signatureHeader(secretB, timestamp, body),
    );
  });

  it("drops the least recently used destination beyond its capacity", () => {
    const box = new CountingSecretBox(randomBytes(32));
    const keys = new SigningKeys(box, 2);
    const sealed = (id: string): string => box.encrypt(secretFor(id), id);
    const [a, b, c] = [sealed("dst_a"), sealed("dst_b"), sealed("dst_c")];
    const keyA = keys.keyFor("dst_a", a);
    const keyB = keys.keyFor("dst_b", b);
    assert.equal(keys.keyFor("dst_a", a), keyA, "a is now the most recently used");
    const keyC = keys.keyFor("dst_c", c); // evicts b, the least recently used
    assert.equal(box.opened, 3);

    assert.equal(keys.keyFor("dst_a", a), keyA, "a is still kept");
    assert.equal(keys.keyFor("dst_c", c), keyC, "c is kept");
    assert.equal(box.opened, 3, "neither opened again");

    const reopenedB = keys.keyFor("dst_b", b);
    assert.equal(box.opened, 4, "b was dropped and is opened again");
    assert.notEqual(reopenedB, keyB);
    // Taking b back dropped a (used before c); c is still kept.
    assert.equal(keys.keyFor("dst_c", c), keyC);
    assert.equal(box.opened, 4);
    keys.keyFor("dst_a", a);
    assert.equal(box.opened, 5, "a was dropped in turn");
  });

  it("throws SecretUnreadableError for a sealed value that does not open, every time", () => {
    const box = new SecretBox(randomBytes(32));
    const keys = new SigningKeys(box);
    const secret = secretFor("x");
    const elsewhere = new SecretBox(randomBytes(32)).encrypt(secret, "dst_1");
    const otherRow = box.encrypt(secret, "dst_2"); // bound to another destination
    const sealed = box.encrypt(secret, "dst_1");
    const [format, iv, tag, ciphertext = ""] = sealed.split(":");
    const flipped = Buffer.from(ciphertext, "base64url");
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    const altered = [format, iv, tag, flipped.toString("base64url")].join(":");
    // Malformed: not a sealed value at all, a shortened tag, an empty IV.
    const shortTag = [format, iv, (tag ?? "").slice(0, 8), ciphertext].join(":");
    const emptyIv = [format, "", tag, ciphertext].join(":");

    for (const unreadable of [elsewhere, otherRow, altered, "sealed", shortTag, emptyIv]) {
      for (let time = 0; time < 2; time += 1) {
        assert.throws(() => keys.keyFor("dst_1", unreadable), SecretUnreadableError);
      }
    }
    // A readable value of that destination still opens, and signs as its secret does.
    const key = keys.keyFor("dst_1", sealed);
    const body = bodies[0]!;
    assert.equal(
      signatureHeaderWithKey(key, timestamp, body),
      signatureHeader(secret, timestamp, body),
    );
    // And a failure after it was kept does not replace it.
    assert.throws(() => keys.keyFor("dst_1", altered), SecretUnreadableError);
    assert.equal(keys.keyFor("dst_1", sealed), key);
  });
});
