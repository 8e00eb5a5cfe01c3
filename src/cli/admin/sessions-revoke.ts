import type { Command } from "commander";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { withOperatorStore } from "./operator-store.ts";
import { namedUser, sessionCount } from "./user-ref.ts";

interface SessionsRevokeOptions extends GlobalOptions, DatabaseFlags {
  readonly user: string;
}

export function registerSessionCommands(admin: Command, io: CliIo): void {
  const sessions = admin
    .command("sessions")
    .description("manage the sessions of users signed in with `svc auth login`");
  addDatabaseOptions(
    sessions
      .command("revoke")
      .description("revoke every session of a user at once; prints how many")
      .requiredOption("--user <user>", "the user's id (usr_…) or e-mail address")
      .addHelpText(
        "after",
        `
The user can sign in again with their password; to prevent that too, use
\`svc admin users reset-password\` or \`svc admin users delete\`.

Examples:
  $ svc admin sessions revoke --user ada@example.com
  $ svc admin sessions revoke --user usr_3c9e0a1b5d7f2e4a6c8b0d1f --json`,
      ),
  ).action(
    action<SessionsRevokeOptions>(io, { accepts: [] }, (options) =>
      withOperatorStore(options, io.env, async (store) => {
        const user = await namedUser(store, options.user);
        const revoked = await store.credentials.revokeUserSessions(user.id);
        return {
          data: { user_id: user.id, email: user.email, revoked },
          human: String(revoked),
          notes: [`Revoked ${sessionCount(revoked)} of ${user.email}.`],
        };
      }),
    ),
  );
}
