import type { Command } from "commander";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { withOperatorStore } from "./operator-store.ts";

const fields = ["id", "name", "created_at"];

export function registerWorkspaceList(workspaces: Command, io: CliIo): void {
  addDatabaseOptions(
    workspaces
      .command("list")
      .description("list every workspace, oldest first")
      .addHelpText(
        "after",
        `
Examples:
  $ svc admin workspaces list
  $ svc admin workspaces list --json
  $ svc admin workspaces list --field id`,
      ),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, { accepts: [], fields }, (options) =>
      withOperatorStore(options, io.env, async (store) => ({
        data: (await store.credentials.listWorkspaces()).map((workspace) => ({
          id: workspace.id,
          name: workspace.name,
          created_at: workspace.createdAt.toISOString(),
        })),
        columns: fields,
      })),
    ),
  );
}
