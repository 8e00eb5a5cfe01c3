import { AppError } from "../../errors.ts";
import type { Store } from "../../interfaces.ts";

/**
 * Sign-in rate limits: at most this many failed sign-ins per account (e-mail address, whether
 * or not it exists) and per client address, in a window of 15 minutes from the first failure.
 * The attempt after the last allowed failure is refused with 429 until the window ends. The
 * docs/security.md ("Sign-in rate limits") documents these numbers.
 */
export const SIGN_IN_LIMITS = {
  windowMs: 15 * 60_000,
  perAccount: 5,
  perAddress: 20,
} as const;

export interface SignInSubjects {
  readonly account: string;
  readonly address: string;
}

export function signInSubjects(email: string, address: string): SignInSubjects {
  return { account: `account:${email.trim().toLowerCase()}`, address: `address:${address}` };
}

/**
 * Counts this attempt and refuses it when either subject is past its limit, before any
 * password is checked: the counting is one atomic step in the database, so a burst of
 * parallel guesses is cut off as surely as a sequence, across every API process.
 */
export async function admitSignInAttempt(
  store: Pick<Store, "credentials">,
  subjects: SignInSubjects,
  now: Date,
): Promise<void> {
  const counts = await store.credentials.countSignInAttempt(
    [subjects.account, subjects.address],
    SIGN_IN_LIMITS.windowMs,
  );
  const over = counts.filter(
    (count) =>
      count.failures >
      (count.subject === subjects.account ? SIGN_IN_LIMITS.perAccount : SIGN_IN_LIMITS.perAddress),
  );
  if (over.length === 0) return;
  const until = Math.max(...over.map((count) => count.windowEndsAt.getTime()));
  throw new AppError("rate_limited", undefined, {
    retryAfterSeconds: Math.max(1, Math.ceil((until - now.getTime()) / 1000)),
  });
}
