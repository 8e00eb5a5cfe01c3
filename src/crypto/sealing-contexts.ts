/**
 * What each sealed value is bound to (the additional authenticated data of `SecretBox`), in one
 * place: the code that seals, the code that opens, and the key rotation that does both.
 */

/** A destination's signing secret is bound to the destination. */
export function destinationSecretContext(destinationId: string): string {
  return destinationId;
}

/** A response kept for replay under an idempotency key is bound to its workspace and key. */
export function idempotencyResponseContext(workspaceId: string, key: string): string {
  return `idempotency:${workspaceId}:${key}`;
}
