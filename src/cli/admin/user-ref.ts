import { AppError } from "../../errors.ts";
import type { Store, User } from "../../interfaces.ts";

/** The user an operator names by id (usr_…) or e-mail address; not_found (exit 5) when none. */
export async function namedUser(
  store: Pick<Store, "credentials">,
  idOrEmail: string,
): Promise<User> {
  const user = await store.credentials.findUser(idOrEmail);
  if (user === null) throw new AppError("not_found", `No user ${idOrEmail}.`, { param: "user" });
  return user;
}

/** "1 session", "2 sessions". */
export function sessionCount(count: number): string {
  return `${count} session${count === 1 ? "" : "s"}`;
}
