import { createSecretKey, type KeyObject } from "node:crypto";
import { destinationSecretContext } from "../crypto/sealing-contexts.ts";
import type { SecretBox } from "../crypto/secret-box.ts";

/** Destinations whose opened key is kept; beyond this the least recently used is dropped. */
const defaultCapacity = 10_000;

/**
 * The signing secrets of destinations, opened and ready to key HMAC-SHA256. Opening a sealed
 * secret (AES-256-GCM) and setting up its key cost more than signing a notification, and a
 * destination receives many notifications, so each opened key is kept, per destination and
 * sealed value: a secret that is rotated or sealed again is opened afresh. The keys live in
 * this process's memory only, as the opened secret of an attempt always did.
 */
export class SigningKeys {
  readonly #secretBox: SecretBox;
  readonly #capacity: number;
  readonly #keys = new Map<string, { readonly sealed: string; readonly key: KeyObject }>();

  constructor(secretBox: SecretBox, capacity = defaultCapacity) {
    this.#secretBox = secretBox;
    this.#capacity = capacity;
  }

  /** The key of `destinationId`'s secret; throws `SecretUnreadableError` if it does not open. */
  keyFor(destinationId: string, sealed: string): KeyObject {
    const kept = this.#keys.get(destinationId);
    if (kept !== undefined && kept.sealed === sealed) {
      // Most recently used last: a Map iterates in insertion order.
      this.#keys.delete(destinationId);
      this.#keys.set(destinationId, kept);
      return kept.key;
    }
    const secret = this.#secretBox.decrypt(sealed, destinationSecretContext(destinationId));
    const key = createSecretKey(Buffer.from(secret, "utf8"));
    this.#keys.delete(destinationId);
    this.#keys.set(destinationId, { sealed, key });
    if (this.#keys.size > this.#capacity) {
      const oldest = this.#keys.keys().next();
      if (oldest.done !== true) this.#keys.delete(oldest.value);
    }
    return key;
  }
}
