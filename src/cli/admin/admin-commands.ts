import type { Command } from "commander";
import { newId } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { SCOPES, type Scope } from "../../interfaces.ts";
import { action, type GlobalOptions } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { CliIo } from "../io.ts";
import { issueKeyToFile } from "./issue-key.ts";
import { withOperatorStore } from "./operator-store.ts";

interface InitOptions extends GlobalOptions, DatabaseFlags {
  readonly output: string;
  readonly name: string;
}

interface WorkspaceCreateOptions extends GlobalOptions, DatabaseFlags {
  readonly name: string;
}

interface KeyCreateOptions extends GlobalOptions, DatabaseFlags {
  readonly scopes: string;
  readonly output: string;
}

function parseScopes(csv: string): Scope[] {
  const names = csv
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new AppError(
      "usage_error",
      `--scopes takes a comma-separated list of: ${SCOPES.join(", ")}${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}.`,
    );
  }
  return [...new Set(names)] as Scope[];
}

function requireWorkspace(options: GlobalOptions, env: NodeJS.ProcessEnv): string {
  const workspace = options.workspace ?? env.SERVICE_WORKSPACE_ID;
  if (workspace === undefined || workspace === "") throw new AppError("no_workspace");
  return workspace;
}

export function registerAdminCommands(program: Command, io: CliIo): void {
  const admin = program
    .command("admin")
    .description("operator commands: act on the database directly, no API key needed");

  addDatabaseOptions(
    admin
      .command("init")
      .description("create the first workspace and an owner API key with every scope")
      .requiredOption("--output <file>", "new file to write the API key to (mode 0600)")
      .option("--name <name>", "name of the first workspace", "Default"),
  ).action(
    action<InitOptions>(io, (options) =>
      withOperatorStore(options, io.env, async (store) => {
        const workspaceId = newId("ws");
        const { keyId, recorded } = await issueKeyToFile(
          options.output,
          workspaceId,
          SCOPES,
          (key) => store.initialise({ id: workspaceId, name: options.name }, key),
        );
        if (!recorded) throw new AppError("already_initialised");
        return {
          data: {
            workspace_id: workspaceId,
            key_id: keyId,
            key_file: options.output,
            scopes: SCOPES,
          },
          human: workspaceId,
          notes: [
            `Initialised: workspace ${workspaceId}; its owner API key (${keyId}, every scope) is in ${options.output}.`,
          ],
        };
      }),
    ),
  );

  const workspaces = admin.command("workspaces").description("manage workspaces");
  addDatabaseOptions(
    workspaces
      .command("create")
      .description("create a workspace and print its id")
      .requiredOption("--name <name>", "name of the workspace"),
  ).action(
    action<WorkspaceCreateOptions>(io, (options) =>
      withOperatorStore(options, io.env, async (store) => {
        const workspace = await store.createWorkspace({ id: newId("ws"), name: options.name });
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

  const keys = admin.command("keys").description("manage API keys");
  addDatabaseOptions(
    keys
      .command("create")
      .description("create an API key for a workspace (--workspace or SERVICE_WORKSPACE_ID)")
      .requiredOption("--scopes <csv>", `comma-separated scopes: ${SCOPES.join(", ")}`)
      .requiredOption("--output <file>", "new file to write the API key to (mode 0600)"),
  ).action(
    action<KeyCreateOptions>(io, (options) => {
      const workspaceId = requireWorkspace(options, io.env);
      const scopes = parseScopes(options.scopes);
      return withOperatorStore(options, io.env, async (store) => {
        if ((await store.getWorkspace(workspaceId)) === null) {
          throw new AppError("not_found", `No workspace ${workspaceId}.`, { param: "workspace" });
        }
        const { keyId } = await issueKeyToFile(options.output, workspaceId, scopes, async (key) => {
          await store.createApiKey(key);
          return true;
        });
        return {
          data: { id: keyId, workspace_id: workspaceId, scopes, key_file: options.output },
          human: keyId,
          notes: [`API key ${keyId} written to ${options.output}.`],
        };
      });
    }),
  );

  addDatabaseOptions(
    keys
      .command("revoke")
      .description("revoke an API key at once")
      .argument("<key-id>", "the key's id (key_…)"),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, (options, [keyId = ""]) =>
      withOperatorStore(options, io.env, async (store) => {
        if (!(await store.revokeApiKey(keyId))) {
          throw new AppError("not_found", `No API key ${keyId}.`, { param: "key-id" });
        }
        return { data: { id: keyId, revoked: true }, human: `revoked: ${keyId}` };
      }),
    ),
  );
}
