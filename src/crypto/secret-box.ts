import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const algorithm = "aes-256-gcm";
const version = "v1";

/** A sealed value that does not open: another key sealed it, or it was altered. */
export class SecretUnreadableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("The sealed value could not be opened with this encryption key", options);
    this.name = "SecretUnreadableError";
  }
}

/**
 * Encrypts signing secrets at rest with AES-256-GCM. Each ciphertext is bound to the record
 * it belongs to (`context`, the destination id, as additional authenticated data), so that a
 * ciphertext copied onto another row does not decrypt.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("The encryption key must be 32 bytes");
    this.#key = key;
  }

  encrypt(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv(algorithm, this.#key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString("base64url"));
    return [version, ...parts].join(":");
  }

  /** Throws `SecretUnreadableError` for any value it cannot open: malformed, altered, or sealed elsewhere. */
  decrypt(sealed: string, context: string): string {
    try {
      const [format, iv, tag, ciphertext] = sealed.split(":");
      if (format !== version || iv === undefined || tag === undefined || ciphertext === undefined) {
        throw new Error("Unrecognised ciphertext format");
      }
      const decipher = createDecipheriv(algorithm, this.#key, Buffer.from(iv, "base64url"), {
        authTagLength: 16,
      });
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, "base64url")),
        decipher.final(),
      ]).toString("utf8");
    } catch (error) {
      throw new SecretUnreadableError({ cause: error });
    }
  }
}
