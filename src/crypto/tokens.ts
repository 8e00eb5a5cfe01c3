import { hash, randomBytes, randomFillSync } from "node:crypto";

/**
 * Random bytes for identifiers, drawn from a pool refilled 4 KiB at a time: one call into the
 * CSPRNG per ~400 ids instead of one per id. Identifiers are not secrets (knowing one grants
 * nothing), so sharing a pool is safe; secrets and tokens below call `randomBytes` themselves.
 */
const idPool = Buffer.alloc(4096);
let idPoolOffset = idPool.length;

function randomHex(bytes: number): string {
  if (idPoolOffset + bytes > idPool.length) {
    randomFillSync(idPool);
    idPoolOffset = 0;
  }
  const hex = idPool.toString("hex", idPoolOffset, idPoolOffset + bytes);
  idPoolOffset += bytes;
  return hex;
}

/** Public identifiers: a type prefix and 96 random bits, e.g. `dst_5f0c…`. */
export function newId(prefix: "ws" | "key" | "dst" | "usr" | "ses" | "lsn" | "psn"): string {
  return `${prefix}_${randomHex(12)}`;
}

/**
 * Event ids: `evt_`, then the event's creation time in milliseconds (48 bits, 12 hex digits),
 * then 64 random bits: `evt_019a…`. Events are the one high-volume table, and ids made in time
 * order land at the right-hand end of the indexes that hold them (the events' and the
 * deliveries' unique keys) instead of on a random page each: a publish batch dirties a few
 * pages instead of one per event, so its insert and its COMMIT write less (decision 20). The
 * random part keeps ids made in the same millisecond, by any process, apart: at 10,000 events
 * a second, a collision is expected once in ~10 million years.
 */
export function newEventId(createdAt: Date): string {
  const millis = Math.min(Math.max(createdAt.getTime(), 0), 2 ** 48 - 1);
  return `evt_${millis.toString(16).padStart(12, "0")}${randomHex(8)}`;
}

/**
 * Delivery ids name what a delivery is, one notification to one destination:
 * `dlv_<event id without evt_>_<destination id without dst_>` (a listen session's `lsn_…`
 * as `lsn…`). Derived, so the deliveries
 * table needs neither a column nor an index for them: a unique index there would be written
 * on every result (PostgreSQL's updates of a delivery are not HOT), which cost PostgreSQL
 * ~100 µs per delivery (decision 30). They begin with the event's time, as its id does.
 */
export function deliveryId(eventId: string, destinationId: string): string {
  return `dlv_${eventId.replace(/^evt_/, "")}_${destinationId.replace(/^dst_|(?<=^lsn)_/, "")}`;
}

/** The event and destination a delivery id names; null for anything else. */
export function parseDeliveryId(id: string): { eventId: string; destinationId: string } | null {
  const match = /^dlv_([A-Za-z0-9_]+)_([A-Za-z0-9]+)$/.exec(id);
  if (match?.[1] === undefined || match[2] === undefined) return null;
  // A listen session's id (decision 34) keeps its prefix, without the underscore: hex has no
  // "l", "s" or "n", so the two kinds cannot be taken for each other.
  const destination = match[2].startsWith("lsn") ? `lsn_${match[2].slice(3)}` : `dst_${match[2]}`;
  return { eventId: `evt_${match[1]}`, destinationId: destination };
}

/** Signing secrets: `whsec_` and 32 random bytes, base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/**
 * A workspace's API keys: `svc_` and 32 random bytes, base64url. Only their hash is stored.
 * Never `svc_op_…`, which is an operator key's prefix: one draw in 2^18 starts `op_` and is
 * drawn again, so that the prefix tells the two kinds apart without exception.
 */
export function newApiToken(): string {
  for (;;) {
    const random = randomBytes(32).toString("base64url");
    if (!random.startsWith("op_")) return `svc_${random}`;
  }
}

/**
 * Operator API keys (decision 42): `svc_op_` and 32 random bytes, base64url. Every API key
 * starts `svc_`; this one says at sight that it reaches every workspace. The prefix is for
 * people and secret scanners: the server knows a key by its hash, never by its prefix.
 */
export const OPERATOR_TOKEN_PREFIX = "svc_op_";

export function newOperatorToken(): string {
  return `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** Session tokens: `svs_` and 32 random bytes, base64url. Only their hash is stored. */
export function newSessionToken(): string {
  return `svs_${randomBytes(32).toString("base64url")}`;
}

/**
 * The customer portal's tokens (decision 43): `spl_` for a link's one-time token (it travels
 * in a URL's fragment), `svp_` for the session it opens (held in the portal page's memory).
 * 32 random bytes each, base64url; only their hashes are stored.
 */
export function newPortalLinkToken(): string {
  return `spl_${randomBytes(32).toString("base64url")}`;
}

export function newPortalSessionToken(): string {
  return `svp_${randomBytes(32).toString("base64url")}`;
}

/**
 * The stored form of an API or session token. A plain SHA-256 suffices (no slow KDF): the token has 256
 * bits of entropy, so the hash cannot be reversed by guessing. Made once a request: the one-shot
 * `hash` takes half the time of a `Hash` object (1.0 against 2.1 µs here).
 */
export function hashToken(token: string): string {
  return hash("sha256", token, "hex");
}
