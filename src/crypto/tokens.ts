import { createHash, randomBytes } from "node:crypto";

/** Public identifiers: a type prefix and 96 random bits, e.g. `dst_5f0c…`. */
export function newId(prefix: "ws" | "key" | "dst" | "evt" | "usr" | "ses"): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}

/** Signing secrets: `whsec_` and 32 random bytes, base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/** API keys: `svc_` and 32 random bytes, base64url. Only their hash is stored. */
export function newApiToken(): string {
  return `svc_${randomBytes(32).toString("base64url")}`;
}

/** Session tokens: `svs_` and 32 random bytes, base64url. Only their hash is stored. */
export function newSessionToken(): string {
  return `svs_${randomBytes(32).toString("base64url")}`;
}

/**
 * The stored form of an API or session token. A plain SHA-256 suffices (no slow KDF): the token has 256
 * bits of entropy, so the hash cannot be reversed by guessing.
 */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
