import { unknownAccountHash, verifyPassword } from "../../crypto/passwords.ts";
import { hashToken, newId, newSessionToken } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import type { Session } from "../../interfaces.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { admitSignInAttempt, signInSubjects } from "./sign-in-limits.ts";

export interface SignedIn {
  readonly token: string;
  readonly session: Session;
}

/**
 * Checks an e-mail address and password and opens a session. A wrong password and an unknown
 * address are the same failure, with the same message, after the same scrypt work (against a
 * hash no password matches): neither the answer nor its timing says whether an account
 * exists. Only the hash of the new token is stored.
 */
export async function signIn(
  dependencies: ApiDependencies,
  input: { email: string; password: string; address: string },
): Promise<SignedIn> {
  const { store, clock } = dependencies;
  const subjects = signInSubjects(input.email, input.address);
  await admitSignInAttempt(store, subjects, clock.now());
  const user = await store.credentials.findUserByEmail(input.email);
  const matches = await verifyPassword(
    input.password,
    user?.passwordHash ?? (await unknownAccountHash()),
  );
  if (user === null || !matches) throw new AppError("invalid_credentials");
  await store.credentials.forgiveSignInAttempt(subjects.account, subjects.address);
  const token = newSessionToken();
  const session = await store.credentials.createSession({
    id: newId("ses"),
    userId: user.id,
    tokenHash: hashToken(token),
    expiresAt: new Date(clock.now().getTime() + dependencies.sessionTtlMs),
  });
  return { token, session };
}
