import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { resolveWorkspace } from "../workspace.ts";
import { deletionSchema, keyPath } from "./key-api.ts";

/**
 * Revokes a key at once. No question first, as `svc admin keys revoke`: revoking is what
 * one does to a key that leaked, and a key is minted again in one command.
 */
export async function revokeKey(
  options: GlobalOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const workspace = resolveWorkspace(options.workspace, io.env);
  const client = await openClient(options, io);
  const request: ApiRequest = { method: "DELETE", path: keyPath(workspace, id, "keys revoke") };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const response = await client.send(request);
  return { data: parseBody(deletionSchema, response), raw: response.text };
}
