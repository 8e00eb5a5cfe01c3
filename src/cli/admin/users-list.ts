import type { Command } from "commander";
import type { UserWithMemberships } from "../../interfaces.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { renderTable } from "../render/table.ts";
import { plainStyle } from "../render/colour.ts";
import { withOperatorStore } from "./operator-store.ts";

const fields = ["id", "email", "created_at", "workspaces"];

function userData(user: UserWithMemberships) {
  return {
    id: user.id,
    email: user.email,
    created_at: user.createdAt.toISOString(),
    workspaces: user.memberships.map((membership) => ({
      id: membership.workspaceId,
      name: membership.workspaceName,
      role: membership.role,
    })),
  };
}

/** The table shows each membership as `workspace:role`, as the JSON's objects would not fit. */
function usersTable(users: readonly ReturnType<typeof userData>[]): string | null {
  if (users.length === 0) return null;
  const rows = users.map((user) => ({
    ...user,
    workspaces: user.workspaces.map(({ id, role }) => `${id}:${role}`),
  }));
  return renderTable(rows, fields, plainStyle);
}

export function registerUserList(users: Command, io: CliIo): void {
  addDatabaseOptions(
    users
      .command("list")
      .description("list every user with their workspaces and roles, oldest first")
      .addHelpText(
        "after",
        `
The table shows each membership as <workspace-id>:<role>; --json gives them as objects
{id, name, role}. Password hashes are never shown.

Examples:
  $ svc admin users list
  $ svc admin users list --json`,
      ),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, { accepts: [], fields }, (options) =>
      withOperatorStore(options, io.env, async (store) => {
        const data = (await store.credentials.listUsers()).map(userData);
        return { data, human: usersTable(data), columns: fields };
      }),
    ),
  );
}
