import type { Command } from "commander";
import { newId } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { OPERATOR_SCOPES, SCOPES, type KeyScope } from "../../interfaces.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { requireOption } from "../usage.ts";
import { resolveWorkspace } from "../workspace.ts";
import { issueKeyToFile } from "./issue-key.ts";
import { withOperatorStore } from "./operator-store.ts";
import { registerBackupCommands } from "./backup.ts";
import { registerKeyList } from "./keys-list.ts";
import { registerEncryptionKeyCommands } from "./rotate-encryption-key.ts";
import { registerSessionCommands } from "./sessions-revoke.ts";
import { registerUserCommands } from "./users-commands.ts";
import { registerWorkspaceList } from "./workspaces-list.ts";
import { splitList } from "../../lib/split-list.ts";

interface InitOptions extends GlobalOptions, DatabaseFlags {
  readonly name: string;
}

interface WorkspaceCreateOptions extends GlobalOptions, DatabaseFlags {
  readonly name: string;
}

interface KeyCreateOptions extends GlobalOptions, DatabaseFlags {
  readonly scopes: string;
  readonly operator?: boolean;
}

/** `--output` is a global option: these commands write the API key they issue there. */
function keyFile(options: GlobalOptions, command: string): string {
  return requireOption(
    options.output,
    command,
    "--output <file> is required: the new file the API key is written to (mode 0600).",
  );
}

/** The scopes a key may have: a workspace's, or for an operator key those and its own. */
function parseScopes(csv: string, operator: boolean): KeyScope[] {
  const allowed: readonly string[] = operator ? [...OPERATOR_SCOPES, ...SCOPES] : SCOPES;
  const names = splitList(csv);
  const unknown = names.filter((name) => !allowed.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    const operatorOnly = unknown.filter((name) =>
      (OPERATOR_SCOPES as readonly string[]).includes(name),
    );
    throw new AppError(
      "usage_error",
      `--scopes takes a comma-separated list of: ${allowed.join(", ")}${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}.${operatorOnly.length > 0 ? " Operator scopes need --operator." : ""}`,
    );
  }
  return [...new Set(names)] as KeyScope[];
}

export function registerAdminCommands(program: Command, io: CliIo): void {
  const admin = program
    .command("admin")
    .description("operator commands: act on the database directly, no API key needed");

  addDatabaseOptions(
    admin
      .command("init")
      .description(
        "create the first workspace and an owner API key with every scope, written to --output",
      )
      .usage("--output <file> [options]")
      .option("--name <name>", "name of the first workspace", "Default"),
  ).action(
    action<InitOptions>(io, { accepts: [], output: "secret" }, (options) => {
      const output = keyFile(options, "admin init");
      return withOperatorStore(options, io.env, async (store) => {
        const workspaceId = newId("ws");
        const { keyId, recorded } = await issueKeyToFile(output, workspaceId, SCOPES, (key) =>
          store.credentials.initialise({ id: workspaceId, name: options.name }, key),
        );
        if (!recorded) throw new AppError("already_initialised");
        return {
          data: {
            workspace_id: workspaceId,
            key_id: keyId,
            key_file: output,
            scopes: SCOPES,
          },
          human: workspaceId,
          notes: [
            `Initialised: workspace ${workspaceId}; its owner API key (${keyId}, every scope) is in ${output}.`,
            "To provision workspaces over HTTP (a platform's backend), make an operator key: svc admin keys create --operator --scopes workspaces:write,portal:write,webhooks:write,events:write --output operator.key",
          ],
        };
      });
    }),
  );

  const workspaces = admin.command("workspaces").description("manage workspaces");
  addDatabaseOptions(
    workspaces
      .command("create")
      .description("create a workspace and print its id")
      .requiredOption("--name <name>", "name of the workspace"),
  ).action(
    action<WorkspaceCreateOptions>(io, { accepts: [] }, (options) =>
      withOperatorStore(options, io.env, async (store) => {
        const workspace = await store.credentials.createWorkspace({
          id: newId("ws"),
          name: options.name,
        });
        return {
          data: {
            id: workspace.id,
            name: workspace.name,
            created_at: workspace.createdAt.toISOString(),
          },
          human: workspace.id,
        };
      }),
    ),
  );

  registerWorkspaceList(workspaces, io);
  registerUserCommands(admin, io);
  registerEncryptionKeyCommands(admin, io);

  const keys = admin.command("keys").description("manage API keys");
  addDatabaseOptions(
    keys
      .command("create")
      .description(
        "create an API key for a workspace (--workspace or SERVICE_WORKSPACE_ID), or with --operator for none, written to --output",
      )
      .usage("--scopes <csv> --output <file> [options]")
      .requiredOption(
        "--scopes <csv>",
        `comma-separated scopes: ${SCOPES.join(", ")}; with --operator also ${OPERATOR_SCOPES.join(", ")}`,
      )
      .option(
        "--operator",
        "an operator key (svc_op_…): bound to no workspace, for the platform API; its workspace scopes hold in every workspace",
      ),
  ).action(
    action<KeyCreateOptions>(io, { accepts: ["workspace"], output: "secret" }, (options) => {
      const operator = options.operator === true;
      if (operator && options.workspace !== undefined) {
        throw new AppError(
          "usage_error",
          "An operator key belongs to no workspace: give --operator or --workspace, not both.",
        );
      }
      const workspaceId = operator ? null : resolveWorkspace(options.workspace, io.env);
      const scopes = parseScopes(options.scopes, operator);
      const output = keyFile(options, "admin keys create");
      return withOperatorStore(options, io.env, async (store) => {
        if (workspaceId !== null && (await store.credentials.getWorkspace(workspaceId)) === null) {
          throw new AppError("not_found", `No workspace ${workspaceId}.`, { param: "workspace" });
        }
        const { keyId } = await issueKeyToFile(output, workspaceId, scopes, async (key) => {
          await store.credentials.createApiKey(key);
          return true;
        });
        return {
          data: { id: keyId, workspace_id: workspaceId, operator, scopes, key_file: output },
          human: keyId,
          notes: [`${operator ? "Operator API key" : "API key"} ${keyId} written to ${output}.`],
        };
      });
    }),
  );

  registerKeyList(keys, io);

  addDatabaseOptions(
    keys
      .command("revoke")
      .description("revoke an API key at once")
      .argument("<key-id>", "the key's id (key_…)"),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, { accepts: [] }, (options, [keyId = ""]) =>
      withOperatorStore(options, io.env, async (store) => {
        if (!(await store.credentials.revokeApiKey(keyId))) {
          throw new AppError("not_found", `No API key ${keyId}.`, { param: "key-id" });
        }
        return { data: { id: keyId, revoked: true }, human: `revoked: ${keyId}` };
      }),
    ),
  );

  registerSessionCommands(admin, io);
  registerBackupCommands(admin, io);
  addExamples(admin, [], adminExamples);
}

/** Examples of the groups and commands whose own files give none, by their path after `admin`. */
const adminExamples: Readonly<Record<string, readonly string[]>> = {
  "": [
    "svc admin init --output owner.key",
    "svc admin users create --email ada@example.com --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role member",
    "svc admin keys list --json",
    "svc admin backup --output svc-backup.db",
  ],
  init: [
    "svc admin init --output owner.key",
    "svc admin init --name Acme --output owner.key --database postgres://svc@db/svc",
  ],
  workspaces: ["svc admin workspaces create --name Acme", "svc admin workspaces list"],
  "workspaces create": [
    "svc admin workspaces create --name Acme",
    "svc admin workspaces create --name Acme --json",
  ],
  users: [
    "svc admin users create --email ada@example.com --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role owner",
    "svc admin users list",
    "svc admin users reset-password ada@example.com",
  ],
  keys: [
    "svc admin keys create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --scopes webhooks:read --output reader.key",
    "svc admin keys list",
    "svc admin keys revoke key_ef6e4e78267cdc566fe1b90d",
  ],
  "keys create": [
    "svc admin keys create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --scopes webhooks:write,events:write --output app.key",
    "SERVICE_WORKSPACE_ID=ws_0b7c3d5e9f1a2b4c6d8e0f12 svc admin keys create --scopes events:read --output reader.key",
    "svc admin keys create --operator --scopes workspaces:write,portal:write,webhooks:write,events:write --output operator.key",
  ],
  "keys revoke": ["svc admin keys revoke key_ef6e4e78267cdc566fe1b90d"],
  sessions: ["svc admin sessions revoke --user ada@example.com"],
  "encryption-key": [
    "openssl rand -base64 32 > new.key && chmod 600 new.key",
    "svc admin encryption-key rotate --new-key-file new.key",
  ],
  "encryption-key rotate": [
    "openssl rand -base64 32 > new.key && chmod 600 new.key",
    "svc admin encryption-key rotate --new-key-file new.key",
  ],
};

function addExamples(
  command: Command,
  path: readonly string[],
  examples: Readonly<Record<string, readonly string[]>>,
): void {
  const lines = examples[path.join(" ")];
  if (lines !== undefined) {
    command.addHelpText("after", `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}`);
  }
  for (const sub of command.commands) addExamples(sub, [...path, sub.name()], examples);
}
