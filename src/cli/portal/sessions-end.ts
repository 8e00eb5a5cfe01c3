import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { resolveWorkspace } from "../workspace.ts";
import { portalSessionsEndedSchema, portalSessionsPath } from "./portal-api.ts";

/**
 * Ends every portal session of the workspace and kills its links not yet opened. No question
 * first: like revoking a key, it is what one does in a hurry, and nothing is lost (the
 * platform makes a new link when its customer comes back).
 */
export async function endPortalSessions(options: GlobalOptions, io: CliIo): Promise<CommandResult> {
  const workspace = resolveWorkspace(options.workspace, io.env);
  const client = await openClient(options, io);
  const request: ApiRequest = {
    method: "DELETE",
    path: portalSessionsPath(workspace, "portal-sessions end"),
  };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const response = await client.send(request);
  return { data: parseBody(portalSessionsEndedSchema, response), raw: response.text };
}
