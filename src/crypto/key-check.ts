import { createHmac } from "node:crypto";

/** The text the check value is made of; a new scheme gets a new text (and prefix). */
const checkText = "svc encryption key check v1";

/**
 * A value that tells whether two processes hold the same encryption key without telling the
 * key: HMAC-SHA256 under the key of a fixed text. Recorded in the database by the first
 * process, compared by every later one.
 */
export function encryptionKeyCheckValue(key: Buffer): string {
  return `v1:${createHmac("sha256", key).update(checkText).digest("hex")}`;
}
