import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ENCRYPTION_KEY_FILE } from "../../src/crypto/encryption-key.ts";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { queryTestDatabase } from "./database.ts";

/**
 * The signing secret the server holds for a destination, read from its database and
 * decrypted with the data directory's key: what the delivery engine will sign with.
 */
export async function storedSigningSecret(dataDir: string, destinationId: string): Promise<string> {
  const key = Buffer.from(
    (await readFile(join(dataDir, ENCRYPTION_KEY_FILE), "utf8")).trim(),
    "base64",
  );
  const [row] = await queryTestDatabase<{ secret_ciphertext: string }>(
    dataDir,
    "SELECT secret_ciphertext FROM destinations WHERE id = $1",
    [destinationId],
  );
  if (row === undefined) throw new Error(`no destination ${destinationId} in the database`);
  return new SecretBox(key).decrypt(row.secret_ciphertext, destinationId);
}

/**
 * HMAC-SHA256 built by hand from its definition (RFC 2104) on plain SHA-256: a computation
 * independent of node:crypto's createHmac, to check a signature against.
 */
export function hmacSha256ByDefinition(key: Buffer, message: Buffer): string {
  const blockSize = 64;
  const shortKey = key.length > blockSize ? createHash("sha256").update(key).digest() : key;
  const padded = Buffer.concat([shortKey, Buffer.alloc(blockSize - shortKey.length)]);
  const xor = (pad: number): Buffer => Buffer.from(padded.map((byte) => byte ^ pad));
  const inner = createHash("sha256").update(xor(0x36)).update(message).digest();
  return createHash("sha256").update(xor(0x5c)).update(inner).digest("hex");
}
