import type { Command } from "commander";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import { chosenWorkspace } from "../workspace.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { withOperatorStore } from "./operator-store.ts";

const fields = ["id", "workspace_id", "scopes", "created_at", "last_used_at"];

export function registerKeyList(keys: Command, io: CliIo): void {
  addDatabaseOptions(
    keys
      .command("list")
      .description(
        "list the API keys in use (not revoked), of every workspace or of --workspace, oldest first",
      )
      .addHelpText(
        "after",
        `
Never shows a key or its hash: only the server ever sees a key, and it keeps only the hash.
last_used_at is written at most once a minute per key, so it may be up to a minute old;
"-" (null with --json) means the key has not been used.

Examples:
  $ svc admin keys list
  $ svc admin keys list --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --json`,
      ),
  ).action(
    action<GlobalOptions & DatabaseFlags>(io, { accepts: ["workspace"], fields }, (options) =>
      withOperatorStore(options, io.env, async (store) => {
        const workspaceId = chosenWorkspace(options.workspace, io.env);
        const keys = await store.credentials.listApiKeys(workspaceId);
        return {
          data: keys.map((key) => ({
            id: key.id,
            workspace_id: key.workspaceId,
            scopes: key.scopes,
            created_at: key.createdAt.toISOString(),
            last_used_at: key.lastUsedAt?.toISOString() ?? null,
          })),
          columns: fields,
        };
      }),
    ),
  );
}
