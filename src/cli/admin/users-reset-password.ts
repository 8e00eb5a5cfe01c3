import type { Command } from "commander";
import { hashPassword } from "../../crypto/passwords.ts";
import { AppError } from "../../errors.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { withOperatorStore } from "./operator-store.ts";
import { PASSWORD_INPUT_HELP, readNewPassword } from "./password-input.ts";
import { namedUser, sessionCount } from "./user-ref.ts";

export function registerUserResetPassword(users: Command, io: CliIo): void {
  addDatabaseOptions(
    users
      .command("reset-password")
      .description("set a user's password and sign them out everywhere")
      .argument("<user>", "the user's id (usr_…) or e-mail address")
      .addHelpText(
        "after",
        `
${PASSWORD_INPUT_HELP}
Every session of the user is revoked in the same transaction: whoever knew the old
password is signed out.

Examples:
  $ svc admin users reset-password ada@example.com
  $ printf '%s\\n' "$PASSWORD" | svc admin users reset-password usr_3c9e0a1b5d7f2e4a6c8b0d1f`,
      ),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, { accepts: [] }, (options, [idOrEmail = ""]) =>
      withOperatorStore(options, io.env, async (store) => {
        const user = await namedUser(store, idOrEmail);
        const password = await readNewPassword(io, user.email, "the password was not changed");
        const revoked = await store.credentials.setPassword(user.id, await hashPassword(password));
        if (revoked === null) {
          throw new AppError("not_found", `No user ${idOrEmail}.`, { param: "user" });
        }
        return {
          data: {
            id: user.id,
            email: user.email,
            password_changed: true,
            sessions_revoked: revoked,
          },
          human: user.id,
          notes: [`Password of ${user.email} changed; ${sessionCount(revoked)} revoked.`],
        };
      }),
    ),
  );
}
