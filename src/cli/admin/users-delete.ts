import type { Command } from "commander";
import { AppError } from "../../errors.ts";
import type { Store } from "../../interfaces.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { confirm, isInteractive } from "../prompt.ts";
import { withOperatorStore } from "./operator-store.ts";
import { namedUser, sessionCount } from "./user-ref.ts";

/**
 * Deletes a user once confirmed, as `svc webhooks delete` does: by `--yes`, or by a person at
 * the prompt; without a terminal and without `--yes` it refuses before opening the database.
 */
async function deleteUser(
  store: Pick<Store, "credentials">,
  io: CliIo,
  idOrEmail: string,
  confirmed: boolean,
): Promise<CommandResult> {
  const user = await namedUser(store, idOrEmail);
  const question = `Delete user ${user.email} (${user.id}), their memberships and sessions? This cannot be undone.`;
  if (!confirmed && !(await confirm(io, question))) {
    throw new AppError("cancelled", `Cancelled: ${user.email} was not deleted.`);
  }
  const deleted = await store.credentials.deleteUser(user.id);
  // Deleted by someone else in between: what was asked for is done, but not by us.
  if (deleted === null) throw new AppError("not_found", `No user ${idOrEmail}.`, { param: "user" });
  return {
    data: {
      id: user.id,
      email: user.email,
      deleted: true,
      memberships_removed: deleted.memberships,
      sessions_revoked: deleted.sessions,
    },
    human: `deleted: ${user.id}`,
    notes: [
      `Deleted ${user.email}: ${deleted.memberships} membership${deleted.memberships === 1 ? "" : "s"} removed, ${sessionCount(deleted.sessions)} revoked.`,
    ],
  };
}

export function registerUserDelete(users: Command, io: CliIo): void {
  addDatabaseOptions(
    users
      .command("delete")
      .description(
        "delete a user with their memberships and sessions (asks first on a terminal; --yes skips the question)",
      )
      .argument("<user>", "the user's id (usr_…) or e-mail address")
      .addHelpText(
        "after",
        `
Their sessions end at once, and their memberships go with them, in one transaction. On a
terminal it asks for confirmation; anything but y or yes cancels. Without a terminal (a
script, CI) it refuses unless --yes is given.

Examples:
  $ svc admin users delete ada@example.com
  $ svc admin users delete usr_3c9e0a1b5d7f2e4a6c8b0d1f --yes --json`,
      ),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, { accepts: ["yes"] }, (options, [user = ""]) => {
      const confirmed = options.yes === true;
      if (!confirmed && !isInteractive(io)) {
        throw new AppError(
          "confirmation_required",
          `Not deleting ${user}: there is no terminal to confirm on. Pass --yes to delete the user.`,
        );
      }
      return withOperatorStore(options, io.env, (store) => deleteUser(store, io, user, confirmed));
    }),
  );
}
