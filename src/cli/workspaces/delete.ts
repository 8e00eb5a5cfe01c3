import { AppError } from "../../errors.ts";
import { parseBody } from "../client/api-paths.ts";
import { ApiError } from "../client/api-error.ts";
import type { ApiRequest } from "../client/http.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { confirm, isInteractive } from "../prompt.ts";
import { deletionSchema, workspaceItemPath } from "./workspace-api.ts";

const COMMAND = "workspaces delete";

export interface DeleteOptions extends GlobalOptions {
  readonly cascade?: boolean;
}

/**
 * Deletes a workspace once confirmed, by `--yes` or by a person at the prompt, as `webhooks
 * delete` does: even without `--cascade` it takes the workspace's keys, events and members
 * with it. Without a terminal and without `--yes` it refuses before anything is sent. The API
 * refuses a workspace that still has destinations unless `--cascade` (409
 * workspace_not_empty, whose message names the flag).
 */
export async function deleteWorkspace(
  options: DeleteOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const cascade = options.cascade === true;
  const confirmed = options.yes === true || options.dryRun === true;
  if (!confirmed && !isInteractive(io)) {
    throw new AppError(
      "confirmation_required",
      `Not deleting workspace ${id}: there is no terminal to confirm on. Pass --yes to delete it.`,
    );
  }
  const client = await openClient(options, io);
  const request: ApiRequest = {
    method: "DELETE",
    path: workspaceItemPath(id, COMMAND),
    ...(cascade ? { query: { cascade: "true" } } : {}),
  };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const question = cascade
    ? `Delete workspace ${id} and everything in it (destinations, events, deliveries, API keys, members, portal and listen sessions)? This cannot be undone.`
    : `Delete workspace ${id} (its API keys, events and members go with it)? This cannot be undone.`;
  if (!confirmed && !(await confirm(io, question))) {
    throw new AppError("cancelled", `Cancelled: workspace ${id} was not deleted.`);
  }
  try {
    const response = await client.send(request);
    return { data: parseBody(deletionSchema, response), raw: response.text };
  } catch (error) {
    // The API's message speaks of its query (?cascade=true); say the flag that sends it.
    if (error instanceof ApiError && error.code === "workspace_not_empty") {
      throw new ApiError(
        error.code,
        `${error.message} To delete the workspace with everything in it: svc workspaces delete ${id} --cascade.`,
        error.httpStatus,
      );
    }
    throw error;
  }
}
