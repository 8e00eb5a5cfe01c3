import { Option, type Command } from "commander";
import { hashPassword } from "../../crypto/passwords.ts";
import { newId } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { ROLE_SCOPES, ROLES, type Role, type Store } from "../../interfaces.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import { resolveWorkspace } from "../workspace.ts";
import { withOperatorStore } from "./operator-store.ts";
import { PASSWORD_INPUT_HELP, readNewPassword } from "./password-input.ts";

const COMMAND = "admin users create";

interface UserCreateOptions extends GlobalOptions, DatabaseFlags {
  readonly email: string;
  readonly role: Role;
}

function checkedEmail(email: string): string {
  const normalised = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(normalised) || normalised.length > 320) {
    throw usageError(COMMAND, `--email: ${JSON.stringify(email)} is not an e-mail address.`);
  }
  return normalised;
}

function membershipResult(
  user: { id: string; email: string },
  workspaceId: string,
  role: Role,
  change: { created: boolean; previousRole: Role | null },
  note: string,
): CommandResult {
  return {
    data: {
      user_id: user.id,
      email: user.email,
      workspace_id: workspaceId,
      role,
      scopes: ROLE_SCOPES[role],
      created: change.created,
      previous_role: change.previousRole,
    },
    human: user.id,
    notes: [note],
  };
}

/**
 * A new user with a role in a workspace; for a user who exists, the membership is added (or
 * its role changed) and the password is neither asked for nor changed.
 */
async function createUser(
  store: Pick<Store, "credentials">,
  io: CliIo,
  options: UserCreateOptions,
  workspaceId: string,
): Promise<CommandResult> {
  const email = checkedEmail(options.email);
  if ((await store.credentials.getWorkspace(workspaceId)) === null) {
    throw new AppError("not_found", `No workspace ${workspaceId}.`, { param: "workspace" });
  }
  const existing = await store.credentials.findUserByEmail(email);
  if (existing !== null) {
    const previousRole = await store.credentials.putMembership(
      existing.id,
      workspaceId,
      options.role,
    );
    const note =
      previousRole === null
        ? `User ${email} exists; added as ${options.role} of ${workspaceId} (password unchanged).`
        : previousRole === options.role
          ? `User ${email} is already ${options.role} of ${workspaceId}; nothing changed.`
          : `User ${email} exists; role in ${workspaceId} changed from ${previousRole} to ${options.role}.`;
    return membershipResult(
      existing,
      workspaceId,
      options.role,
      { created: false, previousRole },
      note,
    );
  }
  const passwordHash = await hashPassword(await readNewPassword(io, email, "nothing was created"));
  const user = await store.credentials.createUser(
    { id: newId("usr"), email, passwordHash },
    { workspaceId, role: options.role },
  );
  return membershipResult(
    user,
    workspaceId,
    options.role,
    { created: true, previousRole: null },
    `Created user ${email} (${user.id}), ${options.role} of ${workspaceId}. They sign in with \`svc auth login\`.`,
  );
}

export function registerUserCreate(users: Command, io: CliIo): void {
  addDatabaseOptions(
    users
      .command("create")
      .description(
        "create a user with a role in a workspace (--workspace or SERVICE_WORKSPACE_ID), or add the role to an existing user",
      )
      .usage("--email <address> --role <owner|member|viewer> [options]")
      .requiredOption("--email <address>", "the user's e-mail address (compared lower-cased)")
      .addOption(
        new Option("--role <role>", "owner and member: every scope; viewer: the read scopes")
          .choices(ROLES)
          .makeOptionMandatory(),
      )
      .addHelpText(
        "after",
        `
${PASSWORD_INPUT_HELP}

Examples:
  $ svc admin users create --email ada@example.com --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role member
  $ printf '%s\\n' "$PASSWORD" | svc admin users create --email ci@example.com --workspace ws_0b7c… --role viewer`,
      ),
  ).action(
    action<UserCreateOptions>(io, { accepts: ["workspace"] }, (options) => {
      const workspaceId = resolveWorkspace(options.workspace, io.env);
      // Only the database flags: `--role` here is the user's, not the server's `--role`.
      const { database, dataDir, config } = options;
      return withOperatorStore({ database, dataDir, config }, io.env, (store) =>
        createUser(store, io, options, workspaceId),
      );
    }),
  );
}
