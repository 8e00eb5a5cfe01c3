import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

/**
 * Passwords are stored as `scrypt$N$r$p$salt$hash` (salt and hash base64): scrypt is
 * memory-hard, so guessing on GPUs is expensive, and it is in node:crypto (no native module).
 * N=2^15, r=8, p=1 uses 32 MiB and some 50–100 ms per hash: OWASP's minimum for scrypt.
 * The parameters travel with each hash, so they can be raised later without a migration.
 */
const PARAMETERS = { N: 2 ** 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

/** The shortest password accepted, in characters. */
export const MIN_PASSWORD_LENGTH = 12;
/** The longest: scrypt's cost grows with the input, so an unbounded one is a lever for abuse. */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(
  password: string,
  salt: Buffer,
  parameters: { N: number; r: number; p: number },
  length: number,
): Promise<Buffer> {
  // Node's default limit (32 MiB) is exactly what N=2^15, r=8 needs, and scrypt wants a margin.
  const options: ScryptOptions = { ...parameters, maxmem: 128 * parameters.N * parameters.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, length, options, (error, key) => {
      if (error) reject(error);
      else resolve(key);
    });
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, PARAMETERS, HASH_BYTES);
  const { N, r, p } = PARAMETERS;
  return ["scrypt", N, r, p, salt.toString("base64"), hash.toString("base64")].join("$");
}

interface ParsedHash {
  readonly parameters: { N: number; r: number; p: number };
  readonly salt: Buffer;
  readonly hash: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split("$");
  if (scheme !== "scrypt" || rest.length > 0 || salt === undefined || hash === undefined) {
    return null;
  }
  const parameters = { N: Number(n), r: Number(r), p: Number(p) };
  if (!Object.values(parameters).every((value) => Number.isSafeInteger(value) && value > 0)) {
    return null;
  }
  const decoded = { salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") };
  // An empty or short hash would compare equal to a derivation of the same length: refuse it.
  if (decoded.hash.length < HASH_BYTES || decoded.salt.length < SALT_BYTES) return null;
  return { parameters, ...decoded };
}

/**
 * Whether `password` matches the stored hash. The comparison takes the same time wherever
 * the two differ (timingSafeEqual). A stored value that is not a hash of ours matches nothing.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (parsed === null) return false;
  const candidate = await derive(password, parsed.salt, parsed.parameters, parsed.hash.length);
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * A hash of a random password that no one knows, to check passwords of unknown accounts
 * against: the same scrypt work is done whether or not the account exists, so the time of
 * an answer does not tell. Made once per process; the API makes it at start, so that the
 * first sign-in to an unknown account is not the slower one.
 */
let dummyHash: Promise<string> | undefined;
export function unknownAccountHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(32).toString("base64url"));
  return dummyHash;
}
