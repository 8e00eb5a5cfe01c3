import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { workspaceItemPath, workspaceSchema } from "./workspace-api.ts";

/** One workspace: its name, external_id, metadata and times. */
export async function getWorkspace(
  options: GlobalOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const client = await openClient(options, io);
  const request: ApiRequest = { method: "GET", path: workspaceItemPath(id, "workspaces get") };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const response = await client.send(request);
  return { data: parseBody(workspaceSchema, response), raw: response.text };
}
